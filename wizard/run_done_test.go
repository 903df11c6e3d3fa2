package wizard

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

// TestRunDoneMarkSaysWhatHappened: the first line of the run screen's end
// carries ✓ only for a run that is ok and held back no table's majority;
// "!" when a table held back most of its rows, ✗ when gate 4 failed or
// the run ended in an error.
func TestRunDoneMarkSaysWhatHappened(t *testing.T) {
	cases := []struct {
		name   string
		report *reports.Report
		err    error
		want   string
	}{
		{"ok", &reports.Report{Status: reports.StatusOK}, nil, "✓"},
		{"most held back", &reports.Report{Status: reports.StatusOK, HeldBackMost: []string{"orders: 6 of 8 rows held back"}}, nil, "!"},
		{"gate 4 failed", &reports.Report{Status: reports.StatusReconciliationFailed}, nil, "✗"},
		{"error", &reports.Report{Status: reports.StatusOK}, errors.New("boom"), "✗"},
	}
	for _, c := range cases {
		s := newRunScreen(&app{theme: ui.MustTheme(ui.ThemeMono), deps: Deps{Now: time.Now}})
		s.w = 100
		s.outcome = &flow.Outcome{Report: c.report, Result: &run.Result{RunID: "r1"}}
		s.err = c.err
		lines := s.doneLines()
		first := strings.TrimSpace(ansi.Strip(lines[0]))
		if !strings.HasPrefix(first, c.want+" ") {
			t.Errorf("%s: the run's end begins %q, want the mark %q", c.name, first, c.want)
		}
	}
}
