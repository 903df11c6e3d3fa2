// Package wizard is the bubbletea root model of lima-tui: the gate state
// machine, asked one question at a time. The root owns routing, focus and
// layout; each screen is a struct with SetSize, a key map and a render
// method. Update does no I/O: loading and saving the plan, gate 2 and the
// run happen in tea.Cmds.
package wizard

import (
	"context"
	"fmt"
	"path/filepath"
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
	// Replay replays the fixed exceptions of a table ("" for all) from the
	// exception browser and returns the report's path.
	Replay func(ctx context.Context, ws flow.Workspace, planPath, table, by string) (string, error)
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
func replay(ctx context.Context, ws flow.Workspace, planPath, table, by string) (string, error) {
	p, err := flow.LoadPlan(planPath)
	if err != nil {
		return "", err
	}
	out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, Table: table, By: by})
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

type route int

const (
	routeLoading route = iota
	routeWho
	routeGate1
	routeGate2
	routeRun
	routeGate3
	routeRecon
	routeExceptions
	routeTeardown
)

// Model is the root model.
type Model struct {
	// quitArmed: q was pressed once over gate 3's unsaved edits; a second
	// q quits and drops them, any other key disarms.
	quitArmed bool
	theme     ui.Theme
	keys      ui.GlobalKeys
	deps      Deps
	ctx       context.Context
	planPath  string
	ws        flow.Workspace
	saver     *saver

	route    route
	w, h     int
	showHelp bool
	loadErr  string

	who   *whoScreen
	gate1 *gate1Screen
	gate2 *gate2Screen
	run   *runScreen
	gate3 *gate3Screen
	recon *reconScreen
	gate5 *gate5Screen
	exc   *Browser
	by    string

	// askName: the name is asked before gate 1; session is the loaded
	// session gate 1 starts from once it is given.
	askName bool
	session *sessionMsg

	store    ledger.Store
	storeErr string
	// tdFrom is the route gate 5 returns to.
	tdFrom route
	// lastReport is the newest run's report.json when the wizard started
	// ("" none); reconFrom is where gate 4's back key goes (the run, or
	// gate 1 when gate 4 was opened from there without running).
	lastReport string
	reconFrom  route
	// excPending: the exception queue opens with this filter once the
	// ledger is open.
	excPending *ledger.Filter
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
	m := &Model{theme: o.Theme, keys: ui.DefaultGlobalKeys(), deps: o.Deps, ctx: o.Context,
		planPath: o.PlanPath, ws: flow.Workspace{Dir: filepath.Dir(o.PlanPath)}, w: 100, h: 30}
	m.saver = &saver{planPath: o.PlanPath, now: o.Deps.Now}
	m.gate1 = newGate1(m.theme)
	m.gate1.zone = o.Deps.MachineZone()
	m.gate1.qs = withDefaults(m.gate1.qs, map[string]string{gates.QTimezone: m.gate1.zone})
	m.saver.qs = m.gate1.qs
	m.gate1.dir = m.ws.Dir
	m.gate2 = newGate2(m.theme)
	m.run = newRunScreen(m.theme, o.Deps.Now)
	m.gate3 = newGate3(m.theme)
	m.recon = newRecon(m.theme)
	m.gate5 = newGate5(m.theme)
	m.by = o.By
	if m.by == "" {
		m.by = "lima-tui"
	}
	m.gate1.by, m.gate5.by = &m.by, &m.by
	m.askName = o.AskName
	m.who = newWho(m.theme, o.By, o.ByFrom)
	return m
}

// Init loads the session (the plan and the wizard's progress).
func (m *Model) Init() tea.Cmd { return loadSession(m.planPath) }

type screen interface {
	SetSize(w, h int)
	Keys() []ui.Binding
	Typing() bool
	Render() string
}

func (m *Model) current() screen {
	switch m.route {
	case routeWho:
		return m.who
	case routeGate2:
		return m.gate2
	case routeRun:
		return m.run
	case routeGate1:
		return m.gate1
	case routeGate3:
		return m.gate3
	case routeRecon:
		return m.recon
	case routeTeardown:
		return m.gate5
	}
	return nil
}

func (m *Model) typing() bool {
	s := m.current()
	return s != nil && s.Typing()
}

