package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/ui"
	"github.com/lima-lake/lima/wizard"
)

// cmdBrowser is `lima-tui exceptions` without a verb: the interactive
// exception browser. It never starts without a terminal; it then names
// the headless verbs that do the same work and exits 2.
func cmdBrowser(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("exceptions", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan")
	theme := fs.String("theme", "", "dark, light, projector or mono (default $LIMA_THEME, else dark; NO_COLOR forces mono)")
	by := personVar(fs, "by", defaultBy(), "who acts: a `name`, recorded in the history")
	var f ledger.Filter
	fs.StringVar(&f.Owner, "owner", "", "start filtered by owner")
	fs.StringVar(&f.Table, "table", "", "start filtered by table")
	fs.StringVar(&f.Rule, "rule", "", "start filtered by rule")
	fs.StringVar(&f.Status, "status", "", "start filtered by status: open, fixed, replayed, waived")
	fs.BoolVar(&f.Overdue, "overdue", false, "start with the overdue exceptions only")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui exceptions: unexpected argument %q\n\n%s", ui.Sanitize(fs.Arg(0)), exceptionsUsage)
		return exitUsage
	}
	th, err := ui.ResolveTheme(*theme, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "lima-tui: --theme: %s\n", ui.Sanitize(err.Error()))
		return exitUsage
	}
	if !wizardTerminal() {
		fmt.Fprintln(stderr, "lima-tui exceptions: the browser needs a terminal (stdin and stdout), and this is not one. The headless verbs do the same work:")
		fmt.Fprint(stderr, exceptionsUsage)
		return exitUsage
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	ws := flow.Workspace{Dir: filepath.Dir(*planPath)}
	st, err := flow.OpenLedger(ctx, ws, p)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	replay := func(ctx context.Context, table string, ids []int64) (string, error) {
		out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, Table: table, IDs: ids, By: *by})
		if err != nil {
			return "", err
		}
		return out.ReportPath, nil
	}
	m := wizard.NewExceptions(wizard.ExceptionsOptions{Store: st, Theme: th, Filter: f, By: *by,
		Replay: replay, PlanOwners: func() ([]string, error) { return wizard.PlanOwnerNames(p), nil }, Now: time.Now, Context: ctx})
	prog := tea.NewProgram(m, tea.WithContext(ctx))
	if _, err := prog.Run(); err != nil && ctx.Err() == nil {
		return fail(stderr, err)
	}
	return exitOK
}
