package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/ui"
)

// commitStdin is what a "-" of `lima-tui commit` reads (tests replace it).
var commitStdin io.Reader = os.Stdin

const commitUsage = `lima-tui commit --dir WORKSPACE --load-id L --expect SHARDS.jsonl --manifests FILE [--manifests FILE …] [--json]

Commits a distributed load (see lima-tui worker). --expect are the shard
lines the driver gave the workers; --manifests the workers' output. For
every expected shard the first successful attempt in attempt order whose
data files all exist with the stated rows and bytes is chosen; every
successful manifest must balance (rows_read = loaded + quarantined +
skipped), come from the approved plan and name its shard's inputs, and the
chosen shards must have cleaned alike. Then one Iceberg snapshot carrying
the load id takes every chosen data file (a load already in the table
changes nothing), the exceptions go to the ledger once, the files of losing
and killed attempts (named with this load's marker) are removed, and gate 4
and the report follow as for a run. A missing shard, an unbalanced or
foreign manifest: nothing committed, exit 1. Paths: local files, s3://
objects, s3://…/ prefixes (every object below, _SUCCESS skipped), - for
stdin. Exit codes as for run.
`

// cmdCommit commits a distributed load's shards (flow/shard.go) in one
// snapshot, then runs gate 4 and writes the report like any run.
func cmdCommit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("commit", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, commitUsage, "\nFlags:\n"); fs.PrintDefaults() }
	dir := fs.String("dir", ".", "the workspace (the folder holding the approved platform.yaml)")
	loadID := fs.String("load-id", "", "the load id the driver gave every shard")
	expect := fs.String("expect", "", "the shard lines the driver gave the workers (JSON lines: a file, an s3:// object or prefix/, or - for stdin)")
	var manifests multi
	fs.Var(&manifests, "manifests", "the workers' manifest lines: a file, an s3:// object, an s3://…/ prefix (every object below it, as saveAsTextFile writes them) or - for stdin (repeatable)")
	jsonOut := fs.Bool("json", false, "print a JSON summary on stdout")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui commit: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	if *loadID == "" || *expect == "" || len(manifests) == 0 {
		fmt.Fprintln(stderr, "lima-tui commit: give --load-id, --expect SHARDS.jsonl and at least one --manifests FILE")
		return exitUsage
	}
	stdinUsed := 0
	open := func(name string) (io.Reader, func(), error) {
		if name == "-" {
			stdinUsed++
			return commitStdin, func() {}, nil
		}
		if strings.HasPrefix(name, "s3://") {
			r, err := flow.OpenLines(ctx, name)
			if err != nil {
				return nil, nil, err
			}
			return r, func() { r.Close() }, nil
		}
		if strings.Contains(name, "://") {
			return nil, nil, fmt.Errorf("%w: %s: give a local file, an s3:// object or prefix/ (all its objects), or - for stdin", flow.ErrUsage, name)
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", flow.ErrUsage, err)
		}
		return f, func() { f.Close() }, nil
	}
	exp, closeExp, err := open(*expect)
	if err != nil {
		return fail(stderr, fmt.Errorf("--expect: %w", err))
	}
	defer closeExp()
	var ms []io.Reader
	for _, m := range manifests {
		r, closeM, err := open(m)
		if err != nil {
			return fail(stderr, fmt.Errorf("--manifests: %w", err))
		}
		defer closeM()
		ms = append(ms, r)
	}
	if stdinUsed > 1 {
		fmt.Fprintln(stderr, "lima-tui commit: only one of --expect and --manifests can be - (stdin)")
		return exitUsage
	}
	ws, p, err := workspacePlan(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	prog := &run.Progress{}
	done := make(chan struct{})
	go reportProgress(prog, done, stderr)
	out, err := flow.Commit(ctx, flow.CommitOptions{Workspace: ws, Plan: p, LoadID: *loadID, Expect: exp, Manifests: ms, Progress: prog})
	close(done)
	if err != nil {
		return fail(stderr, err)
	}
	for _, shard := range slices.Sorted(maps.Keys(out.Chosen)) {
		fmt.Fprintf(stderr, "lima: commit: shard %s: attempt %s chosen\n", ui.Sanitize(shard), ui.Sanitize(out.Chosen[shard]))
	}
	if out.Removed > 0 {
		fmt.Fprintf(stderr, "lima: commit: %d data file(s) of losing or interrupted attempts removed\n", out.Removed)
	}
	printSummary(stderr, out.Report)
	if *jsonOut {
		writeJSONSummary(stdout, out.Outcome)
	} else {
		fmt.Fprintln(stdout, out.ReportPath)
	}
	return out.Report.ExitCode()
}
