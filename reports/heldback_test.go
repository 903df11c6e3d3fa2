package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
)

// TestHeldBackMostHeadline: a table that held back more than half of its
// rows (read less skipped) gets a headline in report.json and report.md;
// exactly half, or fewer, does not.
func TestHeldBackMostHeadline(t *testing.T) {
	tables := []*run.TableResult{
		// 9 read, 1 skipped: 8 rows, 6 held back.
		{Name: "orders", Status: run.StatusLoaded, RowsRead: 9, RowsLoaded: 2, RowsQuarantined: 6, RowsSkipped: 1},
		// 8 rows, 4 held back: half, not most.
		{Name: "customers", Status: run.StatusLoaded, RowsRead: 8, RowsLoaded: 4, RowsQuarantined: 4},
		{Name: "products", Status: run.StatusLoaded, RowsRead: 3, RowsLoaded: 3},
	}
	r := Build(&plan.Plan{}, &run.Result{RunID: "r", Tables: tables}, nil)
	if want := []string{"orders: 6 of 8 rows held back"}; !slices.Equal(r.HeldBackMost, want) {
		t.Errorf("held_back_most %q, want %q", r.HeldBackMost, want)
	}
	if md := Markdown(r); !strings.Contains(md, "⚠ orders: 6 of 8 rows held back") {
		t.Errorf("report.md lacks the headline:\n%s", md)
	}
}
