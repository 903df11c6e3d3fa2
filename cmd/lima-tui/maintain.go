package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/ui"
)

// cmdMaintain expires old snapshots and removes orphan files of the plan's
// Iceberg tables (flow.Maintain); with --schedule it does so on
// maintenance.cron, in the foreground.
func cmdMaintain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("maintain", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan whose tables to maintain")
	var tables multi
	fs.Var(&tables, "table", "maintain only this table and its history table (repeatable)")
	dry := fs.Bool("dry-run", false, "say what would be expired and removed; change nothing")
	jsonOut := fs.Bool("json", false, "print the result as JSON on stdout")
	wait := fs.Duration("wait", 0, "wait this long for a running load of the workspace to finish")
	sched := fs.Bool("schedule", false, "run on maintenance.cron (in schedule.timezone) in the foreground, until SIGINT/SIGTERM")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui maintain: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	once := func() int {
		p, err := flow.LoadPlan(*planPath)
		if err != nil {
			return maintainFail(stdout, stderr, *jsonOut, err)
		}
		res, err := flow.Maintain(ctx, flow.MaintainOptions{Workspace: flow.Workspace{Dir: filepath.Dir(*planPath)}, Plan: p,
			Tables: tables, DryRun: *dry, LockWait: *wait})
		if err != nil {
			return maintainFail(stdout, stderr, *jsonOut, err)
		}
		if *jsonOut {
			b, _ := json.MarshalIndent(struct {
				Status   string                `json:"status"`
				ExitCode int                   `json:"exit_code"`
				DryRun   bool                  `json:"dry_run,omitempty"`
				Tables   []flow.MaintainResult `json:"tables"`
			}{"ok", exitOK, *dry, res}, "", "  ")
			fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
			return exitOK
		}
		for _, r := range res {
			fmt.Fprintln(stdout, ui.Sanitize(maintainLine(r)))
		}
		return exitOK
	}
	if !*sched {
		return once()
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	if p.Maintenance == nil || p.Maintenance.Cron == "" {
		fmt.Fprintf(stderr, "lima-tui maintain: %s has no maintenance.cron; add one, e.g.\n  maintenance:\n    cron: \"30 3 * * 0\"\n", ui.Sanitize(*planPath))
		return exitUsage
	}
	s := plan.Schedule{Cron: p.Maintenance.Cron, Timezone: p.Schedule.Timezone}
	fmt.Fprintf(stderr, "lima: maintenance on %q; stop with Ctrl-C or SIGTERM\n", ui.Sanitize(s.Cron))
	for {
		next, err := flow.NextFire(s, scheduleNow())
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stderr, "lima: next maintenance at %s (%s)\n", next.Format("2006-01-02 15:04 MST"), next.UTC().Format(time.RFC3339))
		if err := scheduleSleep(ctx, next.Sub(scheduleNow())); err != nil || ctx.Err() != nil {
			fmt.Fprintln(stderr, "lima: maintenance schedule stopped")
			return exitOK
		}
		code := once()
		fmt.Fprintf(stderr, "lima: maintenance at %s: exit %d\n", next.Format("2006-01-02 15:04 MST"), code)
	}
}

func maintainFail(stdout, stderr io.Writer, jsonOut bool, err error) int {
	code := fail(stderr, err)
	if jsonOut {
		status := "failed"
		if code == exitPrecondition || code == exitUsage {
			status = "refused"
		}
		b, _ := json.Marshal(struct {
			Status   string `json:"status"`
			ExitCode int    `json:"exit_code"`
			Error    string `json:"error"`
		}{status, code, err.Error()})
		fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
	}
	return code
}

// maintainLine is one table's summary:
//
//	orders: 3 snapshots expired, 2 kept; 9 files (41.2 KiB) removed with them; 2 orphan files (1.1 KiB) removed; 1 foreign file kept
func maintainLine(r flow.MaintainResult) string {
	if r.Note != "" {
		return r.Table + ": " + r.Note
	}
	verb := "removed"
	exp := "expired"
	if r.DryRun {
		verb, exp = "to remove", "to expire"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d snapshot(s) %s, %d kept", r.Table, r.Expired, exp, r.Kept)
	if !r.DryRun {
		fmt.Fprintf(&b, "; %d file(s) (%s) removed with them", r.FilesRemoved, bytesText(r.BytesRemoved))
	}
	fmt.Fprintf(&b, "; %d orphan file(s) (%s) %s", r.Removed, bytesText(r.RemovedBytes), verb)
	if n := len(r.Foreign); n > 0 {
		fmt.Fprintf(&b, "; %d foreign file(s) kept (not Lima's: %s)", n, strings.Join(r.Foreign, ", "))
	}
	if n := len(r.Links); n > 0 {
		fmt.Fprintf(&b, "; %d symbolic link(s) kept", n)
	}
	for _, k := range r.KeptFor {
		fmt.Fprintf(&b, "\n  kept: %s", k)
	}
	return b.String()
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
