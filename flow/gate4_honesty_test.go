package flow_test

// Gate 4 says only what it checked (issue 13, item 6): rows deleted at the
// source cannot hide behind an incremental read, a keyless table's
// duplicates are compared by whole row, and the headline says "every
// table reconciles" only when every table was checked in full.

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

func g4check(t *testing.T, tr reports.TableReport, name string) gates.Finding {
	t.Helper()
	for _, c := range tr.Checks {
		if c.Name == name {
			return c
		}
	}
	var names []string
	for _, c := range tr.Checks {
		names = append(names, c.Name+"="+c.Status)
	}
	t.Fatalf("%s: no check %q among %v", tr.Name, name, names)
	return gates.Finding{}
}

// TestGate4DeletedSourceRowsCannotHide (SQLite): an incremental table whose
// source loses two rows keeps them in the lake; gate 4 compares the whole
// table with the source's count every run and says so, naming the fix,
// and the headline no longer claims that every table reconciles. The exit
// code stays 0: the plan chose a mode that does not detect deletes.
func TestGate4DeletedSourceRowsCannotHide(t *testing.T) {
	file := filepath.Join(t.TempDir(), "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dbExec(t, db, `CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER NOT NULL)`)
	for i := 1; i <= 10; i++ {
		dbExec(t, db, `INSERT INTO items VALUES (?, ?)`, i, i*10)
	}
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: g4del}
sources:
  erp: {kind: sqlite, path: `+file+`}
tables:
  items:
    source: {name: erp, table: items}
    load: {mode: incremental, keys: [id], watermark: id}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	rep := tableReport(t, out.Report, "items")
	if c := g4check(t, rep, gates.SourceCountName); c.Status != gates.Pass || !strings.Contains(c.Detail, "the source table holds 10 rows; the lake table 10") {
		t.Fatalf("first run: %+v", c)
	}
	// Two rows deleted at the source, one added: the next read sees only
	// id 11 (the rows at or below the watermark are skipped), the lake
	// keeps 3 and 4.
	dbExec(t, db, `DELETE FROM items WHERE id IN (3, 4)`)
	dbExec(t, db, `INSERT INTO items VALUES (11, 110)`)
	out = runOnce(t, ws, p, flow.RunOptions{})
	rep = tableReport(t, out.Report, "items")
	if rep.RowsLoaded != 1 {
		t.Fatalf("second run loaded %d rows, want 1 (id 11)", rep.RowsLoaded)
	}
	c := g4check(t, rep, gates.SourceCountName)
	// By hand: the source holds 10 - 2 + 1 = 9 rows, the lake 11.
	if c.Status != gates.Warn || !strings.Contains(c.Detail, "the source table holds 9 rows; the lake table 11") ||
		!strings.Contains(c.Detail, "2 row(s) more than the whole source") || !strings.Contains(c.Fix, "detect_deletes") {
		t.Fatalf("second run: %+v", c)
	}
	r := out.Report
	if r.Headline == reports.HeadlineAll || !strings.Contains(r.Headline, "items: "+gates.SourceCountName+" (not decided)") {
		t.Fatalf("headline: %q", r.Headline)
	}
	if r.ExitCode() != 0 {
		t.Fatalf("exit code %d, want 0 (a warning)", r.ExitCode())
	}
}

// TestGate4PeriodicDeleteDetectionSaysWhenLastChecked (SQLite): with
// detect_deletes on a period, a run inside the period does not compare
// keys; gate 4 says when they were last compared and that the lake holds
// more rows than the source.
func TestGate4PeriodicDeleteDetectionSaysWhenLastChecked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dbExec(t, db, `CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER NOT NULL)`)
	for i := 1; i <= 20; i++ {
		dbExec(t, db, `INSERT INTO items VALUES (?, ?)`, i, i*10)
	}
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: g4per}
sources:
  erp: {kind: sqlite, path: `+file+`}
tables:
  items:
    source: {name: erp, table: items}
    load: {mode: upsert, keys: [id], watermark: id, detect_deletes: 24h}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	rep := tableReport(t, out.Report, "items")
	if c := g4check(t, rep, gates.SourceCountName); c.Status != gates.Pass || !strings.Contains(c.Detail, "compared with the lake this run") {
		t.Fatalf("first run: %+v", c)
	}
	dbExec(t, db, `DELETE FROM items WHERE id = 5`)
	out = runOnce(t, ws, p, flow.RunOptions{})
	rep = tableReport(t, out.Report, "items")
	c := g4check(t, rep, gates.SourceCountName)
	if c.Status != gates.Warn || !strings.Contains(c.Detail, "the source table holds 19 rows; the lake table 20") ||
		!strings.Contains(c.Detail, "deletes are checked every 24h; the keys were last compared 20") || !strings.Contains(c.Fix, "detect_deletes") {
		t.Fatalf("second run: %+v", c)
	}
}

// TestGate4KeylessDuplicatesComparedByWholeRow: a keyless file table with
// one row repeated in the source passes (the lake repeats it once too);
// the headline is "every table reconciles" only for that fully checked
// run, and a rerun that loads nothing says so instead.
func TestGate4KeylessDuplicatesComparedByWholeRow(t *testing.T) {
	csv := "day,amount\n2026-01-01,10\n2026-01-02,20\n2026-01-02,20\n2026-01-03,30\n"
	ws, p := workspace(t, map[string][]byte{"sales.csv": []byte(csv)}, `schema_version: 1
platform: {prefix: g4nokey}
sources:
  in: {kind: files, path: in}
tables:
  sales:
    source: {name: in, files: ["sales.csv"]}
    columns:
      - {name: day, type: date}
      - {name: amount, type: long}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	rep := tableReport(t, out.Report, "sales")
	c := g4check(t, rep, gates.NoKeyCheck)
	if c.Status != gates.Pass || !strings.Contains(c.Detail, "the load accepted 1 row(s) repeating another row whole; the lake holds 1 in 4 rows") {
		t.Fatalf("keyless check: %+v", c)
	}
	if out.Report.Headline != reports.HeadlineAll || len(out.Report.NotChecked) != 0 {
		t.Fatalf("a full load checked in full: headline %q, not checked %v", out.Report.Headline, out.Report.NotChecked)
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	if out.Report.Headline != reports.HeadlineNothing {
		t.Fatalf("a rerun that loads nothing: headline %q (tables %+v)", out.Report.Headline, out.Report.Tables)
	}
}
