// Package wizard is the bubbletea root model of lima-tui: the gate state
// machine, asked one question at a time. The root owns the frame, a route
// stack of screens and the dispatch of keys to the top screen's bindings;
// each screen implements the screen contract below. Update does no I/O:
// loading and saving the plan, gate 2 and the run happen in tea.Cmds.
package wizard

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

// Deps are the wizard's calls into the engine; tests replace them.
type Deps struct {
	Preconditions func(ctx context.Context, ws flow.Workspace, p *plan.Plan) []gates.Finding
	Run           func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error)
	Now           func() time.Time
	// Propose is gate 3's proposal for a plan without tables.
	Propose func(ctx context.Context, ws flow.Workspace, p *plan.Plan) (*gates.Proposal, error)
	// OpenLedger opens the exception ledger for the reconciliation and
	// exception browsers.
	OpenLedger func(ctx context.Context, ws flow.Workspace, p *plan.Plan) (ledger.Store, error)
	// TeardownInventory and Teardown are gate 5.
	TeardownInventory func(ctx context.Context, o flow.TeardownOptions) (*gates.Inventory, error)
	Teardown          func(ctx context.Context, o flow.TeardownOptions, confirm string) (*gates.Inventory, *gates.TeardownResult, error)
	// Replay replays the fixed exceptions of a table ("" for all), or only
	// the exceptions ids when given, from the exception browser and
	// returns the report's path.
	Replay func(ctx context.Context, ws flow.Workspace, planPath, table string, ids []int64, by string) (string, error)
	// MachineZone is the machine's IANA time zone, the schedule's
	// recommended zone (default MachineZone).
	MachineZone func() string
	// Evolution compares an approved model with the tables already in the
	// lake (flow.CheckEvolution): a change their data cannot follow is
	// refused at approval, as `lima-tui approve` refuses it.
	Evolution func(ctx context.Context, ws flow.Workspace, p *plan.Plan) ([]gates.Finding, error)
	// Lake lists the tables already in the lake (flow.LakeTables), which
	// gate 3's renames need: a table in the lake keeps its name, a column
	// of one is renamed by schema evolution.
	Lake func(ctx context.Context, ws flow.Workspace, p *plan.Plan) (gates.Lake, error)
}

// DefaultDeps call flow.
func DefaultDeps() Deps {
	return Deps{Preconditions: flow.Preconditions, Run: flow.Run, Now: time.Now, Propose: proposeModel, MachineZone: MachineZone,
		OpenLedger: flow.OpenLedger, Lake: flow.LakeTables, TeardownInventory: flow.TeardownInventory, Teardown: flow.Teardown, Replay: replay,
		Evolution: func(ctx context.Context, ws flow.Workspace, p *plan.Plan) ([]gates.Finding, error) {
			return flow.CheckEvolution(ctx, ws, p, nil)
		}}
}

// replay is flow.Replay of the plan at planPath.
func replay(ctx context.Context, ws flow.Workspace, planPath, table string, ids []int64, by string) (string, error) {
	p, err := flow.LoadPlan(planPath)
	if err != nil {
		return "", err
	}
	out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, Table: table, IDs: ids, By: by})
	if err != nil {
		return "", err
	}
	return out.ReportPath, nil
}

// proposeModel is gates.ProposeDataModel over the workspace.
func proposeModel(ctx context.Context, ws flow.Workspace, p *plan.Plan) (*gates.Proposal, error) {
	return gates.ProposeDataModel(ctx, p, gates.ProposeOptions{Workspace: ws.Dir})
}

// Options start the wizard.
type Options struct {
	// PlanPath is platform.yaml; when it does not exist, gate 1 starts a
	// new plan there.
	PlanPath string
	Theme    ui.Theme
	Deps     Deps
	// Context is the parent of the run's context (default Background).
	Context context.Context
	// By is who approves the gates (scope, data model, teardown) and acts
	// in the exception browser (default "lima-tui"). With AskName it is
	// only the suggestion of the name asked when the wizard starts.
	By string
	// ByFrom says where By came from (git config user.name, the OS user);
	// shown beside the suggestion.
	ByFrom string
	// AskName asks the approver's name once, before gate 1, starting from
	// By (lima-tui does; tests and embedders that know the name do not).
	AskName bool
}

