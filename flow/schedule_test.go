package flow_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/reports"
)

func utc(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

// TestNextFireAcrossBerlinDST: Europe/Berlin jumps from 02:00 CET (UTC+1) to
// 03:00 CEST (UTC+2) on 2026-03-29 at 01:00 UTC, and back from 03:00 CEST to
// 02:00 CET on 2026-10-25 at 01:00 UTC. Every expectation is worked out by
// hand from those two facts.
func TestNextFireAcrossBerlinDST(t *testing.T) {
	cases := []struct {
		name, cron, tz string
		after, want    time.Time
	}{
		{"daily 06:00 before the jump (CET)", "0 6 * * *", "Europe/Berlin", utc(2026, 3, 27, 12, 0), utc(2026, 3, 28, 5, 0)},
		{"daily 06:00 after the jump (CEST)", "0 6 * * *", "Europe/Berlin", utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 4, 0)},
		{"02:30 does not exist on the jump night: 03:30 CEST", "30 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 1, 30)},
		{"the night after the jump", "30 2 * * *", "Europe/Berlin", utc(2026, 3, 29, 1, 30), utc(2026, 3, 30, 0, 30)},
		{"02:00 on the jump night is 03:00 CEST", "0 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 1, 0)},
		{"02:30 twice on the fall-back night: the first (CEST)", "30 2 * * *", "Europe/Berlin", utc(2026, 10, 24, 12, 0), utc(2026, 10, 25, 0, 30)},
		{"not again at 02:30 CET the same night", "30 2 * * *", "Europe/Berlin", utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)},
		{"after the fall back the wall clock reads 02:10 again", "30 2 * * *", "Europe/Berlin", utc(2026, 10, 25, 1, 10), utc(2026, 10, 26, 1, 30)},
		{"hourly: 03:00 CET follows 02:00 CEST", "0 * * * *", "Europe/Berlin", utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 2, 0)},
		{"weekdays 07:15, Friday evening to Monday (CET)", "15 7 * * mon-fri", "Europe/Berlin", utc(2026, 11, 27, 18, 0), utc(2026, 11, 30, 6, 15)},
		{"Sunday as 7", "0 4 * * 7", "Europe/Berlin", utc(2026, 11, 30, 0, 0), utc(2026, 12, 6, 3, 0)},
		{"@daily in Seoul is 15:00 UTC", "@daily", "Asia/Seoul", utc(2026, 11, 30, 3, 20), utc(2026, 11, 30, 15, 0)},
		{"02:00 KST is 17:00 UTC the day before", "0 2 * * *", "Asia/Seoul", utc(2026, 11, 30, 3, 20), utc(2026, 11, 30, 17, 0)},
		{"UTC when no zone", "*/15 * * * *", "", utc(2026, 11, 30, 3, 20), utc(2026, 11, 30, 3, 30)},
		{"strictly after", "0 2 * * *", "", utc(2026, 11, 30, 2, 0), utc(2026, 12, 1, 2, 0)},
	}
	for _, c := range cases {
		got, err := flow.NextFire(plan.Schedule{Cron: c.cron, Timezone: c.tz}, c.after)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s: NextFire(%q, %s, after %s) = %s, %v; want %s", c.name, c.cron, c.tz, c.after, got.UTC(), err, c.want)
		}
	}
	if _, err := flow.NextFire(plan.Schedule{}, time.Now()); !errors.Is(err, flow.ErrUsage) {
		t.Errorf("no cron: %v, want a usage error", err)
	}
	if _, err := flow.NextFire(plan.Schedule{Cron: "0 0 31 2 *"}, time.Now()); !errors.Is(err, flow.ErrUsage) {
		t.Errorf("31 February: %v, want a usage error", err)
	}
}

