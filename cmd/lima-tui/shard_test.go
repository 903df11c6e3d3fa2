package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/flow"
)

// The distributed load's protocol without Spark (issue 19): this test is
// the driver. It writes dirty CSV files with their own ground truth, runs
// real `lima-tui worker` processes in parallel on shards of them — one
// attempt killed with SIGKILL while it writes a data file, a retry of that
// shard, a speculative duplicate of another — then `lima-tui commit`. The
// table, the exceptions and the accounting must equal a single-process
// `lima-tui run` of the same plan in another workspace and the ground
// truth; no file of a losing or killed attempt may be left in the
// warehouse; a second commit changes nothing; a missing shard and a
// tampered manifest commit nothing.

const shardPlan = `schema_version: 1
platform: {prefix: shardt}
storage: {raw: true}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    source: {name: in, files: ["orders-*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: name, type: string}
      - {name: qty, type: long}
      - {name: amount, type: "decimal(10,2)"}
      - {name: d, type: date}
    load: {keys: [id]}
    checks:
      - {rule: expression, column: qty, expr: "qty >= 0"}
`

// shardTruth is what the generated files hold, computed as they are
// written: the lake's rows (canonical text) and the held-back rows' raw
// text by file.
type shardTruth struct {
	rows    []string
	held    map[string][]string // file → raw rows held back
	skipped int64               // headers and blank lines
	read    int64
}

