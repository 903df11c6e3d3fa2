package wizard

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/ledger"
)

// The list's columns size to what is on screen: at 100 columns, with no
// row overdue, the due column keeps no room for "overdue", and a rule and an
// owner of ordinary length show whole.
func TestBrowserColumnsSizeToContent(t *testing.T) {
	mk := func(line int64, rule, owner string, due time.Time) ledger.Exception {
		return ledger.Exception{RunID: "run-1", LoadID: "load-1", Table: "inspections", Level: ledger.LevelRow,
			File: "inspections_2026-04.csv", Line: line, Raw: []byte("x\n"),
			Failures: []ledger.Failure{{Column: "c", Value: "v", Rule: rule, Reason: "bad"}}, Owner: owner, Deadline: due}
	}
	later := t0.Add(30 * 24 * time.Hour)
	st := seedLedger(t, 0,
		mk(2, "unreadable_file", "Ji-woo Park (quality)", later),
		mk(3, "malformed_row", "Data platform on-call", later))
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.contains("unreadable_file", "malformed_row", "Ji-woo Park (quality)", "Data platform on-call")
	for _, l := range strings.Split(h.screen(), "\n") {
		if w := len([]rune(l)); w > 100 {
			t.Errorf("line %d wide: %q", w, l)
		}
	}
	// An overdue row takes the room back for its "overdue", and where keeps
	// its 20 columns: the owner is cut.
	st2 := seedLedger(t, 0, mk(2, "unreadable_file", "Ji-woo Park (quality)", t0.Add(-48*time.Hour)))
	h2 := newBrowserHarness(t, st2, ExceptionsOptions{})
	h2.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h2.contains("2026-11-28 overdue", "Ji-woo Park (qua…")
}
