package run

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// skewSink opens the real Iceberg tables, but its tables stage one row
// fewer (drop) or one row more (invent) than they were given: a sink bug
// the loader must catch before anything is committed.
type skewSink struct {
	sink.Sink
	skew int // -1: lose the first row; +1: write the first row twice; 0: honest
}

type skewTable struct {
	*icesink.Table
	skew int
}

func (s skewSink) OpenTable(ctx context.Context, spec sink.TableSpec) (sink.Table, error) {
	t, err := s.Sink.OpenTable(ctx, spec)
	if err != nil {
		return t, err
	}
	return skewTable{t.(*icesink.Table), s.skew}, nil
}

func (t skewTable) Stage(ctx context.Context, batches iter.Seq2[arrow.RecordBatch, error]) (sink.Staged, error) {
	done := t.skew == 0
	return t.Table.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) {
		for b, err := range batches {
			if err != nil || done || b.NumRows() == 0 {
				if !yield(b, err) {
					return
				}
				continue
			}
			done = true
			switch t.skew {
			case -1:
				rest := b.NewSlice(1, b.NumRows())
				b.Release()
				if !yield(rest, nil) {
					return
				}
			case +1:
				first := b.NewSlice(0, 1)
				if !yield(b, nil) {
					first.Release()
					return
				}
				if !yield(first, nil) {
					return
				}
			}
		}
	})
}

// The conservation identity is a precondition of the commit: when the rows
// the sink staged are not the rows read minus those held back and skipped,
// the load fails, no snapshot is made and no exception is published. The
// honest sink is the control: the same input commits 9 rows and publishes
// the 1 exception, so the harness does see a commit when there is one.
func TestConservationGuardRefusesTheCommit(t *testing.T) {
	for _, c := range []struct {
		name string
		skew int
	}{{"sink loses a row", -1}, {"sink invents a row", +1}, {"honest sink", 0}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p, err := plan.Parse([]byte(`schema_version: 1
platform: {prefix: cdc}
sources: {in: {kind: files, path: in}}
tables:
  items:
    source: {name: in, files: ["items.csv"]}
    columns: [{name: id, type: long}, {name: qty, type: long}]
    checks: [{rule: range, column: qty, min: 0, max: 100}]
`), "platform.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "in"), 0o700); err != nil {
				t.Fatal(err)
			}
			// 10 data rows by hand; the row with qty 500 fails the range check.
			csv := "id,qty\n1,10\n2,20\n3,30\n4,40\n5,500\n6,60\n7,70\n8,80\n9,90\n10,100\n"
			if err := os.WriteFile(filepath.Join(dir, "in", "items.csv"), []byte(csv), 0o600); err != nil {
				t.Fatal(err)
			}
			sk, err := icesink.Open(context.Background(), icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
			if err != nil {
				t.Fatal(err)
			}
			defer sk.Close()
			qdir := filepath.Join(dir, "q")
			res, err := Load(context.Background(), Options{Workspace: dir, Plan: p, Sink: skewSink{sk, c.skew},
				Quarantine: &JSONLQuarantine{Dir: qdir}, RunID: "run-1", BatchRows: 4})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tables[0]
			// Read with iceberg-go itself: what a reader sees.
			tbl, err := sk.Catalog().LoadTable(context.Background(), table.Identifier{"cdc", "items"})
			if err != nil {
				t.Fatal(err)
			}
			published, pending := quarantineFiles(t, qdir)
			if c.skew == 0 {
				if tr.Err != nil || tr.RowsLoaded != 9 || tr.RowsQuarantined != 1 {
					t.Fatalf("honest sink: err %v, loaded %d, quarantined %d", tr.Err, tr.RowsLoaded, tr.RowsQuarantined)
				}
				if tbl.CurrentSnapshot() == nil || len(published) != 1 {
					t.Fatalf("honest sink: snapshot %v, published %v", tbl.CurrentSnapshot(), published)
				}
				return
			}
			if tr.Err == nil || !strings.Contains(tr.Err.Error(), "do not balance") || !strings.Contains(tr.Err.Error(), "nothing committed") {
				t.Fatalf("the unbalanced load was not refused: err %v (read %d, loaded %d, quarantined %d, skipped %d)",
					tr.Err, tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
			}
			if snap := tbl.CurrentSnapshot(); snap != nil {
				t.Fatalf("a snapshot was committed: %d with %v", snap.SnapshotID, snap.Summary)
			}
			if tr.Commit.SnapshotID != 0 {
				t.Errorf("the result names snapshot %d", tr.Commit.SnapshotID)
			}
			if len(published) != 0 || len(pending) != 0 {
				t.Errorf("exceptions of the refused load: published %v, pending %v", published, pending)
			}
		})
	}
}