func (m *Model) setSize(w, h int) {
	m.w, m.h = w, h
	bw, bh := m.bodySize()
	for _, s := range []screen{m.who, m.gate1, m.gate2, m.run, m.gate3, m.recon, m.gate5} {
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

// Update routes messages: global keys first, then the screen.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		if m.exc != nil {
			_, cmd := m.exc.Update(msg)
			return m, cmd
		}
		return m, nil
	case lastRunMsg:
		if msg.err != nil {
			m.gate1.status, m.gate1.statusOK = "the last run's report cannot be read: "+ui.Sanitize(msg.err.Error()), ui.StatusFailed
			return m, nil
		}
		m.reconFrom, m.route = routeGate1, routeRecon
		m.recon.Show(msg.report)
		m.recon.past = true
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
			m.route = routeGate1
			return m, nil
		}
		if m.askName {
			m.session, m.route = &msg, routeWho
			return m, m.who.Start()
		}
		m.route = routeGate1
		cmd := m.gate1.Start(msg)
		m.saver.qs = m.gate1.qs
		return m, cmd
	case ledgerMsg:
		if msg.err != nil {
			m.storeErr = msg.err.Error()
			return m, nil
		}
		if m.store != nil {
			m.store.Close()
		}
		m.store, m.storeErr = msg.st, ""
		if f := m.excPending; f != nil {
			m.excPending = nil
			return m, m.openExceptions(*f)
		}
		if m.route == routeRecon && m.recon.drill && !m.recon.tornDown {
			if tr, ok := m.recon.table(); ok {
				return m, countsCmd(m.ctx, m.store, tr)
			}
		}
		return m, nil
	case tea.KeyPressMsg:
		if armed := m.quitArmed; armed {
			m.quitArmed = false
			if k := m.keys.Typing(m.typing()).Quit; k.Matches(msg) {
				return m, tea.Quit
			}
		}
		if m.route == routeExceptions {
			return m, m.excKey(msg)
		}
		keys := m.keys.Typing(m.typing())
		if m.route == routeRun {
			keys.Quit = keys.Quit.Disable("the run is going: ctrl+c asks before cancelling it")
			if !m.run.running() {
				keys.Quit = keys.Quit.Enable()
			}
		}
		switch {
		case keys.Interrupt.Matches(msg):
			if m.route == routeRun && m.run.running() {
				return m, m.run.AskCancel()
			}
			return m, tea.Quit
		case ui.Classify(m.w, m.h) == ui.SizeTooSmall:
			// Nothing can be typed here, so q quits — unless a run is
			// going: it goes on, and q (like ctrl+c above) asks first.
			if m.route == routeRun && m.run.running() {
				if m.run.asking() {
					break // y or n answers "Cancel the run?", shown small
				}
				if keys.Quit.Pressed(msg) { // disabled for the board, not here
					return m, m.run.AskCancel()
				}
				return m, nil
			}
			if keys.Quit.Pressed(msg) {
				return m, tea.Quit
			}
			return m, nil
		case m.showHelp:
			if keys.Help.Matches(msg) || keys.Back.Matches(msg) {
				m.showHelp = false
				return m, nil
			}
			if keys.Quit.Matches(msg) {
				return m, tea.Quit
			}
			return m, nil
		case keys.Help.Matches(msg):
			m.showHelp = true
			return m, nil
		case keys.Quit.Matches(msg) && m.route == routeGate3 && len(m.gate3.changes()) > 0 && !m.quitArmed:
			m.quitArmed = true
			m.gate3.msg, m.gate3.msgOK = fmt.Sprintf("%d unsaved edit(s) of the model: q again quits and drops them; enter approves and saves them", len(m.gate3.changes())), false
			return m, nil
		case keys.Quit.Matches(msg) && m.route != routeLoading:
			return m, tea.Quit
		case m.route == routeLoading && keys.Quit.Pressed(msg):
			return m, tea.Quit
		}
	}
	if _, ok := msg.(tea.KeyPressMsg); !ok {
		// Results, ticks and saves go to the screen they belong to,
		// whichever is shown.
		c1, next1 := m.gate1.Update(msg, m.saver)
		if next1 && m.route == routeGate1 {
			// The scope approval is recorded: gate 2 starts.
			m.route = routeGate2
			c1 = tea.Batch(c1, m.gate2.Start(m.deps, m.ws, m.planPath, m.ctx))
		}
		var c0 tea.Cmd
		if m.route == routeWho {
			c0, _, _ = m.who.Update(msg)
		}
		c2, _ := m.gate2.Update(msg, m.deps, m.ws, m.planPath, m.ctx)
		c3, _ := m.run.Update(msg, m.deps, m.ws, m.ctx)
		c4, nav4 := m.gate3.Update(msg, m.by, m.deps.Now, m.planPath)
		if nav4 == navNext && m.route == routeGate3 {
			m.route = routeRun
			m.run.Ready(m.gate3.base)
		}
		c5, _ := m.recon.Update(msg, m.ctx, m.store)
		c6, _ := m.gate5.Update(msg, m.deps, m.ws, m.planPath, m.ctx)
		var c7 tea.Cmd
		if m.exc != nil {
			_, c7 = m.exc.Update(msg)
		}
		return m, tea.Batch(c0, c1, c2, c3, c4, c5, c6, c7)
	}
	switch m.route {
	case routeWho:
		cmd, name, done := m.who.Update(msg)
		if done {
			m.by = name
			m.route = routeGate1
			start := m.gate1.Start(*m.session)
			m.saver.qs = m.gate1.qs
			return m, tea.Batch(cmd, start)
		}
		return m, cmd
	case routeGate1:
		if kp, ok := msg.(tea.KeyPressMsg); ok && m.gate1.done() {
			if k := m.gate1.start; k.LastRun.Matches(kp) || k.Queue.Matches(kp) {
				return m, readLastRun(m.lastReport, k.Queue.Matches(kp))
			}
		}
		cmd, next := m.gate1.Update(msg, m.saver)
		if next {
			m.route = routeGate2
			return m, tea.Batch(cmd, m.gate2.Start(m.deps, m.ws, m.planPath, m.ctx))
		}
		return m, cmd
	case routeGate2:
		cmd, nav := m.gate2.Update(msg, m.deps, m.ws, m.planPath, m.ctx)
		switch nav {
		case navBack:
			m.route = routeGate1
			m.gate1.Reopen()
		case navNext:
			m.route = routeGate3
			return m, tea.Batch(cmd, m.gate3.Start(m.deps, m.ws, m.planPath, m.ctx))
		}
		return m, cmd
	case routeGate3:
		cmd, nav := m.gate3.Update(msg, m.by, m.deps.Now, m.planPath)
		switch nav {
		case navBack:
			m.route = routeGate2
		case navNext:
			m.route = routeRun
			m.run.Ready(m.gate3.base)
		}
		return m, cmd
	case routeRun:
		cmd, nav := m.run.Update(msg, m.deps, m.ws, m.ctx)
		switch nav {
		case navBack:
			m.route = routeGate3
		case navNext:
			if m.run.outcome != nil && m.run.outcome.Report != nil {
				m.route, m.reconFrom = routeRecon, routeRun
				m.recon.Show(m.run.outcome.Report)
				return m, tea.Batch(cmd, m.openLedger())
			}
		}
		return m, cmd
	case routeRecon:
		cmd, nav := m.recon.Update(msg, m.ctx, m.store)
		switch nav {
		case reconBack:
			m.route = routeRun
			if m.reconFrom == routeGate1 {
				m.route = routeGate1
			}
		case reconExceptions, reconTableExceptions:
			f := ledger.Filter{}
			if tr, ok := m.recon.table(); ok && nav == reconTableExceptions {
				f.Table = tr.Name
			}
			return m, tea.Batch(cmd, m.openExceptions(f))
		case reconTeardown:
			return m, tea.Batch(cmd, m.openTeardown())
		}
		return m, cmd
	case routeTeardown:
		cmd, nav := m.gate5.Update(msg, m.deps, m.ws, m.planPath, m.ctx)
		if nav == navBack {
			m.route = m.tdFrom
			m.recon.tornDown = m.gate5.removed()
		}
		return m, cmd
	}
	return m, nil
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
func (m *Model) openLedger() tea.Cmd {
	if m.store != nil || m.deps.OpenLedger == nil {
		return nil
	}
	d, ctx, ws, path := m.deps, m.ctx, m.ws, m.planPath
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
func (m *Model) openLedgerThen(f ledger.Filter) tea.Cmd {
	m.excPending = &f
	return m.openLedger()
}

// openExceptions shows the exception browser over the ledger.
func (m *Model) openExceptions(f ledger.Filter) tea.Cmd {
	if m.store == nil {
		m.recon.drill = false
		return m.openLedger()
	}
	var rp func(ctx context.Context, table string) (string, error)
	if d := m.deps; d.Replay != nil {
		ws, path, by := m.ws, m.planPath, m.by
		rp = func(ctx context.Context, table string) (string, error) { return d.Replay(ctx, ws, path, table, by) }
	}
	m.exc = NewExceptions(ExceptionsOptions{Replay: rp, Store: m.store, Theme: m.theme, Filter: f, By: m.by, Now: m.deps.Now, Context: m.ctx, Back: "back to gate 4"})
	m.exc.w, m.exc.h = m.w, m.h
	m.route = routeExceptions
	return m.exc.Init()
}

// openTeardown shows gate 5 and builds the blast radius.
func (m *Model) openTeardown() tea.Cmd {
	if m.deps.TeardownInventory == nil {
		return nil
	}
	// Nothing of the wizard holds the state store open while it goes.
	m.Close()
	m.tdFrom, m.route = m.route, routeTeardown
	return m.gate5.Start(m.deps, m.ws, m.planPath, m.ctx)
}

// excKey routes a key to the exception browser; esc in its list, with no
// filter and nothing typed, goes back to the reconciliation.
func (m *Model) excKey(msg tea.KeyPressMsg) tea.Cmd {
	b := m.exc
	k := msg.String()
	if b.mode == modeList && !b.showDetail && (k == "esc" || k == "shift+tab") && b.filter == (ledger.Filter{Now: b.filter.Now}) {
		m.route = routeRecon
		return nil
	}
	_, cmd := b.Update(msg)
	return cmd
}

// Close releases what the wizard opened (the ledger).
func (m *Model) Close() {
	if m.store != nil {
		m.store.Close()
		m.store = nil
	}
}

type nav int

const (
	navStay nav = iota
	navBack
	navNext
)

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
		if m.route == routeRun && m.run.running() {
			if m.run.asking() {
				return ui.TooSmallWith(t, m.w, m.h, "Cancel the run? y cancels it, n keeps it running")
			}
			return ui.TooSmallWith(t, m.w, m.h, "the run goes on; q or ctrl+c asks first")
		}
		return ui.TooSmall(t, m.w, m.h)
	}
	if m.route == routeExceptions && m.exc != nil {
		return m.exc.Render()
	}
	full := ui.Classify(m.w, m.h) == ui.SizeFull
	title := t.Title.Render("Lima") + " " + t.Muted.Render(m.crumbs())
	var body string
	switch {
	case m.loadErr != "":
		body = t.Failed.Render(ui.StatusFailed.Glyph()+" cannot open the plan: ") + ui.Sanitize(m.loadErr) +
			"\n" + t.Muted.Render("fix: correct platform.yaml (lima-tui check shows where), or start the wizard with --plan in another folder")
	case m.route == routeLoading:
		body = t.Muted.Render("opening " + ui.Sanitize(m.planPath) + " …")
	case m.showHelp:
		body = m.helpScreen()
	default:
		body = m.current().Render()
	}
	bw, bh := m.bodySize()
	if full {
		// At full size the key line has two lines (a short one sits on
		// the lower), so no key is cut.
		help := ui.HelpWrap(t, m.w-1, helpLinesFull, m.footerKeys()...)
		for len(help) < helpLinesFull {
			help = append([]string{""}, help...)
		}
		body = padLines(ui.FitLines(body, bw, bh), bh)
		return ui.Fit(" "+title, m.w) + "\n\n" + indent(body, " ") + "\n" + indent(strings.Join(help, "\n"), " ")
	}
	body = padLines(ui.FitLines(body, bw, bh), bh)
	help := ui.HelpLine(t, m.footerKeys()...)
	help = ui.Fit(help, m.w)
	return ui.Fit(title, m.w) + "\n" + body + "\n" + help
}

