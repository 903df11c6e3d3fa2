package wizard

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/reports"
)

// TestRunScreenFullRefresh: f on the run screen chooses a full refresh of
// every table, then of one table (like run --full-refresh --table T), then
// none; the run gets exactly that. On a real demo lake the one-table
// refresh reloads that table's rows although its input was loaded before,
// and runs no other table.
func TestRunScreenFullRefresh(t *testing.T) {
	var got []flow.RunOptions
	d := Deps{Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
		got = append(got, o)
		return flow.Run(ctx, o)
	}}
	h := toRun(t, d)
	ws := h.m.ws
	h.contains("No full refresh", "f full refresh")
	// A plain run first: afterwards every input counts as loaded.
	h.key("enter")
	h.drainLate(0)
	h.contains("balance per table")
	h.key("f")
	h.contains("Full refresh of every table")
	h.key("f")
	first := h.m.run.refreshBase()[0]
	h.contains("Full refresh of " + first + " only")
	h.key("f")
	second := h.m.run.refreshBase()[1]
	h.contains("Full refresh of " + second + " only")
	h.key("r")
	h.drainLate(0)
	h.contains("balance per table", "Full refresh of "+second+" only")
	if len(got) != 2 || got[0].FullRefresh || !got[1].FullRefresh || len(got[1].Tables) != 1 || got[1].Tables[0] != second {
		t.Fatalf("run options %+v, want a plain run, then a full refresh of %s only", got, second)
	}
	r, err := reports.Read(filepath.Join(ws.ReportsDir(), latestID(t, ws), "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tables) != 1 || r.Tables[0].Name != second || r.Tables[0].RowsLoaded == 0 || r.Tables[0].Status != "loaded" {
		t.Errorf("report tables %+v: want only %s, reloaded", r.Tables, second)
	}
	// f cycles back to a plain run.
	n := len(h.m.run.refreshBase())
	for i := 0; i < n-1; i++ { // from the second table (state 3 of n+2) back to 0
		h.key("f")
	}
	if tables, full := h.m.run.refreshScope(); full || tables != nil || strings.Contains(h.screen(), "Full refresh of") {
		t.Errorf("after cycling f: refresh %v %v, screen:\n%s", tables, full, h.screen())
	}
}

func latestID(t *testing.T, ws flow.Workspace) string {
	t.Helper()
	id, err := reports.Latest(ws.ReportsDir())
	if err != nil {
		t.Fatal(err)
	}
	return id
}