// app is the context every screen shares, injected once when it is made:
// the theme, the engine's calls, the workspace, who approves, the opened
// ledger, and the route stack. Screens go forward with push and back with
// pop; the root draws the top of the stack.
type app struct {
	theme    ui.Theme
	deps     Deps
	ctx      context.Context
	planPath string
	ws       flow.Workspace
	saver    *saver
	by       string
	w, h     int

	stack []screen
	who   *whoScreen
	gate1 *gate1Screen
	gate2 *gate2Screen
	run   *runScreen
	gate3 *gate3Screen
	recon *reconScreen
	gate5 *gate5Screen
	exc   *Browser

	// session is the loaded session gate 1 starts from once the
	// approver's name is given.
	session *sessionMsg
	store   ledger.Store
	// lastReport is the newest run's report.json when the wizard started
	// ("" none).
	lastReport string
	// excPending: the exception queue opens with this filter once the
	// ledger is open.
	excPending *ledger.Filter
}

// top is the screen shown (nil while the session loads).
func (a *app) top() screen {
	if len(a.stack) == 0 {
		return nil
	}
	return a.stack[len(a.stack)-1]
}

// shown reports whether s is the screen shown.
func (a *app) shown(s screen) bool { return len(a.stack) > 0 && a.top() == s }

func (a *app) push(s screen) { a.stack = append(a.stack, s) }

// pop goes back to the screen below; the first screen stays.
func (a *app) pop() {
	if len(a.stack) > 1 {
		a.stack = a.stack[:len(a.stack)-1]
	}
}

// Model is the root model: the frame (title, the top screen, the key
// line), the help overlay and the keys every screen shares.
type Model struct {
	*app
	// quitArmed: q was pressed once over gate 3's unsaved edits; a second
	// q quits and drops them, any other key disarms.
	quitArmed bool
	keys      ui.GlobalKeys
	showHelp  bool
	loadErr   string
	// refused is the last disabled binding pressed and why (shown on the
	// key line until the next key).
	refused string
}

