package sqldb

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPostgresParallelReadEqualsSerial reads a table serially and in
// parallel ranges (integer and date keys, with and without a watermark
// range) and requires the same rows in the same order, the totals taken in
// the same snapshot, and rows changed after Open invisible to every range.
func TestPostgresParallelReadEqualsSerial(t *testing.T) {
	db := openService(t, Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_par_")
	s := mustQuote(t, Postgres, schema)
	mustExec(t, db, "CREATE SCHEMA "+s)
	t.Cleanup(func() { mustExec(t, db, "DROP SCHEMA "+s+" CASCADE") })
	mustExec(t, db, `CREATE TABLE `+s+`.big (id bigint PRIMARY KEY, amount numeric(18,3), note text, at timestamptz)`)
	mustExec(t, db, `INSERT INTO `+s+`.big SELECT i * 3 - 5000, i * 1.5, 'n' || i, timestamptz '2026-01-01Z' + i * interval '1 minute'
		FROM generate_series(1, 20000) i`)
	mustExec(t, db, `CREATE TABLE `+s+`.days (day date PRIMARY KEY, qty int)`)
	mustExec(t, db, `INSERT INTO `+s+`.days SELECT date '2000-01-01' + i, i FROM generate_series(0, 4999) i`)
	tables := []Table{{schema, "big"}, {schema, "days"}}

	for _, tc := range []struct {
		unit, col string
		rng       *ReadRange
	}{
		{schema + ".big", "id", nil},
		{schema + ".days", "day", nil},
		{schema + ".big", "id", &ReadRange{Column: "id", From: int64(10000), OrderKeys: []string{"id"}}},
	} {
		serial, err := New(Postgres, db, tables, nil)
		if err != nil {
			t.Fatal(err)
		}
		par, err := New(Postgres, db, tables, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.rng != nil {
			for _, src := range []*Source{serial, par} {
				if err := src.SetRange(tc.unit, *tc.rng); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := par.SetParallel(tc.unit, Parallel{Column: tc.col, Max: 4}); err != nil {
			t.Fatal(err)
		}
		_, want, wantCount, wantSums := readTable(t, serial, tc.unit, nil)
		// Changes after Open (and after the totals) must be invisible to
		// every range reader: they import the reader's snapshot.
		during := func() {
			mustExec(t, db, `INSERT INTO `+s+`.big VALUES (999999, 1, 'late', now())`)
			mustExec(t, db, `DELETE FROM `+s+`.big WHERE id = 100`)
			mustExec(t, db, `UPDATE `+s+`.days SET qty = -1 WHERE day = '2005-01-01'`)
		}
		r, got, count, sums := readTable(t, par, tc.unit, during)
		if !strings.HasPrefix(r.ParallelNote(), "read in 4 ranges of "+tc.col) {
			t.Fatalf("%s: %q", tc.unit, r.ParallelNote())
		}
		if len(got) != len(want) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: parallel read %d rows, serial %d; rows differ", tc.unit, len(got), len(want))
		}
		if count != wantCount || !reflect.DeepEqual(sums, wantSums) || count != int64(len(got)) {
			t.Fatalf("%s: totals %d %v, serial %d %v, rows %d", tc.unit, count, sums, wantCount, wantSums, len(got))
		}
		// Undo for the next case: the serial read must see the same table.
		mustExec(t, db, `DELETE FROM `+s+`.big WHERE id = 999999`)
		mustExec(t, db, `INSERT INTO `+s+`.big VALUES (100, 2550, 'n1700', timestamptz '2026-01-01Z' + 1700 * interval '1 minute')`)
		mustExec(t, db, `UPDATE `+s+`.days SET qty = date '2005-01-01' - date '2000-01-01' WHERE day = '2005-01-01'`)
	}

	// A column that is not the first of the ORDER BY reads serially, and
	// says why.
	par, err := New(Postgres, db, tables, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := par.SetParallel(schema+".big", Parallel{Column: "at", Max: 4}); err != nil {
		t.Fatal(err)
	}
	r, rows, _, _ := readTable(t, par, schema+".big", nil)
	if len(rows) != 20000 || !strings.HasPrefix(r.ParallelNote(), "read serially: at is not the first column") {
		t.Fatalf("%d rows, note %q", len(rows), r.ParallelNote())
	}
}

// TestMySQLParallelReadsSerially: MariaDB cannot share a snapshot between
// connections, so a parallel read is refused in favour of one serial read
// that matches its totals.
func TestMySQLParallelReadsSerially(t *testing.T) {
	src, schema, _ := setupMySQL(t)
	if err := src.SetParallel(schema+".orders", Parallel{Column: "id", Max: 4}); err != nil {
		t.Fatal(err)
	}
	r, rows, count, _ := readTable(t, src, schema+".orders", nil)
	if len(rows) != 3 || count != 3 || !strings.Contains(r.ParallelNote(), "read serially: mysql cannot share one snapshot") {
		t.Fatalf("%d rows, count %d, note %q", len(rows), count, r.ParallelNote())
	}
}

func TestSplitRange(t *testing.T) {
	b, err := splitRange(int64(0), int64(99), 4)
	if err != nil || !reflect.DeepEqual(b, []any{int64(25), int64(50), int64(75)}) {
		t.Fatalf("splitRange(0, 99, 4) = %v, %v", b, err)
	}
	if b, _ := splitRange(int64(5), int64(6), 4); !reflect.DeepEqual(b, []any{int64(6)}) {
		t.Fatalf("splitRange(5, 6, 4) = %v: two values make two ranges", b)
	}
	if b, _ := splitRange(int64(-9223372036854775808), int64(9223372036854775807), 2); !reflect.DeepEqual(b, []any{int64(0)}) {
		t.Fatalf("full int64 range: %v", b)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if b, _ := splitRange(t0, t0.Add(4*time.Hour-time.Microsecond), 2); !reflect.DeepEqual(b, []any{t0.Add(2 * time.Hour)}) {
		t.Fatalf("time range: %v", b)
	}
}

// TestPostgresAutoParallel: without a column, a table of at least
// AutoParallelRows rows is read in ranges of its first ORDER BY column
// when that is an integer, date or timestamp — the serial read's rows in
// its order — and any other table reads serially without a note.
func TestPostgresAutoParallel(t *testing.T) {
	db := openService(t, Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_auto_")
	s := mustQuote(t, Postgres, schema)
	mustExec(t, db, "CREATE SCHEMA "+s)
	t.Cleanup(func() { mustExec(t, db, "DROP SCHEMA "+s+" CASCADE") })
	mustExec(t, db, `CREATE TABLE `+s+`.big (id bigint PRIMARY KEY, amount numeric(12,2))`)
	mustExec(t, db, `INSERT INTO `+s+`.big SELECT i, i / 100.0 FROM generate_series(1, $1::int) i`, AutoParallelRows)
	mustExec(t, db, `CREATE TABLE `+s+`.small (id bigint PRIMARY KEY)`)
	mustExec(t, db, `INSERT INTO `+s+`.small SELECT i FROM generate_series(1, 1000) i`)
	mustExec(t, db, `CREATE TABLE `+s+`.texty (code text PRIMARY KEY)`)
	mustExec(t, db, `INSERT INTO `+s+`.texty SELECT 'c' || i FROM generate_series(1, $1::int) i`, AutoParallelRows)
	tables := []Table{{schema, "big"}, {schema, "small"}, {schema, "texty"}}
	for _, tc := range []struct{ table, note string }{
		{"big", "read in 3 ranges of id in parallel (at most 3), every range in the read's exported snapshot (no split_by: the first column the read is ordered by)"},
		{"small", ""},
		{"texty", ""},
	} {
		unit := schema + "." + tc.table
		serial, err := New(Postgres, db, tables, nil)
		if err != nil {
			t.Fatal(err)
		}
		auto, err := New(Postgres, db, tables, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := auto.SetParallel(unit, Parallel{Max: 3}); err != nil {
			t.Fatal(err)
		}
		_, want, _, _ := readTable(t, serial, unit, nil)
		r, got, _, _ := readTable(t, auto, unit, nil)
		if r.ParallelNote() != tc.note {
			t.Errorf("%s: note %q, want %q", tc.table, r.ParallelNote(), tc.note)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the automatic read's %d rows differ from the serial read's %d", tc.table, len(got), len(want))
		}
	}
}
