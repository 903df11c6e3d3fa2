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
