package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
	"github.com/lima-lake/lima/wizard"
)

// accessibleWizard is `lima-tui --accessible`: the gates as plain line
// prompts for screen readers and dumb terminals, without the full-screen
// UI. Gate 1 asks every question with its recommended answer (enter takes
// it; a number picks an option), gate 2 prints the checks, gate 3 prints
// the data model and asks for approval, then the plan runs. It needs no
// terminal: the answers may come from a pipe.
func accessibleWizard(ctx context.Context, planPath string, stdin io.Reader, stdout, stderr io.Writer) int {
	lines := &lineReader{r: bufio.NewReader(stdin)}
	in := bufio.NewScanner(lines)
	ask := func(prompt string) (string, bool) {
		fmt.Fprint(stdout, prompt)
		if !in.Scan() {
			fmt.Fprintln(stdout)
			return "", false
		}
		return strings.TrimSpace(in.Text()), true
	}
	ended := func() int {
		fmt.Fprintln(stderr, "lima: the input ended; the answers given so far are saved in "+ui.Sanitize(planPath))
		return exitUsage
	}
	fmt.Fprintln(stdout, "Lima wizard, accessible mode: one question a line. Enter takes the recommended answer.")

	// Who approves: asked once, recorded with gate 1, gate 3 (and gate 5).
	suggested, from := approverName(ctx, filepath.Dir(planPath))
	var by string
	for by == "" {
		a, ok := ask(fmt.Sprintf("\nYour name, recorded beside your approvals (enter for %s, from %s): ", ui.Sanitize(suggested), from))
		if !ok {
			return ended()
		}
		if a == "" {
			a = suggested
		}
		if err := wizard.CheckName(a); err != nil {
			fmt.Fprintf(stdout, "Not accepted: %s\n", err)
			continue
		}
		by = a
	}

	// Gate 1.
	var p *plan.Plan
	answers := gates.Answers{}
	if _, err := os.Stat(planPath); err == nil {
		if p, err = flow.LoadPlan(planPath); err != nil {
			return fail(stderr, err)
		}
		answers = gates.AnswersOf(p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(stderr, err)
	}
	fmt.Fprintln(stdout, "\nGate 1: scope and residency.")
	given, ok := accessibleGate1(answers, lines, stdout)
	if !ok {
		return ended()
	}
	if p == nil {
		p = &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Catalog: plan.CatalogSQLite},
			Storage: plan.Storage{Warehouse: plan.DefaultWarehouse}, Tables: map[string]*plan.Table{}, ETL: plan.ETL{Tool: "lima"}}
	}
	// Answers the plan already holds change nothing (the plan, its hash
	// and its approvals stay as recorded).
	if before := gates.AnswersOf(p); !wizard.SameAnswers(before, given) {
		if err := gates.ApplyAnswers(p, given); err != nil {
			return fail(stderr, err)
		}
		if !wizard.SameAnswers(before, gates.AnswersOf(p)) {
			p.Gates.Scope = nil // approved for other answers
		}
		p.Touch(time.Now())
	}
	scopeKept := p.Gates.Scope != nil
	if failed := gates.FailedFindings(gates.Scope(p)); len(failed) > 0 {
		printFindingLines(stdout, failed)
	} else if !scopeKept {
		p.Gates.Scope = &plan.Approval{ApprovedBy: by, ApprovedAt: time.Now().UTC().Format(time.RFC3339), PlanHash: p.Hash()}
	}
	if err := p.Write(planPath); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "\nGate 1 answers saved to %s.\n", ui.Sanitize(planPath))
	if sc := p.Gates.Scope; sc != nil {
		kept := ""
		if scopeKept {
			kept = " (kept: the answers did not change)"
		}
		fmt.Fprintf(stdout, "Scope approved by %s at %s%s.\n", ui.Sanitize(sc.ApprovedBy), ui.Sanitize(sc.ApprovedAt), kept)
	}

	// Gate 2.
	ws := flow.Workspace{Dir: filepath.Dir(planPath)}
	for {
		fmt.Fprintln(stdout, "\nGate 2: preconditions.")
		fs := flow.Preconditions(ctx, ws, p)
		printFindingLines(stdout, fs)
		failed := gates.FailedFindings(fs)
		if len(failed) == 0 {
			fmt.Fprintln(stdout, "Every check passes.")
			break
		}
		fmt.Fprintf(stdout, "%d check(s) failed; nothing will be written until they pass.\n", len(failed))
		a, ok := ask("Apply the fixes, then press enter to check again, or type q to stop: ")
		if !ok {
			return ended()
		}
		if a == "q" {
			return exitPrecondition
		}
	}

	// Gate 3.
	fmt.Fprintln(stdout, "\nGate 3: the data model.")
	var proposal *gates.Proposal
	if len(p.Tables) == 0 {
		pr, err := gates.ProposeDataModel(ctx, p, gates.ProposeOptions{Workspace: ws.Dir})
		if err != nil {
			return fail(stderr, err)
		}
		pr.Apply(p)
		proposal = pr
	}
	fmt.Fprintln(stdout, wizard.ModelText(p, 100))
	if proposal != nil {
		printGate3Findings(stdout, proposal.Findings)
		for _, h := range proposalHeadlines(proposal) {
			fmt.Fprintf(stdout, "⚠ %s\n", ui.Sanitize(h))
		}
	}
	if failed := gates.FailedFindings(gates.ValidateGrain(p)); len(failed) > 0 {
		printFindingLines(stdout, failed)
		fmt.Fprintln(stdout, "The model cannot be approved as it is: edit platform.yaml, then start again.")
		return exitPrecondition
	}
	a, ok := ask("Approve this data model? (enter for yes, n for no): ")
	if !ok {
		return ended()
	}
	if strings.HasPrefix(strings.ToLower(a), "n") {
		fmt.Fprintln(stdout, "Not approved: nothing runs until a data model is approved. Edit platform.yaml, then start again.")
		return exitOK
	}
	if proposal != nil {
		p.DataQualityIssues = append(p.DataQualityIssues, proposal.Issues...)
	}
	if p.ModelApproved() {
		// Approved for this very model: kept as recorded (who and when).
		fmt.Fprintf(stdout, "Data model approved by %s at %s (kept: the model did not change; plan hash %.12s).\n",
			ui.Sanitize(p.Gates.DataModel.ApprovedBy), ui.Sanitize(p.Gates.DataModel.ApprovedAt), p.Gates.DataModel.PlanHash)
	} else {
		now := time.Now().UTC().Format(time.RFC3339)
		p.Gates.DataModel = &plan.Approval{ApprovedBy: by, ApprovedAt: now, PlanHash: p.Hash()}
		p.Platform.Updated = now
		if err := p.Validate(); err != nil {
			return fail(stderr, err)
		}
		if err := p.Write(planPath); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "Data model approved by %s (plan hash %.12s).\n", ui.Sanitize(by), p.Gates.DataModel.PlanHash)
	}

	// The run, gate 4 and the report.
	a, ok = ask("\nRun the load now? (enter for yes, n for no): ")
	if !ok {
		return ended()
	}
	if strings.HasPrefix(strings.ToLower(a), "n") {
		fmt.Fprintf(stdout, "Not run. Later: lima-tui run --plan %s\n", ui.Sanitize(planPath))
		return exitOK
	}
	code := runPlan(ctx, ws, planPath, nil, false, false, stdout, stdout, flow.RunOptions{Force: true})
	if code != exitOK && code != exitReconcile {
		return code
	}

	// Gate 5, only when asked for: the inventory, then the typed prefix.
	a, ok = ask("\nGate 5 (teardown): enter keeps the lake; t shows what a teardown would remove: ")
	if !ok || !strings.EqualFold(a, "t") {
		fmt.Fprintln(stdout, "The lake is kept.")
		return code
	}
	if tp, err := plan.Load(planPath); err == nil {
		p = tp // with the run's records
	}
	o := flow.TeardownOptions{Workspace: ws, Plan: p, PlanPath: planPath}
	inv, err := flow.TeardownInventory(ctx, o)
	if err != nil {
		return fail(stderr, err)
	}
	printPlainLines(stdout, inv.Summary())
	switch {
	case inv.Blocked():
		fmt.Fprintln(stdout, "Teardown is blocked; fix the findings above. Nothing was removed.")
		return code
	case inv.Empty():
		fmt.Fprintln(stdout, "Nothing to tear down.")
		return code
	}
	a, ok = ask(fmt.Sprintf("Type the project prefix %s to remove all of the above (enter keeps it): ", ui.Sanitize(p.Platform.Prefix)))
	if !ok || a == "" {
		fmt.Fprintln(stdout, "Nothing was removed.")
		return code
	}
	_, res, err := flow.Teardown(ctx, o, a)
	switch {
	case errors.Is(err, gates.ErrNotConfirmed):
		fmt.Fprintf(stdout, "%q is not the prefix: nothing was removed.\n", ui.Sanitize(a))
		return exitUsage
	case err != nil && res != nil:
		printPlainLines(stdout, res.Summary())
		return fail(stderr, err)
	case err != nil:
		return fail(stderr, err)
	}
	printPlainLines(stdout, res.Summary())
	if _, err := flow.RecordTeardown(planPath, by, time.Now()); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "Teardown confirmed by %s, recorded in %s.\n", ui.Sanitize(by), ui.Sanitize(planPath))
	return code
}

// printPlainLines prints text line by line, sanitized.
func printPlainLines(w io.Writer, text string) {
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(w, ui.Sanitize(line))
	}
}