// writeShardFiles writes nFiles dirty CSV files (one seed each) into dir.
func writeShardFiles(t *testing.T, dir string, nFiles int) shardTruth {
	t.Helper()
	tr := shardTruth{held: map[string][]string{}}
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for f := range nFiles {
		name := fmt.Sprintf("orders-%02d.csv", f)
		r := rand.New(rand.NewPCG(uint64(f)+1, 77))
		var b strings.Builder
		b.WriteString("id,name,qty,amount,d\n")
		tr.skipped++
		tr.read++
		prevValid := ""
		n := 120 + 9*f
		for i := range n {
			id := f*10000 + i
			qty := r.IntN(500)
			cents := r.IntN(1_000_000)
			amount := fmt.Sprintf("%d.%02d", cents/100, cents%100)
			d := day0.AddDate(0, 0, r.IntN(300)).Format("2006-01-02")
			nameCell, nameVal := fmt.Sprintf("n-%d", id), fmt.Sprintf("n-%d", id)
			if r.IntN(7) == 0 {
				nameVal = fmt.Sprintf("n, %d", id)
				nameCell = `"` + nameVal + `"`
			}
			idCell := fmt.Sprint(id)
			qtyCell := fmt.Sprint(qty)
			bad := true
			switch k := r.IntN(25); {
			case k == 0:
				qtyCell = "abc" // not a number
			case k == 1:
				d = "2026-02-30" // not a date
			case k == 2:
				qtyCell = "-5" // fails the check
			case k == 3 && prevValid != "":
				idCell = prevValid // a duplicate key
			case k == 4:
				idCell = "" // a required value missing
			default:
				bad = false
			}
			line := strings.Join([]string{idCell, nameCell, qtyCell, amount, d}, ",")
			b.WriteString(line + "\n")
			tr.read++
			if bad {
				tr.held[name] = append(tr.held[name], line)
				continue
			}
			prevValid = idCell
			tr.rows = append(tr.rows, strings.Join([]string{idCell, nameVal, qtyCell, amount, d}, "|"))
			if i == n/2 && f%3 == 0 {
				b.WriteString("\n") // a blank line
				tr.skipped++
				tr.read++
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(tr.rows)
	return tr
}

// shardWorkspace writes the plan and the files into a new workspace and
// approves the plan.
func shardWorkspace(t *testing.T, name string, nFiles int) (string, shardTruth) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	truth := writeShardFiles(t, filepath.Join(dir, "in"), nFiles)
	planPath := filepath.Join(dir, "platform.yaml")
	if err := os.WriteFile(planPath, []byte(shardPlan), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, "approve", "--plan", planPath, "--gate", "data-model", "--by", "Analyst A"); code != exitOK {
		t.Fatalf("approve: exit %d: %s%s", code, out, stderr)
	}
	return dir, truth
}

// lakeRows reads the table with iceberg-go on the workspace's catalog, as
// an outside reader would: every row as id|name|qty|amount|d, sorted, and
// the table's snapshot count and live data files.
func shardLake(t *testing.T, dir string) (rows []string, snapshots int, live []string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, ".lima", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := sqlcat.NewCatalog("lima", db, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"shardt", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	snapshots = len(tbl.Metadata().Snapshots())
	if tbl.CurrentSnapshot() == nil {
		return nil, snapshots, nil
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		live = append(live, filepath.Base(task.File.FilePath()))
	}
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		idx := map[string]int{}
		for i, f := range rec.Schema().Fields() {
			idx[f.Name] = i
		}
		for r := range int(rec.NumRows()) {
			var cells []string
			for _, c := range []string{"id", "name", "qty", "amount", "d"} {
				col := rec.Column(idx[c])
				if dec, ok := col.(*array.Decimal128); ok && dec.IsValid(r) { // with the column's scale: 6660.40
					cells = append(cells, dec.Value(r).ToString(dec.DataType().(*arrow.Decimal128Type).Scale))
					continue
				}
				cells = append(cells, col.ValueStr(r))
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
	}
	sort.Strings(rows)
	return rows, snapshots, live
}

// ledgerRows lists the workspace's exceptions as file|rules|raw, sorted.
func shardLedger(t *testing.T, dir string) []string {
	t.Helper()
	ws := flow.Workspace{Dir: dir}
	p, err := flow.LoadPlan(ws.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	st, err := flow.OpenLedger(context.Background(), ws, p)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	es, _, err := st.List(context.Background(), ledger.Filter{Table: "orders"}, ledger.Page{Limit: ledger.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%d|%s|%s|%s|%s", e.ID, e.File, e.Status, strings.TrimRight(string(e.Raw), "\r\n"), shardRules(e)))
	}
	sort.Strings(out)
	return out
}

func shardRules(e ledger.Exception) string {
	var rs []string
	for _, f := range e.Failures {
		rs = append(rs, f.Rule)
	}
	sort.Strings(rs)
	return strings.Join(rs, ",")
}

// withoutIDs drops the ledger's own ids (they differ between workspaces).
func shardNoIDs(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		_, rest, _ := strings.Cut(r, "|")
		out[i] = rest
	}
	sort.Strings(out)
	return out
}

// reportTable is the part of report.json the test compares.
type reportTable struct {
	RowsRead        int64 `json:"rows_read"`
	RowsLoaded      int64 `json:"rows_loaded"`
	RowsQuarantined int64 `json:"rows_quarantined"`
	RowsSkipped     int64 `json:"rows_skipped"`
	ControlTotals   map[string]struct {
		Source string `json:"source"`
		Target string `json:"target"`
	} `json:"control_totals"`
}

func shardReport(t *testing.T, path string) (string, reportTable) {
	t.Helper()
	b, err := os.ReadFile(strings.TrimSpace(path))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Status string `json:"status"`
		Tables []struct {
			Name string `json:"name"`
			reportTable
		} `json:"tables"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, tb := range rep.Tables {
		if tb.Name == "orders" {
			return rep.Status, tb.reportTable
		}
	}
	t.Fatalf("report %s has no table orders", path)
	return "", reportTable{}
}

// shardDataFiles lists the Parquet files anywhere in the warehouse.
func shardDataFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(dir, "lake"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, filepath.Base(p))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestDistributedLoadEqualsOneProcessRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs lima-tui processes")
	}
	const nFiles = 12
	single, truth := shardWorkspace(t, "single", nFiles)
	dist, _ := shardWorkspace(t, "dist", nFiles)

	// The single-process run of the same plan.
	c := runBin(t, childOpts{dir: single}, "run", "--force", "--plan", filepath.Join(single, "platform.yaml"))
	if c.code != exitOK {
		t.Fatalf("single run: exit %d\n%s", c.code, c.stderr)
	}
	singleReport := c.stdout

	// The driver's shards: 9 of the 12 files (three shards take two).
	const loadID = "ld-dist-0001"
	var shards []flow.Shard
	for s, f := 0, 0; f < nFiles; s++ {
		sh := flow.Shard{LoadID: loadID, Table: "orders", Shard: fmt.Sprintf("%04d", s)}
		take := 1
		if s%3 == 0 {
			take = 2
		}
		for range take {
			sh.Inputs = append(sh.Inputs, flow.ShardInput{URI: "file://" + filepath.Join(dist, "in", fmt.Sprintf("orders-%02d.csv", f))})
			f++
		}
		shards = append(shards, sh)
	}
	if len(shards) < 8 {
		t.Fatalf("%d shards", len(shards))
	}
	line := func(s flow.Shard, attempt string) string {
		s.Attempt = attempt
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	expect := ""
	for _, s := range shards {
		expect += line(s, "")
	}
	expectPath := filepath.Join(t.TempDir(), "shards.jsonl")
	if err := os.WriteFile(expectPath, []byte(expect), 0o600); err != nil {
		t.Fatal(err)
	}
	const killed, speculative = 4, 7
	// Three Spark-like tasks pipe three shards each (attempt a1). Shard 4's
	// first attempt (a0) is killed with SIGKILL while it writes a data
	// file; its retry (b1) runs in the second task; shard 7 runs twice, the
	// second a speculative duplicate (z9) that also succeeds.
	tasks := []string{"", "", ""}
	for i, s := range shards {
		attempt := "a1"
		if i == killed {
			attempt = "b1"
		}
		tasks[i/3] += line(s, attempt)
	}
	tasks = append(tasks, line(shards[speculative], "z9"))
	var wg sync.WaitGroup
	outs := make([]child, len(tasks))
	for i, in := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = runBin(t, childOpts{dir: dist, stdin: in}, "worker", "--dir", dist)
		}()
	}
	var killedRun child
	wg.Add(1)
	go func() {
		defer wg.Done()
		killedRun = runBin(t, childOpts{dir: dist, stdin: line(shards[killed], "a0"), env: []string{"LIMA_FAULTPOINT=data-file-bytes-600"}}, "worker", "--dir", dist)
	}()
	wg.Wait()
	if killedRun.signaled != "killed" || killedRun.stdout != "" {
		t.Fatalf("the killed attempt: signal %q, stdout %q\n%s", killedRun.signaled, killedRun.stdout, killedRun.stderr)
	}
	var manifestPaths []string
	for i, o := range outs {
		if o.code != exitOK {
			t.Fatalf("worker %d: exit %d\n%s", i, o.code, o.stderr)
		}
		lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
		if want := strings.Count(tasks[i], "\n"); len(lines) != want {
			t.Fatalf("worker %d printed %d lines for %d shards (stdout carries manifests only):\n%s", i, len(lines), want, o.stdout)
		}
		for _, l := range lines {
			var m flow.Manifest
			if err := json.Unmarshal([]byte(l), &m); err != nil || !m.OK || m.Version != 1 {
				t.Fatalf("worker %d: manifest %v ok=%v: %s", i, err, m.OK, l)
			}
		}
		p := filepath.Join(t.TempDir(), fmt.Sprintf("manifests-%d.jsonl", i))
		if err := os.WriteFile(p, []byte(o.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		manifestPaths = append(manifestPaths, p)
	}
	// What the workers left before any commit: every attempt's files,
	// the killed one's unfinished file among them.
	before := shardDataFiles(t, dist)
	if _, snaps, _ := shardLake(t, dist); snaps != 0 {
		t.Fatalf("the workers committed: %d snapshots", snaps)
	}
	commitArgs := func(ms ...string) []string {
		args := []string{"commit", "--dir", dist, "--load-id", loadID, "--expect", expectPath}
		for _, m := range ms {
			args = append(args, "--manifests", m)
		}
		return args
	}

	// A missing shard (the third task's manifests not given) commits nothing.
	c = runBin(t, childOpts{dir: dist}, commitArgs(manifestPaths[0], manifestPaths[1], manifestPaths[3])...)
	if c.code == exitOK || !strings.Contains(c.stderr, "no usable attempt") || !strings.Contains(c.stderr, "0006") {
		t.Fatalf("commit without shards 6-8: exit %d\n%s", c.code, c.stderr)
	}
	// A tampered manifest (a row more loaded than read) commits nothing.
	b, _ := os.ReadFile(manifestPaths[0])
	tampered := strings.Replace(string(b), `"rows_loaded":`, `"rows_loaded":1`, 1)
	tamperedPath := filepath.Join(t.TempDir(), "tampered.jsonl")
	if err := os.WriteFile(tamperedPath, []byte(tampered), 0o600); err != nil {
		t.Fatal(err)
	}
	c = runBin(t, childOpts{dir: dist}, commitArgs(tamperedPath, manifestPaths[1], manifestPaths[2], manifestPaths[3])...)
	if c.code == exitOK || !strings.Contains(c.stderr, "does not balance") {
		t.Fatalf("commit of a tampered manifest: exit %d\n%s", c.code, c.stderr)
	}
	// A manifest whose file sizes lie (the footer says otherwise): that
	// attempt is unusable, so its shard is missing.
	sized := strings.Replace(string(b), `"file_size_bytes":`, `"file_size_bytes":9`, 1)
	sizedPath := filepath.Join(t.TempDir(), "sized.jsonl")
	if err := os.WriteFile(sizedPath, []byte(sized), 0o600); err != nil {
		t.Fatal(err)
	}
	c = runBin(t, childOpts{dir: dist}, commitArgs(sizedPath, manifestPaths[1], manifestPaths[2], manifestPaths[3])...)
	if c.code == exitOK || !strings.Contains(c.stderr, "its worker reported") || !strings.Contains(c.stderr, "no usable attempt") {
		t.Fatalf("commit of a manifest with a wrong file size: exit %d\n%s", c.code, c.stderr)
	}
	if _, snaps, _ := shardLake(t, dist); snaps != 0 {
		t.Fatalf("a refused commit made %d snapshots", snaps)
	}
	if l := shardLedger(t, dist); len(l) != 0 {
		t.Fatalf("a refused commit recorded %d exceptions", len(l))
	}
	if after := shardDataFiles(t, dist); !slices.Equal(after, before) {
		t.Fatalf("a refused commit removed files: %d before, %d after", len(before), len(after))
	}

	// The commit.
	c = runBin(t, childOpts{dir: dist}, commitArgs(manifestPaths...)...)
	if c.code != exitOK {
		t.Fatalf("commit: exit %d\n%s", c.code, c.stderr)
	}
	distReport := c.stdout

	// The table: row for row the single run's, and the ground truth's.
	singleRows, _, _ := shardLake(t, single)
	distRows, snaps, live := shardLake(t, dist)
	if !slices.Equal(singleRows, truth.rows) {
		t.Fatalf("the single run's table differs from the ground truth: %d rows, want %d (first difference %q)", len(singleRows), len(truth.rows), shardFirstDiff(singleRows, truth.rows))
	}
	if !slices.Equal(distRows, singleRows) {
		t.Fatalf("the distributed table differs from the single run's: %d rows, want %d", len(distRows), len(singleRows))
	}
	if snaps != 1 {
		t.Fatalf("the commit made %d snapshots, want 1", snaps)
	}
	// The workers left more than the commit needs: the speculative
	// attempt's files and the killed attempt's unfinished one.
	if len(before) < len(live)+2 {
		t.Fatalf("before the commit the warehouse held %d Parquet files, the commit made %d live: no losing attempt's file to remove", len(before), len(live))
	}
	// No file of a losing or killed attempt is left: the warehouse holds
	// exactly the live files.
	if got := shardDataFiles(t, dist); !slices.Equal(got, shardSorted(live)) || len(got) >= len(before) {
		t.Fatalf("data folder after the commit: %d files, %d live, %d before:\n%v\nlive %v", len(got), len(live), len(before), got, live)
	}
	// raw/: every input landed once, byte for byte, in its shard's folder.
	landed := map[string][]string{}
	filepath.WalkDir(filepath.Join(dist, "lake", "raw"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "_manifest.json" {
			landed[d.Name()] = append(landed[d.Name()], p)
		}
		return nil
	})
	for f := range nFiles {
		name := fmt.Sprintf("orders-%02d.csv", f)
		want, _ := os.ReadFile(filepath.Join(dist, "in", name))
		if len(landed[name]) != 1 {
			t.Fatalf("raw/ holds %s %d times: %v", name, len(landed[name]), landed[name])
		}
		if got, _ := os.ReadFile(landed[name][0]); string(got) != string(want) || !strings.Contains(landed[name][0], loadID+"-shard-") {
			t.Fatalf("raw/ copy %s differs from the source file, or is not in a shard's folder", landed[name][0])
		}
	}
	if len(landed) != nFiles {
		t.Fatalf("raw/ holds %d files, want %d", len(landed), nFiles)
	}
	// Exceptions: the single run's, and the ground truth's raw rows.
	singleEx, distEx := shardLedger(t, single), shardLedger(t, dist)
	if !slices.Equal(shardNoIDs(distEx), shardNoIDs(singleEx)) {
		t.Fatalf("exceptions differ:\ndist   %v\nsingle %v", shardNoIDs(distEx), shardNoIDs(singleEx))
	}
	var wantHeld, gotHeld []string
	for f, rows := range truth.held {
		for _, r := range rows {
			wantHeld = append(wantHeld, f+"|"+r)
		}
	}
	for _, e := range shardNoIDs(distEx) {
		parts := strings.SplitN(e, "|", 3) // file|status|raw|rules
		raw := parts[2][:strings.LastIndex(parts[2], "|")]
		gotHeld = append(gotHeld, parts[0]+"|"+raw)
	}
	sort.Strings(wantHeld)
	sort.Strings(gotHeld)
	if !slices.Equal(gotHeld, wantHeld) {
		t.Fatalf("held-back rows: %d, want %d\n%v\n%v", len(gotHeld), len(wantHeld), gotHeld, wantHeld)
	}
	// Accounting and control totals: the single run's, and the truth's.
	sStatus, sRep := shardReport(t, singleReport)
	dStatus, dRep := shardReport(t, distReport)
	if sStatus != "ok" || dStatus != "ok" {
		t.Fatalf("report status: single %s, distributed %s", sStatus, dStatus)
	}
	want := reportTable{RowsRead: truth.read, RowsLoaded: int64(len(truth.rows)), RowsQuarantined: int64(len(wantHeld)), RowsSkipped: truth.skipped}
	for what, got := range map[string]reportTable{"single": sRep, "distributed": dRep} {
		if got.RowsRead != want.RowsRead || got.RowsLoaded != want.RowsLoaded || got.RowsQuarantined != want.RowsQuarantined || got.RowsSkipped != want.RowsSkipped {
			t.Errorf("%s accounting %+v, want %+v", what, got, want)
		}
	}
	if fmt.Sprint(dRep.ControlTotals) != fmt.Sprint(sRep.ControlTotals) || len(dRep.ControlTotals) == 0 {
		t.Errorf("control totals: distributed %v, single %v", dRep.ControlTotals, sRep.ControlTotals)
	}

	// A second commit of the same load changes nothing.
	c = runBin(t, childOpts{dir: dist}, commitArgs(manifestPaths...)...)
	if c.code != exitOK {
		t.Fatalf("second commit: exit %d\n%s", c.code, c.stderr)
	}
	rows2, snaps2, _ := shardLake(t, dist)
	if snaps2 != snaps || !slices.Equal(rows2, distRows) {
		t.Fatalf("second commit: %d snapshots (was %d), %d rows (was %d)", snaps2, snaps, len(rows2), len(distRows))
	}
	if ex2 := shardLedger(t, dist); !slices.Equal(ex2, distEx) {
		t.Fatalf("second commit changed the ledger: %d exceptions, was %d", len(ex2), len(distEx))
	}
	if got := shardDataFiles(t, dist); !slices.Equal(got, shardSorted(live)) {
		t.Fatalf("second commit changed the data folder: %v", got)
	}
}

// shardFirstDiff is the first row where got and want differ.
func shardFirstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return got[i] + " ≠ " + want[i]
		}
	}
	return "one is longer"
}

func shardSorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}

// workerLines runs the worker in this process on stdin lines.
func workerLines(t *testing.T, dir string, lines ...string) (int, []flow.Manifest, string) {
	t.Helper()
	old := workerStdin
	defer func() { workerStdin = old }()
	workerStdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	code, out, stderr := runCLI(t, "worker", "--dir", dir)
	var ms []flow.Manifest
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m flow.Manifest
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout carries a line that is not a manifest: %q (%v)", l, err)
		}
		ms = append(ms, m)
	}
	return code, ms, stderr
}

func TestWorkerAnswersEveryLineAndRefusesWhatItCannotStage(t *testing.T) {
	dir, _ := shardWorkspace(t, "ws", 1)
	in := func(name string) string { return "file://" + filepath.Join(dir, "in", name) }
	if err := os.WriteFile(filepath.Join(dir, "in", "other.csv"), []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "orders-99.csv")
	if err := os.WriteFile(outside, []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ line, want string }{
		{`{"load_id":"L","table":"orders","shard":"1"`, "JSON object"},
		{`{"load_id":"L","table":"nope","shard":"1","inputs":[{"uri":"` + in("orders-00.csv") + `"}]}`, `no table "nope"`},
		{`{"load_id":"L","table":"orders","shard":"1","inputs":[{"uri":"` + in("other.csv") + `"}]}`, "is not a file of table orders"},
		{`{"load_id":"L","table":"orders","shard":"1","inputs":[{"uri":"file://` + outside + `"}]}`, "is not below the source folder"},
		{`{"load_id":"L","table":"orders","shard":"1","inputs":[{"uri":"` + in("orders-00.csv") + `","range":{"column":"id","from":1,"to":2}}]}`, "ranges are not supported"},
		{`{"load_id":"L","table":"orders","shard":"1","inputs":[{"uri":"postgres://u:hunter2@db.example/x"}]}`, "file:// URI"},
		{`{"load_id":"","table":"orders","shard":"1","inputs":[{"uri":"` + in("orders-00.csv") + `"}]}`, "needs load_id"},
	}
	var lines []string
	for _, c := range cases {
		lines = append(lines, c.line)
	}
	code, ms, stderr := workerLines(t, dir, lines...)
	if code != exitOK || len(ms) != len(cases) {
		t.Fatalf("exit %d, %d manifests for %d lines\n%s", code, len(ms), len(cases), stderr)
	}
	for i, c := range cases {
		if ms[i].OK || !strings.Contains(ms[i].Error, c.want) || ms[i].Status != "failed" {
			t.Errorf("line %d: ok=%v error %q, want a failure saying %q", i, ms[i].OK, ms[i].Error, c.want)
		}
	}
	if b, _ := json.Marshal(ms); strings.Contains(string(b), "hunter2") || strings.Contains(stderr, "hunter2") {
		t.Errorf("a password reached the manifests or the log")
	}
	if files := shardDataFiles(t, dir); len(files) != 0 {
		t.Errorf("refused shards wrote %v", files)
	}
	// A good line without an attempt gets a random one; its manifest
	// balances and names its files with its write id.
	code, ms, stderr = workerLines(t, dir, `{"load_id":"L","table":"orders","shard":"1","inputs":[{"uri":"`+in("orders-00.csv")+`"}]}`)
	if code != exitOK || len(ms) != 1 || !ms[0].OK || !strings.HasPrefix(ms[0].Attempt, "w-") {
		t.Fatalf("exit %d: %+v\n%s", code, ms, stderr)
	}
	a := ms[0].Accounting
	if a.RowsRead != a.RowsLoaded+a.RowsQuarantined+a.RowsSkipped || a.RowsLoaded == 0 || len(ms[0].DataFiles) == 0 {
		t.Fatalf("accounting %+v, %d files", a, len(ms[0].DataFiles))
	}
	for _, f := range ms[0].DataFiles {
		if !strings.Contains(f.Path, ms[0].WriteID) {
			t.Errorf("data file %s is not named with the write id %s", f.Path, ms[0].WriteID)
		}
	}
	if _, snaps, _ := shardLake(t, dir); snaps != 0 {
		t.Fatalf("the worker committed %d snapshots", snaps)
	}
	if l := shardLedger(t, dir); len(l) != 0 {
		t.Fatalf("the worker wrote %d exceptions to the workspace's ledger", len(l))
	}
}

func TestWorkerRefusesAnUnapprovedPlan(t *testing.T) {
	dir, _ := shardWorkspace(t, "ws", 1)
	if err := os.WriteFile(filepath.Join(dir, "platform.yaml"), []byte(strings.Replace(shardPlan, "qty >= 0", "qty >= 1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, ms, _ := workerLines(t, dir, `{"load_id":"L","table":"orders","shard":"1","inputs":[]}`, `{"load_id":"L","table":"orders","shard":"2","inputs":[]}`)
	if code != exitPrecondition || len(ms) != 2 || ms[0].OK || ms[1].Shard != "2" || !strings.Contains(ms[1].Error, "approve") {
		t.Fatalf("exit %d, %+v", code, ms)
	}
}

func TestCommitRefusesManifestsItCannotTrust(t *testing.T) {
	dir, _ := shardWorkspace(t, "ws", 1)
	in := "file://" + filepath.Join(dir, "in", "orders-00.csv")
	expect := filepath.Join(t.TempDir(), "shards.jsonl")
	if err := os.WriteFile(expect, []byte(`{"load_id":"L","table":"orders","shard":"1","inputs":[{"uri":"`+in+`"}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := func(m string) string {
		p := filepath.Join(t.TempDir(), "m.jsonl")
		if err := os.WriteFile(p, []byte(m+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ manifest, want string }{
		{`{"version":1,"load_id":"L","table":"orders","shard":"1","attempt":"a","ok":true,"plan_hash":"0000","inputs":["` + in + `"]}`, "staged under plan"},
		{`{"version":1,"load_id":"L","table":"orders","shard":"9","attempt":"a","ok":true}`, "not an expected shard"},
		{`{"version":2,"load_id":"L","table":"orders","shard":"1","attempt":"a","ok":true}`, "manifest version 2"},
		{`{"version":1,"load_id":"L","table":"orders","shard":"1","attempt":"a","ok":false,"error":"boom"}`, "attempt a failed: boom"},
	} {
		code, _, stderr := runCLI(t, "commit", "--dir", dir, "--load-id", "L", "--expect", expect, "--manifests", manifest(c.manifest))
		if code == exitOK || !strings.Contains(stderr, c.want) {
			t.Errorf("manifest %s: exit %d, want a refusal saying %q:\n%s", c.manifest, code, c.want, stderr)
		}
	}
	if code, _, _ := runCLI(t, "commit", "--dir", dir, "--load-id", "L", "--expect", expect); code != exitUsage {
		t.Errorf("commit without --manifests: exit %d, want %d", code, exitUsage)
	}
	for _, m := range []string{filepath.Join(dir, "no-such.jsonl"), "https://example.com/m.jsonl"} {
		if code, _, stderr := runCLI(t, "commit", "--dir", dir, "--load-id", "L", "--expect", expect, "--manifests", m); code != exitUsage {
			t.Errorf("commit --manifests %s: exit %d, want %d\n%s", m, code, exitUsage, stderr)
		}
	}
	if l := shardLedger(t, dir); len(l) != 0 {
		t.Fatalf("refused commits recorded %d exceptions", len(l))
	}
}
