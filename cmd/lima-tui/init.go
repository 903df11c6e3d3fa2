package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// Where init asks its questions when no flag or --defaults answers them;
// tests replace both.
var (
	initStdin       io.Reader = os.Stdin
	initInteractive           = func() bool { return isTerminal(os.Stdin) && isTerminal(os.Stdout) }
)

// initFlag is the flag that answers a gate 1 question: its id with - for _
// (the sources are --source).
func initFlag(id string) string {
	if id == gates.QSources {
		return "source"
	}
	return strings.ReplaceAll(id, "_", "-")
}

// cmdInit is gate 1 from flags and defaults: it writes a new platform.yaml
// (0600) with the sources and the scope answers and no tables (gate 3,
// lima-tui propose --write, proposes them), then prints the next command.
func cmdInit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("init", stderr)
	var sources multi
	fset.Var(&sources, "source", "the folder (or s3://bucket/prefix) holding the files, env:NAME for a database whose DSN is in the environment variable NAME, or dynamodb:TABLE for a DynamoDB table (dynamodb:* for every table of the region) (repeatable)")
	dir := fset.String("dir", ".", "the workspace folder: platform.yaml is written there")
	useDefaults := fset.Bool("defaults", false, "accept the recommended answer of every question no flag answers")
	answerFlags := map[string]*string{}
	for _, q := range gates.Questions() {
		if q.ID == gates.QSources {
			continue
		}
		help := q.Prompt
		if len(q.Choices) > 0 {
			vals := make([]string, len(q.Choices))
			for i, c := range q.Choices {
				vals[i] = c.Value
			}
			help += " (" + strings.Join(vals, ", ") + ")"
		}
		answerFlags[q.ID] = fset.String(initFlag(q.ID), "", help)
	}
	if err := fset.Parse(args); err != nil {
		return parseExit(err)
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui init: unexpected argument %q\n", ui.Sanitize(fset.Arg(0)))
		return exitUsage
	}
	if len(sources) == 0 {
		fmt.Fprintln(stderr, "lima-tui init: --source is required: the folder holding the files to land, e.g. --source ./exports")
		return exitUsage
	}
	wsDir, err := filepath.Abs(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	planPath := filepath.Join(wsDir, "platform.yaml")
	if _, err := os.Lstat(planPath); err == nil {
		fmt.Fprintf(stderr, "lima-tui init: %s already exists; init never overwrites a plan: edit it, or give another --dir\n", ui.Sanitize(planPath))
		return exitError
	}

	// The sources: folders only in this build, recorded relative to the
	// workspace when inside it.
	var folders []string
	for _, s := range sources {
		u, err := gates.ParseSource(s)
		if err != nil {
			var ae *gates.AnswerError
			if errors.As(err, &ae) {
				fmt.Fprintf(stderr, "lima-tui init: --source: %s\n  fix: %s\n", ui.Sanitize(ae.Problem), ui.Sanitize(ae.Fix))
			} else {
				fmt.Fprintf(stderr, "lima-tui init: --source: %s\n", ui.Sanitize(err.Error()))
			}
			return exitUsage
		}
		if u.Kind == "env" { // a database: its DSN in the variable (init_db.go)
			line, err := initDBSource(u.EnvVar)
			if err != nil {
				var ae *gates.AnswerError
				if errors.As(err, &ae) {
					problem := strings.TrimPrefix(ae.Problem, "env:"+u.EnvVar+": ")
					fmt.Fprintf(stderr, "lima-tui init: --source env:%s: %s\n  fix: %s\n", ui.Sanitize(u.EnvVar), ui.Sanitize(problem), ui.Sanitize(ae.Fix))
				} else {
					fmt.Fprintf(stderr, "lima-tui init: --source env:%s: %s\n", ui.Sanitize(u.EnvVar), ui.Sanitize(err.Error()))
				}
				if errors.As(err, new(dbRefusedError)) {
					return exitPrecondition // the database refused: nothing was written
				}
				return exitUsage
			}
			fmt.Fprintln(stdout, ui.Sanitize(line))
			folders = append(folders, "env:"+u.EnvVar)
			continue
		}
		if u.Kind == "dynamodb" { // a DynamoDB table (init_dynamodb.go)
			line, err := initDynamoSource(u.Table)
			if err != nil {
				fmt.Fprintf(stderr, "lima-tui init: --source %s: %s\n  fix: set AWS_REGION (and AWS_PROFILE or keys); for an emulator AWS_ENDPOINT_URL_DYNAMODB\n", ui.Sanitize(s), ui.Sanitize(err.Error()))
				return exitPrecondition // DynamoDB refused: nothing was written
			}
			fmt.Fprintln(stdout, ui.Sanitize(line))
			folders = append(folders, "dynamodb:"+u.Table)
			continue
		}
		if u.Kind == "s3" {
			n, err := initS3Source(u.Path)
			if err != nil {
				fmt.Fprintf(stderr, "lima-tui init: --source %s: %s\n", ui.Sanitize(s), ui.Sanitize(err.Error()))
				return exitUsage
			}
			fmt.Fprintf(stdout, "%s: %d object(s); gate 3 proposes the tables from them\n", ui.Sanitize(u.Path), n)
			folders = append(folders, u.Path)
			continue
		}
		abs, err := filepath.Abs(u.Path)
		if err != nil {
			return fail(stderr, err)
		}
		fi, err := os.Stat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(stderr, "lima-tui init: --source %s: no such folder\n", ui.Sanitize(s))
			return exitUsage
		case err != nil:
			return fail(stderr, err)
		case !fi.IsDir():
			fmt.Fprintf(stderr, "lima-tui init: --source %s is a file; give the folder holding the files\n", ui.Sanitize(s))
			return exitUsage
		}
		rec := abs
		if rel, err := filepath.Rel(wsDir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			rec = filepath.ToSlash(rel)
		}
		if strings.Contains(rec, ",") {
			fmt.Fprintf(stderr, "lima-tui init: --source %s: a folder name with a comma is not supported; rename or link the folder\n", ui.Sanitize(s))
			return exitUsage
		}
		folders = append(folders, rec)
	}

	a := gates.Answers{gates.QSources: strings.Join(folders, ", ")}
	set := map[string]bool{gates.QSources: true}
	fset.Visit(func(f *flag.Flag) {
		for id, v := range answerFlags {
			if initFlag(id) == f.Name {
				a[id], set[id] = strings.TrimSpace(*v), true
			}
		}
	})
	var missing []gates.Question
	var in *bufio.Reader
	asked := map[string]bool{}
	for _, q := range gates.Questions() {
		if !q.Applies(a) {
			continue
		}
		asked[q.ID] = true
		switch {
		case set[q.ID]:
		case *useDefaults:
			a[q.ID] = q.Recommended(a)
		case initInteractive():
			if in == nil {
				in = bufio.NewReader(initStdin)
			}
			ans, err := askQuestion(in, stdout, q, a)
			if err != nil {
				fmt.Fprintf(stderr, "lima-tui init: %s: %s\n", q.ID, ui.Sanitize(err.Error()))
				return exitUsage
			}
			a[q.ID] = ans
		default:
			missing = append(missing, q)
		}
	}
	for id := range set {
		if !asked[id] {
			fmt.Fprintf(stderr, "lima-tui init: --%s does not apply to these answers (it is asked only for a split-region setup: --split-region yes, and --residency-driver mandate for --zero-egress)\n", initFlag(id))
			return exitUsage
		}
	}
	if len(missing) > 0 {
		fmt.Fprintln(stderr, "lima-tui init: no terminal to ask the gate 1 questions. Pass --defaults to accept the recommended answers, and any of these flags to answer yourself:")
		for _, q := range missing {
			rec := q.Recommended(a)
			switch {
			case rec == "" && q.Multi:
				rec = "(none)"
			case rec == "":
				rec = "(no default)"
			}
			fmt.Fprintf(stderr, "  --%-22s %-14s %s\n", initFlag(q.ID), rec, q.Prompt)
		}
		return exitUsage
	}

	findings := gates.CheckAnswers(a)
	if failed := gates.FailedFindings(findings); len(failed) > 0 {
		fmt.Fprintln(stderr, "lima-tui init: gate 1 (scope & residency) does not pass; nothing was written:")
		printFindingLines(stderr, failed)
		if len(failed) == 1 && failed[0].Name == "residency" {
			return exitPrecondition // valid answers, but the build stops here
		}
		return exitUsage
	}

	now := time.Now()
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Catalog: plan.CatalogSQLite},
		Storage: plan.Storage{Warehouse: plan.DefaultWarehouse}, Tables: map[string]*plan.Table{}, ETL: plan.ETL{Tool: "lima"}}
	if err := gates.ApplyAnswers(p, a); err != nil {
		return fail(stderr, err)
	}
	p.Touch(now)
	if err := p.Validate(); err != nil {
		return fail(stderr, err)
	}
	if err := writeNewPlan(p, planPath); err != nil {
		if errors.Is(err, fs.ErrExist) {
			fmt.Fprintf(stderr, "lima-tui init: %s appeared meanwhile; init never overwrites a plan\n", ui.Sanitize(planPath))
			return exitError
		}
		return fail(stderr, err)
	}

	fmt.Fprintf(stdout, "wrote %s (gate 1 answers; no tables yet)\n", ui.Sanitize(planPath))
	for _, q := range gates.Questions() {
		if asked[q.ID] {
			v := a[q.ID]
			if v == "" {
				v = "(none)"
			}
			fmt.Fprintf(stdout, "  %-18s %s\n", q.ID, ui.Sanitize(v))
		}
	}
	pp := shellQuote(planPath)
	fmt.Fprintf(stdout, "next: lima-tui propose --plan %s --write\n", pp)
	fmt.Fprintf(stdout, "then: lima-tui approve --plan %s --gate scope --by NAME; review the tables, lima-tui approve --plan %s --gate data-model --by NAME; lima-tui run --plan %s\n", pp, pp, pp)
	return exitOK
}

