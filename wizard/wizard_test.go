package wizard

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// harness drives a Model the way bubbletea does, without a terminal.
type harness struct {
	t   *testing.T
	m   *Model
	now time.Time
	// late receives what a Cmd returns after collect stopped waiting for it
	// (an I/O result slowed down by a loaded machine); contains delivers
	// those before it gives up.
	late chan tea.Msg
}

func newHarness(t *testing.T, dir string, d Deps) *harness {
	t.Helper()
	return newThemedHarness(t, dir, d, ui.MustTheme(ui.ThemeMono))
}

// newThemedHarness is newHarness in another theme.
func newThemedHarness(t *testing.T, dir string, d Deps, theme ui.Theme) *harness {
	t.Helper()
	h := &harness{t: t, now: t0.Add(10 * time.Second), late: make(chan tea.Msg, 1024)}
	d.Now = func() time.Time { return h.now }
	if d.MachineZone == nil {
		d.MachineZone = func() string { return "UTC" }
	}
	// The folders the tests answer gate 1's first question with (data is
	// the recommended answer): gate 1 refuses a folder that is missing.
	for _, f := range []string{"data", "data/erp"} {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if d.Preconditions == nil {
		d.Preconditions = func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding { return nil }
	}
	if d.Run == nil {
		d.Run = func(ctx context.Context, _ flow.RunOptions) (*flow.Outcome, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	h.m = New(Options{PlanPath: filepath.Join(dir, "platform.yaml"), Theme: theme, Deps: d})
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.feed(h.m.Init())
	return h
}

// send delivers one message and feeds back what its Cmds return.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.feed(cmd)
}

// feed runs a Cmd (and the Cmds of a batch) and delivers the results that
// arrive within a short time: I/O results come back, timers (spinner and
// poll ticks, cursor blinks) are dropped.
func (h *harness) feed(cmd tea.Cmd) {
	h.t.Helper()
	for _, msg := range collectLate(cmd, h.late) {
		h.deliver(msg)
	}
}

// deliver sends the results of I/O; timer messages (spinner and poll
// ticks, cursor blinks) are dropped.
func (h *harness) deliver(msg tea.Msg) {
	h.t.Helper()
	switch msg.(type) {
	case sessionMsg, savedMsg, sourceCheckedMsg, planLoadedMsg, checksMsg, runDoneMsg, gate3LoadedMsg, gate3SavedMsg,
		ledgerMsg, reconCountsMsg, gate5InvMsg, gate5DoneMsg, bPageMsg, bCountMsg, bDetailMsg, bActionMsg, bOwnersMsg, lastRunMsg:
		h.send(msg)
	}
}

// drainLate delivers the late results that arrive within wait.
func (h *harness) drainLate(wait time.Duration) {
	h.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case msg := <-h.late:
			h.deliver(msg)
		case <-deadline:
			return
		}
	}
}

func collect(cmd tea.Cmd) []tea.Msg { return collectLate(cmd, nil) }

// collectLate runs a Cmd (and the Cmds of a batch) and returns what they
// return within a second; a result that comes later goes to late (when
// not nil) instead of being lost.
func collectLate(cmd tea.Cmd, late chan<- tea.Msg) []tea.Msg {
	if cmd == nil {
		return nil
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	select {
	case msg := <-ch:
		if b, ok := msg.(tea.BatchMsg); ok {
			var out []tea.Msg
			for _, c := range b {
				out = append(out, collectLate(c, late)...)
			}
			return out
		}
		return []tea.Msg{msg}
	case <-time.After(time.Second):
		if late != nil {
			go func() {
				msg := <-ch
				if b, ok := msg.(tea.BatchMsg); ok {
					for _, c := range b {
						for _, m := range collectLate(c, late) {
							late <- m
						}
					}
					return
				}
				late <- msg
			}()
		}
		return nil
	}
}

func (h *harness) key(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "ctrl+c", "ctrl+d", "ctrl+u":
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: rune(k[0]), Text: k}
}

// screen is the plain text on the screen, trailing blanks removed.
func (h *harness) screen() string {
	lines := strings.Split(ansi.Strip(h.m.Render()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// golden compares the screen with testdata/name_WxH.txt at every golden
// size.
func (h *harness) golden(name string) {
	h.t.Helper()
	compareGolden(h.t, name, func(m tea.Msg) { h.send(m) }, h.screen)
}

func (h *harness) contains(want ...string) {
	h.t.Helper()
	s := h.screen()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(s, w)
		}
		if !missing {
			return
		}
		h.drainLate(100 * time.Millisecond) // a slow I/O result may still change the screen
		s = h.screen()
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			h.t.Errorf("screen lacks %q:\n%s", w, s)
		}
	}
}

