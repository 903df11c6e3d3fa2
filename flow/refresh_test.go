package flow_test

// Issue 13, failures 2, 4 and 9: a full refresh replaces (data and delete
// files, one snapshot, the watermark restarts from the refresh's read), a
// position is never deleted twice, delete files that apply to nothing are
// dropped, and an upsert is ONE snapshot. Every table is read back with the
// independent reader of refresh_lake_test.go and compared with the test's
// own ground truth (SQL on the source, or a hand-kept map).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

// sameMap fails when the lake's id → value differs from the truth.
func sameMap(t *testing.T, what string, lake, truth map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range truth {
		if l, ok := lake[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s missing (want %s)", k, v))
		} else if l != v {
			diffs = append(diffs, fmt.Sprintf("%s: lake %s, want %s", k, l, v))
		}
	}
	for k, v := range lake {
		if _, ok := truth[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s in the lake (%s) but not in the source", k, v))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%s: lake ≠ truth in %d keys (lake %d, truth %d): %s", what, len(diffs), len(lake), len(truth), strings.Join(diffs[:min(5, len(diffs))], "; "))
	}
}

// column maps key → column text from the independent read.
func (s lakeState) column(t *testing.T, key, col string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, r := range s.byKey(t, key) {
		out[k] = r[col]
	}
	return out
}

// oneSnapshotOf checks the run added exactly one snapshot, carrying the
// load id and the watermark, and returns it. It reports with Errorf, so a
// scenario goes on and its other checks are seen too.
func oneSnapshotOf(t *testing.T, what string, before, after lakeState, loadID, watermark string) *table.Snapshot {
	t.Helper()
	if after.snapshots != before.snapshots+1 {
		t.Errorf("%s: the run added %d snapshots, want exactly 1", what, after.snapshots-before.snapshots)
	}
	s := after.current
	if s == nil || s.Summary == nil || s.Summary.Properties[sink.PropLoadID] != loadID || s.Summary.Properties[sink.PropWatermark] != watermark {
		t.Fatalf("%s: the current snapshot does not carry load %s and watermark %q: %+v", what, loadID, watermark, s.Summary)
	}
	if before.current != nil && (s.ParentSnapshotID == nil || *s.ParentSnapshotID != before.current.SnapshotID) {
		t.Errorf("%s: the new snapshot's parent is not the previous current snapshot", what)
	}
	return s
}

func metaFinding(t *testing.T, rep reports.TableReport) gates.Finding {
	t.Helper()
	name := "metadata row count"
	for _, c := range rep.Checks {
		// An upsert's delta commit is proved from what it changed: its
		// manifests' counts against the previous snapshot's, not against a
		// re-read of the whole table (gates/reconcile_delta.go).
		if c.Name == "delta: live rows from the manifests" {
			name = c.Name
		}
	}
	f := check(t, rep, name)
	if f.Status != gates.Pass {
		t.Fatalf("gate 4 metadata row count: %+v", f)
	}
	return f
}