func TestWindowCrossingMidnight(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	w, ok, err := flow.ScheduleWindow(plan.Schedule{Window: "22:00-04:00", Timezone: "Europe/Berlin"})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	at := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, berlin) }
	for _, c := range []struct {
		t  time.Time
		in bool
	}{{at(30, 22, 0), true}, {at(30, 23, 59), true}, {at(30, 0, 0), true}, {at(30, 3, 59), true},
		{at(30, 4, 0), false}, {at(30, 12, 0), false}, {at(30, 21, 59), false}} {
		if got := w.Contains(c.t); got != c.in {
			t.Errorf("22:00-04:00 contains %s = %v, want %v", c.t.Format("15:04"), got, c.in)
		}
	}
	// Instants are compared in the window's zone: 21:30 UTC is 22:30 CET.
	if !w.Contains(utc(2026, 11, 30, 21, 30)) {
		t.Error("21:30 UTC (22:30 in Berlin) is outside")
	}
	if got, want := w.NextOpen(at(30, 4, 30)), at(30, 22, 0); !got.Equal(want) {
		t.Errorf("next opening after 04:30: %s, want %s", got, want)
	}
	if got := w.NextOpen(at(30, 2, 0)); !got.Equal(at(30, 2, 0)) {
		t.Errorf("inside the window it is open now, got %s", got)
	}
	day, _, _ := flow.ScheduleWindow(plan.Schedule{Window: "01:00-05:00", Timezone: "Europe/Berlin"})
	if got, want := day.NextOpen(at(30, 6, 0)), time.Date(2026, 12, 1, 1, 0, 0, 0, berlin); !got.Equal(want) {
		t.Errorf("01:00-05:00 after 06:00: %s, want %s", got, want)
	}
}

// TestRunRefusedOutsideTheWindow: nothing is read or written outside the
// window; --force (Force) runs anyway; inside the window it runs.
func TestRunRefusedOutsideTheWindow(t *testing.T) {
	ws, p := newDemo(t)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	now := time.Now().In(seoul)
	opens := now.Add(2 * time.Hour)
	p.Schedule.Timezone = "Asia/Seoul"
	p.Schedule.Window = opens.Format("15:04") + "-" + now.Add(3*time.Hour).Format("15:04")
	_, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p})
	if !errors.Is(err, flow.ErrOutsideWindow) || !errors.Is(err, flow.ErrPrecondition) {
		t.Fatalf("outside the window: %v, want ErrOutsideWindow (exit 4)", err)
	}
	for _, want := range []string{"window " + p.Schedule.Window + " Asia/Seoul", "opens next at " + opens.Format("2006-01-02 15:04") + " KST", "--force"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(ws.ReportsDir()); !os.IsNotExist(err) {
		t.Errorf("a refused run left reports: %v", err)
	}
	out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Tables: []string{"inspections"}, Force: true})
	if err != nil || tableReport(t, out.Report, "inspections").Status != run.StatusLoaded {
		t.Fatalf("forced run: %v", err)
	}
	p.Schedule.Window = now.Add(-time.Hour).Format("15:04") + "-" + now.Add(time.Hour).Format("15:04")
	if _, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Tables: []string{"inspections"}}); err != nil {
		t.Fatalf("inside the window: %v", err)
	}
}

// TestScheduledRunDeadlineCountsFromTheFireTime: the demo's deadline is 06:00
// Asia/Seoul; a run the scheduler fired at 02:00 KST on 2026-11-30 had to
// finish by 06:00 KST that day (21:00 UTC on the 29th), which a run finishing
// now has missed by now minus that.
func TestScheduledRunDeadlineCountsFromTheFireTime(t *testing.T) {
	ws, p := newDemo(t)
	fire := utc(2026, 11, 29, 17, 0) // 02:00 KST on the 30th
	out := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}, ScheduledAt: fire})
	r := out.Report
	if r.ScheduledAt == nil || !r.ScheduledAt.Equal(fire) {
		t.Errorf("scheduled_at %v, want %s", r.ScheduledAt, fire)
	}
	want := utc(2026, 11, 29, 21, 0)
	if r.Deadline == nil || !r.Deadline.Equal(want) || r.DeadlineMet == nil || *r.DeadlineMet {
		t.Fatalf("deadline %v met %v, want %s missed", r.Deadline, r.DeadlineMet, want)
	}
	if by := "missed by " + r.FinishedAt.Sub(want).Round(time.Second).String(); r.DeadlineBy != by {
		t.Errorf("margin %q, want %q", r.DeadlineBy, by)
	}
	md, err := os.ReadFile(strings.TrimSuffix(out.ReportPath, "report.json") + "report.md")
	if err != nil || !strings.Contains(string(md), "Scheduled for:** 2026-11-30 02:00 KST") && !strings.Contains(string(md), "Scheduled for:** 2026-11-29 17:00 UTC") {
		t.Errorf("report.md does not say when the run was scheduled: %v\n%s", err, md)
	}
}

