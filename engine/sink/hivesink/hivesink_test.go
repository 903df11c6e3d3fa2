package hivesink_test

import (
	"context"
	"fmt"
	"io/fs"
	"iter"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/hivesink"
)

var fixedDay = time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)

func siteSpec() sink.TableSpec {
	return sink.TableSpec{Name: "visits", Namespace: "lake",
		Columns:   []plan.Column{{Name: "id", Type: "long", Required: true}, {Name: "site", Type: "string"}, {Name: "note", Type: "string"}},
		Types:     []plan.Type{{Kind: plan.Long}, {Kind: plan.String}, {Kind: plan.String}},
		Required:  []bool{true, false, false},
		Partition: []plan.PartitionField{{Column: "site", Transform: plan.TransformIdentity}},
	}
}

type row struct {
	id   int64
	site *string
	note string
}

func rowsOf(sc *arrow.Schema, rows []row, per int) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for start := 0; start < len(rows); start += per {
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for _, r := range rows[start:min(start+per, len(rows))] {
				b.Field(0).(*array.Int64Builder).Append(r.id)
				if r.site == nil {
					b.Field(1).AppendNull()
				} else {
					b.Field(1).(*array.StringBuilder).Append(*r.site)
				}
				b.Field(2).(*array.StringBuilder).Append(r.note)
			}
			rec := b.NewRecordBatch()
			b.Release()
			if !yield(rec, nil) {
				rec.Release()
				return
			}
		}
	}
}

func open(t *testing.T, dir string, o hivesink.Options) (*hivesink.Sink, *hivesink.Table) {
	t.Helper()
	o.Warehouse = dir
	if o.Now == nil {
		o.Now = func() time.Time { return fixedDay }
	}
	sk, err := hivesink.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.OpenTable(context.Background(), siteSpec())
	if err != nil {
		t.Fatal(err)
	}
	return sk, tbl.(*hivesink.Table)
}

// scanAll reads the committed rows back: id -> site (nil for null).
func scanAll(t *testing.T, tbl *hivesink.Table) map[int64]*string {
	t.Helper()
	it, err := tbl.Scan(context.Background(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]*string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids, sites := rec.Column(0).(*array.Int64), rec.Column(1).(*array.String)
		for i := range int(rec.NumRows()) {
			if _, dup := out[ids.Value(i)]; dup {
				t.Fatalf("id %d read twice", ids.Value(i))
			}
			if sites.IsNull(i) {
				out[ids.Value(i)] = nil
			} else {
				s := sites.Value(i)
				out[ids.Value(i)] = &s
			}
		}
		rec.Release()
	}
	return out
}

// parquetFiles lists every .parquet file under dir, relative to it.
func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func ptr(s string) *string { return &s }