func (m *Model) crumbs() string {
	steps := []string{"1 scope", "2 checks", "3 model", "run", "4 reconcile", "exceptions"}
	if m.route == routeTeardown {
		// Gate 5 is reached from gate 4; it takes the last place.
		steps[5] = "5 teardown"
	}
	cur := map[route]int{routeLoading: 0, routeWho: 0, routeGate1: 0, routeGate2: 1, routeGate3: 2, routeRun: 3, routeRecon: 4, routeExceptions: 5, routeTeardown: 5}[m.route]
	for i := range steps {
		if i == cur {
			steps[i] = "[" + steps[i] + "]"
		}
	}
	return strings.Join(steps, " › ")
}

func (m *Model) footerKeys() []ui.Binding {
	g := m.keys.Typing(m.typing())
	var out []ui.Binding
	if s := m.current(); s != nil && !m.showHelp && m.loadErr == "" {
		out = append(out, s.Keys()...)
	}
	if m.route == routeRun && m.run.running() {
		g.Quit = g.Quit.Disable("the run is going")
	}
	return append(out, g.Help, g.Quit)
}

func (m *Model) helpScreen() string {
	t := m.theme
	var b strings.Builder
	b.WriteString(t.Title.Render("Keys") + "\n")
	if s := m.current(); s != nil {
		b.WriteString(ui.HelpFull(t, s.Keys()...) + "\n")
		// A screen may explain its keys further (optional capability).
		if h, ok := s.(interface{ HelpText() []string }); ok {
			for _, l := range h.HelpText() {
				b.WriteString(t.Muted.Render(ui.Fit("  "+l, m.w-2)) + "\n")
			}
		}
	}
	g := m.keys.Typing(m.typing())
	b.WriteString(ui.HelpFull(t, g.All()...) + "\n\n")
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