// TestPostgresIncrementalFullRefreshReplaces (failure 2): `run
// --full-refresh` on a mode: incremental database table replaced nothing
// — every row landed twice. After it the lake must equal the source (SQL),
// in one overwrite snapshot, with the watermark of this read (lower than
// before: the newest rows were deleted at the source).
func TestPostgresIncrementalFullRefreshReplaces(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_fr_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.items (id bigint PRIMARY KEY, qty integer NOT NULL, updated_at timestamptz NOT NULL)`)
	dbExec(t, db, `INSERT INTO `+schema+`.items SELECT i, i, timestamptz '2026-03-01 08:00:00+00' + i * interval '1 minute' FROM generate_series(1, 100) i`)
	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: frinc}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  items:
    source: {name: erp, table: items, schema: `+schema+`}
    load: {mode: incremental, keys: [id], watermark: updated_at}
`)
	truth := func() (map[string]string, string) {
		rows, err := db.Query(`SELECT id, qty FROM ` + schema + `.items`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var id, qty int64
			if err := rows.Scan(&id, &qty); err != nil {
				t.Fatal(err)
			}
			m[strconv.FormatInt(id, 10)] = strconv.FormatInt(qty, 10)
		}
		var max time.Time
		if err := db.QueryRow(`SELECT max(updated_at) FROM ` + schema + `.items`).Scan(&max); err != nil {
			t.Fatal(err)
		}
		return m, max.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	balanced(t, tr)
	want, wm := truth()
	st := readLake(t, ws, p, "items")
	sameMap(t, "first load", st.column(t, "id", "qty"), want)
	if tr.WatermarkAfter != wm || wm != "2026-03-01T09:40:00.000000Z" {
		t.Fatalf("first load: watermark %s, source max %s", tr.WatermarkAfter, wm)
	}

	// At the source: 5 rows change, the 11 newest rows go, 10 rows come.
	dbExec(t, db, `UPDATE `+schema+`.items SET qty = qty + 1000, updated_at = timestamptz '2026-03-01 08:50:00+00' WHERE id <= 5`)
	dbExec(t, db, `DELETE FROM `+schema+`.items WHERE id >= 90`)
	dbExec(t, db, `INSERT INTO `+schema+`.items SELECT i, i * 2, timestamptz '2026-03-01 09:20:00+00' FROM generate_series(201, 210) i`)
	want, wm = truth()
	if len(want) != 99 || wm != "2026-03-01T09:29:00.000000Z" { // a guard on the scenario: 100 − 11 + 10
		t.Fatalf("scenario: %d rows, max %s", len(want), wm)
	}
	before := st
	out = runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	tr = out.Result.Tables[0]
	balanced(t, tr)
	st = readLake(t, ws, p, "items")
	sameMap(t, "after --full-refresh", st.column(t, "id", "qty"), want)
	metadataTruthful(t, "after --full-refresh", st)
	s := oneSnapshotOf(t, "full refresh", before, st, tr.LoadID, wm)
	if s.Summary.Operation != table.OpOverwrite {
		t.Fatalf("the refresh's snapshot is a %s, want an overwrite", s.Summary.Operation)
	}
	if tr.WatermarkAfter != wm {
		t.Fatalf("watermark after the refresh %s, want %s (the refresh's own read)", tr.WatermarkAfter, wm)
	}
	rep := tableReport(t, out.Report, "items")
	if rep.Reconciliation != gates.Pass {
		t.Fatalf("gate 4: %s %+v", rep.Reconciliation, rep.Checks)
	}
	metaFinding(t, rep)
}

// TestFullRefreshReplacesFileModes (failure 2, files): in mode incremental
// and in append-only micro-batches, `--full-refresh` replaces the table
// with exactly the rows of the files listed now.
func TestFullRefreshReplacesFileModes(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		appendOnly bool
	}{
		{"incremental", "incremental", false},
		{"micro_batch", "full", true},
		{"full", "full", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, p := workspace(t, map[string][]byte{
				"ev-1.csv": []byte("id,at,v\n1,2026-01-01,10\n2,2026-01-02,20\n3,2026-01-03,30\n"),
			}, `schema_version: 1
platform: {prefix: frf}
sources: {in: {kind: files, path: in}}
tables:
  events:
    source: {name: in, files: ["ev-*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: at, type: date}
      - {name: v, type: long}
    load: {mode: `+tc.mode+`, keys: [id], watermark: at}
`)
			out := runOnce(t, ws, p, flow.RunOptions{AppendOnly: tc.appendOnly})
			balanced(t, out.Result.Tables[0])
			// The files change: ev-1 is rewritten (row 2 gone, row 1 new),
			// ev-2 arrives.
			os.WriteFile(filepath.Join(ws.Dir, "in", "ev-1.csv"), []byte("id,at,v\n1,2026-01-01,11\n3,2026-01-03,30\n"), 0o644)
			os.WriteFile(filepath.Join(ws.Dir, "in", "ev-2.csv"), []byte("id,at,v\n4,2026-01-02,40\n5,2026-01-02,50\n"), 0o644)
			before := readLake(t, ws, p, "events")
			out = runOnce(t, ws, p, flow.RunOptions{AppendOnly: tc.appendOnly, FullRefresh: true})
			tr := out.Result.Tables[0]
			balanced(t, tr)
			st := readLake(t, ws, p, "events")
			sameMap(t, "after --full-refresh", st.column(t, "id", "v"), map[string]string{"1": "11", "3": "30", "4": "40", "5": "50"})
			metadataTruthful(t, "after --full-refresh", st)
			oneSnapshotOf(t, "full refresh", before, st, tr.LoadID, "2026-01-03")
			if rep := tableReport(t, out.Report, "events"); rep.Reconciliation != gates.Pass {
				t.Fatalf("gate 4: %s %+v", rep.Reconciliation, rep.Checks)
			}
		})
	}
}

