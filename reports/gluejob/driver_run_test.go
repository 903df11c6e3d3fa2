package gluejob

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type driverCall struct {
	Verb      string         `json:"verb"`
	Shard     map[string]any `json:"shard"`
	Args      []string       `json:"args"`
	Manifests string         `json:"manifests"`
	Expect    string         `json:"expect"`
	Plan      string         `json:"plan"`
}

type driverRun struct {
	rc      int
	stderr  string
	calls   []driverCall
	uploads []map[string]string
}

// runDriver runs the generated driver in testdata/harness.py with the
// objects given (key -> size) and the fake lima-tui.
func runDriver(t *testing.T, driver []byte, objects map[string]int, loadID string, env ...string) driverRun {
	t.Helper()
	py := python3(t)
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "added"), 0o700); err != nil {
		t.Fatal(err)
	}
	fake, err := os.ReadFile(filepath.Join("testdata", "fake_lima.py"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string, b []byte, mode os.FileMode) {
		if err := os.WriteFile(path, b, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(work, "added", "lima-tui"), fake, 0o600) // the driver makes it executable
	write(filepath.Join(work, "added", "platform.yaml"), []byte("the approved plan\n"), 0o600)
	write(filepath.Join(work, "driver.py"), driver, 0o600)
	var listing []map[string]any
	for k, n := range objects {
		listing = append(listing, map[string]any{"Bucket": "in-bucket", "Key": k, "Size": n})
	}
	lb, _ := json.Marshal(listing)
	write(filepath.Join(work, "listing.json"), lb, 0o600)
	abs, _ := filepath.Abs(filepath.Join("testdata", "harness.py"))
	cmd := exec.Command(py, abs)
	cmd.Env = append(os.Environ(), append([]string{"WORK=" + work, "DRIVER=" + filepath.Join(work, "driver.py"), "LOAD_ID=" + loadID}, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	r := driverRun{stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(filepath.Join(work, "calls.jsonl")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var c driverCall
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatal(err)
			}
			r.calls = append(r.calls, c)
		}
		f.Close()
	}
	if b, err := os.ReadFile(filepath.Join(work, "uploads.json")); err == nil {
		_ = json.Unmarshal(b, &r.uploads)
	}
	return r
}

// TestGlueDriverRuns runs the generated driver with stand-ins for Glue,
// Spark and S3: the files matching the glob are grouped into shards of
// shard_mb in key order, each task pipes its shard with its own attempt id
// through lima-tui worker, the driver runs lima-tui commit once with every
// manifest, uploads the report and fails the job when the commit fails.
func TestGlueDriverRuns(t *testing.T) {
	b := testBundle(t, strings.Replace(testPlan, "      timeout: 90m\n", "      timeout: 90m\n      shard_mb: 1\n", 1), Options{SourceBytes: 1})
	const kib = 1024
	objects := map[string]int{
		"landing/orders/a.csv":     600 * kib,
		"landing/orders/b.csv":     600 * kib,
		"landing/orders/x/c.csv":   100 * kib, // orders/**/*.csv
		"landing/orders/notes.txt": 10,
		"landing/other.csv":        10,
		"landing/extra/o1.csv":     10,  // extra/o?.csv
		"landing/extra/o12.csv":    10,  // not extra/o?.csv
		"landing2/orders/a.csv":    500, // another prefix
	}
	r := runDriver(t, b.Driver, objects, "L1")
	if r.rc != 0 {
		t.Fatalf("driver: exit %d\n%s", r.rc, r.stderr)
	}
	// By hand: in key order extra/o1.csv (10 B), orders/a.csv (600 KiB) share
	// shard 0000 (within 1 MiB); orders/b.csv would pass 1 MiB, so it opens
	// 0001, and orders/x/c.csv (100 KiB) joins it.
	wantShards := [][]string{
		{"s3://in-bucket/landing/extra/o1.csv", "s3://in-bucket/landing/orders/a.csv"},
		{"s3://in-bucket/landing/orders/b.csv", "s3://in-bucket/landing/orders/x/c.csv"},
	}
	var workers, commits []driverCall
	for _, c := range r.calls {
		if c.Plan != "the approved plan\n" {
			t.Fatalf("%s ran without the plan in --dir: %q", c.Verb, c.Plan)
		}
		switch c.Verb {
		case "worker":
			workers = append(workers, c)
		case "commit":
			commits = append(commits, c)
		}
	}
	if len(workers) != 2 || len(commits) != 1 {
		t.Fatalf("%d worker and %d commit calls, want 2 and 1: %+v", len(workers), len(commits), r.calls)
	}
	attempts := map[string]bool{}
	for i, w := range workers {
		s := w.Shard
		var uris []string
		for _, in := range s["inputs"].([]any) {
			uris = append(uris, in.(map[string]any)["uri"].(string))
		}
		if s["load_id"] != "L1" || s["table"] != "orders" || s["shard"] != []string{"0000", "0001"}[i] || strings.Join(uris, " ") != strings.Join(wantShards[i], " ") {
			t.Errorf("worker %d got %v", i, s)
		}
		attempts[s["attempt"].(string)] = true
	}
	if len(attempts) != 2 || attempts[""] {
		t.Errorf("attempt ids %v: each task needs its own", attempts)
	}
	c := commits[0]
	args := strings.Join(c.Args, " ")
	if !strings.HasPrefix(args, "commit --dir ") || !strings.Contains(args, "--load-id L1 --expect ") || !strings.HasSuffix(args, "--manifests -") {
		t.Errorf("commit args %q", args)
	}
	if m := strings.Split(strings.TrimSpace(c.Manifests), "\n"); len(m) != 2 || !strings.Contains(m[0], `"shard": "0000"`) || !strings.Contains(m[1], `"shard": "0001"`) {
		t.Errorf("commit got manifests %q", c.Manifests)
	}
	if e := strings.Split(strings.TrimSpace(c.Expect), "\n"); len(e) != 2 || strings.Contains(c.Expect, "attempt") {
		t.Errorf("expected shards %q: two, without attempt ids", c.Expect)
	}
	if len(r.uploads) != 1 || r.uploads[0]["Bucket"] != "code-bucket" || r.uploads[0]["Key"] != "lima/reports/L1/report.json" || r.uploads[0]["Body"] != `{"run_id": "R1"}` {
		t.Errorf("uploads %v", r.uploads)
	}

	// A trigger's run (load id auto) uses the job run id.
	if r := runDriver(t, b.Driver, map[string]int{"landing/orders/a.csv": 1}, "auto"); r.rc != 0 || len(r.calls) != 2 || r.calls[1].Args[4] != "glue-jr_7" {
		t.Errorf("auto load id: exit %d, calls %+v\n%s", r.rc, r.calls, r.stderr)
	}
	// A failed commit fails the job, after the report is uploaded.
	if r := runDriver(t, b.Driver, objects, "L2", "COMMIT_RC=3"); r.rc != 3 || !strings.Contains(r.stderr, "lima-tui commit exited 3: load L2 is not committed") || len(r.uploads) != 1 {
		t.Errorf("failed commit: exit %d, %d uploads\n%s", r.rc, len(r.uploads), r.stderr)
	}
	// A failed worker fails the task, and nothing is committed.
	if r := runDriver(t, b.Driver, objects, "L3", "WORKER_RC=1"); r.rc != 4 || !strings.Contains(r.stderr, "lima-tui worker exited 1") {
		t.Errorf("failed worker: exit %d\n%s", r.rc, r.stderr)
	} else {
		for _, c := range r.calls {
			if c.Verb == "commit" {
				t.Error("committed after a worker failed")
			}
		}
	}
	// No matching file: no task, one commit of nothing.
	if r := runDriver(t, b.Driver, map[string]int{"landing/other.csv": 1}, "L4"); r.rc != 0 || len(r.calls) != 1 || r.calls[0].Verb != "commit" || r.calls[0].Manifests != "" {
		t.Errorf("no input: exit %d, calls %+v\n%s", r.rc, r.calls, r.stderr)
	}
}
