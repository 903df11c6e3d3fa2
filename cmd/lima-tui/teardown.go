package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

const teardownUsage = `lima-tui teardown [--plan F] [--confirm PREFIX] [--by NAME] [--json]

Without --confirm: print the blast radius — every table, snapshot, lake file,
catalog entry, state row and report the plan created — and remove nothing.
With --confirm and the project prefix (platform.prefix) typed exactly: remove
all of it. platform.yaml, README.md, ARCHITECTURE.md and the source data are
never removed.
`

// cmdTeardown is gate 5: show the blast radius, and remove it once the
// person typed the project prefix.
func cmdTeardown(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("teardown", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, teardownUsage, "\nFlags:\n"); fs.PrintDefaults() }
	planPath := fs.String("plan", "platform.yaml", "the plan whose lake to tear down")
	confirm := fs.String("confirm", "", "the project prefix, typed to confirm the removal")
	jsonOut := fs.Bool("json", false, "print the inventory (and what was removed) as JSON on stdout")
	by := personVar(fs, "by", defaultBy(), "who confirms the teardown: a `name`, recorded in platform.yaml as gates.teardown")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui teardown: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	confirmed := wasSet(fs, "confirm")
	// The plan is read strictly but not validated: a plan that no longer
	// validates (a source folder gone) must still be removable.
	p, err := plan.Load(*planPath)
	if err != nil {
		return fail(stderr, fmt.Errorf("%w: %w", flow.ErrUsage, err))
	}
	o := flow.TeardownOptions{Workspace: flow.Workspace{Dir: filepath.Dir(*planPath)}, Plan: p, PlanPath: *planPath}
	prefix := ui.Sanitize(p.Platform.Prefix)

	type output struct {
		Status      string                `json:"status"` // shown, removed, refused, blocked, incomplete, nothing
		ExitCode    int                   `json:"exit_code"`
		ConfirmWith string                `json:"confirm_with"`
		Inventory   *gates.Inventory      `json:"inventory,omitempty"`
		Result      *gates.TeardownResult `json:"result,omitempty"`
	}
	emit := func(out output) int {
		out.ConfirmWith = p.Platform.Prefix
		if *jsonOut {
			b, _ := json.MarshalIndent(out, "", "  ")
			fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
		}
		return out.ExitCode
	}
	printLines := func(w io.Writer, text string) {
		if *jsonOut {
			w = stderr
		}
		for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
			fmt.Fprintln(w, ui.Sanitize(line))
		}
	}

	if !confirmed {
		inv, err := flow.TeardownInventory(ctx, o)
		if err != nil {
			return fail(stderr, err)
		}
		printLines(stdout, inv.Summary())
		switch {
		case inv.Blocked():
			fmt.Fprintln(stderr, "\nlima-tui teardown: blocked; fix the findings above, then look again.")
			return emit(output{Status: "blocked", ExitCode: exitPrecondition, Inventory: inv})
		case inv.Empty():
			fmt.Fprintln(stderr, "\nlima-tui teardown: nothing to tear down.")
			return emit(output{Status: "nothing", ExitCode: exitOK, Inventory: inv})
		}
		fmt.Fprintf(stderr, "\nNothing was removed. To remove all of the above, type the project prefix:\n  lima-tui teardown --plan %s --confirm %s\n",
			ui.Sanitize(*planPath), prefix)
		return emit(output{Status: "shown", ExitCode: exitUsage, Inventory: inv})
	}

	inv, res, err := flow.Teardown(ctx, o, *confirm)
	switch {
	case errors.Is(err, gates.ErrNotConfirmed):
		for _, f := range res.Findings {
			fmt.Fprintf(stderr, "lima-tui teardown: %s\n", ui.Sanitize(f.Detail))
		}
		fmt.Fprintf(stderr, "Type the project prefix exactly: lima-tui teardown --plan %s --confirm %s\n", ui.Sanitize(*planPath), prefix)
		return emit(output{Status: "refused", ExitCode: exitUsage, Inventory: inv, Result: res})
	case errors.Is(err, gates.ErrTeardownBlocked):
		printLines(stdout, inv.Summary())
		for _, f := range res.Findings {
			fmt.Fprintf(stderr, "lima-tui teardown: ✗ %s: %s\n", ui.Sanitize(f.Name), ui.Sanitize(f.Detail))
		}
		fmt.Fprintln(stderr, "Nothing was removed.")
		return emit(output{Status: "blocked", ExitCode: exitPrecondition, Inventory: inv, Result: res})
	case errors.Is(err, gates.ErrTeardownIncomplete):
		printLines(stdout, res.Summary())
		fmt.Fprintln(stderr, "lima-tui teardown: not everything could be removed; fix the problems above and run the same command again.")
		return emit(output{Status: "incomplete", ExitCode: exitError, Inventory: inv, Result: res})
	case err != nil:
		return fail(stderr, err)
	}
	if inv.Empty() {
		printLines(stdout, "Nothing to tear down: no table, namespace, lake file, state or report of "+p.Platform.Prefix+" is left.")
		return emit(output{Status: "nothing", ExitCode: exitOK, Inventory: inv, Result: res})
	}
	printLines(stdout, res.Summary())
	// Gate 5 passes only with a recorded human answer: who typed the prefix.
	if _, err := flow.RecordTeardown(*planPath, *by, time.Now()); err != nil {
		fmt.Fprintf(stderr, "lima-tui teardown: removed, but recording who confirmed it in %s failed: %s\n", ui.Sanitize(*planPath), ui.Sanitize(err.Error()))
		return emit(output{Status: "removed", ExitCode: exitError, Inventory: inv, Result: res})
	}
	return emit(output{Status: "removed", ExitCode: exitOK, Inventory: inv, Result: res})
}
