package icesink

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

// TestLoadIDIsLookedForBackToTheLastReplace: a commit whose load id is in
// the table's current lineage is found, not applied again; one found only
// before the latest replace is history and is applied.
func TestLoadIDIsLookedForBackToTheLastReplace(t *testing.T) {
	ctx := context.Background()
	tb := longTable(t, "id")
	commit := func(loadID string, replace bool, vs ...int64) sink.Commit {
		t.Helper()
		st := stageOne(t, tb, ids(vs...)...)
		c, err := tb.Commit(ctx, st, sink.CommitProps{LoadID: loadID, Replace: replace})
		if err != nil {
			t.Fatalf("commit %s: %v", loadID, err)
		}
		if c.AlreadyCommitted {
			_ = st.Discard(ctx)
		}
		return c
	}
	commit("l1", false, 1)
	commit("l2", false, 2)
	if c := commit("l1", false, 1); !c.AlreadyCommitted || c.Attempts != 1 {
		t.Fatalf("l1 again before any replace: %+v, want found", c)
	}
	wantRows(t, tb, "1", "2")
	commit("r", true, 7)
	commit("l3", false, 3)
	if c := commit("r", true, 7); !c.AlreadyCommitted {
		t.Fatalf("the replace again: %+v, want found", c)
	}
	if c := commit("l1", false, 1); c.AlreadyCommitted || c.LoadID != "l1" {
		t.Fatalf("l1 after the replace: %+v, want applied", c)
	}
	wantRows(t, tb, "1", "3", "7")
	// FindLoad searches every snapshot: l2 is found though replaced.
	if c, ok, err := tb.FindLoad(ctx, "l2"); err != nil || !ok || c.LoadID != "l2" {
		t.Fatalf("FindLoad l2: %+v %v %v", c, ok, err)
	}
}

// TestCommitKinds: a commit carries its kind; one without (written before
// lima.kind) is a load; LastLoad skips what is not a load; History is the
// lineage newest first.
func TestCommitKinds(t *testing.T) {
	ctx := context.Background()
	tb := longTable(t, "id")
	// A snapshot with a load id and no kind, as older versions wrote it.
	st := stageOne(t, tb, ids(1)...)
	tbl, _ := tb.Load(ctx)
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, st.files, iceberg.Properties{sink.PropLoadID: "old"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if c, ok, err := tb.Current(ctx); err != nil || !ok || c.Kind != sink.KindLoad || c.LoadID != "old" {
		t.Fatalf("current: %+v %v %v, want load old of kind load", c, ok, err)
	}
	if _, err := tb.Commit(ctx, stageOne(t, tb, ids(2)...), sink.CommitProps{LoadID: "l1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Commit(ctx, stageOne(t, tb, ids(3)...), sink.CommitProps{LoadID: "fix", Kind: sink.KindReplay}); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := tb.Current(ctx); c.Kind != sink.KindReplay || c.LoadID != "fix" {
		t.Fatalf("current: %+v, want the replay", c)
	}
	if c, ok, err := tb.LastLoad(ctx); err != nil || !ok || c.LoadID != "l1" || c.Kind != sink.KindLoad {
		t.Fatalf("last load: %+v %v %v, want l1", c, ok, err)
	}
	// FindLoad searches every snapshot, the first one too.
	if c, ok, err := tb.FindLoad(ctx, "old"); err != nil || !ok || c.LoadID != "old" {
		t.Fatalf("FindLoad old: %+v %v %v", c, ok, err)
	}
	h, err := tb.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range h {
		got = append(got, c.LoadID+":"+c.Kind)
	}
	if want := []string{"fix:replay", "l1:load", "old:load"}; !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
}

// TestDefaultOptions: an unset backoff is 50ms, doubled, with full jitter
// (the first retry waits at least 25ms); an unset file size keeps a small
// staging in one file. Both for Open and for OpenCatalog.
func TestDefaultOptions(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"Open", "OpenCatalog"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fc := &failingCatalog{}
			o := Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake"),
				WrapCatalog: func(c table.CatalogIO) table.CatalogIO { fc.inner = c; return fc }}
			sk, err := Open(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			defer sk.Close()
			if name == "OpenCatalog" {
				if sk, err = OpenCatalog(ctx, Options{WrapCatalog: o.WrapCatalog}, sk.Catalog()); err != nil {
					t.Fatal(err)
				}
			}
			tb := openLong(t, sk, "id")
			st := stageOne(t, tb, ids(1, 2, 3)...)
			fc.n.Store(1)
			start := time.Now()
			c, err := tb.Commit(ctx, st, sink.CommitProps{LoadID: "l1"})
			if err != nil || c.Attempts != 2 || c.AlreadyCommitted {
				t.Fatalf("commit: %+v %v, want applied at the second attempt", c, err)
			}
			if d := time.Since(start); d < 25*time.Millisecond {
				t.Fatalf("the retry came after %v, want at least 25ms", d)
			}
			wantRows(t, tb, "1", "2", "3")
		})
	}
}

