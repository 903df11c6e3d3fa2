package flow_test

import (
	"slices"
	"testing"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
)

// TestProgressCoversTheWholeRun: every table of the run is registered in
// load order (marts last), every load has a start and an end, and the
// phases flow adds (gate 4's re-read, the mart's build) are its last word.
func TestProgressCoversTheWholeRun(t *testing.T) {
	ws, p := newDemo(t)
	prog := &run.Progress{}
	out := runOnce(t, ws, p, flow.RunOptions{Progress: prog})
	snap := prog.Snapshot()
	var got []string
	for _, tp := range snap {
		got = append(got, tp.Table)
	}
	want := run.RunOrder(p, nil)
	if !slices.Equal(got, want) {
		t.Fatalf("registered %v, want the run order %v", got, want)
	}
	byName := map[string]*run.TableProgress{}
	for _, tp := range snap {
		byName[tp.Table] = tp
	}
	for _, tr := range out.Result.Tables {
		tp := byName[tr.Name]
		if tp.StartedAt().IsZero() || tp.FinishedAt().Before(tp.StartedAt()) {
			t.Errorf("%s: started %v, finished %v", tr.Name, tp.StartedAt(), tp.FinishedAt())
		}
		wantPhase := tr.Status
		if tr.Status == run.StatusLoaded {
			wantPhase = flow.PhaseReconciled
		}
		if ph, _ := tp.Phase.Load().(string); ph != wantPhase {
			t.Errorf("%s: last phase %q, want %q", tr.Name, ph, wantPhase)
		}
		if tp.RowsRead.Load() != tr.RowsRead {
			t.Errorf("%s: %d rows read live, %d in the result", tr.Name, tp.RowsRead.Load(), tr.RowsRead)
		}
	}
	marts := 0
	for _, n := range want {
		if !p.Tables[n].IsMart() {
			continue
		}
		marts++
		if ph, _ := byName[n].Phase.Load().(string); ph != flow.PhaseMartBuilt {
			t.Errorf("mart %s: last phase %q, want %q", n, ph, flow.PhaseMartBuilt)
		}
	}
	if marts == 0 {
		t.Error("the demo's run order has no mart")
	}
}
