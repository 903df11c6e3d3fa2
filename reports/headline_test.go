package reports

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/gates"
)

// TestHeadlineSaysOnlyWhatWasChecked: "every table reconciles" only when
// every table of the run was loaded and every gate 4 check passed; a
// skipped or undecided check, a table already loaded and a rerun that
// loads nothing each get a headline of their own.
func TestHeadlineSaysOnlyWhatWasChecked(t *testing.T) {
	p := &plan.Plan{}
	loaded := func(name string) *run.TableResult {
		return &run.TableResult{Name: name, Status: run.StatusLoaded, RowsRead: 3, RowsLoaded: 3}
	}
	pass := &gates.Reconciliation{Status: gates.Pass, Checks: []gates.Finding{{Name: "row count", Status: gates.Pass}}}
	skip := &gates.Reconciliation{Status: gates.Pass, Checks: []gates.Finding{{Name: "row count", Status: gates.Pass},
		{Name: gates.NotChecked + "the lake's control sums (qty)", Status: gates.Skip}}}
	warn := &gates.Reconciliation{Status: gates.Pass, Checks: []gates.Finding{{Name: gates.SourceCountName, Status: gates.Warn}}}
	fail := &gates.Reconciliation{Status: gates.Fail, Checks: []gates.Finding{{Name: "row count", Status: gates.Fail}}}
	already := &run.TableResult{Name: "b", Status: run.StatusAlreadyLoaded}
	cases := []struct {
		name   string
		tables []*run.TableResult
		recs   map[string]*gates.Reconciliation
		want   string // the headline, or a part of it after "~"
		exit   int
	}{
		{"all checked", []*run.TableResult{loaded("a")}, map[string]*gates.Reconciliation{"a": pass}, HeadlineAll, 0},
		{"a check skipped", []*run.TableResult{loaded("a")}, map[string]*gates.Reconciliation{"a": skip},
			"~did not check 1 thing(s): a: not checked: the lake's control sums (qty)", 0},
		{"a check not decided", []*run.TableResult{loaded("a")}, map[string]*gates.Reconciliation{"a": warn},
			"~a: " + gates.SourceCountName + " (not decided)", 0},
		{"one table already loaded", []*run.TableResult{loaded("a"), already}, map[string]*gates.Reconciliation{"a": pass},
			"~b: already loaded, not re-checked this run", 0},
		{"not reconciled", []*run.TableResult{loaded("a")}, nil, "~a: not reconciled", 0},
		{"nothing loaded", []*run.TableResult{already}, nil, HeadlineNothing, 0},
		{"a failure", []*run.TableResult{loaded("a"), loaded("c")}, map[string]*gates.Reconciliation{"a": fail, "c": skip},
			"loaded, but gate 4 failed for a", 3},
	}
	for _, c := range cases {
		r := Build(p, &run.Result{RunID: "r", Tables: c.tables}, c.recs)
		got := r.Headline
		ok := got == c.want
		if part, sub := strings.CutPrefix(c.want, "~"); sub {
			ok = strings.Contains(got, part) && got != HeadlineAll
		}
		if !ok || r.ExitCode() != c.exit {
			t.Errorf("%s: headline %q, exit %d; want %q, exit %d", c.name, got, r.ExitCode(), c.want, c.exit)
		}
		if md := Markdown(r); !strings.Contains(md, "**Gate 4:** ") {
			t.Errorf("%s: report.md has no gate 4 headline", c.name)
		}
	}
}
