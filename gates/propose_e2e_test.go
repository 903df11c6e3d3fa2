package gates_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// TestNewcomerPathOnGeneratedExports: the proposal for a generated dirty
// export, approved without edits and run, loads exactly the rows the
// generator calls good and holds back exactly its bad ones (duplicate
// copies, empty ids, orphans, bad amounts), on 8 seeds.
func TestNewcomerPathOnGeneratedExports(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		files, child, rows, held, heldBy, enc := gates.GenDirtyForTest(seed)
		t.Run(fmt.Sprintf("seed%d_%s_%s", seed, child, enc), func(t *testing.T) {
			ws := t.TempDir()
			for name, body := range files {
				p := filepath.Join(ws, "data", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Prefix: "gen", Catalog: plan.CatalogSQLite},
				Storage: plan.Storage{Warehouse: plan.DefaultWarehouse}, ETL: plan.ETL{Tool: "lima"},
				Sources: map[string]*plan.Source{"src": {Kind: plan.SourceFiles, Path: "data"}}}
			pr, err := gates.ProposeDataModel(context.Background(), p, gates.ProposeOptions{Workspace: ws})
			if err != nil {
				t.Fatal(err)
			}
			pr.Apply(p)
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: flow.Workspace{Dir: ws}, Plan: p, Force: true})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tr := range out.Result.Tables {
				if tr.Name != child {
					continue
				}
				found = true
				if tr.RowsLoaded != int64(rows-held) || tr.RowsQuarantined != int64(held) {
					t.Errorf("%s: loaded %d, held back %d (%v); the generator says %d and %d (%v)", child, tr.RowsLoaded, tr.RowsQuarantined, tr.QuarantinedBy, rows-held, held, heldBy)
				}
				// By reason: each held row under the rule that catches its
				// one fault.
				for rule, want := range heldBy {
					if got := tr.QuarantinedBy[rule]; got != int64(want) {
						t.Errorf("%s: %d rows held back under %s, the generator planted %d (all: %v)", child, got, rule, want, tr.QuarantinedBy)
					}
				}
				for rule, got := range tr.QuarantinedBy {
					if _, ok := heldBy[rule]; !ok && got != 0 {
						t.Errorf("%s: %d rows held back under %s, a rule the generator planted nothing for", child, got, rule)
					}
				}
			}
			if !found {
				t.Fatalf("no result for %s", child)
			}
		})
	}
}