func TestGate1Questions(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, Deps{})
	h.golden("gate1_sources")

	// q is text while typing; the field shows it.
	h.key("ctrl+u")
	h.typeText("q")
	h.contains("> q")
	h.key("ctrl+u")
	h.typeText("data/erp")
	h.key("enter")
	h.contains("Which prefix", "> erp", "saved to platform.yaml")

	// An answer that fails its question says what is wrong and what to answer.
	h.key("ctrl+u")
	h.typeText("Bad Prefix")
	h.key("enter")
	h.contains(`"Bad Prefix" is not allowed`, "fix: answer 1 to 40 characters")
	h.key("ctrl+u")
	h.typeText("acme")
	h.key("enter")
	h.key("down")
	h.golden("gate1_region")

	// Back with esc and shift+tab, forward again.
	h.key("esc")
	h.contains("Which prefix", "> acme")
	h.key("shift+tab")
	h.contains("Which folder, S3 prefix or database", "> data/erp")
	h.key("enter", "enter")
	h.contains("In which region")

	p, err := plan.Load(filepath.Join(dir, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Platform.Prefix != "acme" || p.Sources["erp"] == nil || p.Sources["erp"].Path != "data/erp" {
		t.Errorf("plan not saved as answered: prefix %q, sources %v", p.Platform.Prefix, p.Sources)
	}

	// A new session resumes at the first question not answered.
	h2 := newHarness(t, dir, Deps{})
	h2.contains("In which region", "question 3 of 14")

	// The defaults for the rest, then the summary.
	h.key("d")
	h.golden("gate1_done")
	p, err = plan.Load(filepath.Join(dir, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Platform.Region != "local" || p.Schedule.Cron != "0 2 * * *" {
		t.Errorf("defaults not saved: %+v %+v", p.Platform, p.Schedule)
	}
	h3 := newHarness(t, dir, Deps{})
	h3.contains("all questions answered")
}

func TestGate1SplitRegionNeedsAPerson(t *testing.T) {
	h := newHarness(t, t.TempDir(), Deps{})
	// Walk to split_region with the defaults of the first questions.
	for i := 0; i < 13; i++ {
		if strings.Contains(h.screen(), "another region than the storage") {
			break
		}
		h.key("enter")
	}
	h.contains("another region than the storage")
	h.key("down", "enter")
	h.contains("In which region is the catalog?")
	h.typeText("")
	h.key("ctrl+u")
	h.typeText("eu-central-1")
	h.key("enter")
	h.key("ctrl+u")
	h.typeText("eu-west-1")
	h.key("enter")
	h.key("d")
	h.contains("Why must the data stay", "this question has no default")
}

func gate2Findings() []gates.Finding {
	return []gates.Finding{
		{Name: "source erp", Status: gates.Pass, Detail: "listed folder data/erp: 7 file(s), 0 folder(s)"},
		{Name: "table suppliers", Status: gates.Fail, Detail: "\"vendor\x1b[31m\r\u202eevil.csv\" matched no file in data/erp",
			Fix: "correct tables.suppliers.source.files[0] in platform.yaml"},
		{Name: "disk space", Status: gates.Warn, Detail: "warehouse lake: 1.0 GiB free"},
		{Name: "clock", Status: gates.Pass, Detail: "system time 2026-11-30T09:00:00Z"},
	}
}

// toGate2 answers gate 1 with the defaults and enters gate 2.
func toGate2(t *testing.T, d Deps) *harness {
	h := newHarness(t, t.TempDir(), d)
	h.key("ctrl+d")
	h.contains("all questions answered")
	h.key("enter")
	return h
}

func TestGate2Checks(t *testing.T) {
	var calls atomic.Int32
	block := make(chan struct{})
	d := Deps{Preconditions: func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding {
		if calls.Add(1) == 2 {
			<-block // the re-run stays running for the screen below
		}
		return gate2Findings()
	}}
	h := toGate2(t, d)
	h.golden("gate2_failed")
	// Untrusted text shows as visible escapes.
	h.contains(`vendor\e[31m\r\u202eevil.csv`, "fix: correct tables.suppliers")
	if strings.Contains(h.m.Render(), "\x1b[31m") || strings.Contains(h.m.Render(), "\u202e") {
		t.Error("raw ESC or BiDi override reached the screen")
	}
	// enter is disabled while a check fails.
	h.key("enter")
	h.contains("Gate 2 · preconditions")
	h.key("?")
	h.contains("enter continue to gate 3 (disabled: 1 check(s) failed")
	h.key("esc")
	// r re-runs: spinners until the findings come.
	h.key("r")
	h.golden("gate2_running")
	close(block)
	if n := calls.Load(); n != 2 {
		t.Errorf("Preconditions ran %d times, want 2", n)
	}
	h.key("esc")
	h.contains("Gate 1 · scope & residency")
}

func TestRunScreen(t *testing.T) {
	started := make(chan context.Context, 1)
	release := make(chan struct{})
	d := Deps{
		Preconditions: func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding {
			return []gates.Finding{{Name: "clock", Status: gates.Pass, Detail: "ok"}}
		},
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			started <- ctx
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
			}
			return &flow.Outcome{ReportPath: "reports/r1/report.json", Report: &reports.Report{Status: "ok"},
				Result: &run.Result{RunID: "r1", Tables: []*run.TableResult{
					{Name: "suppliers", Status: "loaded", RowsRead: 1200, RowsLoaded: 1190, RowsQuarantined: 8, RowsSkipped: 2},
					{Name: "inspections", Status: "loaded", RowsRead: 50000, RowsLoaded: 49990, RowsQuarantined: 10},
				}}}, nil
		},
	}
	h := toRun(t, d)
	h.golden("run_ready")
	h.key("enter")
	ctx := <-started

	// Fake live counters, polled by the tick.
	a := &run.TableProgress{Table: "suppliers"}
	a.MarkStarted(t0)
	a.Phase.Store("loading")
	a.RowsRead.Store(1200)
	a.Loaded.Store(1190)
	a.Quarantined.Store(8)
	a.Bytes.Store(2_500_000)
	a.TotalBytes.Store(5_000_000)
	b := &run.TableProgress{Table: "inspections\x1b[2J"}
	b.MarkStarted(t0.Add(5 * time.Second))
	b.Phase.Store("listing")
	b.RowsRead.Store(30000)
	b.Bytes.Store(10_000_000)
	h.m.run.snap = func() []*run.TableProgress { return []*run.TableProgress{a, b} }
	h.send(runTickMsg{gen: h.m.run.gen})
	h.golden("run_progress")
	h.contains(`inspections\e[2J`, "[#####")

	// ctrl+c asks; n keeps running; ctrl+c, y cancels the run's context.
	h.key("ctrl+c")
	h.contains("Cancel the run?")
	h.key("q")
	h.contains("Cancel the run?")
	h.key("n")
	if ctx.Err() != nil {
		t.Fatal("n cancelled the run")
	}
	h.key("ctrl+c", "y")
	if ctx.Err() == nil {
		t.Fatal("y did not cancel the run's context")
	}
	// The fake run returns ctx.Err(); deliver it.
	h.send(runDoneMsg{gen: h.m.run.gen, err: context.Canceled})
	h.contains("the run was cancelled")

	// Run again to completion.
	h.key("r")
	<-started
	// The engine ends the load; flow's gate 4 re-read is its last word.
	a.MarkFinished(t0.Add(10 * time.Second))
	a.Phase.Store(flow.PhaseReconciled)
	h.m.run.snap = func() []*run.TableProgress { return []*run.TableProgress{a} }
	close(release)
	// The run's result arrives after feed stopped waiting for it; deliver
	// the outcome as bubbletea would.
	if h.m.run.state != rsDone {
		h.send(runDoneMsg{gen: h.m.run.gen, outcome: &flow.Outcome{ReportPath: "reports/r1/report.json", Report: &reports.Report{Status: "ok"},
			Result: &run.Result{RunID: "r1", Tables: []*run.TableResult{
				{Name: "suppliers", Status: "loaded", RowsRead: 1200, RowsLoaded: 1190, RowsQuarantined: 8, RowsSkipped: 2},
				{Name: "inspections", Status: "loaded", RowsRead: 50000, RowsLoaded: 49990, RowsQuarantined: 5},
			}}}})
	}
	h.golden("run_done")
	h.contains("report: reports/r1/report.json", "✓ suppliers: 1,200 = 1,190 + 8 + 2", "✗ inspections: 50,000 ≠ 49,990 + 5 + 0")
}

func TestPollIsRateLimited(t *testing.T) {
	if PollInterval < 100*time.Millisecond {
		t.Errorf("PollInterval %s: at most 10 polls a second", PollInterval)
	}
}

func TestTooSmallStillQuits(t *testing.T) {
	h := newHarness(t, t.TempDir(), Deps{})
	h.send(tea.WindowSizeMsg{Width: 50, Height: 14})
	h.contains("terminal too small", "50×14; need 60×15", "q or ctrl+c quits")
	_, cmd := h.m.Update(keyMsg("q"))
	if cmd == nil {
		t.Fatal("q does nothing on the too-small screen")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q should quit on the too-small screen")
	}
}

func TestCtrlCQuitsOutsideARun(t *testing.T) {
	h := newHarness(t, t.TempDir(), Deps{})
	_, cmd := h.m.Update(keyMsg("ctrl+c"))
	if cmd == nil {
		t.Fatal("ctrl+c does nothing")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("ctrl+c should quit")
	}
}

func TestHelpScreen(t *testing.T) {
	h := newHarness(t, t.TempDir(), Deps{})
	h.key("enter") // sources: default
	h.key("enter") // prefix
	h.key("?")
	h.contains("Keys", "space tick (disabled: one answer only", "q quit")
	h.key("?")
	h.contains("In which region")
}

func TestGate1OtherAnswerIsTypedAndKept(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, Deps{})
	h.key("enter", "enter") // sources, prefix: their recommended answers
	h.contains("In which region", "> local")
	// other… is the last option; it opens a text field where q is text.
	h.key("up", "enter")
	if !h.m.typing() {
		t.Fatal("other… did not open a text field")
	}
	h.typeText("q")
	h.key("enter")
	h.contains(`"q" is not a region`, "fix: answer local")
	h.key("esc")
	if h.m.typing() {
		t.Fatal("esc did not go back to the list")
	}
	h.contains("> other…")
	h.key("enter")
	h.key("ctrl+u")
	h.typeText("eu-north-1")
	h.key("enter")
	h.contains("Which environment")
	p, err := plan.Load(filepath.Join(dir, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Platform.Region != "eu-north-1" {
		t.Errorf("region %q saved, want eu-north-1", p.Platform.Region)
	}
	// Back at the question, the typed answer is an option of its own,
	// under the cursor: enter keeps it.
	h.key("shift+tab")
	h.contains("> eu-north-1", "the recorded answer", "other…")
	h.key("enter")
	h.contains("Which environment")
}

func TestGate1QQuitsInAListNotInAField(t *testing.T) {
	h := newHarness(t, t.TempDir(), Deps{})
	// In the text field of the first question q is text.
	_, cmd := h.m.Update(keyMsg("q"))
	if cmd != nil {
		if _, quit := cmd().(tea.QuitMsg); quit {
			t.Fatal("q quit while typing")
		}
	}
	h.contains("> dataq")
	h.key("ctrl+u")
	h.typeText("data")
	h.key("enter", "enter") // sources, prefix
	h.contains("In which region")
	_, cmd = h.m.Update(keyMsg("q"))
	if cmd == nil {
		t.Fatal("q does nothing in a list")
	}
	if _, quit := cmd().(tea.QuitMsg); !quit {
		t.Error("q should quit in a list")
	}
}

// A stray q on the "terminal too small" screen never ends a running load:
// the run goes on (nothing left half-done in the state store); ctrl+c
// still asks, and y or n answer on the small screen.
func TestTooSmallKeepsARunGoing(t *testing.T) {
	started := make(chan context.Context, 1)
	d := Deps{
		Preconditions: func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding {
			return []gates.Finding{{Name: "clock", Status: gates.Pass, Detail: "ok"}}
		},
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			started <- ctx
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	h := toRun(t, d)
	h.key("enter")
	ctx := <-started
	h.send(tea.WindowSizeMsg{Width: 50, Height: 14})
	h.contains("terminal too small", "the run goes on")
	if _, cmd := h.m.Update(keyMsg("q")); cmd != nil {
		if _, quit := cmd().(tea.QuitMsg); quit {
			t.Fatal("q quit the wizard while the run was going")
		}
	}
	if ctx.Err() != nil || !h.m.run.running() {
		t.Fatal("q stopped the run")
	}
	// q asks, as ctrl+c does; n keeps the run.
	h.contains("Cancel the run? y cancels it")
	h.key("n")
	if ctx.Err() != nil {
		t.Fatal("n after q cancelled the run")
	}
	h.contains("the run goes on")
	h.key("ctrl+c")
	h.contains("Cancel the run? y cancels it")
	h.key("n")
	if ctx.Err() != nil {
		t.Fatal("n cancelled the run")
	}
	h.contains("the run goes on")
	h.key("ctrl+c", "y")
	if ctx.Err() == nil {
		t.Fatal("y on the small screen did not cancel the run")
	}
}
