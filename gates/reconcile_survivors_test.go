package gates_test

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/gates"
)

// A keyless incremental table with a repeated row is a warning that says
// how many repeats this load itself accepted — or that it was not recorded
// (mutation survivor reconcile.go:318, the recorded count ignored).
func TestKeylessWarningNamesTheLoadsOwnRepeats(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	l.appendBehind([]tRow{rows[1]}, nil)
	e := expectFor(rows, "L1")
	e.Keys, e.Samples, e.Sums, e.Mode = nil, nil, map[string]string{}, "incremental"
	three := int64(3)
	for _, c := range []struct {
		dups *int64
		want string
	}{{&three, "(this load's repeats: 3)"}, {nil, "(this load's repeats: not recorded)"}} {
		e.DuplicateRows = c.dups
		f := finding(t, l.reconcile(e), gates.NoKeyCheck)
		if f.Status != gates.Warn || !strings.Contains(f.Detail, "1 of the lake's 11 rows repeat another row whole "+c.want) {
			t.Errorf("%s: %s; want a warning with %q", f.Status, f.Detail, c.want)
		}
	}
}

// An incremental load names only the whole-table checks it skipped: no
// sums and no range expected, nothing to name (no Skip finding); a range
// alone is named alone (mutation survivor reconcile.go:336, "len > 0" to
// ">= 0": an empty sums list named as skipped).
func TestNotCheckedNamesOnlyWhatWasExpected(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	e := expectFor(rows, "L1")
	e.Mode = "incremental"
	e.Sums = map[string]string{}
	rec := l.reconcile(e)
	f := finding(t, rec, gates.NotChecked+"the range of day")
	if f.Status != gates.Skip {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
	e.Min, e.Max = nil, nil
	for _, f := range l.reconcile(e).Checks {
		if f.Status == gates.Skip || strings.HasPrefix(f.Name, gates.NotChecked) {
			t.Errorf("nothing whole-table was expected, yet %q %s: %s", f.Name, f.Status, f.Detail)
		}
	}
}

// A keyless table's samples are found by the whole row: as loaded they
// match; a sampled row changed behind Lima's back is not found identical.
func TestKeylessSamplesMatchByWholeRow(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	e := expectFor(rows, "L1")
	e.Keys = nil
	rec := l.reconcile(e)
	wantStatus(t, rec, "sample rows side by side", gates.Pass)
	if len(rec.Samples) != 3 || !rec.Samples[1].Match || rec.Samples[1].Lake["name"] != "item-05" {
		t.Fatalf("samples %+v, want 3 matched, the second item-05", rec.Samples)
	}
	changed := rows[4]
	changed.score += 1
	l.replaceBehind(changed)
	e.Sums = map[string]string{}
	rec = l.reconcile(e)
	f := finding(t, rec, "sample rows side by side")
	if f.Status != gates.Fail || f.Detail != "2 of 3 sampled source rows found identical in the lake" {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}

// The range of an integer column is compared by value at both ends: 1 …
// 10 as loaded; an id of 11 or of -3 appended behind Lima's back widens it
// and fails (the integer fast path, minMaxInts).
func TestIntegerRangeBothEnds(t *testing.T) {
	rows := tRows()
	for _, c := range []struct {
		id   int64
		want string
	}{{11, "source 1 … 10; lake 1 … 11"}, {-3, "source 1 … 10; lake -3 … 10"}, {5, ""}} {
		l := loadLake(t, rows, "L1")
		e := expectFor(rows, "L1")
		e.Min, e.Max = map[string]string{"id": "1"}, map[string]string{"id": "10"}
		e.Sums, e.Samples, e.Keys = map[string]string{}, nil, nil
		wantStatus(t, l.reconcile(e), "range of id", gates.Pass)
		l.deleteBehind(5)
		l.appendBehind([]tRow{{id: c.id, name: strp("x"), day: rows[0].day}}, nil)
		f := finding(t, l.reconcile(e), "range of id")
		if c.want == "" {
			if f.Status != gates.Pass {
				t.Errorf("id %d: %s %s, want pass", c.id, f.Status, f.Detail)
			}
		} else if f.Status != gates.Fail || f.Detail != c.want {
			t.Errorf("id %d: %s %q, want fail %q", c.id, f.Status, f.Detail, c.want)
		}
	}
}

// A required column the expectation names but the lake table lacks counts
// every lake row as a null: it is not read from another column (mutation
// survivor reconcile.go:525, the missing column's index -1 made 1).
func TestRequiredColumnMissingFromTheLakeFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	e := expectFor(rows, "L1")
	e.Columns = append(append([]string{}, e.Columns...), "added")
	e.Types = append(append([]string{}, e.Types...), "string")
	e.Required = append(append([]bool{}, e.Required...), true)
	e.Samples = nil
	f := finding(t, l.reconcile(e), "no nulls in added")
	if f.Status != gates.Fail || f.Detail != "10 null(s) in required column added" {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}
