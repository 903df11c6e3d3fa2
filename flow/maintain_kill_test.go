package flow_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// TestMaintainKeepsReplaysExactlyOnceAndSurvivesSIGKILL: a full-mode table
// loaded twice (the second load replaces the first), then three replays
// of fixed exceptions, the last killed after its commit (the state store
// has not marked its rows). maintain with retain_last 1 may expire only
// the first load: a rerun must still see the newest load (or it would
// load the file again and drop the replayed rows), and the next replay
// must still find the killed replay's commit (or it would land its rows
// twice). maintain is killed after its expiry and again after its first
// orphan; the table stays readable and a rerun finishes.
func TestMaintainKeepsReplaysExactlyOnceAndSurvivesSIGKILL(t *testing.T) {
	bin := buildLima(t)
	ctx := context.Background()
	first, _ := genReadings(200)
	csv, rows := genReadings(300)
	var bad []genRow
	for _, r := range rows {
		if r.bad {
			bad = append(bad, r)
		}
	}
	ws, p := workspace(t, map[string][]byte{"r.csv": first},
		readingsPlan(false)+"maintenance: {retain_last: 1, max_snapshot_age: 0s, orphan_older_than: 1h}\n")
	planArg := []string{"--plan", ws.PlanPath()}
	lima(t, bin, nil, "", append([]string{"run", "--force"}, planArg...)...)
	if err := os.WriteFile(filepath.Join(ws.Dir, "in", "r.csv"), csv, 0o644); err != nil {
		t.Fatal(err)
	}
	lima(t, bin, nil, "", append([]string{"run", "--force"}, planArg...)...)
	st := openLedger(t, ws, p)
	ex := readingsByLine(t, st)
	fixed := map[int64]bool{}
	for i, fault := range []string{"", "", "replay-after-commit"} {
		for _, r := range bad[i*5 : i*5+5] {
			if err := st.Resolve(ctx, ex[r.line][0].ID, map[string]string{"value": r.value}, "ops", ""); err != nil {
				t.Fatal(err)
			}
			fixed[r.line] = true
		}
		lima(t, bin, nil, fault, append([]string{"exceptions", "replay"}, planArg...)...)
	}
	want := wantReadings(rows, fixed)
	sameReadings(t, "before maintain", readingsLake(t, ws, p), want)
	_, tbl := loadIceberg(t, ws, p, "readings")
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != 5 {
		t.Fatalf("%d snapshots, want 5 (2 loads, 3 replays)", len(snaps))
	}
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	var orphans []string
	for range 3 {
		f := filepath.Join(loc, "data", "00000-0-"+uuid.NewString()+".parquet")
		plant(t, f, 5*24*time.Hour)
		orphans = append(orphans, f)
	}
	left := func() (n int) {
		for _, f := range orphans {
			if _, err := os.Lstat(f); err == nil {
				n++
			}
		}
		return n
	}

	// Killed after the expiry committed: the first load is gone, the rest
	// is there and reads back; no orphan was touched.
	lima(t, bin, nil, flow.FaultMaintainAfterExpire, append([]string{"maintain"}, planArg...)...)
	_, tbl = loadIceberg(t, ws, p, "readings")
	if n := len(tbl.Metadata().Snapshots()); n != 4 || tbl.Metadata().SnapshotByID(snaps[0].SnapshotID) != nil {
		t.Fatalf("after the kill: %d snapshots, want 4 without the first load", n)
	}
	sameReadings(t, "after maintain was killed after its expiry", readingsLake(t, ws, p), want)
	if left() != 3 {
		t.Fatalf("%d orphans left, want 3", left())
	}
	// Killed after its first orphan.
	lima(t, bin, nil, flow.FaultMaintainMidOrphans, append([]string{"maintain"}, planArg...)...)
	sameReadings(t, "after maintain was killed among the orphans", readingsLake(t, ws, p), want)
	if left() != 2 {
		t.Fatalf("%d orphans left, want 2", left())
	}
	// The rerun finishes.
	out, err := exec.Command(bin, append([]string{"maintain", "--json"}, planArg...)...).Output()
	if err != nil {
		t.Fatalf("maintain: %v\n%s", err, out)
	}
	var res struct {
		Status string                `json:"status"`
		Tables []flow.MaintainResult `json:"tables"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Status != "ok" || len(res.Tables) != 1 || res.Tables[0].Expired != 0 || res.Tables[0].Kept != 4 || res.Tables[0].Removed != 2 || left() != 0 {
		t.Fatalf("rerun: %s", out)
	}

	// Gate 4 as the lake is now: its replay adjustment starts at the newest
	// load, which must still be there.
	reconcilePasses(t, ws, p, "after maintain")

	// The same input again: the newest load is still the table's, nothing
	// is loaded (a full load now would drop the replayed rows).
	_, tbl = loadIceberg(t, ws, p, "readings")
	cur := tbl.CurrentSnapshot().SnapshotID
	lima(t, bin, nil, "", append([]string{"run", "--force"}, planArg...)...)
	sameReadings(t, "rerun after maintain", readingsLake(t, ws, p), want)
	if _, tbl = loadIceberg(t, ws, p, "readings"); tbl.CurrentSnapshot().SnapshotID != cur {
		t.Fatalf("the rerun of the newest load committed snapshot %d: it was not recognised as already loaded", tbl.CurrentSnapshot().SnapshotID)
	}
	// The next replay finds the killed replay's commit: its rows are marked
	// replayed, not landed again.
	lima(t, bin, nil, "", append([]string{"exceptions", "replay"}, planArg...)...)
	sameReadings(t, "replay after maintain", readingsLake(t, ws, p), want)
	for _, r := range bad[:15] {
		e, err := st.Get(ctx, ex[r.line][0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != ledger.StatusReplayed {
			t.Errorf("line %d: %s, want replayed", r.line, e.Status)
		}
	}
	reconcilePasses(t, ws, p, "after the replay")
}

func reconcilePasses(t *testing.T, ws flow.Workspace, p *plan.Plan, what string) {
	t.Helper()
	recs, err := flow.Reconcile(context.Background(), ws, p, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Status != gates.Pass {
			for _, c := range rec.Checks {
				if c.Status != gates.Pass {
					t.Errorf("%s: %s: %s", what, c.Name, c.Detail)
				}
			}
			t.Fatalf("reconcile %s: %s", what, rec.Status)
		}
	}
}