// TestSchemaFieldIDs: the schema of a spec numbers its fields 1..n in
// column order.
func TestSchemaFieldIDs(t *testing.T) {
	sc := Schema(longSpec("a", "b", "c"))
	var got []int
	for _, f := range sc.Fields() {
		got = append(got, f.ID)
	}
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("field ids %v, want [1 2 3]", got)
	}
}

// createdMeanwhile is a catalog in which the table is created by another
// writer between OpenTable's look and its create.
type createdMeanwhile struct {
	catalog.Catalog
	create func()
}

func (c *createdMeanwhile) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	if c.create != nil {
		f := c.create
		c.create = nil
		f()
		return nil, catalog.ErrNoSuchTable
	}
	return c.Catalog.LoadTable(ctx, id)
}

// TestOpenTableCreatedMeanwhile: a table another writer creates while this
// one opens it is opened, not an error.
func TestOpenTableCreatedMeanwhile(t *testing.T) {
	ctx := context.Background()
	other := longSink(t)
	cat := &createdMeanwhile{Catalog: other.Catalog(), create: func() { openLong(t, other, "id") }}
	sk, err := OpenCatalog(ctx, Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := sk.OpenTable(ctx, longSpec("id"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := tb.Commit(ctx, stageOne(t, tb.(*Table), ids(1)...), sink.CommitProps{LoadID: "l1"}); err != nil {
		t.Fatal(err)
	}
	wantRows(t, tb.(*Table), "1")
}

// TestEvolutionChangedMeanwhile: when another writer evolves the table
// after this load was staged under its own evolution, the commit fails
// and commits nothing.
func TestEvolutionChangedMeanwhile(t *testing.T) {
	ctx := context.Background()
	sk := longSink(t)
	base := openLong(t, sk, "a")
	if _, err := base.Commit(ctx, stageOne(t, base, []int64{1}), sink.CommitProps{LoadID: "l0"}); err != nil {
		t.Fatal(err)
	}
	mine := openLong(t, sk, "a", "y")
	st := stageOne(t, mine, []int64{2, 3})
	theirs := openLong(t, sk, "a", "x")
	if _, err := theirs.Commit(ctx, stageOne(t, theirs, []int64{4, 5}), sink.CommitProps{LoadID: "theirs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Commit(ctx, st, sink.CommitProps{LoadID: "mine"}); !errors.Is(err, sink.ErrCommitFailed) {
		t.Fatalf("commit after another evolution: %v, want %v", err, sink.ErrCommitFailed)
	}
	_ = st.Discard(ctx)
	wantRows(t, theirs, "1,-", "4,5")
}

// TestLastAttemptAppliedIsFound: when the last attempt's outcome is
// unknown (the catalog applied it, then reported an error), the commit
// looks once more and finds it: reported committed, never applied twice.
func TestLastAttemptAppliedIsFound(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fc := &failingCatalog{apply: true}
	sk, err := Open(ctx, Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake"), MaxAttempts: 1,
		WrapCatalog: func(c table.CatalogIO) table.CatalogIO { fc.inner = c; return fc }})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tb := openLong(t, sk, "id")
	fc.n.Store(1)
	c, err := tb.Commit(ctx, stageOne(t, tb, ids(1, 2)...), sink.CommitProps{LoadID: "l1"})
	if err != nil || !c.AlreadyCommitted || c.LoadID != "l1" || c.Attempts != 1 {
		t.Fatalf("commit: %+v %v, want found after its only attempt", c, err)
	}
	wantRows(t, tb, "1", "2")
	tbl, _ := tb.Load(ctx)
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots, want 1", n)
	}
}

// TestNothingToCommit: a commit that adds no row and deletes none never
// passes for an earlier snapshot; a delta whose keys match no row but that
// adds rows is committed.
func TestNothingToCommit(t *testing.T) {
	ctx := context.Background()
	tb := longTable(t, "id")
	empty, err := tb.Stage(ctx, func(func(arrow.RecordBatch, error) bool) {})
	if err != nil {
		t.Fatal(err)
	}
	// On an empty table iceberg-go makes a snapshot of no file: it is
	// this load's own, or the commit is refused.
	if c, err := tb.Commit(ctx, empty, sink.CommitProps{LoadID: "nothing"}); err == nil {
		if cur, ok, _ := tb.Current(ctx); c.LoadID != "nothing" || !ok || cur.LoadID != "nothing" {
			t.Fatalf("empty commit on an empty table: %+v, current %+v", c, cur)
		}
	} else if !errors.Is(err, sink.ErrNothingToCommit) {
		t.Fatalf("empty commit on an empty table: %v", err)
	}
	if _, err := tb.Commit(ctx, stageOne(t, tb, ids(1)...), sink.CommitProps{LoadID: "l1"}); err != nil {
		t.Fatal(err)
	}
	c, err := tb.CommitDelta(ctx, stageOne(t, tb, ids(5)...), sink.CommitProps{LoadID: "insert"}, keysOf([]string{"id"}, ids(5)...))
	if err != nil || c.Deleted != 0 || c.LoadID != "insert" {
		t.Fatalf("insert-only delta: %+v %v", c, err)
	}
	empty, _ = tb.Stage(ctx, func(func(arrow.RecordBatch, error) bool) {})
	if _, err := tb.CommitDelta(ctx, empty, sink.CommitProps{LoadID: "none"}, keysOf([]string{"id"}, ids(99)...)); !errors.Is(err, sink.ErrNothingToCommit) {
		t.Fatalf("a delta of nothing: %v, want %v", err, sink.ErrNothingToCommit)
	}
	wantRows(t, tb, "1", "5")
}

// TestScanSnapshotAndColumns: Scan reads the snapshot asked for (0: the
// current one) and only the columns asked for (none: all).
func TestScanSnapshotAndColumns(t *testing.T) {
	ctx := context.Background()
	tb := longTable(t, "a", "b")
	first, err := tb.Commit(ctx, stageOne(t, tb, []int64{1, 2}), sink.CommitProps{LoadID: "l1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Commit(ctx, stageOne(t, tb, []int64{3, 4}), sink.CommitProps{LoadID: "l2"}); err != nil {
		t.Fatal(err)
	}
	read := func(snap int64, cols []string) (n int64, width int) {
		it, err := tb.Scan(ctx, snap, cols)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			n += rec.NumRows()
			width = int(rec.NumCols())
			rec.Release()
		}
		return n, width
	}
	if n, w := read(0, nil); n != 2 || w != 2 {
		t.Fatalf("current: %d rows of %d columns, want 2 of 2", n, w)
	}
	if n, w := read(first.SnapshotID, nil); n != 1 || w != 2 {
		t.Fatalf("first snapshot: %d rows of %d columns, want 1 of 2", n, w)
	}
	if n, w := read(0, []string{"b"}); n != 2 || w != 1 {
		t.Fatalf("column b: %d rows of %d columns, want 2 of 1", n, w)
	}
}
