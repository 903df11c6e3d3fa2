package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// cmdCheck is gate 2 headless: every precondition of the plan with its
// evidence and, when it fails, the fix. Exit 4 when one fails. It writes
// nothing but a probe file it removes again.
func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlags("check", stderr)
	planPath := fset.String("plan", "platform.yaml", "the plan")
	asJSON := fset.Bool("json", false, "print the findings as JSON")
	timeout := fset.Duration("timeout", gates.DefaultPreconditionTimeout, "how long each check may take")
	if err := fset.Parse(args); err != nil {
		return parseExit(err)
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui check: unexpected argument %q\n", ui.Sanitize(fset.Arg(0)))
		return exitUsage
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "lima-tui check: --timeout must be positive, e.g. 30s")
		return exitUsage
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	ws := flow.Workspace{Dir: filepath.Dir(*planPath)}
	pr := flow.ProbeFor(ws, p)
	pr.Timeout = *timeout
	started := time.Now()
	findings := gates.Preconditions(ctx, p, pr)
	failed := gates.FailedFindings(findings)
	code := exitOK
	if len(failed) > 0 {
		code = exitPrecondition
	}
	if *asJSON {
		status := gates.Pass
		if code != exitOK {
			status = gates.Fail
		}
		b, _ := json.Marshal(struct {
			Plan     string          `json:"plan"`
			Status   string          `json:"status"`
			ExitCode int             `json:"exit_code"`
			Findings []gates.Finding `json:"findings"`
		}{*planPath, status, code, findings})
		fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
		return code
	}
	fmt.Fprintf(stdout, "gate 2 — preconditions of %s\n", ui.Sanitize(*planPath))
	printFindingLines(stdout, findings)
	if code == exitOK {
		fmt.Fprintf(stdout, "✓ every precondition holds (%d checks in %s)\n", len(findings), time.Since(started).Round(time.Millisecond))
	} else {
		fmt.Fprintf(stdout, "✗ %d of %d checks failed; a run would write nothing. Fix them and run lima-tui check again.\n", len(failed), len(findings))
	}
	return code
}
