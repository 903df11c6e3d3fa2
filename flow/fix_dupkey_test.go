package flow_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/flow"
)

// TestFixedDuplicateKeySurvivesAFullRefresh: a row held back as a duplicate
// key, resolved with a new key and replayed, is the fixed row whenever the
// same bytes are a duplicate again — the recorded fix applies although the
// row as read passes its casts and checks (it fails only at the key check). The
// lifecycle test found it (LIMA_LIFE_SEED=7 LIMA_LIFE_SEQ=4): the full
// refresh held the row back again and the lake lost key 1031.
func TestFixedDuplicateKeySurvivesAFullRefresh(t *testing.T) {
	ctx := context.Background()
	ws, p := workspace(t, map[string][]byte{
		"a.csv": []byte("id,station,value\n1,north,1.50\n2,south,2.50\n3,east,3.50\n"),
		"b.csv": []byte("id,station,value\n2,west,9.25\n"),
	}, readingsPlan(true))
	runOnce(t, ws, p, flow.RunOptions{})
	// By hand: b.csv's id 2 is the duplicate (a.csv is read first).
	want := []string{"1|north|1.50", "2|south|2.50", "3|east|3.50"}
	if got := readingsLake(t, ws, p); !slices.Equal(got, want) {
		t.Fatalf("first load: %v, want %v", got, want)
	}
	st := openLedger(t, ws, p)
	open, _, err := st.List(ctx, ledger.Filter{Table: "readings", Status: ledger.StatusOpen}, ledger.Page{Limit: 10})
	if err != nil || len(open) != 1 {
		t.Fatalf("open exceptions %v (%v), want the one duplicate", open, err)
	}
	if err := st.Resolve(ctx, open[0].ID, map[string]string{"id": "9"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	want = []string{"1|north|1.50", "2|south|2.50", "3|east|3.50", "9|west|9.25"}
	if got := readingsLake(t, ws, p); !slices.Equal(got, want) {
		t.Fatalf("after the replay: %v, want %v", got, want)
	}
	out := runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	if got := readingsLake(t, ws, p); !slices.Equal(got, want) {
		t.Fatalf("after the full refresh: %v, want %v", got, want)
	}
	if tr := tableReport(t, out.Report, "readings"); tr.RowsLoaded != 4 || tr.RowsQuarantined != 0 {
		t.Fatalf("full refresh loaded %d held %d, want 4 and 0", tr.RowsLoaded, tr.RowsQuarantined)
	}
	// Without a.csv the row is no duplicate any more: the source changed
	// and the row passes as read, so it loads as read (a fix applies only
	// to bytes that fail again).
	if err := os.Remove(filepath.Join(ws.Dir, "in", "a.csv")); err != nil {
		t.Fatal(err)
	}
	runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	if got, want := readingsLake(t, ws, p), []string{"2|west|9.25"}; !slices.Equal(got, want) {
		t.Fatalf("after removing a.csv: %v, want %v", got, want)
	}
	e, err := st.Get(ctx, open[0].ID)
	if err != nil || e.Status != ledger.StatusReplayed {
		t.Fatalf("the exception: %s (%v), want replayed", e.Status, err)
	}
}