// New returns the root model; Init loads the session from PlanPath.
func New(o Options) *Model {
	if o.Deps.Now == nil {
		o.Deps.Now = time.Now
	}
	if o.Deps.Propose == nil {
		o.Deps.Propose = proposeModel
	}
	if o.Deps.Lake == nil {
		o.Deps.Lake = flow.LakeTables
	}
	if o.Deps.MachineZone == nil {
		o.Deps.MachineZone = MachineZone
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Theme.Name == "" {
		o.Theme = ui.MustTheme(ui.ThemeDark)
	}
	if o.PlanPath == "" {
		o.PlanPath = "platform.yaml"
	}
	abs, err := filepath.Abs(o.PlanPath)
	if err == nil {
		o.PlanPath = abs
	}
	a := &app{theme: o.Theme, deps: o.Deps, ctx: o.Context, planPath: o.PlanPath,
		ws: flow.Workspace{Dir: filepath.Dir(o.PlanPath)}, w: 100, h: 30, by: o.By}
	if a.by == "" {
		a.by = "lima-tui"
	}
	a.saver = &saver{planPath: o.PlanPath, now: o.Deps.Now}
	a.gate1 = newGate1(a)
	a.gate1.zone = o.Deps.MachineZone()
	a.gate1.qs = withDefaults(a.gate1.qs, map[string]string{gates.QTimezone: a.gate1.zone})
	a.saver.qs = a.gate1.qs
	a.gate1.dir = a.ws.Dir
	a.gate2 = newGate2(a)
	a.run = newRunScreen(a)
	a.gate3 = newGate3(a)
	a.recon = newRecon(a)
	a.gate5 = newGate5(a)
	a.gate1.by, a.gate5.by = &a.by, &a.by
	if o.AskName {
		// The name is asked before gate 1, starting from By.
		a.who = newWho(a, o.By, o.ByFrom)
	}
	return &Model{app: a, keys: ui.DefaultGlobalKeys()}
}

// Init loads the session (the plan and the wizard's progress).
func (m *Model) Init() tea.Cmd { return loadSession(m.planPath) }

// screen is the contract every screen implements, the exception browser
// included (as Charm's crush has it): its size, its key map, its update
// and its view. Keys are the screen's only way in for a key press: the
// root dispatches a key to the first of the top screen's bindings (then
// the shared ones) that has it — a disabled one says its reason instead
// of acting — and the key line and the help are drawn from the same
// list. Update gets every other message and, while the screen is typing
// into a field, the keys no binding claims (they are text).
type screen interface {
	SetSize(w, h int)
	Keys() []ui.Binding
	Typing() bool
	Update(msg tea.Msg) tea.Cmd
	Render() string
}

// fullScreen is a screen that draws the whole terminal, its own title and
// key line included, and holds every key (the exception browser, which
// is also a program of its own: lima-tui exceptions).
type fullScreen interface {
	screen
	fullScreen()
}

// refuser is a screen that says itself, in its own message line, why a
// disabled binding was pressed.
type refuser interface {
	Refuse(b ui.Binding)
}

// owns reports whether b is one of the screen's own bindings (not one the
// root shares).
func owns(s screen, b ui.Binding) bool {
	return slices.ContainsFunc(s.Keys(), func(k ui.Binding) bool { return k.Help() == b.Help() })
}

// dispatch is a key press on bindings: the first binding with the key
// runs its handler or, disabled, is returned as refused. While typing, a
// printable key of a disabled binding is text: it is not claimed.
func dispatch(bs []ui.Binding, typing bool, msg tea.KeyPressMsg) (cmd tea.Cmd, refused *ui.Binding, claimed bool) {
	for _, b := range bs {
		if !b.Pressed(msg) {
			continue
		}
		switch {
		case b.Enabled() && b.Run != nil:
			return b.Run(msg), nil, true
		case b.Enabled():
			return nil, nil, true // a binding without a handler does nothing (TestKeysDoWhatTheKeyLineAndHelpSay fails on it)
		case typing && msg.Text != "":
			continue
		}
		return nil, &b, true
	}
	return nil, nil, false
}

func (m *Model) typing() bool {
	s := m.top()
	return s != nil && m.loadErr == "" && s.Typing()
}

func (m *Model) screens() []screen {
	out := []screen{m.gate1, m.gate2, m.run, m.gate3, m.recon, m.gate5}
	if m.who != nil {
		out = append(out, m.who)
	}
	return out
}

func (m *Model) setSize(w, h int) {
	m.w, m.h = w, h
	bw, bh := m.bodySize()
	for _, s := range m.screens() {
		s.SetSize(bw, bh)
	}
}

// bodySize is the screens' area: the frame takes a title and a help line
// (and blank lines around them in the full layout).
// helpLinesFull is how many lines the key line has at full size.
const helpLinesFull = 2

func (m *Model) bodySize() (int, int) {
	if ui.Classify(m.w, m.h) == ui.SizeFull {
		return m.w - 2, m.h - 3 - (helpLinesFull - 1) // the key line may take two
	}
	return m.w, m.h - 2
}

// Update sends a key to the bindings of what is shown (see keyBindings),
// and every other message to every screen: results, ticks and saves go
// to the screen they belong to, whichever is shown.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		if m.exc != nil {
			return m, m.exc.Update(msg)
		}
		return m, nil
	case lastRunMsg:
		if msg.err != nil {
			m.gate1.status, m.gate1.statusOK = "the last run's report cannot be read: "+ui.Sanitize(msg.err.Error()), ui.StatusFailed
			return m, nil
		}
		m.recon.Show(msg.report)
		m.recon.past = true
		m.push(m.recon)
		if msg.queue {
			if m.store == nil {
				return m, m.openLedgerThen(ledger.Filter{})
			}
			return m, m.openExceptions(ledger.Filter{})
		}
		return m, m.openLedger()
	case sessionMsg:
		m.lastReport = msg.lastReport
		if msg.err != nil {
			m.loadErr = msg.err.Error()
			m.stack = []screen{m.gate1}
			return m, nil
		}
		if m.who != nil {
			m.session, m.stack = &msg, []screen{m.who}
			return m, m.who.Start()
		}
		m.stack = []screen{m.gate1}
		cmd := m.gate1.Start(msg)
		m.saver.qs = m.gate1.qs
		return m, cmd
	case ledgerMsg:
		if msg.err != nil {
			// Said on the key line, not dropped: the queue cannot open.
			m.excPending = nil
			m.refused = "the exception queue cannot open: " + msg.err.Error()
			return m, nil
		}
		if m.store != nil {
			m.store.Close()
		}
		m.store = msg.st
		if f := m.excPending; f != nil {
			m.excPending = nil
			return m, m.openExceptions(*f)
		}
		if m.shown(m.recon) && m.recon.drill && !m.recon.tornDown {
			if tr, ok := m.recon.table(); ok {
				return m, countsCmd(m.ctx, m.store, tr)
			}
		}
		return m, nil
	case tea.KeyPressMsg:
		armed := m.quitArmed
		m.quitArmed, m.refused = false, ""
		cmd, refused, claimed := dispatch(m.keyBindings(armed), m.typing(), msg)
		switch {
		case refused != nil:
			if r, ok := m.top().(refuser); ok && owns(m.top(), *refused) {
				r.Refuse(*refused)
			} else {
				m.refused = refused.Help().Key + ": " + refused.Reason
			}
		case !claimed && m.typing() && !m.showHelp && ui.Classify(m.w, m.h) != ui.SizeTooSmall:
			cmd = m.top().Update(msg)
		}
		return m, cmd
	}
	var cmds []tea.Cmd
	for _, s := range m.screens() {
		cmds = append(cmds, s.Update(msg))
	}
	if m.exc != nil {
		cmds = append(cmds, m.exc.Update(msg))
	}
	return m, tea.Batch(cmds...)
}

