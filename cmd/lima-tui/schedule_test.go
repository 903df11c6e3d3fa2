package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
)

// fakeClock replaces the scheduler's clock for one test.
func fakeClock(t *testing.T, start time.Time) *[]time.Duration {
	t.Helper()
	now := start
	var slept []time.Duration
	oldNow, oldSleep := scheduleNow, scheduleSleep
	scheduleNow = func() time.Time { return now }
	scheduleSleep = func(ctx context.Context, d time.Duration) error {
		slept = append(slept, d)
		now = now.Add(d)
		return ctx.Err()
	}
	t.Cleanup(func() { scheduleNow, scheduleSleep = oldNow, oldSleep })
	return &slept
}

// TestScheduleOnceRunsAtTheNextFireTime: the demo runs at 02:00 Asia/Seoul
// (17:00 UTC the day before) inside its 01:00-05:00 window with a 06:00
// deadline. At 16:58:30 UTC on 2026-01-04 the scheduler sleeps 90 seconds on
// the fake clock, runs once with 02:00 KST on 2026-01-05 as the fire time and
// prints one line; the deadline (21:00 UTC on the 4th) lies in the real
// clock's past, so it is missed.
func TestScheduleOnceRunsAtTheNextFireTime(t *testing.T) {
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	slept := fakeClock(t, time.Date(2026, 1, 4, 16, 58, 30, 0, time.UTC))
	var out, errb bytes.Buffer
	code := cmdSchedule(context.Background(), []string{"--plan", filepath.Join(dir, "platform.yaml"), "--once"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	if total := sum(*slept); total != 90*time.Second {
		t.Errorf("slept %v (%s), want 1m30s in all", *slept, total)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("stdout has %d lines, want 1:\n%s", len(lines), out.String())
	}
	for _, want := range []string{"2026-01-05 02:00 KST run ", " ok: ", " loaded, ", " held back; deadline missed by "} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("summary %q lacks %q", lines[0], want)
		}
	}
	if !strings.Contains(errb.String(), "next run at 2026-01-05 02:00 KST (2026-01-04T17:00:00Z)") {
		t.Errorf("stderr does not name the next run:\n%s", errb.String())
	}
}

// TestScheduleRefusesOutsideTheWindow: with the clock at 05:30
// KST and cron 06:00, the run falls outside the 01:00-05:00 window: the
// scheduler warns beforehand, the run is refused (exit 4) and nothing loads.
func TestScheduleRefusesOutsideTheWindow(t *testing.T) {
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(dir, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	p.Schedule.Cron = "0 6 * * *"
	p.Gates.DataModel.PlanHash = p.Hash()
	if err := p.Write(pp); err != nil {
		t.Fatal(err)
	}
	fakeClock(t, time.Date(2026, 1, 4, 20, 30, 0, 0, time.UTC))
	var out, errb bytes.Buffer
	code := cmdSchedule(context.Background(), []string{"--plan", pp, "--once"}, &out, &errb)
	if code != exitPrecondition {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitPrecondition, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "warning: outside the run window 01:00-05:00 Asia/Seoul") {
		t.Errorf("no warning before the run:\n%s", errb.String())
	}
	if s := out.String(); !strings.Contains(s, "2026-01-05 06:00 KST run did not complete (exit 4)") || !strings.Contains(s, "opens next at 2026-01-06 01:00 KST") {
		t.Errorf("summary: %s", s)
	}
}

func TestScheduleUsage(t *testing.T) {
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := cmdSchedule(context.Background(), []string{"--plan", filepath.Join(dir, "platform.yaml"), "extra"}, &out, &errb); code != exitUsage {
		t.Errorf("extra argument: exit %d", code)
	}
	// Cancelled (SIGTERM) while waiting: a clean stop, no run.
	fakeClock(t, time.Date(2026, 1, 4, 12, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	if code := cmdSchedule(ctx, []string{"--plan", filepath.Join(dir, "platform.yaml")}, &out, &errb); code != exitOK || out.Len() != 0 {
		t.Errorf("stopped: exit %d, stdout %q", code, out.String())
	}
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}
