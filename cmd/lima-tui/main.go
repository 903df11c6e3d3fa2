// Command lima-tui lands business data in a data lake and proves it.
// main parses flags, picks the subcommand and maps outcomes to exit codes;
// the work happens in flow, engine, gates and reports.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/redact"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
	"github.com/lima-lake/lima/wizard"
)

// Exit codes of the command-line contract.
const (
	exitOK           = 0
	exitError        = 1
	exitUsage        = 2
	exitReconcile    = 3
	exitPrecondition = 4
)

const usage = `lima-tui — land business data in a data lake, and prove it.

Usage:
  lima-tui [--plan F] [--theme dark|light|projector|mono] [--accessible]
                                           the wizard (needs a terminal; --accessible: line prompts)
  lima-tui init --source DIR|s3://B/P|env:NAME [--dir D] [--prefix P] [--pattern iceberg|hive] [--defaults]
                                           gate 1: scope & residency → platform.yaml
  lima-tui check [--plan F] [--json] [--timeout 15s]
                                           gate 2: preconditions with evidence (exit 4)
  lima-tui demo [--dir D] [--headless] [--rows N]
                                           build the demo lake from the bundled dirty ERP sample
                                           (at a terminal: in the wizard, unless --headless;
                                           --rows: N more generated inspection rows to watch load)
  lima-tui run [--plan F] [--table T]... [--full-refresh] [--json] [--force] [--wait 30s]
               [--cpuprofile FILE] [--memprofile FILE]
                                           load the approved plan, reconcile, write the report
                                           (outside schedule.window only with --force; the
                                           profiles are runtime/pprof files for go tool pprof)
  lima-tui reconcile [--plan F] [--run ID]   re-run gate 4 against the lake's current snapshots
  lima-tui report [--plan F] [ID]           print a run's report (default: the latest)
  lima-tui approve --gate scope|data-model --by NAME [--plan F] [--rewrite T,…]
                                           record a human approval and the plan hash; data-model
                                           compares the plan with the lake's tables (--rewrite: let
                                           a --full-refresh rewrite T under an incompatible schema)
  lima-tui propose [--plan F] [--write] [--json]
                                           gate 3: profile, propose the data model
  lima-tui exceptions list|show|assign|resolve|waive|replay|export …
                                           work through the exception queue
  lima-tui run --watch [--interval 10s] [--batch-rows N] [--compact-every N]
                                           micro-batches: load new files as they arrive, until SIGINT/SIGTERM
  lima-tui compact [--plan F] [--table T]... [--json]
                                           rewrite small data files (iceberg-go's compaction)
  lima-tui maintain [--plan F] [--table T]... [--dry-run] [--json] [--wait D] [--schedule]
                                           expire old snapshots, remove orphan files (maintenance:)
  lima-tui schedule [--plan F] [--once] [--wait 30s]
                                           run on the plan's cron, in the foreground
  lima-tui teardown [--plan F] [--confirm PREFIX] [--by NAME] [--json]
                                           gate 5: blast radius; remove after the prefix
  lima-tui adopt [--plan F] [--confirm PREFIX] [--json]
                                           take over a lake another workspace owns (after the prefix)
  lima-tui deploy glue [--dir D] [--table T]... [--out DIR] [--apply] [--binary PATH]
                                           the AWS Glue job of each engine: glue table: driver, job,
                                           trigger and IAM policy written; --apply uploads and creates
  lima-tui migrate --glue DB.T | --folder P --method in-place|rewrite [--partition S]... [--confirm DB.T]
                                           Hive/Parquet → Iceberg, validated per partition; Glue switched
                                           after the typed name; --rollback, --drop-backup
  lima-tui worker --dir D < SHARDS.jsonl   stage shards of a distributed load (Spark's rdd.pipe):
                                           one manifest line per shard on stdout, nothing committed
  lima-tui commit --dir D --load-id L --expect SHARDS.jsonl --manifests F... [--json]
                                           commit the shards in one snapshot, then gate 4 and the report

Exit codes: 0 ok; 1 error (nothing half-visible); 2 usage; 3 loaded but gate 4 failed;
4 a precondition failed, nothing written.
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command and returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	// Diagnostics never show a DSN's password, whatever path they take:
	// those of DSNs in the environment or on the command line are masked.
	stderr = redact.Writer(stderr, redact.Candidates(append(envValues(), args...)...)...)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help") {
		// The wizard; without a terminal it names the headless commands.
		return cmdWizard(ctx, args, stdout, stderr)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "--help":
		if len(rest) == 1 && rest[0] == "--markdown" {
			// Hidden: the command-line reference, docs/cli.md (make docs).
			fmt.Fprint(stdout, cliMarkdown())
			return exitOK
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if v, ok := lookupVerb(cmd); ok {
		return v.run(ctx, rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "lima-tui: unknown command \"%s\"\n\n%s", ui.Sanitize(cmd), usage)
	return exitUsage
}

// A verb of the command line: its name, one line saying what it does, and
// the function that runs it — which builds the verb's flag.FlagSet with
// newFlags and, given -h, prints it and returns. The command-line
// reference (docs/cli.md, clidoc.go) is generated from these.
type verb struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// verbs is the one registry of the command line, in the order of usage.
func verbs() []verb {
	return []verb{
		{"wizard", "the wizard: every gate in a terminal (also lima-tui with no verb)", cmdWizard},
		{"init", "gate 1: scope & residency → platform.yaml", cmdInit},
		{"check", "gate 2: preconditions with evidence (exit 4)", cmdCheck},
		{"demo", "build the demo lake from the bundled dirty ERP sample", cmdDemo},
		{"run", "load the approved plan, reconcile (gate 4), write the report; --watch: micro-batches", cmdRun},
		{"reconcile", "re-run gate 4 against the lake's current snapshots", cmdReconcile},
		{"report", "print a run's report (default: the latest)", noContext(cmdReport)},
		{"approve", "record a human approval (gate 1 scope, gate 3 data model) and the plan hash", noContext(cmdApprove)},
		{"propose", "gate 3: profile the sources, propose the data model", cmdPropose},
		{"exceptions", "work through the exception queue (the browser, or a verb)", cmdExceptions},
		{"compact", "rewrite small data files (iceberg-go's compaction)", cmdCompact},
		{"maintain", "expire old snapshots, remove orphan files (Iceberg's maintenance)", cmdMaintain},
		{"schedule", "run on the plan's cron, in the foreground", cmdSchedule},
		{"teardown", "gate 5: the blast radius; remove it after the prefix is typed", cmdTeardown},
		{"adopt", "take over a lake another workspace owns (after the prefix)", cmdAdopt},
		{"deploy", "write (and with --apply create) the AWS Glue job of each engine: glue table", cmdDeploy},
		{"migrate", "convert a Hive/Parquet table (Glue or folder) to Iceberg, validate it, switch Glue after the typed name", cmdMigrate},
		{"worker", "stage shards of a distributed load: JSON lines in on stdin, one manifest line out per shard; commits nothing", cmdWorker},
		{"commit", "commit a distributed load's shards in one snapshot, then gate 4 and the report", cmdCommit},
	}
}

func noContext(f func(args []string, stdout, stderr io.Writer) int) func(context.Context, []string, io.Writer, io.Writer) int {
	return func(_ context.Context, args []string, stdout, stderr io.Writer) int { return f(args, stdout, stderr) }
}

func lookupVerb(name string) (verb, bool) {
	for _, v := range verbs() {
		if v.name == name {
			return v, true
		}
	}
	return verb{}, false
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("lima-tui "+name, flag.ContinueOnError)
	fs.SetOutput(layoutSafe{stderr})
	if c, ok := stderr.(*flagCapture); ok {
		c.sets = append(c.sets, fs) // the reference is being generated (clidoc.go)
	}
	return fs
}

// personFlag is a flag naming a person (--by, assign's --owner): what it
// holds is recorded in the history or the plan and shown on screens, so a
// name wizard.CheckName refuses (control or direction characters, too
// long) is a usage error. An empty value is left to the verb, which says
// what it needs.
type personFlag struct{ v *string }

func (p personFlag) String() string {
	if p.v == nil {
		return ""
	}
	return *p.v
}

func (p personFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if s != "" {
		if err := wizard.CheckName(s); err != nil {
			return err
		}
	}
	*p.v = s
	return nil
}

// personVar defines a personFlag with a default.
func personVar(fs *flag.FlagSet, name, def, usage string) *string {
	v := def
	fs.Var(personFlag{&v}, name, usage)
	return &v
}

// wasSet reports whether the flag was given on the command line (an empty
// --confirm= is given, and refused, not absent).
func wasSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseExit is the exit code of a command whose flags did not parse: 0
// when the user asked for the help (-h, --help: flag printed the usage), 2
// for a flag it does not know or a bad value.
func parseExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

func exitFor(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flow.ErrUsage):
		return exitUsage
	case errors.Is(err, flow.ErrPrecondition):
		return exitPrecondition
	case errors.Is(err, gates.ErrReconciliation):
		return exitReconcile
	}
	return exitError
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "lima-tui: %s\n", ui.Sanitize(err.Error()))
	return exitFor(err)
}

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", stderr)
	dir := fs.String("dir", "lima-demo", "workspace folder to create")
	headless := fs.Bool("headless", false, "run every gate with the recorded demo answers, without the wizard")
	jsonOut := fs.Bool("json", false, "print a JSON summary on stdout")
	s3root := fs.String("s3", "", "s3://bucket/prefix: upload the sample files there and keep the lake (and raw/) on S3; endpoint, region and credentials from the AWS environment")
	theme := fs.String("theme", "", "the wizard's theme: dark, light, projector or mono")
	accessible := fs.Bool("accessible", false, "ask the gate questions as plain line prompts, without the full-screen wizard")
	rows := fs.Int64("rows", 0, "also generate this many dirty inspection rows (data/erp/"+demo.VolumeFile+"), so the run takes long enough to watch (a million rows cost about 10 CPU-seconds)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if *rows < 0 || (*rows > 0 && *s3root != "") {
		fmt.Fprintln(stderr, "lima: --rows takes a positive number of rows, and works with the local demo only (not with --s3)")
		return 2
	}
	if *rows > demo.MaxVolumeRows {
		fmt.Fprintf(stderr, "lima: --rows %d is more than a demo holds (at most %d rows, about 6 GB)\n", *rows, demo.MaxVolumeRows)
		return exitUsage
	}
	create := func(dir string, now time.Time) (bool, error) { return demo.Create(dir, now) }
	if *s3root != "" {
		create = func(dir string, now time.Time) (bool, error) { return flow.CreateDemoS3(ctx, dir, *s3root, now) }
	}
	created, err := create(*dir, time.Now())
	if err != nil {
		return fail(stderr, err)
	}
	abs, _ := filepath.Abs(*dir)
	if created {
		fmt.Fprintf(stderr, "lima: demo workspace created in %s (sample data in data/erp, answers in platform.yaml)\n", ui.Sanitize(abs))
	} else {
		fmt.Fprintf(stderr, "lima: using the existing demo workspace in %s\n", ui.Sanitize(abs))
	}
	if *rows > 0 {
		if _, err := demo.WriteVolumeContext(ctx, *dir, *rows); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stderr, "lima: %d generated inspection rows in data/erp/%s\n", *rows, demo.VolumeFile)
	}
	if *accessible || (!*headless && !*jsonOut && wizardTerminal()) {
		// A person at a terminal walks the gates on the demo workspace.
		return startWizard(ctx, filepath.Join(*dir, "platform.yaml"), *theme, *accessible, os.Stdin, stdout, stderr)
	}
	// The demo runs now, whatever the run window of its nightly schedule.
	return runPlan(ctx, flow.Workspace{Dir: *dir}, filepath.Join(*dir, "platform.yaml"), nil, false, *jsonOut, stdout, stderr,
		flow.RunOptions{Force: true})
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan to run")
	var tables multi
	fs.Var(&tables, "table", "load only this table (repeatable)")
	full := fs.Bool("full-refresh", false, "reload even when the input was already loaded")
	jsonOut := fs.Bool("json", false, "print a JSON summary on stdout")
	force := fs.Bool("force", false, "run even outside the plan's run window (schedule.window)")
	wait := fs.Duration("wait", 0, "wait this long (e.g. 30s) for another run of the workspace to finish instead of exiting at once (exit 4)")
	watch := fs.Bool("watch", false, "keep running: poll the file sources and load new files in micro-batches until SIGINT/SIGTERM")
	interval := fs.Duration("interval", 10*time.Second, "with --watch: how often to poll and commit (overrides schedule.watch.interval)")
	batchRows := fs.Int64("batch-rows", 0, "with --watch: at most this many lines per micro-batch, 0: no cap (overrides schedule.watch.batch_rows)")
	compactEvery := fs.Int("compact-every", 0, "with --watch: compact the tables after every N micro-batches, 0: never (overrides schedule.watch.compact_every)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (runtime/pprof; read it with go tool pprof)")
	memProfile := fs.String("memprofile", "", "write a heap profile to this file when the run ends (runtime/pprof)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if *wait < 0 {
		fmt.Fprintf(stderr, "lima-tui run: --wait %s: give how long to wait for another run, e.g. 30s (0: not at all)\n", *wait)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui run: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		fmt.Fprintf(stderr, "lima-tui run: %s\n", ui.Sanitize(err.Error()))
		return exitUsage
	}
	code := runParsed(ctx, fs, *planPath, tables, *full, *jsonOut, *force, *wait, *watch,
		watchFlags{interval: *interval, batchRows: *batchRows, compactEvery: *compactEvery}, stdout, stderr)
	if err := stopProfiles(); err != nil {
		fmt.Fprintf(stderr, "lima-tui run: %s\n", ui.Sanitize(err.Error()))
		if code == exitOK {
			code = exitError
		}
	}
	return code
}

// runParsed is cmdRun after its flags were parsed; wf carries the --watch
// flags (its set is filled here from fs).
func runParsed(ctx context.Context, fs *flag.FlagSet, planPath string, tables []string, full, jsonOut, force bool, wait time.Duration,
	watch bool, wf watchFlags, stdout, stderr io.Writer) int {
	if watch {
		wf.set = map[string]bool{}
		fs.Visit(func(f *flag.Flag) { wf.set[f.Name] = true })
		return runWatch(ctx, planPath, tables, full, jsonOut, wf, stdout, stderr,
			flow.RunOptions{Force: force, LockWait: wait})
	}
	if !jsonOut {
		return runPlan(ctx, flow.Workspace{Dir: filepath.Dir(planPath)}, planPath, tables, full, false, stdout, stderr,
			flow.RunOptions{Force: force, LockWait: wait})
	}
	// With --json, stdout always carries one JSON object: a run refused
	// before it read anything (exit 4: outside the window, the lock, an
	// unapproved plan) or failed (exit 1) says so there too, with the
	// message printed on stderr.
	so := &wroteWriter{w: stdout}
	var tail tailWriter
	code := runPlan(ctx, flow.Workspace{Dir: filepath.Dir(planPath)}, planPath, tables, full, true, so, io.MultiWriter(stderr, &tail),
		flow.RunOptions{Force: force, LockWait: wait})
	if !so.wrote {
		status := "failed"
		if code == exitPrecondition {
			status = "refused"
		}
		b, _ := json.Marshal(struct {
			Status   string `json:"status"`
			ExitCode int    `json:"exit_code"`
			Error    string `json:"error"`
		}{status, code, strings.TrimSpace(tail.String())})
		fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
	}
	return code
}

// wroteWriter tells whether anything was written through it.
type wroteWriter struct {
	w     io.Writer
	wrote bool
}

func (w *wroteWriter) Write(b []byte) (int, error) {
	w.wrote = w.wrote || len(b) > 0
	return w.w.Write(b)
}

// tailWriter keeps the last 4 KiB written to it.
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(b []byte) (int, error) {
	w.b = append(w.b, b...)
	if len(w.b) > 4096 {
		w.b = append([]byte(nil), w.b[len(w.b)-4096:]...)
	}
	return len(b), nil
}

func (w *tailWriter) String() string { return string(w.b) }

// runPlan runs the plan; base carries Force and LockWait.
func runPlan(ctx context.Context, ws flow.Workspace, planPath string, tables []string, full, jsonOut bool, stdout, stderr io.Writer, base flow.RunOptions) int {
	p, err := flow.LoadPlan(planPath)
	if err != nil {
		return fail(stderr, err)
	}
	if err := flow.CheckApproval(p); err != nil {
		return fail(stderr, err)
	}
	// A --table the plan does not have is a usage error (exit 2), named
	// before anything starts.
	for _, t := range tables {
		if p.Tables[t] == nil {
			return fail(stderr, fmt.Errorf("%w: run: no table %q in the plan (tables: %s)", flow.ErrUsage, t, strings.Join(p.TableNames(), ", ")))
		}
	}
	if code, ok := runGlueTables(ctx, ws, p, planPath, tables, full, jsonOut, stdout, stderr, base); ok { // deploy.go
		return code
	}
	prog := &run.Progress{}
	done := make(chan struct{})
	go reportProgress(prog, done, stderr)
	base.Workspace, base.Plan, base.Tables, base.FullRefresh, base.Progress = ws, p, tables, full, prog
	out, err := flow.Run(ctx, base)
	close(done)
	if err != nil {
		return fail(stderr, err)
	}
	printSummary(stderr, out.Report)
	if jsonOut {
		writeJSONSummary(stdout, out)
	} else {
		fmt.Fprintln(stdout, out.ReportPath)
	}
	return out.Report.ExitCode()
}

// reportProgress prints one line per active table every few seconds.
func reportProgress(p *run.Progress, done <-chan struct{}, w io.Writer) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			for _, l := range progressLines(p.Snapshot(), time.Now()) {
				fmt.Fprintln(w, l)
			}
		}
	}
}

// progressLines are the headless progress lines for the tables at work:
// a load's counters (rates over its life so far), or gate 4's re-read and
// a mart's build by name.
func progressLines(snap []*run.TableProgress, now time.Time) []string {
	var out []string
	for _, tp := range snap {
		phase, _ := tp.Phase.Load().(string)
		var line string
		switch phase {
		case "loading", "reading keys", "reading changes", "staging", "committing":
			secs := now.Sub(tp.StartedAt()).Seconds()
			rate := float64(tp.RowsRead.Load()) / max(secs, 0.001)
			mbs := float64(tp.Bytes.Load()) / 1e6 / max(secs, 0.001)
			line = fmt.Sprintf("lima: %s: %s — %d rows read, %d loaded, %d held back, %.0f rows/s, %.1f MB/s",
				tp.Table, phase, tp.RowsRead.Load(), tp.Loaded.Load(), tp.Quarantined.Load(), rate, mbs)
			if tot := tp.TotalBytes.Load(); tot > 0 {
				line += fmt.Sprintf(", %.0f%% of input", 100*float64(min(tp.Bytes.Load(), tot))/float64(tot))
			}
		case flow.PhaseReconciling:
			line = fmt.Sprintf("lima: %s: reconciling (gate 4) — %d rows read", tp.Table, tp.RowsRead.Load())
		case flow.PhaseReconcilingMart:
			line = fmt.Sprintf("lima: %s: reconciling the mart (gate 4)", tp.Table)
		case flow.PhaseBuildingMart:
			line = fmt.Sprintf("lima: %s: building mart", tp.Table)
		default:
			continue
		}
		out = append(out, ui.Sanitize(line))
	}
	return out
}

func printSummary(w io.Writer, r *reports.Report) {
	fmt.Fprintf(w, "\nrun %s — %s\n", r.RunID, headlineText(r))
	for _, h := range r.HeldBackMost {
		fmt.Fprintf(w, "  ⚠ %s\n", ui.Sanitize(h))
	}
	nw := len("table")
	for _, t := range r.Tables {
		nw = max(nw, len([]rune(ui.Sanitize(t.Name))))
	}
	fmt.Fprintf(w, "  %-*s %-15s %8s %8s %9s %8s  %-8s %s\n", nw, "table", "status", "read", "loaded", "held back", "skipped", "balanced", "gate 4")
	for _, t := range r.Tables {
		bal := "✓ yes"
		if !t.Balanced {
			bal = "✗ NO"
		}
		gate := gateMark(t.Reconciliation)
		if t.Status == "already_loaded" {
			gate = "– proven when loaded"
		}
		fmt.Fprintf(w, "  %-*s %-15s %8d %8d %9d %8d  %-8s %s\n", nw, ui.Sanitize(t.Name), t.Status, t.RowsRead, t.RowsLoaded, t.RowsQuarantined, t.RowsSkipped, bal, gate)
		if t.Error != "" {
			fmt.Fprintf(w, "    error: %s\n", ui.Sanitize(t.Error))
		}
		for _, c := range t.Checks {
			if c.Status == gates.Fail {
				fmt.Fprintf(w, "    ✗ %s: %s\n", ui.Sanitize(c.Name), ui.Sanitize(c.Detail))
			} else if c.Status == gates.Warn && c.Fix != "" {
				fmt.Fprintf(w, "    ! %s: %s — %s\n", ui.Sanitize(c.Name), ui.Sanitize(c.Detail), ui.Sanitize(c.Fix))
			}
		}
	}
	for _, m := range r.Marts {
		fmt.Fprintf(w, "  mart %s → %s: %s, %d rows from %d fact rows, gate 4 %s\n", ui.Sanitize(m.Name), ui.Sanitize(m.Table), m.Status, m.Rows, m.FactRows, gateMark(m.Reconciliation))
		if m.Error != "" {
			fmt.Fprintf(w, "    error: %s\n", ui.Sanitize(m.Error))
		}
	}
	if r.Exceptions.Total > 0 && len(r.Exceptions.ByOwner) > 0 {
		var owners []string
		for o, n := range r.Exceptions.ByOwner {
			owners = append(owners, fmt.Sprintf("%s %d", o, n))
		}
		sort.Strings(owners)
		fmt.Fprintf(w, "  ! %s — owners: %s\n", reports.HeldBack(r.Exceptions, nil), ui.Sanitize(strings.Join(owners, ", ")))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  ! %s\n", ui.Sanitize(warn))
	}
	if r.DeadlineBy != "" {
		fmt.Fprintf(w, "  deadline %s\n", r.DeadlineBy)
	}
}

func statusText(s string) string {
	switch s {
	case reports.StatusOK:
		return "✓ ok"
	case reports.StatusReconciliationFailed:
		return "✗ loaded, but gate 4 (reconciliation) failed"
	}
	return "✗ failed"
}

// headlineText is the status with gate 4's headline: "every table
// reconciles" only when every table was checked in full.
func headlineText(r *reports.Report) string {
	s := statusText(r.Status)
	if r.Status == reports.StatusOK && len(r.HeldBackMost) > 0 {
		// The run balanced and committed, but a table held back most of
		// its rows: that is not a "✓" a reader should skim past.
		if n := len(r.HeldBackMost); n == 1 {
			s = "! ok, but a table held back most of its rows"
		} else {
			s = fmt.Sprintf("! ok, but %d tables held back most of their rows", n)
		}
	} else if r.Status == reports.StatusOK && len(r.NotChecked) > 0 {
		s = "! ok, not fully checked"
	}
	if r.Headline == "" {
		return s
	}
	return s + " — " + ui.Sanitize(r.Headline)
}

func gateMark(s string) string {
	switch s {
	case gates.Pass:
		return "✓ pass"
	case gates.Fail:
		return "✗ fail"
	case gates.Warn:
		return "! warn"
	}
	return "– not run"
}

func writeJSONSummary(w io.Writer, out *flow.Outcome) {
	type tbl struct {
		Name            string         `json:"name"`
		Status          string         `json:"status"`
		SnapshotID      int64          `json:"snapshot_id"`
		RowsRead        int64          `json:"rows_read"`
		RowsLoaded      int64          `json:"rows_loaded"`
		RowsQuarantined int64          `json:"rows_quarantined"`
		RowsSkipped     int64          `json:"rows_skipped"`
		Balanced        bool           `json:"balanced"`
		Reconciliation  string         `json:"reconciliation"`
		Seconds         float64        `json:"seconds"`
		Phases          reports.Phases `json:"phases"`
		Error           string         `json:"error,omitempty"`
	}
	s := struct {
		RunID    string `json:"run_id"`
		Status   string `json:"status"`
		ExitCode int    `json:"exit_code"`
		Report   string `json:"report"`
		Tables   []tbl  `json:"tables"`
		// HeldBackMost: "table: N of M rows held back" for each table that
		// held back more than half of its rows.
		HeldBackMost []string `json:"held_back_most,omitempty"`
	}{RunID: out.Report.RunID, Status: out.Report.Status, ExitCode: out.Report.ExitCode(), Report: out.ReportPath, HeldBackMost: out.Report.HeldBackMost}
	for _, t := range out.Report.Tables {
		s.Tables = append(s.Tables, tbl{t.Name, t.Status, t.SnapshotID, t.RowsRead, t.RowsLoaded, t.RowsQuarantined, t.RowsSkipped, t.Balanced, t.Reconciliation, t.Seconds, t.Phases, t.Error})
	}
	b, _ := json.Marshal(s)
	fmt.Fprintln(w, string(ui.EscapeJSON(b)))
}

func cmdReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("reconcile", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan")
	runID := fs.String("run", "", "the run whose expectations to prove (default: the latest)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if *runID != "" {
		// A run id is one name under reports/, never a path: a usage error.
		if _, err := reports.RunDir(flow.Workspace{Dir: filepath.Dir(*planPath)}.ReportsDir(), *runID); err != nil {
			fmt.Fprintf(stderr, "lima-tui reconcile: --run: %s\n", ui.Sanitize(err.Error()))
			return exitUsage
		}
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	recs, err := flow.Reconcile(ctx, flow.Workspace{Dir: filepath.Dir(*planPath)}, p, *runID)
	if err != nil {
		return fail(stderr, err)
	}
	code := exitOK
	for _, r := range recs {
		fmt.Fprintf(stdout, "%s (snapshot %d): %s\n", ui.Sanitize(r.Table), r.SnapshotID, gateMark(r.Status))
		for _, c := range r.Checks {
			fmt.Fprintf(stdout, "  %s %s: %s\n", strings.Fields(gateMark(c.Status))[0], ui.Sanitize(c.Name), ui.Sanitize(c.Detail))
		}
		if r.Status == gates.Fail {
			code = exitReconcile
		}
	}
	return code
}

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan")
	asJSON := fs.Bool("json", false, "print report.json instead of report.md")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	ws := flow.Workspace{Dir: filepath.Dir(*planPath)}
	id := fs.Arg(0)
	if id != "" {
		// A run id is one name under reports/, never a path: a usage error.
		if _, err := reports.RunDir(ws.ReportsDir(), id); err != nil {
			fmt.Fprintf(stderr, "lima-tui report: %s\n", ui.Sanitize(err.Error()))
			return exitUsage
		}
	}
	if id == "" {
		var err error
		if id, err = reports.Latest(ws.ReportsDir()); err != nil {
			return fail(stderr, err)
		}
	}
	name := "report.md"
	if *asJSON {
		name = "report.json"
	}
	rd, err := reports.RunDir(ws.ReportsDir(), id)
	if err != nil {
		return fail(stderr, err)
	}
	b, err := os.ReadFile(filepath.Join(rd, name))
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		if !json.Valid(b) {
			fmt.Fprintf(stderr, "lima-tui report: %s is damaged: not JSON\n", ui.Sanitize(filepath.Join(rd, name)))
			return exitError
		}
		stdout.Write(ui.EscapeJSON(b))
		return exitOK
	}
	// report.md as Lima wrote it is escaped already; one edited behind
	// its back reaches the terminal inert all the same.
	layoutSafe{stdout}.Write(b)
	return exitOK
}

func cmdApprove(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("approve", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan")
	gate := fs.String("gate", "", "scope or data-model")
	by := personVar(fs, "by", "", "who approves: a `name`")
	rewrite := fs.String("rewrite", "", "data-model: tables (comma-separated) a --full-refresh may rewrite under an incompatible schema")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if strings.TrimSpace(*by) == "" || (*gate != "scope" && *gate != "data-model") {
		fmt.Fprintln(stderr, "lima-tui approve: --gate scope|data-model and --by NAME are required")
		return exitUsage
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	if *gate == "scope" {
		// Gate 1 decides whether the scope is complete; nothing is recorded otherwise.
		if failed := gates.FailedFindings(gates.Scope(p)); len(failed) > 0 {
			fmt.Fprintln(stderr, "lima-tui approve: gate 1 (scope & residency) does not pass; nothing was recorded:")
			printFindingLines(stderr, failed)
			return exitPrecondition
		}
	}
	if *gate == "data-model" {
		if f, empty := gates.EmptyDataModel(p); empty {
			fmt.Fprintln(stderr, "lima-tui approve: the data model is empty; nothing was recorded:")
			printFindingLines(stderr, []gates.Finding{f})
			return exitPrecondition
		}
	}
	if *gate == "data-model" { // plan changes to existing tables must be Iceberg evolution (flow/evolve.go)
		found, err := flow.CheckEvolution(context.Background(), flow.Workspace{Dir: filepath.Dir(*planPath)}, p, strings.Split(*rewrite, ","))
		if err != nil {
			return fail(stderr, err)
		}
		if failed := gates.FailedFindings(found); len(failed) > 0 {
			fmt.Fprintln(stderr, "lima-tui approve: the plan changes tables in the lake in ways their data cannot follow; nothing was recorded:")
			printFindingLines(stderr, failed)
			return exitPrecondition
		}
		printFindingLines(stdout, found)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	a := &plan.Approval{ApprovedBy: *by, ApprovedAt: now, PlanHash: p.Hash()}
	if *gate == "scope" {
		p.Gates.Scope = a
	} else {
		p.Gates.DataModel = a
	}
	p.Platform.Updated = now
	if err := p.Write(*planPath); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "approved %s by %s (plan hash %.12s)\n", *gate, ui.Sanitize(*by), a.PlanHash)
	return exitOK
}

// envValues are the values of the environment's variables.
func envValues() []string {
	var out []string
	for _, kv := range os.Environ() {
		if _, v, ok := strings.Cut(kv, "="); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}
