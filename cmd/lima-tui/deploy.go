package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/ui"
)

// cmdDeploy is lima-tui deploy glue: the AWS Glue job of each engine-glue
// table (flow/deployglue.go).
func cmdDeploy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	target := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		target, args = args[0], args[1:]
	}
	fs := newFlags("deploy glue", stderr)
	dir := fs.String("dir", ".", "the workspace: the folder holding the approved platform.yaml")
	var tables multi
	fs.Var(&tables, "table", "deploy only this table (repeatable; default: every table with engine: glue)")
	out := fs.String("out", "", "write the driver, job, trigger and IAM policy here (default: WORKSPACE/.lima/deploy/glue)")
	apply := fs.Bool("apply", false, "also upload the binary, the plan and the driver to glue.script_location and create or update the job and its trigger")
	binary := fs.String("binary", "", "with --apply: the linux/amd64 lima-tui to upload (default: this executable, when it is one)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if target != "glue" || fs.NArg() > 0 {
		what := target
		if what == "" && fs.NArg() > 0 {
			what = fs.Arg(0)
		}
		fmt.Fprintf(stderr, "lima-tui deploy: the target is glue (lima-tui deploy glue --dir D [--apply]), not %q\n", ui.Sanitize(what))
		return exitUsage
	}
	ws := flow.Workspace{Dir: *dir}
	p, err := flow.LoadPlan(ws.PlanPath())
	if err != nil {
		return fail(stderr, err)
	}
	done, err := flow.DeployGlue(ctx, flow.DeployGlueOptions{Workspace: ws, Plan: p, PlanPath: ws.PlanPath(), Tables: tables, Out: *out, Apply: *apply, Binary: *binary,
		Log: func(s string) { fmt.Fprintln(stderr, ui.Sanitize(s)) }})
	if err != nil {
		return fail(stderr, err)
	}
	for _, d := range done {
		fmt.Fprintf(stdout, "%s: Glue job %s — %s\n", d.Table, d.Job, d.SizingRule)
		for _, f := range d.Files {
			fmt.Fprintf(stdout, "  wrote %s\n", ui.Sanitize(f))
		}
		if d.JobAction != "" {
			fmt.Fprintf(stdout, "  job %s, trigger %s\n", d.JobAction, d.TriggerAction)
		}
		if d.TriggerNote != "" {
			fmt.Fprintf(stdout, "  note: %s\n", ui.Sanitize(d.TriggerNote))
		}
	}
	if !*apply {
		fmt.Fprintln(stdout, "nothing was created in AWS; review the files, give the job's role the permissions in policy.json, then run lima-tui deploy glue --apply")
	}
	return exitOK
}

// glueRunPoll is the time between GetJobRun calls (0: flow's default);
// tests shorten it.
var glueRunPoll time.Duration

// runGlueTables is lima-tui run for a plan with engine-glue tables among
// those selected: the local tables load here first (flow.Run), then each
// glue table's job runs in Glue (flow.RunGlue) and its report is shown.
// handled is false when no selected table has engine glue.
func runGlueTables(ctx context.Context, ws flow.Workspace, p *plan.Plan, planPath string, tables []string, full, jsonOut bool, stdout, stderr io.Writer, base flow.RunOptions) (code int, handled bool) {
	selected := tables
	if len(selected) == 0 {
		selected = p.TableNames()
	}
	var glue, local []string
	for _, t := range selected {
		if p.Tables[t].EngineOf() == plan.EngineGlue {
			glue = append(glue, t)
		} else {
			local = append(local, t)
		}
	}
	if len(glue) == 0 {
		return 0, false
	}
	if full {
		return fail(stderr, fmt.Errorf("%w: run --full-refresh: tables %s run in Glue, whose job loads what its shards hold; run them without --full-refresh", flow.ErrUsage, strings.Join(glue, ", "))), true
	}
	if jsonOut && len(local) > 0 {
		return fail(stderr, fmt.Errorf("%w: run --json: tables %s run in Glue and %s here; run them separately (--table) so stdout carries one JSON object", flow.ErrUsage, strings.Join(glue, ", "), strings.Join(local, ", "))), true
	}
	code = exitOK
	if len(local) > 0 {
		code = runPlan(ctx, ws, planPath, local, full, false, stdout, stderr, base)
	}
	for _, t := range glue {
		r, err := flow.RunGlue(ctx, flow.GlueRunOptions{Workspace: ws, Plan: p, Table: t, Poll: glueRunPoll, Force: base.Force, Log: func(s string) { fmt.Fprintln(stderr, ui.Sanitize(s)) }})
		c := exitOK
		if r != nil && r.Report != nil {
			printSummary(stderr, r.Report)
			c = r.Report.ExitCode()
		}
		if err != nil {
			fmt.Fprintf(stderr, "lima-tui: %s\n", ui.Sanitize(err.Error()))
			if c == exitOK {
				c = exitFor(err)
			}
		}
		if jsonOut {
			writeGlueJSON(stdout, t, r, err)
		} else if r != nil && r.ReportPath != "" {
			fmt.Fprintln(stdout, r.ReportPath)
		}
		code = worse(code, c)
	}
	return code, true
}

// worse is the more severe of two exit codes (precondition, error,
// reconciliation, ok).
func worse(a, b int) int {
	rank := []int{exitOK, exitReconcile, exitError, exitPrecondition, exitUsage}
	if slices.Index(rank, b) > slices.Index(rank, a) {
		return b
	}
	return a
}

func writeGlueJSON(w io.Writer, table string, r *flow.GlueRun, err error) {
	v := map[string]any{"table": table, "status": "ok"}
	if r != nil {
		v["job"], v["job_run_id"], v["load_id"], v["state"] = r.Job, r.RunID, r.LoadID, r.State
		v["execution_seconds"], v["dpu_seconds"] = r.ExecutionTime.Seconds(), r.DPUSeconds
		if r.Report != nil {
			v["status"], v["run_id"], v["report"] = r.Report.Status, r.Report.RunID, filepath.ToSlash(r.ReportPath)
		}
	}
	if err != nil {
		v["error"] = err.Error()
		if !errors.Is(err, flow.ErrGlueJob) || r == nil || r.Report == nil {
			v["status"] = "failed"
		}
	}
	b, _ := json.Marshal(v)
	fmt.Fprintln(w, string(ui.EscapeJSON(b)))
}