// askQuestion asks q on w and reads the answer from r until it is valid;
// an empty line takes the recommended answer.
func askQuestion(r *bufio.Reader, w io.Writer, q gates.Question, a gates.Answers) (string, error) {
	rec := q.Recommended(a)
	for range 5 {
		fmt.Fprintf(w, "\n%s\n", q.Prompt)
		if q.Help != "" {
			fmt.Fprintf(w, "  %s\n", q.Help)
		}
		if q.Explain != nil {
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(ui.Sanitize(q.Explain(a)), `\n`, "\n  "))
		}
		for _, c := range q.Choices {
			fmt.Fprintf(w, "  %-18s %s\n", c.Value, c.Help)
		}
		if rec != "" {
			fmt.Fprintf(w, "[%s] > ", ui.Sanitize(rec))
		} else {
			fmt.Fprint(w, "> ")
		}
		line, err := r.ReadString('\n')
		if err != nil && (err != io.EOF || line == "") {
			return "", errors.New("no answer (input ended)")
		}
		ans := strings.TrimSpace(line)
		if ans == "" {
			ans = rec
		}
		if err := q.Check(ans, a); err != nil {
			fmt.Fprintf(w, "  ✗ %s\n", ui.Sanitize(err.Error()))
			continue
		}
		return ans, nil
	}
	return "", errors.New("no valid answer after 5 tries")
}

// writeNewPlan writes platform.yaml only if it does not exist yet, never
// half: the plan is written to a temporary file (0600, synced) and linked
// into place, which fails when the name is taken.
func writeNewPlan(p *plan.Plan, path string) error {
	data, err := p.Marshal()
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".platform.yaml.*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// printFindingLines prints findings as ✓/✗/–/! lines with evidence and fix.
func printFindingLines(w io.Writer, fs []gates.Finding) {
	for _, f := range fs {
		mark := "✓"
		switch f.Status {
		case gates.Fail:
			mark = "✗"
		case gates.Skip:
			mark = "–"
		case gates.Warn:
			mark = "!"
		}
		fmt.Fprintf(w, "  %s %s: %s\n", mark, ui.Sanitize(f.Name), ui.Sanitize(f.Detail))
		if f.Fix != "" && f.Status != gates.Pass {
			fmt.Fprintf(w, "      fix: %s\n", ui.Sanitize(f.Fix))
		}
	}
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=", r))
	}) < 0 {
		return ui.Sanitize(s)
	}
	return "'" + ui.Sanitize(strings.ReplaceAll(s, "'", `'\''`)) + "'"
}
