package flow_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

const watchPlan = `schema_version: 1
platform: {prefix: mb}
sources: {in: {kind: files, path: in}}
tables:
  events:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    columns: [{name: id, type: long}, {name: qty, type: long}]
    load: {keys: [id]}
`

func newWorkspace(t *testing.T, yaml string) (flow.Workspace, *plan.Plan) {
	t.Helper()
	dir := t.TempDir()
	p, err := plan.Parse([]byte(yaml), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: time.Now().UTC().Format(time.RFC3339), PlanHash: p.Hash()}
	ws := flow.Workspace{Dir: dir}
	if err := p.Write(ws.PlanPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o700); err != nil {
		t.Fatal(err)
	}
	return ws, p
}

// dropFile writes a file the way a producer should: under a name the glob
// does not match, then renamed into place.
func dropFile(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "in", "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "in", name)); err != nil {
		t.Fatal(err)
	}
}

// lakeIDs counts each id of a table, read with iceberg-go.
func lakeIDs(t *testing.T, ws flow.Workspace, p *plan.Plan, name string) (map[int64]int, int64) {
	t.Helper()
	sk, err := flow.OpenSink(context.Background(), ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	ids := map[int64]int{}
	var sum int64
	tbl, err := sk.Catalog().LoadTable(context.Background(), []string{p.Namespace(), name})
	if err != nil || tbl.CurrentSnapshot() == nil {
		return ids, 0
	}
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			id, _ := strconv.ParseInt(rec.Column(0).ValueStr(r), 10, 64)
			q, _ := strconv.ParseInt(rec.Column(1).ValueStr(r), 10, 64)
			ids[id]++
			sum += q
		}
		rec.Release()
	}
	return ids, sum
}

