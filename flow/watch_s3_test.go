package flow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/s3test"
)

// waitIDs polls the lake until it holds n distinct ids (or 60 s pass).
func waitIDs(t *testing.T, ws flow.Workspace, p *plan.Plan, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, _ := lakeIDs(t, ws, p, "events")
		if len(got) >= n || time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// committedObjects reads every lima.files entry of the table's snapshots:
// name → the ETags recorded for it (and fails on an entry without ETag).
func committedObjects(t *testing.T, ws flow.Workspace, p *plan.Plan) map[string][]string {
	t.Helper()
	sk, err := flow.OpenSink(context.Background(), ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(context.Background(), []string{p.Namespace(), "events"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil || s.Summary.Properties[run.PropFiles] == "" {
			continue
		}
		var fs []run.ChangeFile
		if err := json.Unmarshal([]byte(s.Summary.Properties[run.PropFiles]), &fs); err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.ETag == "" || f.SHA256 != "" {
				t.Fatalf("snapshot %d records %+v: an S3 object's identity is key, size and ETag", s.SnapshotID, f)
			}
			out[f.Name] = append(out[f.Name], f.ETag)
		}
	}
	return out
}

// TestWatchS3LoadsEveryObjectExactlyOnce puts objects below an S3 prefix
// of the loopback server while the watcher runs (in-process, 100 ms
// interval, 40-line batches): every row lands exactly once; the same bytes
// put again under a key are not loaded again; an object that does not
// match the glob is never loaded; lima.files records each object's key
// and ETag as the server reports them; a restarted watcher loads nothing;
// and an object overwritten with new content loads as a new version (its
// new rows appended, the old ones kept), as a rewritten local file does.
func TestWatchS3LoadsEveryObjectExactlyOnce(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ws, p := newWorkspace(t, strings.Replace(watchPlan, "path: in}", "path: s3://"+bucket+"/drop}", 1))
	if got := p.Sources["in"].Path; got != "s3://"+bucket+"/drop" {
		t.Fatalf("plan source path %q", got)
	}
	put := func(key, body string) {
		t.Helper()
		if err := cl.Put(context.Background(), bucket, "drop/"+key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Not matched by *.csv: never loaded, whatever it holds.
	put("readme.txt", "id,qty\n999999,1\n")
	if err := cl.Put(context.Background(), bucket, "elsewhere/x.csv", strings.NewReader("id,qty\n888888,1\n"), nil); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var errs []error
	var latencies int
	o := flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second},
		Interval: 100 * time.Millisecond, BatchRows: 40,
		OnBatch: func(out *flow.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			if out.Report.Watch != nil {
				latencies += len(out.Report.Watch.Files)
			}
		},
		OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := flow.Watch(ctx, o); done <- err }()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	want := map[int64]int{}
	var wantSum int64
	next := int64(1)
	bodies := map[string]string{}
	gen := func() string {
		var b strings.Builder
		b.WriteString("id,qty\n")
		for r := 0; r < 1+rng.IntN(25); r++ {
			q := int64(rng.IntN(1000))
			fmt.Fprintf(&b, "%d,%d\n", next, q)
			want[next]++
			wantSum += q
			next++
		}
		return b.String()
	}
	const objects = 10
	for f := 0; f < objects; f++ {
		key := fmt.Sprintf("ev%03d.csv", f)
		bodies[key] = gen()
		put(key, bodies[key])
		if f == 4 {
			put("ev001.csv", bodies["ev001.csv"]) // the same bytes again: not new
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
	}
	waitIDs(t, ws, p, len(want))
	time.Sleep(500 * time.Millisecond) // more polls: nothing else may load
	got, sum := lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != fmt.Sprint(want) || sum != wantSum {
		t.Fatalf("lake has %d ids (sum %d), want %d ids each once (sum %d): %v", len(got), sum, len(want), wantSum, got)
	}

	// An object overwritten with new content: a new version, appended.
	bodies["ev003.csv"] = gen()
	put("ev003.csv", bodies["ev003.csv"])
	waitIDs(t, ws, p, len(want))
	time.Sleep(500 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, sum = lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != fmt.Sprint(want) || sum != wantSum {
		t.Fatalf("after the overwrite the lake has %d ids (sum %d), want %d ids each once (sum %d)", len(got), sum, len(want), wantSum)
	}

	// lima.files: each object once with the ETag the server reports now,
	// ev003.csv twice (both versions), nothing that the glob does not match.
	objs, err := cl.List(context.Background(), bucket, "drop/")
	if err != nil {
		t.Fatal(err)
	}
	serverETag := map[string]string{}
	for _, ob := range objs {
		if strings.HasSuffix(ob.Key, ".csv") {
			serverETag[strings.TrimPrefix(ob.Key, "drop/")] = ob.ETag
		}
	}
	rec := committedObjects(t, ws, p)
	if len(rec) != objects || len(serverETag) != objects {
		t.Fatalf("lima.files names %d objects, the server has %d, %d were put", len(rec), len(serverETag), objects)
	}
	for name, etags := range rec {
		wantN := 1
		if name == "ev003.csv" {
			wantN = 2
		}
		if len(etags) != wantN || etags[len(etags)-1] != serverETag[name] {
			t.Errorf("%s recorded with ETags %v, want %d ending with the server's %s", name, etags, wantN, serverETag[name])
		}
	}
	mu.Lock()
	if len(errs) > 0 {
		t.Fatalf("watch errors: %v", errs)
	}
	if latencies != objects+1 {
		t.Fatalf("%d latency entries, want one per loaded object version (%d)", latencies, objects+1)
	}
	mu.Unlock()

	// A restarted watcher reads the ETags back from the commits: nothing again.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel2()
	sum2, err := flow.Watch(ctx2, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Files != 0 {
		t.Fatalf("a restarted watcher loaded %d objects again", sum2.Files)
	}
	if got, _ := lakeIDs(t, ws, p, "events"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("the lake changed after a restart")
	}
}

// TestS3ListerIdentity: the lister names objects relative to the prefix,
// applies the globs, carries the server's ETag as the checksum, and reads
// an object's bytes back unchanged.
func TestS3ListerIdentity(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	ctx := context.Background()
	bodies := map[string]string{"p/a.csv": "id\n1\n", "p/sub/b.csv": "id\n2\n3\n", "p/c.txt": "x\n", "q/d.csv": "id\n4\n"}
	for k, v := range bodies {
		if err := cl.Put(ctx, bucket, k, strings.NewReader(v), nil); err != nil {
			t.Fatal(err)
		}
	}
	l := &flow.S3Lister{Root: "s3://" + bucket + "/p", Client: cl}
	list, err := l.List(ctx, []string{"**/*.csv"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range list {
		o, _, err := cl.Head(ctx, bucket, "p/"+f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if f.Checksum != "etag:"+o.ETag || f.Size != int64(len(bodies["p/"+f.Name])) {
			t.Errorf("%s: checksum %q size %d, server ETag %q size %d", f.Name, f.Checksum, f.Size, o.ETag, len(bodies["p/"+f.Name]))
		}
		rc, err := l.Open(ctx, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, err = b.ReadFrom(rc)
		rc.Close()
		if err != nil || b.String() != bodies["p/"+f.Name] {
			t.Errorf("%s read back %q (%v)", f.Name, b.String(), err)
		}
		got = append(got, f.Name)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[a.csv sub/b.csv]" {
		t.Fatalf("listed %v, want [a.csv sub/b.csv]", got)
	}
	if _, err := l.Open(ctx, "c.txt"); err == nil {
		t.Fatal("an object that was not listed opened")
	}
	if fl, ok := flow.DefaultLister(&plan.Source{Kind: plan.SourceFiles, Path: "s3://" + bucket + "/p"}, "").(*flow.S3Lister); !ok || fl.Root != "s3://"+bucket+"/p" {
		t.Fatal("DefaultLister of an s3:// source is not an S3Lister")
	}
	if _, ok := flow.DefaultLister(&plan.Source{Kind: plan.SourceFiles, Path: "in"}, "/tmp/in").(*flow.DirLister); !ok {
		t.Fatal("DefaultLister of a folder is not a DirLister")
	}
}

// TestWatchS3AfterABulkLoad: an ordinary load of an S3 prefix records its
// objects' keys and ETags, so a watcher started afterwards loads only the
// objects put since.
func TestWatchS3AfterABulkLoad(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ws, p := newWorkspace(t, strings.Replace(watchPlan, "path: in}", "path: s3://"+bucket+"/drop}", 1))
	put := func(key, body string) {
		t.Helper()
		if err := cl.Put(context.Background(), bucket, "drop/"+key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	put("a.csv", "id,qty\n1,10\n2,20\n")
	put("b.csv", "id,qty\n3,30\n")
	out := runOnce(t, ws, p, flow.RunOptions{})
	if tr := tableReport(t, out.Report, "events"); tr.RowsLoaded != 3 {
		t.Fatalf("bulk load: %+v", tr)
	}
	if rec := committedObjects(t, ws, p); len(rec) != 2 {
		t.Fatalf("the bulk load recorded %v, want a.csv and b.csv with their ETags", rec)
	}
	put("c.csv", "id,qty\n4,40\n5,50\n")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var errs []error
	done := make(chan error, 1)
	var sum *flow.WatchSummary
	go func() {
		var err error
		sum, err = flow.Watch(ctx, flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second},
			Interval: 50 * time.Millisecond, OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
		done <- err
	}()
	waitIDs(t, ws, p, 5)
	time.Sleep(400 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, total := lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != "map[1:1 2:1 3:1 4:1 5:1]" || total != 150 || sum.Files != 1 {
		t.Fatalf("lake %v (sum %d), %d files watched; want ids 1..5 once (sum 150), 1 file", got, total, sum.Files)
	}
	mu.Lock()
	if len(errs) > 0 {
		t.Fatalf("watch errors: %v", errs)
	}
	mu.Unlock()
}

// TestWatchS3ChangeCapture puts change files below an S3 prefix of the
// loopback server while the watcher runs (in-process, 100 ms interval):
// the lake equals the changes applied by hand, in order, each file once;
// a change file re-delivered under a new key is held back as a file seen
// twice (and reported once); a restarted watcher applies nothing again.
func TestWatchS3ChangeCapture(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ws, p := newWorkspace(t, strings.Replace(cdcWorkspacePlan, "path: in}", "path: s3://"+bucket+"/drop}", 1))
	if got := p.Sources["in"].Path; got != "s3://"+bucket+"/drop" {
		t.Fatalf("plan source path %q", got)
	}
	put := func(key, body string) {
		t.Helper()
		if err := cl.Put(context.Background(), bucket, "drop/changes/"+key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var errs []error
	quarantined := map[string]int64{}
	o := flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second},
		Interval: 100 * time.Millisecond,
		OnBatch: func(out *flow.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			for _, tr := range out.Result.Tables {
				for r, n := range tr.QuarantinedBy {
					quarantined[r] += n
				}
			}
		},
		OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *flow.WatchSummary, 1)
	go func() {
		sum, err := flow.Watch(ctx, o)
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		done <- sum
	}()

	// The changes, applied by hand one after the other: inserts of new
	// keys, updates and deletes of present keys, the sequence increasing
	// across files.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	want := map[int][2]string{}
	nextID, seq, changes := 1, 1, 0
	bodies := map[string]string{}
	const files = 8
	for f := 0; f < files; f++ {
		var b strings.Builder
		b.WriteString("op,seq,id,name,amount\n")
		for r := 0; r < 1+rng.IntN(6); r++ {
			var keys []int
			for k := range want {
				keys = append(keys, k)
			}
			sort.Ints(keys)
			switch op := rng.IntN(3); {
			case op == 0 || len(keys) == 0:
				name, amount := fmt.Sprintf("n%d", nextID), strconv.Itoa(rng.IntN(1000))
				fmt.Fprintf(&b, "I,%d,%d,%s,%s\n", seq, nextID, name, amount)
				want[nextID] = [2]string{name, amount}
				nextID++
			case op == 1:
				k := keys[rng.IntN(len(keys))]
				amount := strconv.Itoa(rng.IntN(1000))
				fmt.Fprintf(&b, "U,%d,%d,%s,%s\n", seq, k, want[k][0], amount)
				want[k] = [2]string{want[k][0], amount}
			default:
				k := keys[rng.IntN(len(keys))]
				fmt.Fprintf(&b, "D,%d,%d,,\n", seq, k)
				delete(want, k)
			}
			seq++
			changes++
		}
		key := fmt.Sprintf("c%03d.csv", f)
		bodies[key] = b.String()
		put(key, bodies[key])
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
	}
	waitLake := func(what string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			got, versions := cdcLake(t, ws, p)
			if fmt.Sprint(got) == fmt.Sprint(want) && versions == changes {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: lake %v with %d history versions, want %v with %d", what, got, versions, want, changes)
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // more polls: nothing else may apply
		if got, versions := cdcLake(t, ws, p); fmt.Sprint(got) != fmt.Sprint(want) || versions != changes {
			t.Fatalf("%s, later: lake %v with %d history versions, want %v with %d", what, got, versions, want, changes)
		}
	}
	waitLake("after the change files")

	// The bytes of c002.csv again under a new key: seen twice, not applied.
	put("c900.csv", bodies["c002.csv"])
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := quarantined[run.RuleCDCFileSeenTwice]
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitLake("after a re-delivered file")
	cancel()
	sum := <-done
	mu.Lock()
	if len(errs) > 0 {
		t.Fatalf("watch errors: %v", errs)
	}
	wantQ := map[string]int64{run.RuleCDCFileSeenTwice: 1}
	for r, n := range quarantined {
		if n == 0 {
			delete(quarantined, r)
		}
	}
	if fmt.Sprint(quarantined) != fmt.Sprint(wantQ) {
		t.Fatalf("held back %v, want %v", quarantined, wantQ)
	}
	mu.Unlock()
	if sum == nil || sum.Files != files+1 {
		t.Fatalf("the watcher settled %+v, want %d files (each change file once, the re-delivered one once)", sum, files+1)
	}

	// A restarted watcher reads the files' identities back from the
	// commits: it applies nothing and runs no batch.
	o.OnBatch = nil
	ctx2, cancel2 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel2()
	sum2, err := flow.Watch(ctx2, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Files != 0 || sum2.Batches != 0 {
		t.Fatalf("a restarted watcher ran %d batches of %d files", sum2.Batches, sum2.Files)
	}
	if got, versions := cdcLake(t, ws, p); fmt.Sprint(got) != fmt.Sprint(want) || versions != changes {
		t.Fatalf("after a restart: lake %v with %d history versions, want %v with %d", got, versions, want, changes)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("restarted watcher errors: %v", errs)
	}
}
