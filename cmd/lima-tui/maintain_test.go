package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/flow"
)

// lima-tui maintain on the demo lake: every table reported once with its
// snapshots, usage errors exit 2, a held lock or another workspace's lake
// exit 4 with a refused JSON line.
func TestMaintainVerb(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir, "--headless"); code != exitOK {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	planPath := filepath.Join(dir, "platform.yaml")
	code, stdout, stderr := runCLI(t, "maintain", "--plan", planPath, "--json")
	if code != exitOK {
		t.Fatalf("maintain exit %d: %s", code, stderr)
	}
	var res struct {
		Status string                `json:"status"`
		Tables []flow.MaintainResult `json:"tables"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	seen := map[string]bool{}
	for _, r := range res.Tables {
		// One load each: the only snapshot is current and stays.
		if seen[r.Table] || r.Format != "iceberg" || r.Kept != 1 || r.Expired != 0 || r.Removed != 0 {
			t.Errorf("maintain result %+v", r)
		}
		seen[r.Table] = true
	}
	if res.Status != "ok" || len(res.Tables) < 4 {
		t.Fatalf("maintain: %s", stdout)
	}
	if code, stdout, _ := runCLI(t, "maintain", "--plan", planPath, "--dry-run"); code != exitOK || !strings.Contains(stdout, "0 snapshot(s) to expire, 1 kept") {
		t.Fatalf("dry run: exit %d: %s", code, stdout)
	}
	for _, args := range [][]string{{"maintain", "extra"}, {"maintain", "--plan", planPath, "--table", "nosuch"}, {"maintain", "--plan", planPath, "--schedule"}} {
		if code, _, _ := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	// A run of the workspace holds the lock.
	unlock, err := flow.Lock(context.Background(), flow.Workspace{Dir: dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCLI(t, "maintain", "--plan", planPath, "--json")
	unlock()
	if code != exitPrecondition || !strings.Contains(stdout, `"status":"refused"`) {
		t.Fatalf("under a held lock: exit %d: %s", code, stdout)
	}
	// Another workspace (a new id) does not own the lake.
	if err := os.WriteFile(filepath.Join(dir, ".lima", "workspace-id"), []byte("ws-someone-else\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "maintain", "--plan", planPath); code != exitPrecondition || !strings.Contains(stderr, "lake ownership") {
		t.Fatalf("another workspace: exit %d: %s", code, stderr)
	}
}

// lima-tui maintain --schedule sleeps until maintenance.cron fires (in the
// schedule's time zone), maintains, and sleeps again until stopped.
func TestMaintainSchedule(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir, "--headless"); code != exitOK {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	planPath := filepath.Join(dir, "platform.yaml")
	b, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planPath, append(b, "maintenance:\n  cron: \"0 4 * * *\"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 4, 18, 0, 0, 0, time.UTC) // 03:00 in Asia/Seoul, the demo's zone
	var slept []time.Duration
	oldNow, oldSleep := scheduleNow, scheduleSleep
	scheduleNow = func() time.Time { return now }
	scheduleSleep = func(ctx context.Context, d time.Duration) error {
		slept = append(slept, d)
		now = now.Add(d)
		if len(slept) > 1 {
			return context.Canceled // stopped while waiting for the second
		}
		return nil
	}
	t.Cleanup(func() { scheduleNow, scheduleSleep = oldNow, oldSleep })
	code, stdout, stderr := runCLI(t, "maintain", "--plan", planPath, "--schedule")
	if code != exitOK || len(slept) != 2 || slept[0] != time.Hour || slept[1] != 24*time.Hour {
		t.Fatalf("exit %d, slept %v: %s", code, slept, stderr)
	}
	if !strings.Contains(stdout, "inspections: 0 snapshot(s) expired, 1 kept") || !strings.Contains(stderr, "maintenance at 2026-01-05 04:00 KST: exit 0") {
		t.Fatalf("stdout %s\nstderr %s", stdout, stderr)
	}
}