// keyBindings are the bindings a key press is dispatched to: the top
// screen's and the shared ones (help, quit) — or, on the help overlay and
// the "too small" screen, theirs. armed: q was pressed once over gate 3's
// unsaved edits.
func (m *Model) keyBindings(armed bool) []ui.Binding {
	top := m.top()
	running := m.shown(m.run) && m.run.running()
	interrupt := m.keys.Interrupt.Quiet().Act(func() tea.Cmd {
		if running {
			return m.run.AskCancel()
		}
		return tea.Quit
	})
	if ui.Classify(m.w, m.h) == ui.SizeTooSmall {
		// Nothing can be typed here, so q quits — unless a run is going:
		// it goes on, and q (like ctrl+c) asks first; y or n answers
		// "Cancel the run?", shown small.
		if running && m.run.asking() {
			return m.run.Keys()
		}
		quit := m.keys.Quit.Act(func() tea.Cmd {
			if running {
				return m.run.AskCancel()
			}
			return tea.Quit
		})
		return []ui.Binding{quit, interrupt}
	}
	if fs, ok := top.(fullScreen); ok {
		return fs.Keys()
	}
	g := m.globals(armed)
	if m.showHelp {
		closeHelp := func() tea.Cmd { m.showHelp = false; return nil }
		return []ui.Binding{g.Help.Act(closeHelp), ui.NewBinding("esc", "close the help", "esc").Quiet().Act(closeHelp), g.Quit, interrupt}
	}
	var out []ui.Binding
	if top != nil && m.loadErr == "" {
		out = top.Keys()
	}
	return append(out, g.Help, g.Filter, g.Quit, interrupt)
}