// TestHostileValuesStayInTheirTable writes key values that try to leave
// the table's folder or break the layout, and checks every file lands in
// the partition folder its rows' value escapes to, under the table.
func TestHostileValuesStayInTheirTable(t *testing.T) {
	dir := t.TempDir()
	_, tbl := open(t, dir, hivesink.Options{})
	values := []*string{ptr("../../etc"), ptr("a/b"), ptr(".."), ptr("."), ptr(""), nil, ptr("100%"), ptr("k=v"), ptr(`c:\x`), ptr("협력사"),
		ptr("tab\there"), ptr("\u202Eevil"), ptr("__HIVE_DEFAULT_PARTITION__"), ptr(strings.Repeat("long/", 80)), ptr("plain")}
	var rows []row
	for i := range 300 {
		rows = append(rows, row{id: int64(i), site: values[i%len(values)], note: "n"})
	}
	st, err := tbl.Stage(context.Background(), rowsOf(tbl.Schema(), rows, 7))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(context.Background(), st, sink.CommitProps{LoadID: "ld-hostile", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	// Every data file is under <dir>/lake/visits/load_date=2026-11-30/site=<one segment>/.
	files := parquetFiles(t, dir)
	folders := map[string]bool{}
	for _, f := range files {
		segs := strings.Split(f, "/")
		if len(segs) != 5 || segs[0] != "lake" || segs[1] != "visits" || segs[2] != "load_date=2026-11-30" || !strings.HasPrefix(segs[3], "site=") {
			t.Errorf("data file outside its partition folder: %q", f)
		}
		folders[segs[3]] = true
	}
	// Expected folders, computed from the values: null and "" share Hive's
	// default partition; every other value has its own folder.
	want := map[string]bool{}
	for _, v := range values {
		if v == nil || *v == "" {
			want["<default>"] = true
		} else {
			want[*v] = true
		}
	}
	if len(folders) != len(want) {
		t.Fatalf("%d partition folders, want %d (one per distinct value): %v", len(folders), len(want), folders)
	}
	// Read back: every row, and each file's rows carry the value its folder names.
	got := scanAll(t, tbl)
	if len(got) != len(rows) {
		t.Fatalf("read back %d rows, want %d", len(got), len(rows))
	}
	for _, r := range rows {
		g, ok := got[r.id]
		if !ok || (g == nil) != (r.site == nil) || (g != nil && *g != *r.site) {
			t.Fatalf("row %d read back as %v, want %v", r.id, g, r.site)
		}
	}
	live, err := tbl.LiveFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range live {
		seg := strings.Split(f.Path, "/")[1]
		val := strings.TrimPrefix(seg, "site=")
		if u, ok := hivesink.UnescapeValue(val); ok && !strings.Contains(val, "~") && u != "" {
			n := 0
			for _, r := range rows {
				if r.site != nil && *r.site == u {
					n++
				}
			}
			if int64(n) != f.Rows {
				t.Errorf("folder %s holds %d rows, the data has %d rows with %q", seg, f.Rows, n, u)
			}
		}
	}
}

// TestFilesRollAtTargetSize: one partition written in many small batches
// becomes few files; a small target size makes several, each near it.
func TestFilesRollAtTargetSize(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var rows []row
	for i := range 40000 {
		rows = append(rows, row{id: int64(i), site: ptr("one"), note: fmt.Sprintf("%016x%016x", rnd.Uint64(), rnd.Uint64())})
	}
	t.Run("tiny batches, default target: one file", func(t *testing.T) {
		_, tbl := open(t, t.TempDir(), hivesink.Options{})
		st, err := tbl.Stage(context.Background(), rowsOf(tbl.Schema(), rows, 10))
		if err != nil {
			t.Fatal(err)
		}
		if st.Files() != 1 || st.Rows() != int64(len(rows)) {
			t.Fatalf("%d files, %d rows; want 1 file of %d rows", st.Files(), st.Rows(), len(rows))
		}
		st.Discard(context.Background())
	})
	t.Run("small target: several files near the target", func(t *testing.T) {
		const target = 128 << 10
		dir := t.TempDir()
		_, tbl := open(t, dir, hivesink.Options{TargetFileSize: target, RowGroupRows: 2000})
		st, err := tbl.Stage(context.Background(), rowsOf(tbl.Schema(), rows, 500))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Commit(context.Background(), st, sink.CommitProps{LoadID: "ld", RunID: "r"}); err != nil {
			t.Fatal(err)
		}
		files := parquetFiles(t, dir)
		var total int64
		for _, f := range files {
			fi, err := os.Stat(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			total += fi.Size()
		}
		// Independent of the writer: the number of files the total size
		// needs at this target, give or take the last partial file.
		minFiles := int(total / (target + 64<<10))
		if len(files) < 2 || len(files) < minFiles || len(files) > int(total/target)+1 {
			t.Fatalf("%d files for %d bytes at a %d-byte target", len(files), total, target)
		}
		if n := len(scanAll(t, tbl)); n != len(rows) {
			t.Fatalf("read back %d rows, want %d", n, len(rows))
		}
	})
}

// TestReplaceSupersedesAndRemovesOldFiles: a full refresh's manifest
// replaces the file set, and the old files leave the partition folders.
func TestReplaceSupersedesAndRemovesOldFiles(t *testing.T) {
	dir := t.TempDir()
	_, tbl := open(t, dir, hivesink.Options{})
	ctx := context.Background()
	st, _ := tbl.Stage(ctx, rowsOf(tbl.Schema(), []row{{1, ptr("a"), ""}, {2, ptr("b"), ""}}, 10))
	c1, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "one", RunID: "r1", Watermark: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	before := parquetFiles(t, dir)
	st, _ = tbl.Stage(ctx, rowsOf(tbl.Schema(), []row{{3, ptr("c"), ""}}, 10))
	c2, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "two", RunID: "r2", Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	after := parquetFiles(t, dir)
	if len(after) != 1 || slices.Contains(before, after[0]) {
		t.Fatalf("files after the replace: %v (before: %v)", after, before)
	}
	got := scanAll(t, tbl)
	if len(got) != 1 || got[3] == nil || *got[3] != "c" {
		t.Fatalf("after replace: %v", got)
	}
	if c2.SnapshotID <= c1.SnapshotID {
		t.Fatalf("commit ids %d then %d", c1.SnapshotID, c2.SnapshotID)
	}
	h, err := tbl.History(ctx)
	if err != nil || len(h) != 2 || h[0].LoadID != "two" || h[1].Watermark != "w1" {
		t.Fatalf("history %+v %v", h, err)
	}
	man, _ := filepath.Glob(filepath.Join(dir, "lake", "visits", "_lima", "commits", "*.json"))
	if len(man) != 2 || !strings.HasSuffix(man[1], "-two.json") {
		t.Fatalf("manifests %v", man)
	}
}

// TestUnlistedFilesAreNotRead: a Parquet file dropped into a partition
// folder without a manifest is not part of the table.
func TestUnlistedFilesAreNotRead(t *testing.T) {
	dir := t.TempDir()
	_, tbl := open(t, dir, hivesink.Options{})
	ctx := context.Background()
	st, _ := tbl.Stage(ctx, rowsOf(tbl.Schema(), []row{{1, ptr("a"), ""}}, 10))
	if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "one", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	f := parquetFiles(t, dir)[0]
	b, _ := os.ReadFile(filepath.Join(dir, f))
	os.WriteFile(filepath.Join(dir, filepath.Dir(f), "part-stray.parquet"), b, 0o644)
	if n := len(scanAll(t, tbl)); n != 1 {
		t.Fatalf("%d rows, want 1: a file no manifest lists was read", n)
	}
}

// The helper process of TestInterruptedPublish: stages 50 rows in two
// partitions and commits them, with LIMA_FAULTPOINT armed.
func TestHelperCrashCommit(t *testing.T) {
	dir := os.Getenv("HIVESINK_CRASH_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	_, tbl := open(t, dir, hivesink.Options{})
	st, err := tbl.Stage(context.Background(), rowsOf(tbl.Schema(), crashRows(), 10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(context.Background(), st, sink.CommitProps{LoadID: "ld-crash", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
}

func crashRows() []row {
	var rows []row
	for i := range 50 {
		rows = append(rows, row{id: int64(i), site: ptr([]string{"north", "south"}[i%2]), note: "x"})
	}
	return rows
}

// TestInterruptedPublish kills a process inside Commit (real SIGKILL
// through the fault points) and checks: before the manifest nothing is
// visible and the next OpenTable removes what was published, so the rerun
// commits the load once; after the manifest the load is committed and the
// rerun finds it.
func TestInterruptedPublish(t *testing.T) {
	for _, point := range []string{hivesink.FaultBeforePublish, hivesink.FaultMidPublish, hivesink.FaultAfterManifest} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrashCommit$", "-test.count=1")
			cmd.Env = append(os.Environ(), "HIVESINK_CRASH_DIR="+dir, "LIMA_FAULTPOINT="+point)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
				t.Fatalf("the helper was not killed: %v\n%s", err, out)
			}
			table := filepath.Join(dir, "lake", "visits")
			published := 0
			for _, f := range parquetFiles(t, table) {
				if !strings.HasPrefix(f, "_staging/") {
					published++
				}
			}
			committed := point == hivesink.FaultAfterManifest
			switch point {
			case hivesink.FaultBeforePublish:
				if published != 0 {
					t.Fatalf("%d files published before the publish", published)
				}
			default:
				if published == 0 {
					t.Fatalf("no file was published at %s", point)
				}
			}
			// A reader that does not open for writing sees only committed files.
			sk, err := hivesink.Open(context.Background(), hivesink.Options{Warehouse: dir})
			if err != nil {
				t.Fatal(err)
			}
			has, err := sk.HasLoad(context.Background(), "lake", "visits", "ld-crash")
			if err != nil || has != committed {
				t.Fatalf("HasLoad = %v %v, want %v", has, err, committed)
			}
			// The next run opens the table: the interrupted commit is settled.
			_, tbl := open(t, dir, hivesink.Options{})
			if len(tbl.Recovered) != 1 {
				t.Fatalf("recovered %v, want one entry", tbl.Recovered)
			}
			if _, err := os.Stat(filepath.Join(table, "_staging")); err == nil {
				if left := parquetFiles(t, filepath.Join(table, "_staging")); len(left) > 0 {
					t.Fatalf("staging left behind: %v", left)
				}
			}
			if !committed {
				if left := parquetFiles(t, table); len(left) != 0 {
					t.Fatalf("files of the interrupted load left in partition folders: %v", left)
				}
				if n := len(scanAll(t, tbl)); n != 0 {
					t.Fatalf("%d rows visible of a load that never committed", n)
				}
			}
			st, err := tbl.Stage(context.Background(), rowsOf(tbl.Schema(), crashRows(), 10))
			if err != nil {
				t.Fatal(err)
			}
			c, err := tbl.Commit(context.Background(), st, sink.CommitProps{LoadID: "ld-crash", RunID: "r2"})
			if err != nil {
				t.Fatal(err)
			}
			if c.AlreadyCommitted != committed {
				t.Fatalf("rerun: already committed = %v, want %v", c.AlreadyCommitted, committed)
			}
			if committed {
				st.Discard(context.Background())
			}
			if n := len(scanAll(t, tbl)); n != len(crashRows()) {
				t.Fatalf("%d rows after the rerun, want %d", n, len(crashRows()))
			}
			if n := len(parquetFiles(t, table)); n != 2 {
				t.Fatalf("%d data files after the rerun, want 2 (one per partition)", n)
			}
		})
	}
}

// TestSchemaAndPartitionChangesAreRefused: the table remembers its columns
// and its partitioning.
func TestSchemaAndPartitionChangesAreRefused(t *testing.T) {
	dir := t.TempDir()
	open(t, dir, hivesink.Options{})
	sk, _ := hivesink.Open(context.Background(), hivesink.Options{Warehouse: dir})
	s := siteSpec()
	s.Partition = nil
	if _, err := sk.OpenTable(context.Background(), s); err == nil || !strings.Contains(err.Error(), "partitioned") {
		t.Fatalf("re-partitioning accepted: %v", err)
	} else if !strings.Contains(err.Error(), "another table name") || !strings.Contains(err.Error(), "lima-tui teardown") {
		t.Fatalf("the refusal offers no way forward: %v", err)
	}
	s = siteSpec()
	s.Columns = append([]plan.Column(nil), s.Columns...)
	s.Columns[0].Name = "renamed"
	if _, err := sk.OpenTable(context.Background(), s); err == nil || !strings.Contains(err.Error(), "in the lake but") || !strings.Contains(err.Error(), "pattern iceberg evolve") {
		t.Fatalf("a renamed column: %v", err)
	}
	s = siteSpec()
	s.Partition = []plan.PartitionField{{Column: "id", Transform: plan.TransformBucket, Param: 4}}
	s.Name = "bucketed"
	if _, err := sk.OpenTable(context.Background(), s); err == nil || !strings.Contains(err.Error(), "bucket") {
		t.Fatalf("bucket partitioning accepted: %v", err)
	}
}

// TestColumnNamedLoadDate: a table with its own load_date column gets the
// partition key lima_load_date, so columns and partition keys stay
// disjoint, as Glue and Athena require.
func TestColumnNamedLoadDate(t *testing.T) {
	dir := t.TempDir()
	sk, _ := hivesink.Open(context.Background(), hivesink.Options{Warehouse: dir, Now: func() time.Time { return fixedDay }})
	spec := siteSpec()
	spec.Columns[2].Name = "Load_Date"
	tbl, err := sk.OpenTable(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	ht := tbl.(*hivesink.Table)
	if keys := ht.PartitionKeys(); !slices.Equal(keys, []string{"lima_load_date", "site"}) {
		t.Fatalf("partition keys %v", keys)
	}
	def := ht.Def()
	for _, c := range def.Columns {
		for _, k := range def.PartitionKeys {
			if c.Name == k.Name {
				t.Fatalf("%s is a column and a partition key", c.Name)
			}
		}
	}
	st, _ := tbl.Stage(context.Background(), rowsOf(tbl.Schema(), []row{{1, ptr("a"), "x"}}, 10))
	if _, err := tbl.Commit(context.Background(), st, sink.CommitProps{LoadID: "l", RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	files := parquetFiles(t, dir)
	if len(files) != 1 || !strings.Contains(files[0], "/lima_load_date=2026-11-30/site=a/") {
		t.Fatalf("files %v", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "lake", "visits", "_staging")); err == nil {
		t.Error("an empty _staging folder was left behind")
	}
}

// TestNoLeaks stages batches split over many partitions and scans them
// back with a checked allocator: every buffer is released.
func TestNoLeaks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	_, tbl := open(t, dir, hivesink.Options{Allocator: mem, MaxOpenFiles: 3})
	var rows []row
	for i := range 5000 {
		rows = append(rows, row{id: int64(i), site: ptr(fmt.Sprintf("s%d", i%11)), note: "n"})
	}
	batches := func(yield func(arrow.RecordBatch, error) bool) {
		for start := 0; start < len(rows); start += 300 {
			b := array.NewRecordBuilder(mem, tbl.Schema())
			for _, r := range rows[start:min(start+300, len(rows))] {
				b.Field(0).(*array.Int64Builder).Append(r.id)
				b.Field(1).(*array.StringBuilder).Append(*r.site)
				b.Field(2).(*array.StringBuilder).Append(r.note)
			}
			rec := b.NewRecordBatch()
			b.Release()
			if !yield(rec, nil) {
				rec.Release()
				return
			}
		}
	}
	st, err := tbl.Stage(context.Background(), batches)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(context.Background(), st, sink.CommitProps{LoadID: "l", RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if n := len(scanAll(t, tbl)); n != len(rows) {
		t.Fatalf("%d rows, want %d", n, len(rows))
	}
}
