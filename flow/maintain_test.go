package flow_test

import (
	"context"
	"fmt"
	iofs "io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

const maintainPlan = `schema_version: 1
platform: {prefix: mnt}
sources: {in: {kind: files, path: in}}
tables:
  events:
    source: {name: in, files: ["ev-*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: at, type: date}
      - {name: v, type: long}
    load: {mode: incremental, keys: [id], watermark: at}
maintenance: {retain_last: 2, max_snapshot_age: 0s, orphan_older_than: 1h}
`

// evFile is load k's file: three rows dated 2026-01-k; the test's own
// count and sum of v are returned.
func evFile(t *testing.T, dir string, k int) (rows, sum int64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,at,v\n")
	for j := 1; j <= 3; j++ {
		v := int64(k*100 + j*7)
		fmt.Fprintf(&b, "%d,2026-01-%02d,%d\n", k*10+j, k, v)
		rows++
		sum += v
	}
	if err := os.WriteFile(filepath.Join(dir, "in", fmt.Sprintf("ev-%d.csv", k)), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows, sum
}

// scanSum reads the table back with iceberg-go: rows and the sum of v.
func scanSum(t *testing.T, tbl *table.Table) (rows, sum int64) {
	t.Helper()
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		col := rec.Column(int(rec.Schema().FieldIndices("v")[0])).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			sum += col.Value(i)
		}
		rows += rec.NumRows()
		rec.Release()
	}
	return rows, sum
}

// tableFolder lists the table's files (relative to its folder), symbolic
// links included.
func tableFolder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// referenced is what the table's metadata references, computed with
// iceberg-go directly: every metadata file of the log, every snapshot's
// manifest list, manifests and live data and delete files (base names).
func referenced(t *testing.T, tbl *table.Table) map[string]bool {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{path.Base(tbl.MetadataLocation()): true}
	for e := range tbl.Metadata().PreviousFiles() {
		out[path.Base(e.MetadataFile)] = true
	}
	for _, s := range tbl.Metadata().Snapshots() {
		out[path.Base(s.ManifestList)] = true
		mans, err := s.Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mans {
			out[path.Base(m.FilePath())] = true
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					t.Fatal(err)
				}
				out[path.Base(e.DataFile().FilePath())] = true
			}
		}
	}
	return out
}

