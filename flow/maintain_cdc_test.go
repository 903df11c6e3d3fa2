package flow_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/cdcref"
)

// TestMaintainKeepsChangeCaptureExactlyOnce: change capture over random
// batches (new files, the same content under a new name, …), maintain
// keeping one snapshot of the table and of its history, then more batches:
// the lake always equals the reference replay — no change file applied
// twice, none lost.
func TestMaintainKeepsChangeCaptureExactlyOnce(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	ws, p := newCDCWorkspace(t)
	p.Maintenance = &plan.Maintenance{RetainLast: 1, MaxSnapshotAge: "0s"}
	rng := rand.New(rand.NewPCG(seed, 5))
	ref := cdcref.NewReplay()
	files := map[string]string{}
	nextFile, seq := 0, 100
	wantByRule := map[string]int64{}
	check := func(what string) {
		t.Helper()
		lake, versions := cdcLake(t, ws, p)
		if fmt.Sprint(lake) != fmt.Sprint(ref.Rows) || versions != ref.History {
			t.Fatalf("%s: lake %v (%d versions)\nreference %v (%d versions)", what, lake, versions, ref.Rows, ref.History)
		}
		st, err := flow.OpenLedger(context.Background(), ws, p)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		byRule, err := st.CountBy(context.Background(), ledger.Filter{Table: "customers"}, ledger.ByRule)
		if err != nil || fmt.Sprint(byRule) != fmt.Sprint(wantByRule) {
			t.Fatalf("%s: ledger by rule %v (%v), reference %v", what, byRule, err, wantByRule)
		}
	}
	batch := func(what string) {
		t.Helper()
		cdcref.Gen(rng, files, &nextFile, &seq)
		for name, c := range files {
			if err := os.WriteFile(filepath.Join(ws.Dir, "in", "changes", name), []byte(c), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		want := ref.Apply(files)
		for r, n := range want.Rules {
			wantByRule[r] += n
		}
		if code := runOnce(t, ws, p, flow.RunOptions{}).Report.ExitCode(); code != 0 {
			t.Fatalf("%s: run exit %d", what, code)
		}
		check(what)
	}
	for round := 0; round < 3; round++ {
		for i := 0; i < 4; i++ {
			batch(fmt.Sprintf("round %d batch %d", round, i))
		}
		res, err := flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p})
		if err != nil {
			t.Fatal(err)
		}
		expired := 0
		for _, r := range res {
			expired += r.Expired
		}
		if expired == 0 {
			t.Fatalf("round %d: maintain expired nothing: %+v", round, res)
		}
		// The same files again, nothing new: nothing changes.
		if code := runOnce(t, ws, p, flow.RunOptions{}).Report.ExitCode(); code != 0 {
			t.Fatalf("round %d: rerun exit %d", round, code)
		}
		check(fmt.Sprintf("round %d: rerun after maintain", round))
	}
}
