package sqldb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
)

// openService connects to a test server, or skips loudly (fails under CI
// or LIMA_REQUIRE_SERVICES=1) when it is unreachable.
func openService(t *testing.T, d Dialect, env, def string) *sql.DB {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		dsn = def
	}
	db, err := Open(d, dsn)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		msg := "%s server unreachable (%s=%q): %v"
		if os.Getenv("CI") != "" || os.Getenv("LIMA_REQUIRE_SERVICES") == "1" {
			t.Fatalf(msg, d, env, dsn, err)
		}
		t.Skipf("SKIPPING %s INTEGRATION TEST: "+msg+" (set CI or LIMA_REQUIRE_SERVICES=1 to make this a failure; scripts/ensure-postgres.sh, scripts/ensure-mariadb.sh start servers)", d, d, env, dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func mustExec(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func mustQuote(t *testing.T, d Dialect, names ...string) string {
	t.Helper()
	var s string
	for i, n := range names {
		q, err := QuoteIdent(d, n)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			s += "."
		}
		s += q
	}
	return s
}

// readTable opens unit name of src and reads it whole; totals (when not
// nil) are taken first, in the same snapshot; during runs between Open and
// the first Next.
func readTable(t *testing.T, src *Source, name string, during func()) (*Reader, []source.Row, int64, map[string]string) {
	t.Helper()
	ctx := context.Background()
	units, err := src.List(ctx, []string{name})
	if err != nil || len(units) != 1 {
		t.Fatalf("List(%q) = %v, %v; want one unit", name, units, err)
	}
	r, err := src.OpenTable(ctx, units[0])
	if err != nil {
		t.Fatalf("Open %q: %v", name, err)
	}
	defer r.Close()
	count, sums, err := r.Totals(ctx, nil)
	if err != nil {
		t.Fatalf("Totals: %v", err)
	}
	if during != nil {
		during()
	}
	var rows []source.Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		rows = append(rows, row)
	}
	for i, row := range rows {
		if row.Kind != source.Data || row.Loc.Row != int64(i+1) || row.Loc.Unit != name || row.Raw != nil {
			t.Errorf("row %d: kind %v loc %+v raw %q; want data, row %d of %q, no raw", i+1, row.Kind, row.Loc, row.Raw, i+1, name)
		}
		if len(row.Values) != len(r.Columns()) {
			t.Errorf("row %d: %d values for %d columns", i+1, len(row.Values), len(r.Columns()))
		}
	}
	return r, rows, count, sums
}

// null marks an expected SQL NULL in want tables.
const null = "\x00NULL"

// checkRows compares rows with want (null = SQL NULL) and casts every
// row with Lima's caster, requiring FormatCell to give the text back.
func checkRows(t *testing.T, r *Reader, rows []source.Row, want [][]string) {
	t.Helper()
	var got [][]string
	for _, row := range rows {
		vals := make([]string, len(row.Values))
		for i, v := range row.Values {
			vals[i] = v
			if row.Nulls != nil && row.Nulls[i] {
				if v != "" {
					t.Errorf("null field with value %q", v)
				}
				vals[i] = null
			}
		}
		got = append(got, vals)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
	roundTrip(t, r.Columns(), r.PlanTypes(), rows)
}

func roundTrip(t *testing.T, names, types []string, rows []source.Row) {
	t.Helper()
	specs := make([]clean.ColumnSpec, len(types))
	fields := make([]arrow.Field, len(types))
	for i, ts := range types {
		pt, err := plan.ParseType(ts)
		if err != nil {
			t.Fatalf("column %s: plan type %q: %v", names[i], ts, err)
		}
		specs[i] = clean.ColumnSpec{Name: names[i], Type: pt, NullTokens: []string{}}
		fields[i] = arrow.Field{Name: names[i], Type: clean.ArrowType(pt), Nullable: true}
	}
	c, err := clean.NewCaster(specs, arrow.NewSchema(fields, nil), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	for n, row := range rows {
		if errs := c.Cast(row.Values, row.Nulls); errs != nil {
			t.Errorf("row %d: the caster refuses %q: %+v", n+1, row.Values, errs)
			continue
		}
		for i, cell := range c.Cells() {
			if cell.Null != (row.Nulls != nil && row.Nulls[i]) {
				t.Errorf("row %d column %s: null %v, want %v", n+1, names[i], cell.Null, !cell.Null)
				continue
			}
			if cell.Null {
				continue
			}
			got := clean.FormatCell(specs[i].Type, cell)
			if specs[i].Type.Kind == plan.Binary {
				got = cell.S
			}
			if specs[i].Type.Kind == plan.Double {
				if f, err := strconv.ParseFloat(row.Values[i], 64); err == nil && f == cell.F {
					continue
				}
			}
			if got != row.Values[i] {
				t.Errorf("row %d column %s (%s): source text %q casts back as %q", n+1, names[i], types[i], row.Values[i], got)
			}
		}
	}
}

func findTable(t *testing.T, tables []TableInfo, schema, name string) TableInfo {
	t.Helper()
	for _, ti := range tables {
		if ti.Schema == schema && ti.Name == name {
			return ti
		}
	}
	t.Fatalf("table %s.%s not discovered among %d tables", schema, name, len(tables))
	return TableInfo{}
}

func planTypes(ti TableInfo) map[string]string {
	m := map[string]string{}
	for _, c := range ti.Columns {
		m[c.Name] = c.PlanType
	}
	return m
}

// checkLifecycle: Next after io.EOF stays io.EOF, Close is idempotent,
// Next after Close errors, a reader closed early releases its snapshot.
func checkLifecycle(t *testing.T, src *Source, name string) {
	t.Helper()
	ctx := context.Background()
	u := source.Unit{Name: name, Path: name}
	rr, err := src.Open(ctx, u, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := rr.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if _, err := rr.Next(); err != io.EOF {
			t.Fatalf("Next after EOF = %v", err)
		}
	}
	if err := rr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rr.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	rr, err = src.Open(ctx, u, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Next(); err != nil {
		t.Fatal(err)
	}
	if err := rr.Close(); err != nil {
		t.Fatalf("Close before the end: %v", err)
	}
	if _, err := rr.Next(); err == nil {
		t.Fatal("Next after Close returned a row")
	}
	if _, err := src.Open(ctx, source.Unit{Name: "nope.nope"}, source.Options{}); !errors.Is(err, source.ErrUnreadable) {
		t.Fatalf("Open of an unknown table: %v, want ErrUnreadable", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := src.List(cctx, []string{"*"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("List with canceled context: %v", err)
	}
}
