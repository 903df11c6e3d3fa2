package icesink_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
)

// memInventory is an Inventory in memory: the write ids recorded, in order,
// and those still open.
type memInventory struct {
	mu    sync.Mutex
	begun []string
	open  map[string]string // write id → table
}

func (m *memInventory) BeginStaging(_ context.Context, table, writeID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begun = append(m.begun, writeID)
	m.open[writeID] = table
	return nil
}

func (m *memInventory) EndStaging(_ context.Context, writeID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.open, writeID)
	return nil
}

func parquetFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestStagingInventory: every staging is recorded before its files are
// written and forgotten once committed or discarded; RemoveStaged removes
// the files of a staging that was never committed — and keeps committed
// files named with a recorded id, files of other stagings, foreign files
// and symbolic links, byte for byte.
func TestStagingInventory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inv := &memInventory{open: map[string]string{}}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake"), Inventory: inv})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.OpenTable(ctx, sinktest.Spec("staged"))
	if err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "lake", "conformance.db", "staged", "data")

	// A committed load: recorded, then forgotten.
	st, err := tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	committedID := inv.begun[0]
	if inv.open[committedID] != "conformance.staged" {
		t.Fatalf("staging not recorded before the commit: %v", inv.open)
	}
	if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "load-1", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	if len(inv.open) != 0 {
		t.Fatalf("stagings open after the commit: %v", inv.open)
	}
	committed := parquetFiles(t, dataDir)
	if len(committed) == 0 {
		t.Fatal("the commit wrote no file")
	}
	for _, f := range committed {
		if !strings.Contains(filepath.Base(f), committedID) {
			t.Fatalf("data file %s does not carry its staging's write id %s", f, committedID)
		}
	}

	// A discarded staging is forgotten too.
	st, err = tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), 4))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if len(inv.open) != 0 {
		t.Fatalf("stagings open after a discard: %v", inv.open)
	}

	// A staging whose process "died": staged, never committed, record left.
	if _, err = tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), 5, 6, 70)); err != nil {
		t.Fatal(err)
	}
	killedID := inv.begun[len(inv.begun)-1]
	var killed []string
	for _, f := range parquetFiles(t, dataDir) {
		if strings.Contains(filepath.Base(f), killedID) {
			killed = append(killed, f)
		}
	}
	if len(killed) == 0 {
		t.Fatal("the uncommitted staging wrote no file")
	}
	// A half-written stub of the same staging, a foreign file, and a
	// symbolic link named with the id that points at a foreign file.
	stub := filepath.Join(dataDir, "day_month=2026-01", "00000-9-"+killedID+"-00009.parquet")
	if err := os.MkdirAll(filepath.Dir(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stub, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dataDir, "someone-elses.parquet")
	foreignBytes := []byte("not Lima's")
	if err := os.WriteFile(foreign, foreignBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside.parquet")
	if err := os.WriteFile(outside, foreignBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dataDir, "link-"+killedID+".parquet")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}

	rm := any(sk).(sink.StagingRemover)
	// The committed staging's id removes nothing: its files are referenced.
	if n, err := rm.RemoveStaged(ctx, "conformance.staged", committedID); err != nil || n != 0 {
		t.Fatalf("RemoveStaged(committed) = %d, %v; want 0", n, err)
	}
	n, err := rm.RemoveStaged(ctx, "conformance.staged", killedID)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(killed)+1 {
		t.Fatalf("RemoveStaged removed %d files, want the %d staged ones and the stub", n, len(killed)+1)
	}
	if got := parquetFiles(t, dataDir); !slices.Equal(got, append(slices.Clone(committed), foreign)) {
		t.Fatalf("files left %v, want the committed ones %v and the foreign file", got, committed)
	}
	for _, f := range []string{foreign, outside} {
		if b, err := os.ReadFile(f); err != nil || !bytes.Equal(b, foreignBytes) {
			t.Fatalf("%s changed: %q %v", f, b, err)
		}
	}
	if _, err := os.Lstat(link); err != nil {
		t.Fatalf("the symbolic link was removed: %v", err)
	}
	if c := sinktest.Count(t, tbl); c != 3 {
		t.Fatalf("table rows %d after the removal, want 3", c)
	}
	// Ids that are no write id, and tables that do not exist.
	if _, err := rm.RemoveStaged(ctx, "conformance.staged", "0"); err == nil {
		t.Fatal("a short write id was accepted")
	}
	if n, err := rm.RemoveStaged(ctx, "conformance.gone", killedID); err != nil || n != 0 {
		t.Fatalf("RemoveStaged on a missing table = %d, %v", n, err)
	}
}