// blockingCatalog holds the first commit until released: the run that makes
// it holds the workspace lock meanwhile.
type blockingCatalog struct {
	inner   table.CatalogIO
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (b *blockingCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	return b.inner.LoadTable(ctx, id)
}

func (b *blockingCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return b.inner.CommitTable(ctx, id, reqs, ups)
}

// TestOverlappingRunsOneLoads fires three runs of the same workspace: the
// first holds the lock while committing; the second (no wait) is refused at
// once with a clear message and writes nothing; the third waits (--wait) and
// then finds the input loaded. Exactly one snapshot and two reports result.
func TestOverlappingRunsOneLoads(t *testing.T) {
	ws, p := newDemo(t)
	bc := &blockingCatalog{entered: make(chan struct{}), release: make(chan struct{})}
	type result struct {
		out *flow.Outcome
		err error
	}
	first, third := make(chan result, 1), make(chan result, 1)
	go func() {
		out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true, Tables: []string{"inspections"},
			SinkOptions: func(o *icesink.Options) {
				o.WrapCatalog = func(c table.CatalogIO) table.CatalogIO { bc.inner = c; return bc }
			}})
		first <- result{out, err}
	}()
	select {
	case <-bc.entered:
	case r := <-first:
		t.Fatalf("the first run ended before committing: %v", r.err)
	case <-time.After(60 * time.Second):
		t.Fatal("the first run never reached its commit")
	}
	start := time.Now()
	_, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true, Tables: []string{"inspections"}, LockWait: 300 * time.Millisecond})
	if !errors.Is(err, flow.ErrPrecondition) || !strings.Contains(err.Error(), "another run of this workspace is in progress") {
		t.Fatalf("second run: %v, want exit 4 with a clear message", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond || waited > 10*time.Second {
		t.Errorf("the second run waited %s, want about 300ms", waited)
	}
	go func() {
		out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true, Tables: []string{"inspections"}, LockWait: time.Minute})
		third <- result{out, err}
	}()
	time.Sleep(300 * time.Millisecond) // the third run is waiting for the lock
	close(bc.release)
	r1 := <-first
	if r1.err != nil || tableReport(t, r1.out.Report, "inspections").Status != run.StatusLoaded {
		t.Fatalf("first run: %v", r1.err)
	}
	r3 := <-third
	if r3.err != nil || tableReport(t, r3.out.Report, "inspections").Status != run.StatusAlreadyLoaded {
		t.Fatalf("third run (waited for the lock): %v %+v", r3.err, r3.out)
	}
	_, tbl := loadIceberg(t, ws, p, "inspections")
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Errorf("inspections has %d snapshots, want exactly 1", n)
	}
	ents, _ := os.ReadDir(ws.ReportsDir())
	if len(ents) != 2 {
		t.Errorf("%d reports, want 2 (the refused run writes none)", len(ents))
	}
}

// TestSchedulerOnceWithAFakeClock: at 23:59:30 UTC with cron "0 0 * * *" the
// scheduler sleeps 30s on its (fake) clock, runs once with ScheduledAt
// midnight, and returns that run's outcome.
func TestSchedulerOnceWithAFakeClock(t *testing.T) {
	now := time.Date(2026, 11, 30, 23, 59, 30, 0, time.UTC)
	var slept []time.Duration
	var got flow.RunOptions
	p := &plan.Plan{Schedule: plan.Schedule{Cron: "0 0 * * *"}}
	s := &flow.Scheduler{
		Load: func() (*plan.Plan, error) { return p, nil },
		Now:  func() time.Time { return now },
		Sleep: func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			now = now.Add(d)
			return nil
		},
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			got = o
			return &flow.Outcome{Report: &reports.Report{RunID: "r1", Status: reports.StatusOK}}, nil
		},
	}
	out, err := s.Loop(context.Background(), true)
	if err != nil || out.Report.RunID != "r1" {
		t.Fatalf("Loop: %v %v", out, err)
	}
	if want := utc(2026, 12, 1, 0, 0); !got.ScheduledAt.Equal(want) || got.Plan != p {
		t.Errorf("ran with ScheduledAt %s, want %s", got.ScheduledAt, want)
	}
	if len(slept) != 1 || slept[0] != 30*time.Second {
		t.Errorf("slept %v, want [30s]", slept)
	}
}

// TestSchedulerStopsBetweenRuns: a cancelled context ends the wait without
// a run, and Loop returns nil.
func TestSchedulerStopsBetweenRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	s := &flow.Scheduler{
		Load: func() (*plan.Plan, error) { return &plan.Plan{Schedule: plan.Schedule{Cron: "@hourly"}}, nil },
		Now:  func() time.Time { return utc(2026, 11, 30, 3, 20) },
		Sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			return flow.SleepContext(ctx, d)
		},
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) { runs++; return nil, nil },
	}
	if _, err := s.Loop(ctx, false); err != nil || runs != 0 {
		t.Errorf("Loop after cancel: %v, %d runs", err, runs)
	}
}
