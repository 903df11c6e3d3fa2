package flow_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/lima-lake/lima/engine/ledger"
)

// TestReplayOfSelectedIDsKilledAfterCommitThenRerun: `exceptions replay
// --id` of three of six fixed rows is killed after its commit and before
// the ledger marks them; the rerun of the same selection recognises its own
// commit (no second copy, no second snapshot); the three fixed rows not
// selected stay fixed and out of the lake until a replay of everything
// brings them, once. The expected lake is the generator's.
func TestReplayOfSelectedIDsKilledAfterCommitThenRerun(t *testing.T) {
	bin := buildLima(t)
	csv, rows := genReadings(60)
	var bad []genRow
	for _, r := range rows {
		if r.bad {
			bad = append(bad, r)
		}
	}
	if len(bad) != 9 { // i%7 == 3 for i in [0,60): 3, 10, …, 59
		t.Fatalf("generator: %d bad rows, want 9", len(bad))
	}
	for _, store := range stores(t) {
		for _, keyed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keyed=%v", store.name, keyed), func(t *testing.T) {
				ctx := context.Background()
				ws, p := workspace(t, map[string][]byte{"r.csv": csv}, readingsPlan(keyed))
				store.setup(t, ws, p)
				planArg := []string{"--plan", ws.PlanPath()}
				lima(t, bin, store.env, "", append([]string{"run", "--force"}, planArg...)...)
				st := store.open(t, ws, p)
				ex := readingsByLine(t, st)
				id := func(r genRow) int64 {
					t.Helper()
					if len(ex[r.line]) != 1 {
						t.Fatalf("line %d: %d exceptions", r.line, len(ex[r.line]))
					}
					return ex[r.line][0].ID
				}
				for _, r := range bad[:6] {
					if err := st.Resolve(ctx, id(r), map[string]string{"value": r.value}, "ops", ""); err != nil {
						t.Fatal(err)
					}
				}
				// Select bad[1], bad[3] and bad[4].
				selected := map[int64]bool{bad[1].line: true, bad[3].line: true, bad[4].line: true}
				args := append([]string{"exceptions", "replay", "--by", "ops"}, planArg...)
				for _, r := range []genRow{bad[1], bad[3], bad[4]} {
					args = append(args, "--id", strconv.FormatInt(id(r), 10))
				}
				lima(t, bin, store.env, "replay-after-commit", args...)
				first := replaySnapshots(t, ws, p)
				if len(first) != 1 {
					t.Fatalf("replay snapshots after the kill: %v", first)
				}
				sameReadings(t, "after the kill after the commit", readingsLake(t, ws, p), wantReadings(rows, selected))
				lima(t, bin, store.env, "", args...)
				sameReadings(t, "after the rerun of the selection", readingsLake(t, ws, p), wantReadings(rows, selected))
				if snaps := replaySnapshots(t, ws, p); len(snaps) != 1 {
					t.Fatalf("replay snapshots after the rerun: %v, want the first one only", snaps)
				}
				for i, r := range bad {
					e, err := st.Get(ctx, id(r))
					if err != nil {
						t.Fatal(err)
					}
					want := ledger.StatusOpen // never fixed
					if i < 6 {
						want = ledger.StatusFixed // fixed, not selected
					}
					if selected[r.line] {
						if e.Status != ledger.StatusReplayed || e.ReplayLoadID != first[0] {
							t.Errorf("bad[%d] (selected): %s via %q, want replayed via %s", i, e.Status, e.ReplayLoadID, first[0])
						}
					} else if e.Status != want {
						t.Errorf("bad[%d] (not selected): %s, want %s", i, e.Status, want)
					}
				}
				// The rest, later: every fixed row once.
				lima(t, bin, store.env, "", append([]string{"exceptions", "replay", "--by", "ops"}, planArg...)...)
				all := map[int64]bool{}
				for _, r := range bad[:6] {
					all[r.line] = true
				}
				sameReadings(t, "after replaying the rest", readingsLake(t, ws, p), wantReadings(rows, all))
			})
		}
	}
}
