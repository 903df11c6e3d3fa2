package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

const adoptUsage = `lima-tui adopt [--plan F] [--confirm PREFIX] [--json]

A lake (the plan's namespace in its warehouse) is owned by the workspace
that first wrote it: a marker .lima-owner.json in the namespace's folder
names it. Every run, replay, compaction and teardown from another workspace
is refused (exit 4). adopt makes this workspace the owner.

Without --confirm: print who owns the lake and change nothing (exit 2).
With --confirm and the project prefix (platform.prefix) typed exactly:
rewrite the marker to this workspace (the previous owner is kept in it as
adopted_from). Adopt only a lake whose old workspace no longer writes it:
from then on that workspace is refused. No table, file or catalog entry is
touched.
`

// cmdAdopt takes the lake's ownership over for this workspace once the
// person typed the project prefix.
func cmdAdopt(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("adopt", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, adoptUsage, "\nFlags:\n"); fs.PrintDefaults() }
	planPath := fs.String("plan", "platform.yaml", "the plan whose lake to adopt")
	confirm := fs.String("confirm", "", "the project prefix, typed to confirm the take-over")
	jsonOut := fs.Bool("json", false, "print the result as JSON on stdout")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui adopt: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	confirmed := wasSet(fs, "confirm")
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	ws := flow.Workspace{Dir: filepath.Dir(*planPath)}
	prefix := ui.Sanitize(p.Platform.Prefix)
	typed := *confirm
	if !confirmed {
		typed = "\x00" // never the prefix: show only
	}
	res, err := flow.Adopt(ctx, ws, p, typed)
	emit := func(status string, code int) int {
		if *jsonOut {
			b, _ := json.MarshalIndent(struct {
				Status   string            `json:"status"` // shown, refused, adopted, unchanged
				ExitCode int               `json:"exit_code"`
				Result   *flow.AdoptResult `json:"result,omitempty"`
			}{status, code, res}, "", "  ")
			fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
		}
		return code
	}
	out := stdout
	if *jsonOut {
		out = stderr
	}
	switch {
	case errors.Is(err, gates.ErrNotConfirmed):
		owner := "nobody: the lake is unclaimed (the first run claims it)"
		if res.Previous != nil {
			owner = gates.OwnerDescription(*res.Previous)
		}
		fmt.Fprintf(out, "The lake %s is owned by %s.\n", ui.Sanitize(res.Location), ui.Sanitize(owner))
		if confirmed {
			fmt.Fprintf(stderr, "lima-tui adopt: the prefix was not typed exactly; nothing was changed.\n")
			fmt.Fprintf(stderr, "Type the project prefix exactly: lima-tui adopt --plan %s --confirm %s\n", ui.Sanitize(*planPath), prefix)
			return emit("refused", exitUsage)
		}
		fmt.Fprintf(stderr, "\nNothing was changed. To make this workspace the owner, type the project prefix:\n  lima-tui adopt --plan %s --confirm %s\n", ui.Sanitize(*planPath), prefix)
		return emit("shown", exitUsage)
	case err != nil:
		code := fail(stderr, err)
		if *jsonOut {
			return emit("failed", code)
		}
		return code
	}
	if !res.Changed {
		fmt.Fprintf(out, "The lake %s is this workspace's already (%s); nothing was changed.\n", ui.Sanitize(res.Location), ui.Sanitize(gates.OwnerDescription(res.Owner)))
		return emit("unchanged", exitOK)
	}
	from := "unclaimed"
	if res.Previous != nil {
		from = "owned by " + gates.OwnerDescription(*res.Previous)
	}
	fmt.Fprintf(out, "The lake %s, %s, is now owned by this workspace: %s.\n", ui.Sanitize(res.Location), ui.Sanitize(from), ui.Sanitize(gates.OwnerDescription(res.Owner)))
	return emit("adopted", exitOK)
}
