package gates_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// TestNewcomerPathAppliesChangeFiles: a base export and its change files,
// proposed, applied without edits and run, leave the lake equal to the
// generator's own replay of the changes onto the base rows, on 6 seeds.
func TestNewcomerPathAppliesChangeFiles(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		files, name, keyHeader, headers, want := gates.GenChangesForTest(seed)
		t.Run(fmt.Sprintf("seed%d_%s", seed, name), func(t *testing.T) {
			ws := t.TempDir()
			for n, body := range files {
				p := filepath.Join(ws, "data", filepath.FromSlash(n))
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
			tb := p.Tables[name]
			if tb == nil || tb.Load.Mode != plan.ModeCDC {
				t.Fatalf("tables %v: want %s in mode cdc", p.TableNames(), name)
			}
			// The lake's column of each header.
			col := map[string]string{}
			for _, c := range tb.Columns {
				h := c.SourceName
				if h == "" {
					h = c.Name
				}
				col[h] = c.Name
			}
			out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: flow.Workspace{Dir: ws}, Plan: p, Force: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range out.Result.Tables {
				if tr.Err != nil || tr.RowsQuarantined != 0 || !tr.Balanced() {
					t.Fatalf("%s: err %v, held back %d %v, balanced %v", tr.Name, tr.Err, tr.RowsQuarantined, tr.QuarantinedBy, tr.Balanced())
				}
			}
			// Gate 4 (which recomputes a change-capture table from its
			// history) passes.
			if out.Report.Status != "ok" {
				for _, rt := range out.Report.Tables {
					for _, c := range rt.Checks {
						if c.Status == gates.Fail {
							t.Errorf("%s: %s failed: %s", rt.Name, c.Name, c.Detail)
						}
					}
				}
				t.Fatalf("run status %s, want ok", out.Report.Status)
			}
			got := readTable(t, ws, p, name, col[keyHeader], headers, col)
			if len(got) != len(want) {
				t.Errorf("lake has %d rows, the replay %d", len(got), len(want))
			}
			for k, w := range want {
				if g := got[k]; g != strings.Join(w, "|") {
					t.Errorf("key %s: lake %q, replay %q", k, g, strings.Join(w, "|"))
				}
			}
		})
	}
}

// readTable reads a lake table with iceberg-go: key → the cells of the
// given headers joined with "|".
func readTable(t *testing.T, ws string, p *plan.Plan, name, keyCol string, headers []string, col map[string]string) map[string]string {
	t.Helper()
	ctx := context.Background()
	sk, err := flow.OpenSink(ctx, flow.Workspace{Dir: ws}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), name})
	if err != nil {
		t.Fatal(err)
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		idx := map[string]int{}
		for i, f := range rec.Schema().Fields() {
			idx[f.Name] = i
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			var cells []string
			for _, h := range headers {
				cells = append(cells, cell(rec.Column(idx[col[h]]), r))
			}
			out[cell(rec.Column(idx[keyCol]), r)] = strings.Join(cells, "|")
		}
		rec.Release()
	}
	return out
}

func cell(a arrow.Array, r int) string {
	if a.IsNull(r) {
		return "NULL"
	}
	switch v := a.(type) {
	case *array.String:
		return v.Value(r)
	case *array.Int32:
		return fmt.Sprint(v.Value(r))
	case *array.Int64:
		return fmt.Sprint(v.Value(r))
	case *array.Decimal128:
		return v.Value(r).ToString(v.DataType().(*arrow.Decimal128Type).Scale)
	}
	return a.ValueStr(r)
}
