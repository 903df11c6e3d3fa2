package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

// watchFlags are the watch flags of `lima-tui run` and which of them were
// given (set, by flag name): a given flag overrides the plan's
// schedule.watch, an absent one takes the plan's value, else the default.
type watchFlags struct {
	interval     time.Duration
	batchRows    int64
	compactEvery int
	set          map[string]bool
}

// resolve returns the settings of a watch: flags over schedule.watch over
// the defaults (10s, no cap, never).
func (f watchFlags) resolve(p *plan.Plan) (interval time.Duration, batchRows int64, compactEvery int, err error) {
	w := p.Schedule.Watch
	if interval, err = w.IntervalDuration(); err != nil {
		return 0, 0, 0, fmt.Errorf("schedule.watch.interval: %w", err)
	}
	if w != nil {
		batchRows, compactEvery = w.BatchRows, w.CompactEvery
	}
	if f.set["interval"] {
		interval = f.interval
	}
	if f.set["batch-rows"] {
		batchRows = f.batchRows
	}
	if f.set["compact-every"] {
		compactEvery = f.compactEvery
	}
	return interval, batchRows, compactEvery, nil
}

// runWatch is `lima-tui run --watch`: micro-batches until SIGINT/SIGTERM
// (ctx), then the files already taken are committed and it exits.
func runWatch(ctx context.Context, planPath string, tables []string, full, jsonOut bool, wf watchFlags,
	stdout, stderr io.Writer, base flow.RunOptions) int {
	if full {
		fmt.Fprintln(stderr, "lima-tui run: --watch appends new files; it cannot be combined with --full-refresh")
		return exitUsage
	}
	if wf.set["interval"] && wf.interval <= 0 {
		fmt.Fprintln(stderr, "lima-tui run: --interval must be positive")
		return exitUsage
	}
	if wf.set["batch-rows"] && wf.batchRows < 0 || wf.set["compact-every"] && wf.compactEvery < 0 {
		fmt.Fprintln(stderr, "lima-tui run: --batch-rows and --compact-every cannot be negative")
		return exitUsage
	}
	p, err := flow.LoadPlan(planPath)
	if err != nil {
		return fail(stderr, err)
	}
	if err := flow.CheckApproval(p); err != nil {
		return fail(stderr, err)
	}
	interval, batchRows, compactEvery, err := wf.resolve(p)
	if err != nil {
		return fail(stderr, err)
	}
	base.Workspace, base.Plan, base.Tables = flow.Workspace{Dir: filepath.Dir(planPath)}, p, tables
	worst := exitOK
	batch := "no cap"
	if batchRows > 0 {
		batch = fmt.Sprintf("at most %d lines", batchRows)
	}
	compact := "never"
	if compactEvery > 0 {
		compact = fmt.Sprintf("every %d", compactEvery)
	}
	fmt.Fprintf(stderr, "lima: watching every %s, micro-batches of %s, compaction %s (Ctrl-C commits what was taken, then stops)\n", interval, batch, compact)
	sum, err := flow.Watch(ctx, flow.WatchOptions{Run: base, Interval: interval, BatchRows: batchRows, CompactEvery: compactEvery,
		OnBatch: func(out *flow.Outcome) {
			printSummary(stderr, out.Report)
			if w := out.Report.Watch; w != nil && len(w.Files) > 0 {
				fmt.Fprintf(stderr, "  %s\n", w.Line())
			}
			if jsonOut {
				writeJSONSummary(stdout, out)
			} else {
				fmt.Fprintln(stdout, out.ReportPath)
			}
			if c := out.Report.ExitCode(); c > worst {
				worst = c
			}
		},
		OnCompact: func(rs []flow.CompactResult) {
			for _, r := range rs {
				fmt.Fprintf(stderr, "  compacted %s: %d → %d data files\n", ui.Sanitize(r.Table), r.FilesBefore, r.FilesAfter)
			}
		},
		OnError:  func(err error) { fmt.Fprintf(stderr, "lima: watch: %s\n", ui.Sanitize(err.Error())) },
		OnNotice: func(n string) { fmt.Fprintf(stderr, "lima: watch: %s\n", ui.Sanitize(n)) },
	})
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "lima: watch stopped after %d micro-batch(es), %d file(s), %d row(s)\n", sum.Batches, sum.Files, sum.Rows)
	if len(sum.LatencyMS) > 0 {
		p50, maxMS, avg := reports.Latency(sum.LatencyMS)
		fmt.Fprintf(stderr, "lima: watch %s\n", reports.LatencyLine(p50, maxMS, avg, len(sum.LatencyMS)))
	}
	return worst
}

// cmdCompact is `lima-tui compact`.
func cmdCompact(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compact", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan whose tables to compact")
	var tables multi
	fs.Var(&tables, "table", "compact only this table (repeatable)")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	wait := fs.Duration("wait", 0, "wait this long for a running load to finish")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui compact: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	if *wait < 0 {
		fmt.Fprintf(stderr, "lima-tui compact: --wait %s: give how long to wait for another run, e.g. 30s (0: not at all)\n", *wait)
		return exitUsage
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	res, err := flow.Compact(ctx, flow.CompactOptions{Workspace: flow.Workspace{Dir: filepath.Dir(*planPath)}, Plan: p, Tables: tables, LockWait: *wait})
	if err != nil {
		return fail(stderr, err)
	}
	if *jsonOut {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
		return exitOK
	}
	for _, r := range res {
		fmt.Fprintf(stdout, "%s: %d → %d data files (%d rewritten)\n", ui.Sanitize(r.Table), r.FilesBefore, r.FilesAfter, r.Rewritten)
	}
	return exitOK
}