func plant(t *testing.T, p string, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(p, []byte("not a parquet file"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-age)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestMaintainExpiresKeepsExactlyOnceAndRemovesOrphans: five incremental
// loads, then maintain with retain_last 2 and no age limit: three
// snapshots go (with their files), the table reads back exactly, reruns of
// the newest and of an expired load are recognised, the next incremental
// load is right and gate 4 passes; orphans older than the window go,
// fresh ones, a foreign file and a symbolic link stay; --dry-run changes
// nothing.
func TestMaintainExpiresKeepsExactlyOnceAndRemovesOrphans(t *testing.T) {
	ws, p := workspace(t, nil, maintainPlan)
	os.MkdirAll(filepath.Join(ws.Dir, "in"), 0o755)
	var wantRows, wantSum int64
	for k := 1; k <= 5; k++ {
		r, s := evFile(t, ws.Dir, k)
		wantRows, wantSum = wantRows+r, wantSum+s
		out := runOnce(t, ws, p, flow.RunOptions{})
		if tr := out.Result.Tables[0]; tr.Status != run.StatusLoaded || tr.RowsLoaded != 3 {
			t.Fatalf("load %d: %s, %d rows", k, tr.Status, tr.RowsLoaded)
		}
	}
	_, tbl := loadIceberg(t, ws, p, "events")
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != 5 {
		t.Fatalf("%d snapshots before, want 5", len(snaps))
	}
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	// Orphans: Lima-named and old (go), Lima-named and fresh (stay), a
	// foreign file and a symbolic link, both old (stay).
	oldData := filepath.Join(loc, "data", "00000-0-"+uuid.NewString()+".parquet")
	oldMeta := filepath.Join(loc, "metadata", "snap-1-1-"+uuid.NewString()+".avro")
	fresh := filepath.Join(loc, "data", "00000-0-"+uuid.NewString()+".parquet")
	foreign := filepath.Join(loc, "data", "notes.txt")
	plant(t, oldData, 10*24*time.Hour)
	plant(t, oldMeta, 10*24*time.Hour)
	plant(t, fresh, time.Minute)
	plant(t, foreign, 10*24*time.Hour)
	target := filepath.Join(ws.Dir, "keep-me.parquet")
	plant(t, target, 10*24*time.Hour)
	link := filepath.Join(loc, "data", "00000-1-"+uuid.NewString()+".parquet")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("touch", "-h", "-d", "10 days ago", link).CombinedOutput(); err != nil {
		t.Fatalf("touch -h: %v %s", err, out)
	}

	// --dry-run: says what it would do, changes nothing.
	before := tableFolder(t, loc)
	res, err := flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Expired != 3 || res[0].Removed != 2 {
		t.Fatalf("dry run: %+v", res)
	}
	if after := tableFolder(t, loc); !slices.Equal(before, after) {
		t.Fatalf("dry run changed the folder:\n%v\n%v", before, after)
	}
	if _, tbl = loadIceberg(t, ws, p, "events"); len(tbl.Metadata().Snapshots()) != 5 {
		t.Fatal("dry run expired snapshots")
	}

	res, err = flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	t.Logf("maintain: %+v", r)
	if r.Expired != 3 || r.Kept != 2 || r.Removed != 2 || r.FilesRemoved == 0 {
		t.Fatalf("maintain: %+v", r)
	}
	if !slices.Contains(r.Foreign, foreign) || !slices.Contains(r.Links, link) || slices.Contains(r.Paths, fresh) {
		t.Fatalf("foreign %v, links %v, removed %v", r.Foreign, r.Links, r.Paths)
	}
	_, tbl = loadIceberg(t, ws, p, "events")
	left := tbl.Metadata().Snapshots()
	if len(left) != 2 || left[0].SnapshotID != snaps[3].SnapshotID || left[1].SnapshotID != snaps[4].SnapshotID {
		t.Fatalf("snapshots left %v", left)
	}
	if tbl.CurrentSnapshot().SnapshotID != snaps[4].SnapshotID {
		t.Fatal("the current snapshot changed")
	}
	if n, s := scanSum(t, tbl); n != wantRows || s != wantSum {
		t.Fatalf("read back %d rows, sum %d; want %d, %d", n, s, wantRows, wantSum)
	}
	// No orphan remains: every file in the folder is referenced, but for
	// the fresh orphan, the foreign file and the link.
	refs := referenced(t, tbl)
	for _, f := range tableFolder(t, loc) {
		full := filepath.Join(loc, f)
		if !refs[path.Base(f)] && full != fresh && full != foreign && full != link {
			t.Errorf("unreferenced file left: %s", f)
		}
	}
	for _, f := range []string{oldData, oldMeta} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("old orphan %s still there", f)
		}
	}
	for _, f := range []string{fresh, foreign, link, target} {
		if _, err := os.Lstat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}

	// Gate 4 against the lake as it is now.
	recs, err := flow.Reconcile(context.Background(), ws, p, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Status != gates.Pass {
			t.Fatalf("reconcile after maintain: %+v", rec)
		}
	}
	// The same input again: already loaded.
	out := runOnce(t, ws, p, flow.RunOptions{})
	if tr := out.Result.Tables[0]; tr.Status != run.StatusAlreadyLoaded {
		t.Fatalf("rerun: %s", tr.Status)
	}
	// Load 3's input again (its snapshot expired): recognised by the load
	// id carried forward, not read as new.
	hide := filepath.Join(ws.Dir, "hidden")
	os.MkdirAll(hide, 0o755)
	for _, k := range []int{4, 5} {
		n := fmt.Sprintf("ev-%d.csv", k)
		if err := os.Rename(filepath.Join(ws.Dir, "in", n), filepath.Join(hide, n)); err != nil {
			t.Fatal(err)
		}
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	if tr := out.Result.Tables[0]; tr.Status != run.StatusAlreadyLoaded || tr.Commit.SnapshotID != snaps[2].SnapshotID {
		t.Fatalf("rerun of load 3: %s (snapshot %d, want %d)", tr.Status, tr.Commit.SnapshotID, snaps[2].SnapshotID)
	}
	for _, k := range []int{4, 5} {
		n := fmt.Sprintf("ev-%d.csv", k)
		if err := os.Rename(filepath.Join(hide, n), filepath.Join(ws.Dir, "in", n)); err != nil {
			t.Fatal(err)
		}
	}
	// An incremental load after maintain.
	rr, ss := evFile(t, ws.Dir, 6)
	wantRows, wantSum = wantRows+rr, wantSum+ss
	out = runOnce(t, ws, p, flow.RunOptions{})
	if tr := out.Result.Tables[0]; tr.Status != run.StatusLoaded || tr.RowsLoaded != 3 || tr.WatermarkAfter != "2026-01-06" {
		t.Fatalf("load 6: %s, %d rows, watermark %s", tr.Status, tr.RowsLoaded, tr.WatermarkAfter)
	}
	if tableReport(t, out.Report, "events").Reconciliation != gates.Pass {
		t.Fatal("gate 4 of load 6")
	}
	_, tbl = loadIceberg(t, ws, p, "events")
	if n, s := scanSum(t, tbl); n != wantRows || s != wantSum {
		t.Fatalf("after load 6: %d rows, sum %d; want %d, %d", n, s, wantRows, wantSum)
	}
}

// TestMaintainKeepsTheSnapshotOfAPendingLoad: a run killed between its
// commit and publishing its exceptions leaves them pending; the next run
// publishes them when it finds the load in the table. maintain keeps that
// load's snapshot (and the newer ones), whatever retain_last says.
func TestMaintainKeepsTheSnapshotOfAPendingLoad(t *testing.T) {
	ws, p := workspace(t, nil, maintainPlan)
	os.MkdirAll(filepath.Join(ws.Dir, "in"), 0o755)
	p.Maintenance.RetainLast = 1
	for k := 1; k <= 4; k++ {
		evFile(t, ws.Dir, k)
		runOnce(t, ws, p, flow.RunOptions{})
	}
	_, tbl := loadIceberg(t, ws, p, "events")
	snaps := tbl.Metadata().Snapshots()
	load2 := snaps[1].Summary.Properties["lima.load-id"]
	st := openLedger(t, ws, p)
	if err := st.AddPending(context.Background(), []ledger.Exception{{RunID: "run-2", LoadID: load2, Table: "events", Level: "row",
		File: "ev-2.csv", Line: 9, Row: 9, Raw: []byte("x,y\n"), Encoding: "utf-8", Owner: "ops",
		Failures: []ledger.Failure{{Column: "v", Value: "x", Rule: "type", Reason: "not a number"}}}}); err != nil {
		t.Fatal(err)
	}
	res, err := flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Expired != 1 || r.Kept != 3 || len(r.KeptFor) != 1 || !strings.Contains(r.KeptFor[0], "pending") {
		t.Fatalf("maintain: %+v", r)
	}
	if _, tbl = loadIceberg(t, ws, p, "events"); tbl.Metadata().SnapshotByID(snaps[1].SnapshotID) == nil {
		t.Fatal("the pending load's snapshot was expired")
	}
	// The next run publishes the pending exception.
	runOnce(t, ws, p, flow.RunOptions{})
	if n, err := st.Count(context.Background(), ledger.Filter{Table: "events", Status: ledger.StatusOpen}); err != nil || n != 1 {
		t.Fatalf("%d open exceptions (%v), want the published 1", n, err)
	}
}

// Hive-style tables have no snapshots: maintain names each table and says
// so, and changes nothing in the lake.
func TestMaintainHiveSaysNothingToDo(t *testing.T) {
	ws, p := hiveDemo(t, "")
	runOnce(t, ws, p, flow.RunOptions{})
	lake := ws.Warehouse(p)
	before := tableFolder(t, lake)
	res, err := flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 4 {
		t.Fatalf("maintain: %+v", res)
	}
	for _, r := range res {
		if r.Format != "hive" || !strings.Contains(r.Note, "nothing to do") || r.Expired != 0 || r.Removed != 0 {
			t.Errorf("%+v", r)
		}
	}
	if after := tableFolder(t, lake); !slices.Equal(before, after) {
		t.Fatal("maintain changed a Hive-style lake")
	}
}