// globals are the keys every framed screen shares, with their handlers.
func (m *Model) globals(armed bool) ui.GlobalKeys {
	g := m.keys.Typing(m.typing())
	g.Help = g.Help.Act(func() tea.Cmd { m.showHelp = true; return nil })
	switch {
	case m.loadErr != "":
		g.Help = g.Help.Disable("the plan cannot be opened")
	case m.top() == nil:
		g.Help = g.Help.Disable("the plan is being read")
	}
	g.Quit = g.Quit.Act(func() tea.Cmd {
		if n := len(m.gate3.changes()); n > 0 && m.shown(m.gate3) && !armed {
			m.quitArmed = true
			m.gate3.msg, m.gate3.msgOK = fmt.Sprintf("%d unsaved edit(s) of the model: q again quits and drops them; enter approves and saves them", n), false
			return nil
		}
		return tea.Quit
	})
	if m.shown(m.run) && m.run.running() {
		g.Quit = g.Quit.Disable("the run is going: ctrl+c asks before cancelling it")
	}
	g.Interrupt = g.Interrupt.Quiet()
	return g
}

// lastRunMsg carries the newest run's report, read to show its gate 4
// (queue: and then its exception queue) without running.
type lastRunMsg struct {
	report *reports.Report
	queue  bool
	err    error
}

func readLastRun(path string, queue bool) tea.Cmd {
	return func() tea.Msg {
		r, err := reports.Read(path)
		return lastRunMsg{report: r, queue: queue, err: err}
	}
}

// ledgerMsg carries the opened exception ledger.
type ledgerMsg struct {
	st  ledger.Store
	err error
}

// openLedger opens the ledger once, in a Cmd.
func (a *app) openLedger() tea.Cmd {
	if a.store != nil || a.deps.OpenLedger == nil {
		return nil
	}
	d, ctx, ws, path := a.deps, a.ctx, a.ws, a.planPath
	return func() tea.Msg {
		p, err := plan.Load(path)
		if err != nil {
			return ledgerMsg{err: err}
		}
		st, err := d.OpenLedger(ctx, ws, p)
		return ledgerMsg{st: st, err: err}
	}
}

// openLedgerThen opens the ledger, then the exception browser over it.
func (a *app) openLedgerThen(f ledger.Filter) tea.Cmd {
	a.excPending = &f
	return a.openLedger()
}

// openExceptions pushes the exception browser over the ledger; esc in its
// unfiltered list pops it.
func (a *app) openExceptions(f ledger.Filter) tea.Cmd {
	if a.store == nil {
		a.recon.drill = false
		return a.openLedger()
	}
	var rp func(ctx context.Context, table string, ids []int64) (string, error)
	if d := a.deps; d.Replay != nil {
		ws, path, by := a.ws, a.planPath, a.by
		rp = func(ctx context.Context, table string, ids []int64) (string, error) {
			return d.Replay(ctx, ws, path, table, ids, by)
		}
	}
	path := a.planPath
	owners := func() ([]string, error) {
		p, err := plan.Load(path)
		if err != nil {
			return nil, err
		}
		return PlanOwnerNames(p), nil
	}
	a.exc = newBrowser(ExceptionsOptions{Replay: rp, PlanOwners: owners, Store: a.store, Theme: a.theme, Filter: f, By: a.by, Now: a.deps.Now, Context: a.ctx,
		Back: "back to gate 4", OnBack: func() tea.Cmd { a.pop(); return nil }})
	a.exc.w, a.exc.h = a.w, a.h
	a.push(a.exc)
	return a.exc.Init()
}

// openTeardown pushes gate 5 and builds the blast radius.
func (a *app) openTeardown() tea.Cmd {
	if a.deps.TeardownInventory == nil {
		return nil
	}
	// Nothing of the wizard holds the state store open while it goes.
	a.Close()
	a.push(a.gate5)
	return a.gate5.Start()
}

// Close releases what the wizard opened (the ledger).
func (a *app) Close() {
	if a.store != nil {
		a.store.Close()
		a.store = nil
	}
}

// View renders the frame: a title line, the screen and the help line.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeNone
	v.WindowTitle = "Lima wizard"
	return v
}