// TestWatchLoadsEveryRowExactlyOnce drops files while the watcher runs
// (in-process, 100 ms interval): every row lands exactly once, a file
// dropped again with the same bytes is not loaded again, a restarted
// watcher loads nothing twice, every batch reports each file's latency, and
// the compactions every 3 batches change no row.
func TestWatchLoadsEveryRowExactlyOnce(t *testing.T) {
	ws, p := newWorkspace(t, watchPlan)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var latencies []int64
	var batches, compactions int
	var errs []error
	o := flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second},
		Interval: 100 * time.Millisecond, BatchRows: 40, CompactEvery: 3,
		OnCompact: func(rs []flow.CompactResult) {
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rs {
				if r.FilesAfter > r.FilesBefore {
					errs = append(errs, fmt.Errorf("compaction grew %s: %+v", r.Table, r))
				}
				compactions++
			}
		},
		OnBatch: func(out *flow.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			batches++
			if out.Report.Watch == nil {
				errs = append(errs, fmt.Errorf("batch %s has no latency report", out.Report.RunID))
				return
			}
			for _, f := range out.Report.Watch.Files {
				if f.VisibleAt.Before(f.FirstSeen) || f.LatencyMS != f.VisibleAt.Sub(f.FirstSeen).Milliseconds() {
					errs = append(errs, fmt.Errorf("latency of %s: %+v", f.Name, f))
				}
				latencies = append(latencies, f.LatencyMS)
			}
		},
		OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }}
	done := make(chan error, 1)
	go func() { _, err := flow.Watch(ctx, o); done <- err }()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	want := map[int64]int{}
	var wantSum int64
	next := int64(1)
	const files = 12
	for f := 0; f < files; f++ {
		var b strings.Builder
		b.WriteString("id,qty\n")
		for r := 0; r < 1+rng.IntN(25); r++ {
			q := int64(rng.IntN(1000))
			fmt.Fprintf(&b, "%d,%d\n", next, q)
			want[next]++
			wantSum += q
			next++
		}
		dropFile(t, ws.Dir, fmt.Sprintf("ev%03d.csv", f), b.String())
		if f == 5 {
			// The same bytes again under the same name: not a new file.
			data, _ := os.ReadFile(filepath.Join(ws.Dir, "in", "ev002.csv"))
			dropFile(t, ws.Dir, "ev002.csv", string(data))
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, _ := lakeIDs(t, ws, p, "events")
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, sum := lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != fmt.Sprint(want) || sum != wantSum {
		t.Fatalf("lake has %d ids (sum %d), want %d ids each once (sum %d)", len(got), sum, len(want), wantSum)
	}
	mu.Lock()
	if len(errs) > 0 {
		t.Fatalf("watch errors: %v", errs)
	}
	if compactions == 0 && batches >= 3 {
		t.Fatalf("%d batches and no compaction (every 3)", batches)
	}
	if len(latencies) != files || batches < 2 {
		t.Fatalf("%d latencies over %d batches, want one per file (%d) over several batches", len(latencies), batches, files)
	}
	mu.Unlock()

	// A new watcher reads what was loaded from the commits: nothing again.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel2()
	sum2, err := flow.Watch(ctx2, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Files != 0 {
		t.Fatalf("a restarted watcher loaded %d files again", sum2.Files)
	}
	if got, _ := lakeIDs(t, ws, p, "events"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("the lake changed after a restart")
	}
}

// TestWatchBinaryCommitsOnSIGTERM: the built lima-tui watches with a long
// interval, so its first poll only observes the files; SIGTERM makes it
// take the unchanged files, commit them and exit 0.
func TestWatchBinaryCommitsOnSIGTERM(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lima-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/lima-tui").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ws, p := newWorkspace(t, watchPlan)
	want := map[int64]int{}
	var wantSum int64
	for f := 0; f < 3; f++ {
		var b strings.Builder
		b.WriteString("id,qty\n")
		for r := 0; r < 10; r++ {
			id := int64(f*10 + r + 1)
			fmt.Fprintf(&b, "%d,%d\n", id, id*3)
			want[id]++
			wantSum += id * 3
		}
		dropFile(t, ws.Dir, fmt.Sprintf("f%d.csv", f), b.String())
	}
	cmd := exec.Command(bin, "run", "--watch", "--interval", "1h", "--force", "--plan", ws.PlanPath())
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the first poll has run (the banner is printed before it).
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "watching every") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // the first poll runs right after the banner
	if got, _ := lakeIDs(t, ws, p, "events"); len(got) != 0 {
		t.Fatalf("rows loaded before the stop: %d (the first poll must only observe)", len(got))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	got, sum := lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != fmt.Sprint(want) || sum != wantSum || !strings.Contains(stderr.String(), "watch stopped after 1 micro-batch(es), 3 file(s), 30 row(s)") {
		t.Fatalf("after SIGTERM the lake has %d ids (sum %d), want %d (sum %d)\n%s", len(got), sum, len(want), wantSum, stderr.String())
	}
}

// syncBuffer is a strings.Builder safe for the command's writer goroutine
// and the test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A table loaded by an ordinary run first (the bulk load), then watched:
// the files of that load are not loaded again, new ones are.
func TestWatchAfterABulkLoad(t *testing.T) {
	ws, p := newWorkspace(t, watchPlan)
	dropFile(t, ws.Dir, "a.csv", "id,qty\n1,10\n2,20\n")
	dropFile(t, ws.Dir, "b.csv", "id,qty\n3,30\n")
	runOnce(t, ws, p, flow.RunOptions{})
	// c.csv brings two new keys and one the table has (held back).
	dropFile(t, ws.Dir, "c.csv", "id,qty\n4,40\n5,50\n2,99\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := flow.Watch(ctx, flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second}, Interval: 50 * time.Millisecond})
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := lakeIDs(t, ws, p, "events")
		if len(got) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a few more polls: nothing else may load
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, sum := lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != "map[1:1 2:1 3:1 4:1 5:1]" || sum != 150 {
		t.Fatalf("lake %v sum %d, want ids 1..5 once (sum 150)", got, sum)
	}
	st, err := flow.OpenLedger(context.Background(), ws, p)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.Count(context.Background(), ledger.Filter{Table: "events", Rule: "unique"}); err != nil || n != 1 {
		t.Fatalf("the repeated key 2 is not held back once: %d %v", n, err)
	}
}
