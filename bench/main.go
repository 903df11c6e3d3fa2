// Command bench measures Lima's load of a dirty 1,000,000-row CSV into an
// Iceberg lake — wall time, rows/s, MB/s, peak memory and the row accounting —
// next to DuckDB copying the same file to Parquet.
//
// It is a measurement, not a test: it exits non-zero only when it cannot
// measure, or when Lima's run fails or its rows do not balance.
//
//	cd bench && go run .                 # 1M rows, Lima and DuckDB
//	cd bench && go run . -scale          # also Lima at 250k and 500k rows
//	cd bench && go run . -rows 200000 -dir /tmp/lima-bench
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
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// childFlag re-executes this program as the DuckDB child (not in -help).
const childFlag = "-duckdb-child"

type options struct {
	rows   int64
	dir    string
	scale  bool
	duckdb bool
	lima   string
	repo   string
	tee    bool
	// base is another lima-tui binary (an older build) measured beside
	// lima, interleaved; repeat is how many times each is run.
	base   string
	repeat int
	// csv: run the CSV part (Lima and DuckDB on the generated file).
	csv bool
	// PostgreSQL part (pg.go).
	postgres   bool
	pgRows     int64
	pgParallel int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		if len(os.Args) != 5 {
			fmt.Fprintf(os.Stderr, "usage: bench %s VARIANT CSV OUT.parquet\n", childFlag)
			os.Exit(2)
		}
		if err := duckChild(os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintf(os.Stderr, "duckdb: %v\n", err)
			os.Exit(1)
		}
		return
	}
	var o options
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	fs.Int64Var(&o.rows, "rows", 1_000_000, "rows of the generated inspections CSV")
	fs.StringVar(&o.dir, "dir", "", "keep the workspaces in this folder (default: a temporary folder, removed after a successful run)")
	fs.BoolVar(&o.scale, "scale", false, "also run Lima at a quarter and half of -rows, to show how peak memory grows with input size")
	fs.BoolVar(&o.duckdb, "duckdb", true, "run the DuckDB comparison")
	fs.StringVar(&o.lima, "lima", "", "use this lima-tui binary instead of building ./cmd/lima-tui")
	fs.StringVar(&o.repo, "repo", "", "the Lima module folder (default: found above the current folder)")
	fs.StringVar(&o.base, "lima-base", "", "also measure this lima-tui binary (e.g. a build of main) on the same input, interleaved with the new one")
	fs.IntVar(&o.repeat, "repeat", 1, "run Lima (and -lima-base) and DuckDB typed COPY this many times each, interleaved, and print every run with the machine's load")
	fs.BoolVar(&o.tee, "v", false, "show the children's stderr (Lima's progress lines) as they run")
	fs.BoolVar(&o.csv, "csv", true, "run the CSV part (false: only the PostgreSQL part, e.g. -csv=false -repeat 3 -lima-base OLD)")
	fs.BoolVar(&o.postgres, "postgres", true, "also load a generated PostgreSQL table and compare with COPY TO STDOUT (DSN in "+pgDSNEnv+", default the local server; skipped loudly when unreachable)")
	fs.Int64Var(&o.pgRows, "pg-rows", 0, "rows of the PostgreSQL table (default: -rows)")
	fs.IntVar(&o.pgParallel, "pg-parallel", 2, "max_parallel_reads of the PostgreSQL load")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run . [flags]   (from bench/)\n\nMeasures a Lima load of a generated dirty CSV next to DuckDB. Flags:\n")
		fs.PrintDefaults()
	}
	fs.Parse(os.Args[1:])
	if o.pgRows <= 0 {
		o.pgRows = o.rows
	}
	if fs.NArg() > 0 || o.rows < 1 || o.pgParallel < 1 || o.repeat < 1 {
		fs.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// limaSummary is the JSON line `lima-tui run --json` prints on stdout.
type limaSummary struct {
	RunID    string `json:"run_id"`
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	Report   string `json:"report"`
	Tables   []struct {
		Name            string `json:"name"`
		Status          string `json:"status"`
		RowsRead        int64  `json:"rows_read"`
		RowsLoaded      int64  `json:"rows_loaded"`
		RowsQuarantined int64  `json:"rows_quarantined"`
		RowsSkipped     int64  `json:"rows_skipped"`
		Balanced        bool   `json:"balanced"`
		Reconciliation  string `json:"reconciliation"`
		Error           string `json:"error"`
	} `json:"tables"`
}

// limaRun is one measured `lima-tui run`.
type limaRun struct {
	WS      *workspace
	M       measured
	Sum     limaSummary
	Read    int64
	Loaded  int64
	Held    int64
	Skipped int64
}

// duckRun is one measured DuckDB child.
type duckRun struct {
	Variant string
	M       measured
	Res     duckResult
	Err     error
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func run(ctx context.Context, o options, out io.Writer) (err error) {
	root := o.dir
	if root == "" {
		if root, err = os.MkdirTemp("", "lima-bench-"); err != nil {
			return err
		}
		defer func() {
			if err == nil {
				os.RemoveAll(root)
			} else {
				logf("workspace kept for inspection: %s", root)
			}
		}()
	} else if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if root, err = filepath.Abs(root); err != nil {
		return err
	}

	lima := o.lima
	if lima == "" {
		repo := o.repo
		if repo == "" {
			if repo, err = findRepo(); err != nil {
				return err
			}
		}
		lima = filepath.Join(root, "lima-tui")
		logf("building lima-tui from %s", repo)
		if err := buildLima(ctx, repo, lima); err != nil {
			return err
		}
	}

	if !o.csv {
		if !o.postgres {
			return errors.New("-csv=false -postgres=false leaves nothing to measure")
		}
		return runPostgres(ctx, o, root, lima, out)
	}
	ws, err := prepareWorkspace(root, o.rows, lima)
	if err != nil {
		return err
	}
	var self string
	if o.duckdb && !duckAvailable {
		logf("DuckDB comparison skipped: this build has no cgo (DuckDB needs CGO_ENABLED=1 and gcc/g++)")
	}
	if o.duckdb && duckAvailable {
		if self, err = os.Executable(); err != nil {
			return err
		}
	}
	// Interleaved: new Lima, base Lima, DuckDB typed, again; the untyped
	// DuckDB variants once.
	var full *limaRun
	var ducks []duckRun
	var runs []timedRun
	for i := range o.repeat {
		r, err := runLimaOn(ctx, o, ws, lima, fmt.Sprintf("run-new-%d", i+1))
		if err != nil {
			return err
		}
		if full == nil {
			full = r
		}
		runs = append(runs, timedRun{"lima (this build)", r.M})
		if o.base != "" {
			b, err := runLimaOn(ctx, o, ws, o.base, fmt.Sprintf("run-base-%d", i+1))
			if err != nil {
				return fmt.Errorf("-lima-base: %w", err)
			}
			if b.Read != r.Read || b.Loaded != r.Loaded || b.Held != r.Held || b.Skipped != r.Skipped {
				return fmt.Errorf("-lima-base accounts differently: read %d, loaded %d, held %d, skipped %d; this build %d, %d, %d, %d",
					b.Read, b.Loaded, b.Held, b.Skipped, r.Read, r.Loaded, r.Held, r.Skipped)
			}
			runs = append(runs, timedRun{"lima (-lima-base)", b.M})
		}
		if self == "" {
			continue
		}
		variants := []string{duckTyped}
		if i == 0 {
			variants = append(variants, duckVarchar, duckAuto)
		}
		for _, v := range variants {
			d := runDuck(ctx, o, self, root, v, ws.CSV)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if i == 0 {
				ducks = append(ducks, d)
			}
			if v == duckTyped && d.Err == nil {
				runs = append(runs, timedRun{"duckdb typed COPY", d.M})
			}
		}
	}

	var scale []*limaRun
	if o.scale {
		for _, n := range []int64{o.rows / 4, o.rows / 2} {
			if n < 1 {
				continue
			}
			r, err := runLima(ctx, o, root, lima, n)
			if err != nil {
				return err
			}
			scale = append(scale, r)
			if o.dir == "" {
				os.RemoveAll(r.WS.Dir) // disk: the big workspace is still there
			}
		}
		scale = append(scale, full)
	}

	report(out, o, full, ducks, scale)
	if o.repeat > 1 || o.base != "" {
		interleaved(out, runs)
	}
	for _, d := range ducks {
		if d.Err != nil {
			return fmt.Errorf("the DuckDB comparison (%s) failed: %v", d.Variant, d.Err)
		}
	}
	if o.postgres {
		return runPostgres(ctx, o, root, lima, out)
	}
	return nil
}

// prepareWorkspace generates a workspace of n rows with its approved plan;
// runs load copies of it (runLimaOn).
func prepareWorkspace(root string, n int64, lima string) (*workspace, error) {
	logf("generating %d rows", n)
	return writeWorkspace(filepath.Join(root, fmt.Sprintf("ws-%d", n)), n, lima)
}

// runLima generates a workspace of n rows, runs Lima on a copy of it and
// checks the run finished and balanced.
func runLima(ctx context.Context, o options, root, lima string, n int64) (*limaRun, error) {
	ws, err := prepareWorkspace(root, n, lima)
	if err != nil {
		return nil, err
	}
	return runLimaOn(ctx, o, ws, lima, "run")
}

// runLimaOn runs the lima binary on a fresh copy of the workspace (a
// loaded input would be skipped as already loaded), in the folder name
// beside it, and checks the run finished and balanced.
func runLimaOn(ctx context.Context, o options, pristine *workspace, lima, name string) (*limaRun, error) {
	n := pristine.Gen.Rows
	ws, err := copyWorkspace(pristine, filepath.Join(filepath.Dir(pristine.Dir), filepath.Base(pristine.Dir)+"-"+name))
	if err != nil {
		return nil, err
	}
	logf("%s run --plan %s --json", filepath.Base(lima), ws.Plan)
	m, err := runMeasured(ctx, o.tee, lima, "run", "--plan", ws.Plan, "--json")
	if err != nil {
		return nil, fmt.Errorf("lima-tui run: %w", err)
	}
	os.WriteFile(filepath.Join(ws.Dir, "lima-run.stderr"), m.Stderr, 0o644)
	r := &limaRun{WS: ws, M: m}
	line := lastLine(m.Stdout)
	if jerr := json.Unmarshal([]byte(line), &r.Sum); jerr != nil {
		return nil, fmt.Errorf("lima-tui run exited %d without a JSON summary (%v); its stderr ends:\n%s", m.ExitCode, jerr, tail(m.Stderr, 15))
	}
	var problems []string
	if m.ExitCode != 0 || r.Sum.Status != "ok" {
		problems = append(problems, fmt.Sprintf("lima-tui run exited %d with status %q", m.ExitCode, r.Sum.Status))
	}
	if len(r.Sum.Tables) == 0 {
		problems = append(problems, "the summary lists no tables")
	}
	for _, t := range r.Sum.Tables {
		r.Read += t.RowsRead
		r.Loaded += t.RowsLoaded
		r.Held += t.RowsQuarantined
		r.Skipped += t.RowsSkipped
		if !t.Balanced || t.RowsRead != t.RowsLoaded+t.RowsQuarantined+t.RowsSkipped {
			problems = append(problems, fmt.Sprintf("table %s does not balance: read %d ≠ loaded %d + quarantined %d + skipped %d",
				t.Name, t.RowsRead, t.RowsLoaded, t.RowsQuarantined, t.RowsSkipped))
		}
		if t.Error != "" {
			problems = append(problems, fmt.Sprintf("table %s: %s", t.Name, t.Error))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("lima failed at %d rows (report: %s):\n  %s\nits stderr ends:\n%s",
			n, r.Sum.Report, strings.Join(problems, "\n  "), tail(m.Stderr, 15))
	}
	if o.dir == "" {
		os.RemoveAll(ws.Dir) // disk: each run holds a lake of its own
	}
	return r, nil
}

// copyWorkspace makes a fresh copy of a generated workspace at dir: the
// big files hard-linked (Lima never writes its input), the rest copied.
func copyWorkspace(src *workspace, dir string) (*workspace, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	err := filepath.WalkDir(src.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src.Dir, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if path == src.CSV && os.Link(path, to) == nil {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return nil, fmt.Errorf("copy the workspace %s: %w", src.Dir, err)
	}
	ws := *src
	ws.Dir = dir
	ws.CSV = filepath.Join(dir, must(filepath.Rel(src.Dir, src.CSV)))
	ws.Plan = filepath.Join(dir, must(filepath.Rel(src.Dir, src.Plan)))
	return &ws, nil
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// timedRun is one measured run of the interleaved series.
type timedRun struct {
	Tool string
	M    measured
}

// interleaved prints every run of the series in the order they ran, with
// the machine's load as each started, then each tool's median and its
// ratio to DuckDB's typed COPY.
func interleaved(w io.Writer, runs []timedRun) {
	fmt.Fprintf(w, "\ninterleaved runs (in the order they ran; load = 1-min load average at the start, on %d CPUs)\n", runtime.NumCPU())
	fmt.Fprintf(w, "%-3s %-20s %9s %7s %12s %6s\n", "#", "tool", "seconds", "CPU s", "peak RSS MB", "load")
	var tools []string
	by := map[string][]measured{}
	for i, r := range runs {
		fmt.Fprintf(w, "%-3d %-20s %9.2f %7.2f %12.1f %6.2f\n", i+1, r.Tool, r.M.Wall.Seconds(), r.M.CPU.Seconds(), r.M.PeakRSSMB(), r.M.Load1)
		if _, ok := by[r.Tool]; !ok {
			tools = append(tools, r.Tool)
		}
		by[r.Tool] = append(by[r.Tool], r.M)
	}
	median := func(ms []measured, f func(measured) float64) float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	wall := func(m measured) float64 { return m.Wall.Seconds() }
	cpu := func(m measured) float64 { return m.CPU.Seconds() }
	rss := func(m measured) float64 { return m.PeakRSSMB() }
	duck := by["duckdb typed COPY"]
	fmt.Fprintf(w, "\nmedians     %-20s %9s %7s %12s %s\n", "tool", "seconds", "CPU s", "peak RSS MB", "vs duckdb typed COPY (wall, CPU)")
	for _, t := range tools {
		ms := by[t]
		vs := ""
		if len(duck) > 0 && t != "duckdb typed COPY" {
			vs = fmt.Sprintf("%.1f× wall, %.1f× CPU", median(ms, wall)/median(duck, wall), median(ms, cpu)/median(duck, cpu))
		}
		fmt.Fprintf(w, "%-11s %-20s %9.2f %7.2f %12.1f %s\n", fmt.Sprintf("(%d runs)", len(ms)), t, median(ms, wall), median(ms, cpu), median(ms, rss), vs)
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// findRepo walks up from the current folder to the Lima module.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(string(b)) == "github.com/lima-lake/lima" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the Lima module (go.mod of github.com/lima-lake/lima) above the current folder; run from bench/ or pass -repo or -lima")
		}
		dir = parent
	}
}

func modulePath(gomod string) string {
	for line := range strings.Lines(gomod) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// report prints the results.
func report(w io.Writer, o options, lr *limaRun, ducks []duckRun, scale []*limaRun) {
	g := lr.WS.Gen
	mb := float64(g.Bytes) / 1e6
	duckVersion := "–"
	for _, d := range ducks {
		if d.Res.Version != "" {
			duckVersion = d.Res.Version
		}
	}
	fmt.Fprintf(w, "\nLima bench — %s rows of dirty inspections CSV, %.1f MB; %d CPUs, %s/%s, %s, DuckDB %s\n",
		num(g.Rows), mb, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), duckVersion)
	pct := func(n int64) string { return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(max(g.Rows, 1))) }
	fmt.Fprintf(w, "input dirt: %s trailing-minus costs, %s thousands separators, %s yyyy/M/d dates, %s NULL dates, %s padded supplier ids, %s multi-line fields;\n",
		pct(g.TrailingMinus), pct(g.Grouped), pct(g.SlashDates), pct(g.NullDates), pct(g.PaddedIDs), num(g.Multiline))
	fmt.Fprintf(w, "            %s bad rows planted (%s unparseable numbers, %s impossible dates)\n\n",
		num(g.BadRows()), num(g.BadNumbers), num(g.BadDates))

	fmt.Fprintf(w, "%-22s %11s %9s %11s %8s %12s %11s %7s\n", "tool", "rows", "seconds", "rows/s", "MB/s", "peak RSS MB", "rows kept", "CPU s")
	line := func(name string, rows int64, m measured, kept string) {
		s := m.Wall.Seconds()
		fmt.Fprintf(w, "%-22s %11s %9.2f %11s %8.1f %12.1f %11s %7.2f\n",
			name, num(rows), s, num(int64(float64(rows)/s)), mb/s, m.PeakRSSMB(), kept, m.CPU.Seconds())
	}
	line("lima run", lr.Read, lr.M, num(lr.Loaded))
	for _, d := range ducks {
		name := "duckdb " + d.Variant
		switch d.Variant {
		case duckAuto:
			name = "duckdb read_csv_auto"
		case duckVarchar:
			name = "duckdb all_varchar"
		case duckTyped:
			name = "duckdb typed COPY"
		}
		if d.Err != nil {
			fmt.Fprintf(w, "%-22s failed: %v\n", name, d.Err)
			continue
		}
		line(name, g.Rows, d.M, num(d.Res.Rows))
	}

	// Other processes competing for the CPUs inflate wall times.
	all := []measured{lr.M}
	for _, d := range ducks {
		all = append(all, d.M)
	}
	for _, r := range scale {
		all = append(all, r.M)
	}
	busiest := 0.0
	for _, m := range all {
		if m.Wall > 0 {
			busiest = max(busiest, m.OtherCPU.Seconds()/m.Wall.Seconds())
		}
	}
	if busiest > 0.25 {
		fmt.Fprintf(w, "warning: other processes used up to %.1f of the %d CPUs during these runs: wall times are inflated; CPU s is steadier\n",
			busiest, runtime.NumCPU())
	}
	fmt.Fprintf(w, "\nlima: conservation held: read %s = loaded %s + quarantined %s + skipped %s (run %s, status %s, gate 4 %s)\n",
		num(lr.Read), num(lr.Loaded), num(lr.Held), num(lr.Skipped), lr.Sum.RunID, lr.Sum.Status, gate4(lr))
	if lr.Held == g.BadRows() {
		fmt.Fprintf(w, "lima: quarantined exactly the %s planted bad rows; skipped = the header line\n", num(g.BadRows()))
	} else {
		fmt.Fprintf(w, "lima: note — quarantined %s rows, the generator planted %s bad rows (see %s)\n", num(lr.Held), num(g.BadRows()), lr.Sum.Report)
	}
	for _, d := range ducks {
		if d.Err != nil {
			continue
		}
		switch d.Variant {
		case duckTyped:
			fmt.Fprintf(w, "lima vs duckdb typed COPY (the yardstick: the plan's types by TRY_CAST, zstd Parquet): %.1f× the wall time, %.1f× the CPU time;\n"+
				"  duckdb kept %s of %s rows, a value that does not cast made NULL without a trace (no checks, no exceptions, no reconciliation).\n",
				lr.M.Wall.Seconds()/max(d.M.Wall.Seconds(), 1e-9), lr.M.CPU.Seconds()/max(d.M.CPU.Seconds(), 1e-9), num(d.Res.Rows), num(g.Rows))
		case duckVarchar:
			fmt.Fprintf(w, "duckdb all_varchar does less work: every field stays text (DuckDB cannot parse this dirt) — no typed casting,\n"+
				"  no trailing-minus/thousands/date fixes, no exceptions, no reconciliation; it kept %s of %s rows, untyped.\n", num(d.Res.Rows), num(g.Rows))
		case duckAuto:
			lost := g.Rows - d.Res.Rows
			if lost != 0 {
				fmt.Fprintf(w, "duckdb read_csv_auto (ignore_errors=true) kept %s of %s input rows: %s (%s) dropped without a trace.\n",
					num(d.Res.Rows), num(g.Rows), num(lost), pct(lost))
			} else {
				fmt.Fprintf(w, "duckdb read_csv_auto (ignore_errors=true) kept all %s rows, but only by typing nothing it could not parse.\n", num(g.Rows))
			}
			if untyped := untypedColumns(d.Res.Types); len(untyped) > 0 {
				fmt.Fprintf(w, "  left as VARCHAR though Lima types them: %s (no sum of cost, no date range)\n", strings.Join(untyped, ", "))
			}
			fmt.Fprintf(w, "  its types: %s\n", d.Res.Types)
		}
	}

	if o.duckdb && !duckAvailable {
		fmt.Fprintf(w, "duckdb: skipped — this bench was built without cgo; DuckDB needs CGO_ENABLED=1 and a C/C++ compiler (gcc, g++).\n")
	}

	if len(scale) > 0 {
		fmt.Fprintf(w, "\nmemory vs input size (lima run)\n%11s %9s %9s %11s %12s %7s\n", "rows", "MB in", "seconds", "rows/s", "peak RSS MB", "CPU s")
		for _, r := range scale {
			s := r.M.Wall.Seconds()
			fmt.Fprintf(w, "%11s %9.1f %9.2f %11s %12.1f %7.2f\n",
				num(r.Read), float64(r.WS.Gen.Bytes)/1e6, s, num(int64(float64(r.Read)/s)), r.M.PeakRSSMB(), r.M.CPU.Seconds())
		}
		first, last := scale[0], scale[len(scale)-1]
		fmt.Fprintf(w, "peak RSS ×%.2f for ×%.1f the rows (flat ≈ ×1; proportional = ×%.1f)\n",
			last.M.PeakRSSMB()/max(first.M.PeakRSSMB(), 0.001), float64(last.Read)/float64(max(first.Read, 1)), float64(last.Read)/float64(max(first.Read, 1)))
	}
	fmt.Fprintf(w, "\nMB = 10^6 bytes of CSV input; seconds are wall time of the child process, start to exit; peak RSS is the child's ru_maxrss.\n")
	if o.dir != "" {
		fmt.Fprintf(w, "workspaces kept in %s\n", o.dir)
	}
}

// typedColumns are the columns of the bench plan that Lima loads with a
// non-string type.
var typedColumns = map[string]string{
	"inspection_id": "long", "inspected_on": "date", "lot_qty": "long", "defect_qty": "int", "cost": "decimal(18,3)",
}

// untypedColumns lists the typed columns DuckDB left as VARCHAR, from
// duckResult.Types ("name TYPE, name TYPE").
func untypedColumns(types string) []string {
	var out []string
	for col := range strings.SplitSeq(types, ", ") {
		name, typ, _ := strings.Cut(col, " ")
		if lt, ok := typedColumns[name]; ok && typ == "VARCHAR" {
			out = append(out, name+" ("+lt+" in Lima)")
		}
	}
	return out
}

func gate4(r *limaRun) string {
	var s []string
	for _, t := range r.Sum.Tables {
		s = append(s, t.Reconciliation)
	}
	return strings.Join(s, ",")
}

// num formats n with thousands separators.
func num(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