// TestPostgresUpsertOneSnapshotAndNoDoubleDeletes (failures 4 and 9): an
// upsert with a 1 h lookback, run after run with the same keys updated
// again: every run adds exactly ONE snapshot carrying the load id and the
// watermark (no delete-only snapshot before it), no position is deleted
// twice and the manifests' live count equals the rows read; the full
// refresh at the end drops every delete file.
func TestPostgresUpsertOneSnapshotAndNoDoubleDeletes(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_ud_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	tb := schema + ".items"
	dbExec(t, db, `CREATE TABLE `+tb+` (id bigint PRIMARY KEY, qty integer NOT NULL, updated_at timestamptz NOT NULL)`)
	dbExec(t, db, `INSERT INTO `+tb+` SELECT i, i, timestamptz '2026-03-01 08:00:00+00' + i * interval '1 minute' FROM generate_series(1, 300) i`)
	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: frups}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  items:
    source: {name: erp, table: items, schema: `+schema+`}
    load: {mode: upsert, keys: [id], watermark: updated_at, lookback: 1h, detect_deletes: every_run}
`)
	truth := func() map[string]string {
		rows, err := db.Query(`SELECT id, qty FROM ` + tb)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var id, qty int64
			if err := rows.Scan(&id, &qty); err != nil {
				t.Fatal(err)
			}
			m[strconv.FormatInt(id, 10)] = strconv.FormatInt(qty, 10)
		}
		return m
	}
	st := readLake(t, ws, p, "items")
	minute := 300
	for run := 0; run < 5; run++ {
		if run > 0 {
			// The same keys change again every run (their old versions
			// are already deleted in older files), one is deleted, one
			// arrives; the lookback re-reads the newest rows again.
			minute += 10
			ts := fmt.Sprintf("timestamptz '2026-03-01 08:00:00+00' + %d * interval '1 minute'", minute)
			dbExec(t, db, `UPDATE `+tb+` SET qty = qty + 1, updated_at = `+ts+` WHERE id IN (1, 2, 3, 150, 299)`)
			dbExec(t, db, `DELETE FROM `+tb+` WHERE id = `+strconv.Itoa(100+run))
			dbExec(t, db, `INSERT INTO `+tb+` VALUES (`+strconv.Itoa(1000+run)+`, 7, `+ts+`)`)
		}
		before := st
		out := runOnce(t, ws, p, flow.RunOptions{})
		tr := out.Result.Tables[0]
		balanced(t, tr)
		what := fmt.Sprintf("run %d", run+1)
		st = readLake(t, ws, p, "items")
		sameMap(t, what, st.column(t, "id", "qty"), truth())
		metadataTruthful(t, what, st)
		oneSnapshotOf(t, what, before, st, tr.LoadID, tr.WatermarkAfter)
		rep := tableReport(t, out.Report, "items")
		if rep.Reconciliation != gates.Pass {
			t.Fatalf("%s: gate 4 %s %+v", what, rep.Reconciliation, rep.Checks)
		}
		metaFinding(t, rep)
	}
	if st.deleteFiles == 0 {
		t.Fatal("scenario: the upserts wrote no delete file")
	}
	before := st
	out := runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	tr := out.Result.Tables[0]
	balanced(t, tr)
	st = readLake(t, ws, p, "items")
	sameMap(t, "full refresh", st.column(t, "id", "qty"), truth())
	metadataTruthful(t, "full refresh", st)
	oneSnapshotOf(t, "full refresh", before, st, tr.LoadID, tr.WatermarkAfter)
	if st.deleteFiles != 0 || st.dataFiles == 0 {
		t.Fatalf("after the full refresh: %d data files, %d delete files (want none)", st.dataFiles, st.deleteFiles)
	}
}

// cdcBatch writes one change file and runs; ref is the test's own
// id → "name|amount" after the batch.
func cdcBatch(t *testing.T, ws flow.Workspace, p *plan.Plan, n int, rows string) *flow.Outcome {
	t.Helper()
	name := fmt.Sprintf("c%04d.csv", n)
	if err := os.WriteFile(filepath.Join(ws.Dir, "in", "changes", name), []byte("op,seq,id,name,amount\n"+rows), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runOnce(t, ws, p, flow.RunOptions{})
	if code := out.Report.ExitCode(); code != 0 {
		t.Fatalf("batch %d: exit %d: %+v", n, code, out.Report.Tables)
	}
	return out
}

// lakeCDC is the independent read as id → "name|amount".
func lakeCDC(t *testing.T, st lakeState) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, r := range st.byKey(t, "id") {
		out[k] = r["name"] + "|" + r["amount"]
	}
	return out
}

// TestCDCBatchesNeverDeleteAPositionTwice (failure 4): change files loaded
// one batch at a time, the same keys updated batch after batch. Before,
// every batch deleted again the positions of the keys' older versions
// (already deleted): more delete records than deleted positions, and the
// manifests' live count below the rows read.
func TestCDCBatchesNeverDeleteAPositionTwice(t *testing.T) {
	ws, p := newCDCWorkspace(t)
	var rows strings.Builder
	truth := map[string]string{}
	seq := 0
	for id := 1; id <= 40; id++ {
		seq++
		fmt.Fprintf(&rows, "I,%d,%d,n%d,%d\n", seq, id, id, id)
		truth[strconv.Itoa(id)] = fmt.Sprintf("n%d|%d", id, id)
	}
	cdcBatch(t, ws, p, 1, rows.String())
	st := readLake(t, ws, p, "customers")
	sameMap(t, "batch 1", lakeCDC(t, st), truth)
	for b := 2; b <= 7; b++ {
		rows.Reset()
		for _, id := range []int{1, 2, 3, 20, 40} { // updated every batch
			seq++
			fmt.Fprintf(&rows, "U,%d,%d,u%d,%d\n", seq, id, b, id*100+b)
			truth[strconv.Itoa(id)] = fmt.Sprintf("u%d|%d", b, id*100+b)
		}
		seq++
		fmt.Fprintf(&rows, "D,%d,%d,,\n", seq, 4+b) // one deleted per batch
		delete(truth, strconv.Itoa(4+b))
		before := st
		out := cdcBatch(t, ws, p, b, rows.String())
		tr := out.Result.Tables[0]
		what := fmt.Sprintf("batch %d", b)
		st = readLake(t, ws, p, "customers")
		sameMap(t, what, lakeCDC(t, st), truth)
		metadataTruthful(t, what, st)
		oneSnapshotOf(t, what, before, st, tr.LoadID, tr.WatermarkAfter)
		metaFinding(t, tableReport(t, out.Report, "customers"))
	}
	// 6 batches × (5 updates + 1 delete) rows removed, each exactly once.
	if st.deleteRecords != 36 {
		t.Fatalf("%d delete records, want 36 (6 batches × 6 rows removed)", st.deleteRecords)
	}
}

// TestCompactionAndRefreshDropDeadDeleteFiles (failure 4): a table whose
// delete files point at data files that are gone (what a full refresh
// left before: it replaced the data files and kept the delete files).
// Gate 4's metadata check fails on it; compaction drops those delete files
// in its snapshot — with and without small files to rewrite — and the
// manifests tell the truth again.
func TestCompactionAndRefreshDropDeadDeleteFiles(t *testing.T) {
	ctx := context.Background()
	ws, p := newCDCWorkspace(t)
	truth := map[string]string{}
	cdcBatch(t, ws, p, 1, "I,1,1,a,10\nI,2,2,b,20\nI,3,3,c,30\n")
	cdcBatch(t, ws, p, 2, "U,4,1,a2,11\nD,5,2,,\n")
	// The old full refresh, done with iceberg-go: every data file replaced
	// by a file of the current rows, the delete files kept.
	sk, tbl := loadIceberg(t, ws, p, "customers")
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var old []iceberg.DataFile
	for _, tk := range tasks {
		old = append(old, tk.File)
	}
	tx := tbl.NewTransaction()
	if err := tx.ReplaceDataFilesWithDataFiles(ctx, old, nil, iceberg.Properties{sink.PropKind: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// A refresh replaces the history too (run.PropCDCRefresh): gate 4
	// recomputes the table from the history, so the old refresh is
	// simulated on both, or gate 4 rightly finds keys 1 and 3 missing.
	htbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), plan.HistoryTable("customers")})
	if err != nil {
		t.Fatal(err)
	}
	htasks, err := htbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var hold []iceberg.DataFile
	for _, tk := range htasks {
		hold = append(hold, tk.File)
	}
	htx := htbl.NewTransaction()
	if err := htx.ReplaceDataFilesWithDataFiles(ctx, hold, nil, iceberg.Properties{sink.PropKind: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := htx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	st := readLake(t, ws, p, "customers")
	if st.danglingFiles == 0 || len(st.rows) != 0 {
		t.Fatalf("scenario: %d dangling delete files, %d rows", st.danglingFiles, len(st.rows))
	}
	// Gate 4's check sees it.
	lt, err := sk.OpenTable(ctx, sink.TableSpec{Name: "customers", Namespace: p.Namespace(),
		Columns: []plan.Column{{Name: "id", Type: "long"}, {Name: "name", Type: "string"}, {Name: "amount", Type: "long"}},
		Types:   []plan.Type{mustType(t, "long"), mustType(t, "string"), mustType(t, "long")}, Required: []bool{false, false, false}})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := gates.MetaCount(ctx, lt.(sink.Scanner), 0, int64(len(st.rows))); !ok || f.Status != gates.Fail {
		t.Fatalf("gate 4 on dangling delete files: %+v (checked %v)", f, ok)
	}
	sk.Close()
	// Nothing to rewrite: the compaction only drops them.
	if _, err := flow.Compact(ctx, flow.CompactOptions{Workspace: ws, Plan: p, Tables: []string{"customers"}}); err != nil {
		t.Fatal(err)
	}
	st = readLake(t, ws, p, "customers")
	metadataTruthful(t, "compaction without files to rewrite", st)
	sameMap(t, "compaction without files to rewrite", lakeCDC(t, st), truth)

	// Again, now with small files to rewrite beside the dead deletes.
	cdcBatch(t, ws, p, 3, "I,6,7,g,70\nI,7,8,h,80\n")
	cdcBatch(t, ws, p, 4, "U,8,7,g2,71\nI,9,9,i,90\n")
	cdcBatch(t, ws, p, 5, "I,10,10,j,100\n")
	truth = map[string]string{"7": "g2|71", "8": "h|80", "9": "i|90", "10": "j|100"}
	sk, tbl = loadIceberg(t, ws, p, "customers")
	tasks, err = tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Batch 3's file lost row 7 to a position delete in batch 4; removing
	// that file the old way (its delete file kept) leaves the delete file
	// dangling, beside the small files of batches 4 and 5.
	var b3 iceberg.DataFile
	for _, tk := range tasks {
		if len(tk.DeleteFiles) > 0 {
			b3 = tk.File
		}
	}
	if b3 == nil {
		t.Fatal("scenario: no data file with deletes")
	}
	tx = tbl.NewTransaction()
	if err := tx.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{b3}, nil, iceberg.Properties{sink.PropKind: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	sk.Close()
	delete(truth, "8")
	st = readLake(t, ws, p, "customers")
	if st.danglingFiles == 0 {
		t.Fatal("scenario: no dangling delete file")
	}
	sameMap(t, "before compaction", lakeCDC(t, st), truth)
	res, err := flow.Compact(ctx, flow.CompactOptions{Workspace: ws, Plan: p, Tables: []string{"customers"}})
	if err != nil {
		t.Fatal(err)
	}
	st = readLake(t, ws, p, "customers")
	t.Logf("compaction: %+v", res)
	metadataTruthful(t, "compaction with files to rewrite", st)
	sameMap(t, "compaction with files to rewrite", lakeCDC(t, st), truth)
	if len(res) == 0 || res[0].Rewritten == 0 || st.deleteFiles != 0 {
		t.Fatalf("scenario: compaction %+v left %d delete files", res, st.deleteFiles)
	}
}

func mustType(t *testing.T, s string) plan.Type {
	t.Helper()
	ty, err := plan.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// historyVersions counts the versions a change-capture history holds
// (marker rows of batches that applied nothing excluded).
func historyVersions(st lakeState) int {
	n := 0
	for _, r := range st.rows {
		if r["lima_op"] != "none" {
			n++
		}
	}
	return n
}

// TestCDCFullRefreshRebuilds (failure 2, mode cdc): `run --full-refresh`
// on a change-capture table applied nothing (every file was already
// applied) and kept its delete files. It must rebuild the table from the
// change files listed now, from an empty table, in one snapshot without
// delete files, and replace the history with the versions of that replay;
// the next batch then applies on top of the refresh's position.
func TestCDCFullRefreshRebuilds(t *testing.T) {
	ws, p := newCDCWorkspace(t)
	cdcBatch(t, ws, p, 1, "I,1,1,a,10\nI,2,2,b,20\nI,3,3,c,30\nI,4,4,d,40\n")
	cdcBatch(t, ws, p, 2, "U,5,1,a2,11\nD,6,2,,\nU,7,3,c2,31\n")
	cdcBatch(t, ws, p, 3, "U,8,1,a3,12\nI,9,5,e,50\n")
	truth := map[string]string{"1": "a3|12", "3": "c2|31", "4": "d|40", "5": "e|50"}
	st := readLake(t, ws, p, "customers")
	sameMap(t, "before", lakeCDC(t, st), truth)
	if st.deleteFiles == 0 {
		t.Fatal("scenario: no delete file before the refresh")
	}
	// 4 + 3 + 2 applied changes.
	if v := historyVersions(readLake(t, ws, p, "customers_history")); v != 9 {
		t.Fatalf("scenario: history holds %d versions, want 9", v)
	}

	refresh := func(what string, want map[string]string, versions int) {
		t.Helper()
		before := st
		out := runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
		if code := out.Report.ExitCode(); code != 0 {
			t.Fatalf("%s: exit %d: %+v", what, code, out.Report.Tables)
		}
		tr := out.Result.Tables[0]
		balanced(t, tr)
		st = readLake(t, ws, p, "customers")
		sameMap(t, what, lakeCDC(t, st), want)
		metadataTruthful(t, what, st)
		oneSnapshotOf(t, what, before, st, tr.LoadID, tr.WatermarkAfter)
		if st.deleteFiles != 0 {
			t.Fatalf("%s: %d delete files after the refresh", what, st.deleteFiles)
		}
		if v := historyVersions(readLake(t, ws, p, "customers_history")); v != versions {
			t.Fatalf("%s: history holds %d versions, want %d", what, v, versions)
		}
		metaFinding(t, tableReport(t, out.Report, "customers"))
	}
	refresh("refresh of the same files", truth, 9)
	if st.current.Summary.Properties[sink.PropWatermark] != "9@changes/c0003.csv" {
		t.Fatalf("position after the refresh: %q", st.current.Summary.Properties[sink.PropWatermark])
	}

	// The third file goes away: the refresh replays the first two only.
	if err := os.Remove(filepath.Join(ws.Dir, "in", "changes", "c0003.csv")); err != nil {
		t.Fatal(err)
	}
	truth = map[string]string{"1": "a2|11", "3": "c2|31", "4": "d|40"}
	refresh("refresh without the third file", truth, 7)

	// The next batch applies on top, from the refresh's position.
	out := cdcBatch(t, ws, p, 4, "U,10,4,d2,41\nI,11,6,f,60\n")
	truth["4"], truth["6"] = "d2|41", "f|60"
	st = readLake(t, ws, p, "customers")
	sameMap(t, "batch after the refresh", lakeCDC(t, st), truth)
	metadataTruthful(t, "batch after the refresh", st)
	if tr := out.Result.Tables[0]; tr.RowsRead != 3 || tr.RowsLoaded != 2 {
		t.Fatalf("batch after the refresh read %d rows, loaded %d (want 3, 2: only the new file)", tr.RowsRead, tr.RowsLoaded)
	}
}
