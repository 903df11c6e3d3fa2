package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

const watchPlanYAML = `schema_version: 1
platform: {prefix: wt}
sources: {in: {kind: files, path: in}}
tables:
  events:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    columns: [{name: id, type: long}, {name: qty, type: long}]
schedule:
  watch: {interval: 1s, batch_rows: 7, compact_every: 3}
`

// watchWorkspace writes an approved plan with schedule.watch and two files
// of 4 rows (5 lines) each.
func watchWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p, err := plan.Parse([]byte(watchPlanYAML), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: time.Now().UTC().Format(time.RFC3339), PlanHash: p.Hash()}
	path := filepath.Join(dir, "platform.yaml")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o700); err != nil {
		t.Fatal(err)
	}
	for f := 0; f < 2; f++ {
		var b strings.Builder
		b.WriteString("id,qty\n")
		for r := 1; r <= 4; r++ {
			fmt.Fprintf(&b, "%d,%d\n", f*10+r, r)
		}
		if err := os.WriteFile(filepath.Join(dir, "in", fmt.Sprintf("f%d.csv", f)), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// median is the ⌈n/2⌉-th smallest value, found by counting (not by the
// code under test).
func median(ms []int64) int64 {
	for _, v := range ms {
		le := 0
		for _, w := range ms {
			if w <= v {
				le++
			}
		}
		lt := 0
		for _, w := range ms {
			if w < v {
				lt++
			}
		}
		if k := (len(ms) + 1) / 2; lt < k && le >= k {
			return v
		}
	}
	return -1
}

// watchFor runs `lima-tui run --watch` in-process for d, then stops it as
// SIGTERM would (the context ends).
func watchFor(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errb bytes.Buffer
	code := cmdRun(ctx, append([]string{"--watch", "--force"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestWatchSettingsFromPlanAndFlags: schedule.watch sets the interval,
// batch cap and compaction of run --watch (two 5-line files under a 7-line
// cap are two micro-batches); the flags override it (no cap: one batch).
// Each batch's report.md and summary, and the final line, show p50 and
// max latency equal to those computed here from report.json.
func TestWatchSettingsFromPlanAndFlags(t *testing.T) {
	path := watchWorkspace(t)
	code, stdout, stderr := watchFor(t, 2500*time.Millisecond, "--plan", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "watching every 1s, micro-batches of at most 7 lines, compaction every 3 ") {
		t.Fatalf("the plan's settings are not in use:\n%s", stderr)
	}
	if !strings.Contains(stderr, "watch stopped after 2 micro-batch(es), 2 file(s), 8 row(s)") {
		t.Fatalf("want 2 batches of one file each:\n%s", stderr)
	}
	var all []int64
	for _, rp := range strings.Fields(stdout) {
		md := filepath.Join(filepath.Dir(rp), "report.md")
		data, err := os.ReadFile(filepath.Join(filepath.Dir(rp), "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Watch struct {
				Files []struct {
					FirstSeen time.Time `json:"first_seen"`
					VisibleAt time.Time `json:"visible_at"`
					LatencyMS int64     `json:"latency_ms"`
				} `json:"files"`
			} `json:"watch"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		var ms []int64
		for _, f := range rep.Watch.Files {
			if f.LatencyMS != f.VisibleAt.Sub(f.FirstSeen).Milliseconds() || f.LatencyMS < 900 {
				t.Errorf("latency %d ms for %+v (a file is taken on the second poll, 1s after it was first seen)", f.LatencyMS, f)
			}
			ms = append(ms, f.LatencyMS)
		}
		if len(ms) != 1 {
			t.Fatalf("%s: %d files, want 1", md, len(ms))
		}
		all = append(all, ms...)
		text, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("p50 %d ms, max %d ms", median(ms), ms[0])
		if !strings.Contains(string(text), want) || !strings.Contains(stderr, want) {
			t.Errorf("report.md / summary lack %q:\n%s", want, text)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if want := fmt.Sprintf("lima: watch latency from arrival (first seen) to visible: p50 %d ms, max %d ms", median(all), all[len(all)-1]); len(all) != 2 || !strings.Contains(stderr, want) {
		t.Fatalf("the final line lacks %q:\n%s", want, stderr)
	}

	// Flags override the plan: no cap, a shorter interval, no compaction.
	path2 := watchWorkspace(t)
	code, _, stderr = watchFor(t, 1500*time.Millisecond, "--plan", path2, "--batch-rows", "0", "--interval", "200ms", "--compact-every", "0")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "watching every 200ms, micro-batches of no cap, compaction never ") ||
		!strings.Contains(stderr, "watch stopped after 1 micro-batch(es), 2 file(s), 8 row(s)") {
		t.Fatalf("the flags did not override the plan:\n%s", stderr)
	}
	if code, _, _ := watchFor(t, time.Second, "--plan", path2, "--batch-rows", "-1"); code != exitUsage {
		t.Fatalf("--batch-rows -1: exit %d, want %d", code, exitUsage)
	}
}
