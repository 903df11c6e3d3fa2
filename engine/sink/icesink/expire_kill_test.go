package icesink_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
)

// TestRemoveUncommittedLeavesAnExpiryItsEvidence: a maintain killed after
// its expiry committed, before the cleanup of what only the expired
// snapshots used. Those snapshots' manifest lists and manifests are in the
// metadata folder, unreferenced by the current metadata and — loads just
// before the maintain — as young as a killed commit's leftovers. Removing
// a killed commit's leftovers (RemoveUncommitted, which the next run or
// maintain calls first) must keep them: they were committed (an earlier
// metadata version names them), and a manifest list is the expiry
// cleanup's evidence — with it gone the cleanup counts as done and the
// data files only those snapshots used stay for ever. After both steps
// nothing the current metadata does not reference is left.
func TestRemoveUncommittedLeavesAnExpiryItsEvidence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	since := time.Now() // the killed maintain's record: the loads below fall in its window
	st, err := sk.OpenTable(ctx, sinktest.Spec("exp"))
	if err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(dir, "lake", "conformance.db", "exp")
	var firstData []string
	for i, ids := range [][]int64{{1, 2}, {3, 4}, {5}} {
		staged, err := st.Stage(ctx, sinktest.Batches(st.Schema(), ids...))
		if err != nil {
			t.Fatal(err)
		}
		// The third load replaces the table: the first two loads' data
		// files are then used only by the snapshots that expire.
		if _, err := st.Commit(ctx, staged, sink.CommitProps{LoadID: fmt.Sprint("load-", i), RunID: "r", Replace: i == 2}); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			firstData = parquetFiles(t, filepath.Join(loc, "data"))
		}
	}
	if len(firstData) == 0 {
		t.Fatal("the first two loads wrote no data file")
	}
	ident := table.Identifier{"conformance", "exp"}
	tbl, err := sk.Catalog().LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 3 {
		t.Fatalf("%d snapshots before the expiry, want 3", n)
	}
	var expiredLists []string
	for _, s := range tbl.Metadata().Snapshots() {
		if s.SnapshotID != tbl.CurrentSnapshot().SnapshotID {
			expiredLists = append(expiredLists, s.ManifestList)
		}
	}
	// The killed maintain: its expiry committed, nothing cleaned up.
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(1), table.WithOlderThan(0), table.WithPostCommit(false)); err != nil {
		t.Fatal(err)
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(after.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots after the expiry, want 1", n)
	}
	// A leftover of the killed process that no metadata version names.
	stray := filepath.Join(loc, "metadata", "00009-0f0e0d0c-0b0a-4908-8706-050403020100.metadata.json")
	if err := os.WriteFile(stray, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	n, err := sk.RemoveUncommitted(ctx, "conformance.exp", since)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("RemoveUncommitted removed %d files, want 1 (the stray metadata file)", n)
	}
	if _, err := os.Lstat(stray); err == nil {
		t.Errorf("the stray metadata file is still there")
	}
	for _, l := range expiredLists {
		p := l
		if u, ok := cutFileScheme(l); ok {
			p = u
		}
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("RemoveUncommitted removed the expired snapshot's manifest list %s: %v", l, err)
		}
	}

	// The next maintain finishes the expiry.
	if _, _, err := icesink.Expire(ctx, after, icesink.ExpirePolicy{RetainLast: 1, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, f := range firstData {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("data file %s, used only by the expired snapshots, is still there", filepath.Base(f))
		}
	}
	for _, l := range expiredLists {
		p, _ := cutFileScheme(l)
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the expired snapshot's manifest list %s is still there", filepath.Base(p))
		}
	}
	left := parquetFiles(t, filepath.Join(loc, "data"))
	sort.Strings(left)
	if len(left) != 1 {
		t.Errorf("data files left %v, want only the third load's", left)
	}
}

func cutFileScheme(s string) (string, bool) {
	const pre = "file://"
	if len(s) > len(pre) && s[:len(pre)] == pre {
		return s[len(pre):], true
	}
	return s, false
}