// Render is the screen as text (styled; tests strip the styles).
func (m *Model) Render() string {
	t := m.theme
	switch ui.Classify(m.w, m.h) {
	case ui.SizeTooSmall:
		if m.shown(m.run) && m.run.running() {
			if m.run.asking() {
				return ui.TooSmallWith(t, m.w, m.h, "Cancel the run? y cancels it, n keeps it running")
			}
			return ui.TooSmallWith(t, m.w, m.h, "the run goes on; q or ctrl+c asks first")
		}
		return ui.TooSmall(t, m.w, m.h)
	}
	if fs, ok := m.top().(fullScreen); ok {
		return fs.Render()
	}
	full := ui.Classify(m.w, m.h) == ui.SizeFull
	title := t.Title.Render("Lima") + " " + t.Muted.Render(m.crumbs())
	var body string
	switch {
	case m.loadErr != "":
		body = t.Failed.Render(ui.StatusFailed.Glyph()+" cannot open the plan: ") + ui.Sanitize(m.loadErr) +
			"\n" + t.Muted.Render("fix: correct platform.yaml (lima-tui check shows where), or start the wizard with --plan in another folder")
	case m.top() == nil:
		body = t.Muted.Render("opening " + ui.Sanitize(m.planPath) + " …")
	case m.showHelp:
		body = m.helpScreen()
	default:
		body = m.top().Render()
	}
	keys := m.keyBindings(m.quitArmed)
	refused := t.Warn.Render(ui.StatusWarn.Glyph() + " " + ui.Sanitize(m.refused))
	bw, bh := m.bodySize()
	if full {
		// At full size the key line has two lines (a short one sits on
		// the lower), so no key is cut.
		help := ui.HelpWrap(t, m.w-1, helpLinesFull, keys...)
		for len(help) < helpLinesFull {
			help = append([]string{""}, help...)
		}
		if m.refused != "" {
			help[0] = ui.Fit(refused, m.w-1)
		}
		body = padLines(ui.FitLines(body, bw, bh), bh)
		return ui.Fit(" "+title, m.w) + "\n\n" + indent(body, " ") + "\n" + indent(strings.Join(help, "\n"), " ")
	}
	body = padLines(ui.FitLines(body, bw, bh), bh)
	help := ui.HelpLine(t, keys...)
	if m.refused != "" {
		help = refused
	}
	help = ui.Fit(help, m.w)
	return ui.Fit(title, m.w) + "\n" + body + "\n" + help
}

func (m *Model) crumbs() string {
	steps := []string{"1 scope", "2 checks", "3 model", "run", "4 reconcile", "exceptions"}
	cur := 0
	switch m.top() {
	case m.gate2:
		cur = 1
	case m.gate3:
		cur = 2
	case m.run:
		cur = 3
	case m.recon:
		cur = 4
	case m.gate5:
		// Gate 5 is reached from gate 4; it takes the last place.
		cur, steps[5] = 5, "5 teardown"
	}
	if m.exc != nil && m.shown(m.exc) {
		cur = 5
	}
	for i := range steps {
		if i == cur {
			steps[i] = "[" + steps[i] + "]"
		}
	}
	return strings.Join(steps, " › ")
}

// helpScreen lists every binding of the screen, the help-only ones too,
// and the shared ones, disabled ones with their reason: the same list the
// key line is drawn from and keys are dispatched to.
func (m *Model) helpScreen() string {
	t := m.theme
	var b strings.Builder
	b.WriteString(t.Title.Render("Keys") + "\n")
	if s := m.top(); s != nil {
		b.WriteString(ui.HelpFull(t, s.Keys()...) + "\n")
		// A screen may explain its keys further (optional capability).
		if h, ok := s.(interface{ HelpText() []string }); ok {
			for _, l := range h.HelpText() {
				b.WriteString(t.Muted.Render(ui.Fit("  "+l, m.w-2)) + "\n")
			}
		}
	}
	g := m.globals(m.quitArmed)
	b.WriteString(ui.HelpFull(t, g.Help, g.Filter, g.Quit, g.Interrupt) + "\n\n")
	b.WriteString(t.Muted.Render("Answers are saved to platform.yaml as they are given: quit any time and start again to resume.") + "\n")
	b.WriteString(t.Muted.Render("? or esc closes this help."))
	return b.String()
}

func padLines(s string, h int) string {
	n := strings.Count(s, "\n") + 1
	if n < h {
		s += strings.Repeat("\n", h-n)
	}
	return s
}

func indent(s, pre string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "\n")
}
