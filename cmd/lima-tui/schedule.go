package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

// The scheduler's clock; tests replace it.
var (
	scheduleNow   = time.Now
	scheduleSleep = flow.SleepContext
)

// cmdSchedule runs the plan on its schedule in the foreground (for systemd
// or a container): it waits for the next fire time of schedule.cron in
// schedule.timezone, runs the plan, prints one line per run and waits again.
// SIGINT or SIGTERM (ctx) stop it between runs, or abort the run under way
// as `run` would. With --once it runs at the next fire time and exits with
// that run's exit code.
func cmdSchedule(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("schedule", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan to run")
	once := fs.Bool("once", false, "wait for the next fire time, run once and exit with the run's exit code")
	wait := fs.Duration("wait", 30*time.Second, "how long a run waits for another run of the workspace to finish")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui schedule: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	if *wait < 0 {
		fmt.Fprintf(stderr, "lima-tui schedule: --wait %s: give how long to wait for another run, e.g. 30s (0: not at all)\n", *wait)
		return exitUsage
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	if p.Schedule.Cron == "" {
		fmt.Fprintf(stderr, "lima-tui schedule: %s has no schedule.cron; add one, e.g.\n  schedule:\n    cron: \"0 2 * * *\"\n    timezone: Europe/Berlin\n", ui.Sanitize(*planPath))
		return exitUsage
	}
	if err := flow.CheckApproval(p); err != nil {
		return fail(stderr, err)
	}
	loc, _ := p.Schedule.Location()
	fmt.Fprintf(stderr, "lima: schedule %q in %s%s; stop with Ctrl-C or SIGTERM\n", ui.Sanitize(p.Schedule.Cron), loc, windowText(p.Schedule))

	code := exitOK
	s := &flow.Scheduler{
		Load:    func() (*plan.Plan, error) { return flow.LoadPlan(*planPath) },
		Options: flow.RunOptions{Workspace: flow.Workspace{Dir: filepath.Dir(*planPath)}, LockWait: *wait},
		Now:     scheduleNow,
		Sleep:   scheduleSleep,
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			// The plan may have changed since it was approved.
			if err := flow.CheckApproval(o.Plan); err != nil {
				return nil, err
			}
			return flow.Run(ctx, o)
		},
		Waiting: func(p *plan.Plan, next time.Time) {
			line := fmt.Sprintf("lima: next run at %s (%s)", next.Format("2006-01-02 15:04 MST"), next.UTC().Format(time.RFC3339))
			if w, ok, _ := flow.ScheduleWindow(p.Schedule); ok && !w.Contains(next) {
				line += fmt.Sprintf(" — warning: outside the run window %s, the run will be refused", w)
			}
			fmt.Fprintln(stderr, line)
		},
		Done: func(fire time.Time, out *flow.Outcome, err error) {
			if err != nil {
				code = exitFor(err)
			} else {
				code = out.Report.ExitCode()
			}
			fmt.Fprintln(stdout, ui.Sanitize(runLine(fire, out, err)))
		},
	}
	_, err = s.Loop(ctx, *once)
	if err != nil {
		return fail(stderr, err)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "lima: schedule stopped")
		if *once {
			return exitError
		}
		return exitOK
	}
	return code
}

func windowText(s plan.Schedule) string {
	t := ""
	if s.Window != "" {
		t += ", window " + s.Window
	}
	if s.Deadline != "" {
		t += ", deadline " + s.Deadline
	}
	return t
}

// runLine is the one-line summary of a scheduled run:
//
//	2026-12-01 02:00 KST run 20261130T170000.000000Z-1a2b3c ok: 1200 loaded, 3 held back; deadline met with 3h2m0s to spare
func runLine(fire time.Time, out *flow.Outcome, err error) string {
	at := fire.Format("2006-01-02 15:04 MST")
	if err != nil {
		return fmt.Sprintf("%s run did not complete (exit %d): %v", at, exitFor(err), err)
	}
	r := out.Report
	var loaded, held int64
	for _, t := range r.Tables {
		loaded += t.RowsLoaded
		held += t.RowsQuarantined
	}
	line := fmt.Sprintf("%s run %s %s: %d loaded, %d held back", at, r.RunID, r.Status, loaded, held)
	if r.DeadlineMet != nil {
		line += "; deadline " + r.DeadlineBy
	}
	if r.Status != reports.StatusOK {
		line += fmt.Sprintf(" (exit %d, report %s)", r.ExitCode(), out.ReportPath)
	}
	return line
}
