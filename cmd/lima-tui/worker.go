package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/ui"
)

// workerStdin is what `lima-tui worker` reads its shards from (tests
// replace it).
var workerStdin io.Reader = os.Stdin

const workerUsage = `lima-tui worker --dir WORKSPACE < SHARDS.jsonl > MANIFESTS.jsonl

One shard of a distributed load per stdin line, as Spark's rdd.pipe feeds
a task: {"load_id","table","shard","attempt","inputs":[{"uri"}]}, each input
a whole file (file:///abs/path) or object (s3://bucket/key) of the table's
source. For each shard the worker does everything a run does up to the
commit — raw/ landing, read, clean, cast, check, Parquet data files staged in
the table's warehouse location, invisible — and prints one manifest line on
stdout: {"version":1,…,"ok","error","data_files","exceptions","accounting",
"control_totals","plan_hash","write_id","casting"}. It commits nothing and
writes nothing to the workspace's ledger; logs go to stderr. A shard that
fails is a line with "ok":false; the exit code is 0 unless stdin cannot be
read (1) or the plan is not approved (4: every line answered "ok":false).
Tables: file or object sources in mode full, without history. Commit the
load with lima-tui commit.
`

// cmdWorker stages shards of a distributed load (flow/shard.go): one JSON
// line in per shard on stdin, one manifest line out per shard on stdout,
// nothing committed. Logs go to stderr; stdout carries manifests only.
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("worker", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, workerUsage, "\nFlags:\n"); fs.PrintDefaults() }
	dir := fs.String("dir", ".", "the workspace (the folder holding the approved platform.yaml)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui worker: unexpected argument %q (the shards come on stdin)\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	ws := flow.Workspace{Dir: *dir}
	p, err := flow.LoadPlan(ws.PlanPath())
	if err == nil {
		err = flow.CheckApproval(p)
	}
	if err != nil {
		// Every shard is answered, refused: the driver sees why per shard.
		fmt.Fprintf(stderr, "lima-tui worker: %s\n", ui.Sanitize(err.Error()))
		if rerr := flow.RefuseShards(workerStdin, stdout, err); rerr != nil {
			fmt.Fprintf(stderr, "lima-tui worker: %s\n", ui.Sanitize(rerr.Error()))
		}
		return exitFor(err)
	}
	if err := flow.Worker(ctx, flow.WorkerOptions{Workspace: ws, Plan: p, Log: layoutSafe{stderr}}, workerStdin, stdout); err != nil {
		return fail(stderr, err)
	}
	return exitOK
}

// workspacePlan is the plan of the workspace dir.
func workspacePlan(dir string) (flow.Workspace, *plan.Plan, error) {
	ws := flow.Workspace{Dir: dir}
	p, err := flow.LoadPlan(filepath.Join(dir, "platform.yaml"))
	return ws, p, err
}
