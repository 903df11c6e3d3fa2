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
