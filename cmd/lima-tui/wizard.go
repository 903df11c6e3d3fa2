package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/ui"
	"github.com/lima-lake/lima/wizard"
)

// wizardTerminal reports whether stdin and stdout are terminals; a
// variable so tests can pretend.
var wizardTerminal = func() bool { return isTerminal(os.Stdin) && isTerminal(os.Stdout) }

// cmdWizard starts the interactive wizard: gate 1 one question at a time,
// gate 2 with evidence, gate 3 the data model, the run, the reconciliation
// and the exception browser. It never starts without a terminal; with
// --accessible it asks the same questions as plain line prompts.
func cmdWizard(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("wizard", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan; when it does not exist, gate 1 starts a new one there")
	theme := fs.String("theme", "", "dark, light, projector or mono (default $LIMA_THEME, else dark; NO_COLOR forces mono)")
	accessible := fs.Bool("accessible", false, "ask the gate questions as plain line prompts, without the full-screen wizard")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	return startWizard(ctx, *planPath, *theme, *accessible, os.Stdin, stdout, stderr)
}

// gitUserName is `git config user.name` run in dir ("" when git is
// missing, slow or has no name); a variable so tests can pretend.
var gitUserName = func(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "user.name")
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		cmd.Dir = dir
	}
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// approverName is the name the wizard suggests for its approvals: git's
// user.name, else the OS user; from says which.
func approverName(ctx context.Context, dir string) (name, from string) {
	if n := gitUserName(ctx, dir); n != "" && ui.Sanitize(n) == n {
		return n, "git config user.name"
	}
	return defaultBy(), "the OS user"
}

// startWizard runs the full-screen wizard on planPath, or the line prompts
// of accessible mode.
func startWizard(ctx context.Context, planPath, theme string, accessible bool, stdin io.Reader, stdout, stderr io.Writer) int {
	th, err := ui.ResolveTheme(theme, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "lima-tui: --theme: %s\n", ui.Sanitize(err.Error()))
		return exitUsage
	}
	if accessible {
		return accessibleWizard(ctx, planPath, stdin, stdout, stderr)
	}
	if !wizardTerminal() {
		fmt.Fprintln(stderr, "lima-tui: the wizard needs a terminal (stdin and stdout), and this is not one. The headless commands do the same work:")
		fmt.Fprintln(stderr, "  lima-tui init --source DIR --defaults    gate 1: scope & residency, written to platform.yaml")
		fmt.Fprintln(stderr, "  lima-tui check --plan platform.yaml      gate 2: preconditions")
		fmt.Fprintln(stderr, "  lima-tui run --plan platform.yaml        load, reconcile, report")
		fmt.Fprintln(stderr, "  (or lima-tui --accessible: the gate questions as plain line prompts)")
		return exitUsage
	}
	by, from := approverName(ctx, filepath.Dir(planPath))
	m := wizard.New(wizard.Options{PlanPath: planPath, Theme: th, Deps: wizard.DefaultDeps(), Context: ctx, By: by, ByFrom: from, AskName: true})
	defer m.Close()
	p := tea.NewProgram(m, tea.WithContext(ctx))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fail(stderr, err)
	}
	return exitOK
}