// quarantineFiles lists the published and the pending exception files.
func quarantineFiles(t *testing.T, dir string) (published, pending []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pending") {
			pending = append(pending, e.Name())
		} else {
			published = append(published, e.Name())
		}
	}
	sort.Strings(published)
	sort.Strings(pending)
	return published, pending
}

// The same guard holds for a change-capture batch: the one lifecycle
// checks it before the history's and the table's commits, so a sink that
// loses or invents a row leaves both tables without a snapshot and no
// exception behind. 4 changes by hand: 3 inserts and 1 whose amount is
// not a number (held back); the honest sink applies 3.
func TestConservationGuardRefusesTheCDCCommit(t *testing.T) {
	for _, c := range []struct {
		name string
		skew int
	}{{"sink loses a row", -1}, {"sink invents a row", +1}, {"honest sink", 0}} {
		t.Run(c.name, func(t *testing.T) {
			e := newCDCEnv(t)
			e.write(t, "c1.csv", "op,seq,id,name,amount\nI,1,1,ann,10\nI,2,2,bob,20\nI,3,3,cy,x\nI,4,4,dee,40\n")
			qdir := filepath.Join(e.dir, "q")
			res, err := Load(context.Background(), Options{Workspace: e.dir, Plan: e.plan, Sink: skewSink{e.sk, c.skew},
				Quarantine: &JSONLQuarantine{Dir: qdir}, RunID: "run-1", BatchRows: 2})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tables[0]
			snap := func(name string) *int64 {
				tbl, err := e.sk.Catalog().LoadTable(context.Background(), table.Identifier{"cdc", name})
				if err != nil {
					t.Fatal(err)
				}
				if s := tbl.CurrentSnapshot(); s != nil {
					return &s.SnapshotID
				}
				return nil
			}
			published, pending := quarantineFiles(t, qdir)
			if c.skew == 0 {
				// read: the header line (skipped) and the 4 changes
				if tr.Err != nil || tr.RowsRead != 5 || tr.RowsLoaded != 3 || tr.RowsQuarantined != 1 || tr.RowsSkipped != 1 {
					t.Fatalf("honest sink: err %v, read %d, loaded %d, quarantined %d, skipped %d", tr.Err, tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
				}
				if snap("customers") == nil || snap("customers_history") == nil || len(published) != 1 {
					t.Fatalf("honest sink: snapshots %v %v, published %v", snap("customers"), snap("customers_history"), published)
				}
				return
			}
			if tr.Err == nil || !strings.Contains(tr.Err.Error(), "do not balance") || !strings.Contains(tr.Err.Error(), "nothing committed") {
				t.Fatalf("the unbalanced batch was not refused: err %v (read %d, loaded %d, quarantined %d, skipped %d)",
					tr.Err, tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
			}
			for _, n := range []string{"customers", "customers_history"} {
				if s := snap(n); s != nil {
					t.Errorf("%s: snapshot %d committed", n, *s)
				}
			}
			if len(published) != 0 || len(pending) != 0 {
				t.Errorf("exceptions of the refused batch: published %v, pending %v", published, pending)
			}
		})
	}
}

// And for a replay: two held rows (qty 500 and 600 break the range
// check), fixed by hand to 50 and 60, replayed through a sink that loses
// or invents a row. The guard runs before the replay's commit: the table
// keeps the load's snapshot and both exceptions stay fixed, ready for the
// next replay. (Before the one lifecycle, a replay checked the balance
// after its commit: the wrong rows were visible and marked replayed.)
func TestConservationGuardRefusesTheReplayCommit(t *testing.T) {
	for _, c := range []struct {
		name string
		skew int
	}{{"sink loses a row", -1}, {"sink invents a row", +1}, {"honest sink", 0}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			p, err := plan.Parse([]byte(`schema_version: 1
platform: {prefix: cdc}
sources: {in: {kind: files, path: in}}
tables:
  items:
    source: {name: in, files: ["items.csv"]}
    columns: [{name: id, type: long}, {name: qty, type: long}]
    checks: [{rule: range, column: qty, min: 0, max: 100}]
`), "platform.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "in"), 0o700); err != nil {
				t.Fatal(err)
			}
			csv := "id,qty\n1,10\n2,20\n3,500\n4,40\n5,600\n"
			if err := os.WriteFile(filepath.Join(dir, "in", "items.csv"), []byte(csv), 0o600); err != nil {
				t.Fatal(err)
			}
			sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
			if err != nil {
				t.Fatal(err)
			}
			defer sk.Close()
			res, err := Load(ctx, Options{Workspace: dir, Plan: p, Sink: sk, Quarantine: &JSONLQuarantine{Dir: filepath.Join(dir, "q")}, RunID: "run-1"})
			if err != nil || res.Tables[0].Err != nil || res.Tables[0].RowsLoaded != 3 {
				t.Fatalf("load: %v %+v", err, res.Tables[0])
			}
			loadSnap := res.Tables[0].Commit.SnapshotID
			st, err := ledger.OpenSQLite(filepath.Join(dir, "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ex := []ledger.Exception{
				{RunID: "run-1", LoadID: "ld-1", Table: "items", Level: ledger.LevelRow, File: "items.csv", Line: 4, Raw: []byte("3,500"),
					Values: map[string]string{"id": "3", "qty": "500"}, Failures: []ledger.Failure{{Column: "qty", Value: "500", Rule: "range"}}},
				{RunID: "run-1", LoadID: "ld-1", Table: "items", Level: ledger.LevelRow, File: "items.csv", Line: 6, Raw: []byte("5,600"),
					Values: map[string]string{"id": "5", "qty": "600"}, Failures: []ledger.Failure{{Column: "qty", Value: "600", Rule: "range"}}},
			}
			if err := st.AddPending(ctx, ex); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Publish(ctx, "items", "ld-1"); err != nil {
				t.Fatal(err)
			}
			for i, e := range ex {
				if err := st.Resolve(ctx, e.ID, map[string]string{"qty": []string{"50", "60"}[i]}, "test", ""); err != nil {
					t.Fatal(err)
				}
			}
			trs, err := Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: skewSink{sk, c.skew}, Store: st, RunID: "run-2", By: "test"})
			if err != nil || len(trs) != 1 {
				t.Fatalf("replay: %v, %d tables", err, len(trs))
			}
			tr := trs[0]
			tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{"cdc", "items"})
			if err != nil {
				t.Fatal(err)
			}
			status := func(id int64) string {
				e, err := st.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return e.Status
			}
			if c.skew == 0 {
				if tr.Err != nil || tr.RowsRead != 2 || tr.RowsLoaded != 2 || tbl.CurrentSnapshot().SnapshotID == loadSnap {
					t.Fatalf("honest sink: err %v, read %d, loaded %d, snapshot %d (load's %d)", tr.Err, tr.RowsRead, tr.RowsLoaded, tbl.CurrentSnapshot().SnapshotID, loadSnap)
				}
				for _, e := range ex {
					if s := status(e.ID); s != ledger.StatusReplayed {
						t.Errorf("honest sink: exception %d is %s", e.ID, s)
					}
				}
				return
			}
			if s := tbl.CurrentSnapshot().SnapshotID; s != loadSnap {
				t.Errorf("a replay snapshot was committed: %d (the load's: %d)", s, loadSnap)
			}
			for _, e := range ex {
				if s := status(e.ID); s != ledger.StatusFixed {
					t.Errorf("exception %d is %s, want fixed", e.ID, s)
				}
			}
			if tr.Err == nil || !strings.Contains(tr.Err.Error(), "do not balance") || !strings.Contains(tr.Err.Error(), "nothing committed") {
				t.Errorf("the unbalanced replay was not refused: err %v (read %d, loaded %d, quarantined %d)", tr.Err, tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined)
			}
		})
	}
}
