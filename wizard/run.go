package wizard

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

// PollInterval is how often the run screen reads the live counters: at
// most 10 times a second, never a message per row.
const PollInterval = 100 * time.Millisecond

type runState int

const (
	rsReady runState = iota
	rsRunning
	rsConfirm
	rsCancelling
	rsDone
	rsFailed
)

type runTickMsg struct{ gen int }

type runDoneMsg struct {
	gen     int
	outcome *flow.Outcome
	err     error
}

// tableRow is one table's counters as last polled.
type tableRow struct {
	name, phase               string
	read, loaded, quarantined int64
	bytes, total              int64
	started, finished         time.Time
}

// RateWindow is how far back rows/s and the time left look while a table
// is active.
const RateWindow = 3 * time.Second

// sample is one poll of a table's counters, for the moving window.
type sample struct {
	at          time.Time
	rows, bytes int64
}

type runKeys struct {
	Start, Back, Yes, No, Next, Again, Refresh ui.Binding
}

// runScreen starts the run and shows one row per table.
type runScreen struct {
	app     *app
	theme   ui.Theme
	w, h    int
	now     func() time.Time
	keys    runKeys
	state   runState
	gen     int
	plan    *plan.Plan
	snap    func() []*run.TableProgress
	rows    []tableRow
	order   []string            // the run's tables in load order, known before it starts
	window  map[string][]sample // recent polls per table, within RateWindow
	started time.Time
	ended   time.Time
	cancel  context.CancelFunc
	// refresh chooses a full refresh for the next run: 0 none, 1 every
	// table, 2+i the i-th base table in load order (f cycles).
	refresh int
	outcome *flow.Outcome
	err     error
	spin    spinner.Model
}

func newRunScreen(a *app) *runScreen {
	t := a.theme
	s := &runScreen{app: a, theme: t, now: a.deps.Now, spin: spinner.New(spinner.WithSpinner(spinner.Line), spinner.WithStyle(t.Running))}
	nb := ui.NewBinding
	s.keys = runKeys{
		Start: nb("enter", "start the run", "enter").Act(s.start),
		Back:  nb("esc", "back to gate 3", "esc", "shift+tab").Act(func() tea.Cmd { a.pop(); return nil }),
		Next: nb("enter", "gate 4: reconciliation", "enter").Act(func() tea.Cmd {
			a.recon.Show(s.outcome.Report)
			a.push(a.recon)
			return a.openLedger()
		}),
		Again: nb("r", "run again", "r").Act(s.start),
		Yes: nb("y", "cancel the run", "y").Act(func() tea.Cmd {
			s.state = rsCancelling
			if s.cancel != nil {
				s.cancel()
			}
			return nil
		}),
		No: nb("n", "keep running", "n", "esc").Act(func() tea.Cmd { s.state = rsRunning; return nil }),
		Refresh: nb("f", "full refresh", "f").Act(func() tea.Cmd {
			s.refresh = (s.refresh + 1) % (len(s.refreshBase()) + 2)
			return nil
		}),
	}
	return s
}

func (s *runScreen) SetSize(w, h int) { s.w, s.h = w, h }
func (s *runScreen) Typing() bool     { return false }

func (s *runScreen) running() bool {
	return s.state == rsRunning || s.state == rsConfirm || s.state == rsCancelling
}

// Ready shows the start screen for the plan gate 2 passed.
func (s *runScreen) Ready(p *plan.Plan) {
	if !s.running() {
		s.plan, s.state, s.outcome, s.err, s.rows = p, rsReady, nil, nil, nil
	}
}

// asking is whether "Cancel the run?" waits for its answer.
func (s *runScreen) asking() bool { return s.state == rsConfirm }

// AskCancel is ctrl+c while the run is going: ask first.
func (s *runScreen) AskCancel() tea.Cmd {
	if s.state == rsRunning {
		s.state = rsConfirm
	}
	return nil
}

func (s *runScreen) Keys() []ui.Binding {
	k := s.keys
	if s.plan == nil {
		k.Start, k.Again, k.Refresh = k.Start.Disable("no approved plan"), k.Again.Disable("no approved plan"), k.Refresh.Disable("no approved plan")
	}
	switch s.state {
	case rsConfirm:
		return []ui.Binding{k.Yes, k.No}
	case rsRunning, rsCancelling:
		return []ui.Binding{ui.NewBinding("ctrl+c", "cancel the run", "ctrl+c").Act(s.AskCancel)}
	case rsReady:
		return []ui.Binding{k.Start, k.Refresh, k.Back}
	}
	if s.outcome == nil || s.outcome.Report == nil {
		again := ui.NewBinding("enter", "run again", "enter", "r").Act(s.start)
		if s.plan == nil {
			again = again.Disable("no approved plan")
		}
		return []ui.Binding{again, k.Refresh, k.Back}
	}
	return []ui.Binding{k.Next, k.Again, k.Refresh, k.Back}
}

func (s *runScreen) tick() tea.Cmd {
	gen := s.gen
	return tea.Tick(PollInterval, func(time.Time) tea.Msg { return runTickMsg{gen: gen} })
}

func (s *runScreen) start() tea.Cmd {
	d, ws, parent := s.app.deps, s.app.ws, s.app.ctx
	s.gen++
	gen := s.gen
	ctx, cancel := context.WithCancel(parent)
	prog := &run.Progress{}
	s.cancel, s.snap, s.state, s.rows, s.outcome, s.err = cancel, prog.Snapshot, rsRunning, nil, nil, nil
	s.started, s.ended = s.now(), time.Time{}
	tables, full := s.refreshScope()
	// Every table of the run shows, queued, from the first frame.
	s.order, s.window = run.RunOrder(s.plan, tables), map[string][]sample{}
	s.poll()
	// A person starting the run in the wizard chose to run now: like
	// `lima-tui run --force`, the schedule's window does not apply.
	o := flow.RunOptions{Workspace: ws, Plan: s.plan, Progress: prog, Force: true, FullRefresh: full, Tables: tables}
	do := func() tea.Msg {
		out, err := d.Run(ctx, o)
		return runDoneMsg{gen: gen, outcome: out, err: err}
	}
	return tea.Batch(do, s.tick(), s.spin.Tick)
}

// refreshBase are the base tables a full refresh can choose, in load order.
func (s *runScreen) refreshBase() []string {
	if s.plan == nil {
		return nil
	}
	var out []string
	for _, n := range run.RunOrder(s.plan, nil) {
		if !s.plan.Tables[n].IsMart() {
			out = append(out, n)
		}
	}
	return out
}

// refreshScope is what the next run reloads: (nil, false) a plain run,
// (nil, true) every table, ([t], true) one table (like lima-tui run
// --full-refresh --table t).
func (s *runScreen) refreshScope() ([]string, bool) {
	base := s.refreshBase()
	switch {
	case s.refresh <= 0 || s.refresh > len(base)+1:
		return nil, false
	case s.refresh == 1:
		return nil, true
	}
	return []string{base[s.refresh-2]}, true
}

// refreshLine says what f chose.
func (s *runScreen) refreshLine() string {
	tables, full := s.refreshScope()
	switch {
	case !full:
		return "No full refresh: input already loaded is not loaded again (f chooses a full refresh)."
	case len(tables) == 0:
		return "Full refresh of every table: each is reloaded from its source and replaced in one commit, even input already loaded (f: one table, then off)."
	}
	return "Full refresh of " + ui.Sanitize(tables[0]) + " only: reloaded from its source and replaced in one commit; the other tables are not run (f: next table, then off)."
}

// poll copies the live counters: every table of the run in load order,
// queued until the engine reports on it.
func (s *runScreen) poll() {
	if s.snap == nil {
		return
	}
	now := s.now()
	byName := map[string]tableRow{}
	var names []string
	for _, n := range s.order {
		if _, ok := byName[n]; !ok {
			byName[n] = tableRow{name: n, phase: run.PhaseQueued}
			names = append(names, n)
		}
	}
	for _, tp := range s.snap() {
		if tp == nil {
			continue
		}
		phase, _ := tp.Phase.Load().(string)
		r := tableRow{name: tp.Table, phase: phase, read: tp.RowsRead.Load(), loaded: tp.Loaded.Load(),
			quarantined: tp.Quarantined.Load(), bytes: tp.Bytes.Load(), total: tp.TotalBytes.Load(),
			started: tp.StartedAt(), finished: tp.FinishedAt()}
		if _, ok := byName[r.name]; !ok {
			names = append(names, r.name)
		}
		byName[r.name] = r
	}
	if s.window == nil {
		s.window = map[string][]sample{}
	}
	rows := make([]tableRow, 0, len(names))
	for _, n := range names {
		r := byName[n]
		if !r.started.IsZero() && r.finished.IsZero() {
			w := append(s.window[n], sample{at: now, rows: r.read, bytes: r.bytes})
			// Keep the newest sample at or before the window's start, and
			// everything after it.
			i := 0
			for i+1 < len(w) && !w[i+1].at.After(now.Add(-RateWindow)) {
				i++
			}
			s.window[n] = w[i:]
		}
		rows = append(rows, r)
	}
	s.rows = rows
}

// phaseLabels are the words the board shows for the engine's and flow's
// phases.
var phaseLabels = map[string]string{
	run.PhaseQueued:           "queued",
	"waiting":                 "starting",
	"opening table":           "opening",
	"listing":                 "listing files",
	"landing raw":             "landing raw/",
	"loading":                 "reading",
	"reading keys":            "reading keys",
	"reading changes":         "reading",
	"staging":                 "writing",
	"committing":              "committing",
	run.StatusLoaded:          "loaded",
	run.StatusAlreadyLoaded:   "already loaded",
	run.StatusFailed:          "failed",
	flow.PhaseReconciling:     "reconciling (gate 4)",
	flow.PhaseReconciled:      "done",
	flow.PhaseBuildingMart:    "building mart",
	flow.PhaseReconcilingMart: "reconciling (gate 4)",
	flow.PhaseMartBuilt:       "done",
	flow.PhaseMartSkipped:     "skipped",
}

// loadDone is whether the table's load has ended (its bar is final).
func (r tableRow) loadDone() bool { return !r.finished.IsZero() }

// view is the row as the board shows it.
func (s *runScreen) view(r tableRow) ui.ProgressRow {
	now := s.now()
	ended := !s.ended.IsZero()
	label, ok := phaseLabels[r.phase]
	if !ok {
		label = strings.ReplaceAll(r.phase, "_", " ")
	}
	if ended && r.phase == run.StatusLoaded {
		label = "done" // gate 4 did not re-read it (no scanner): its load is its end
	}
	busy := r.phase == flow.PhaseReconciling || r.phase == flow.PhaseBuildingMart || r.phase == flow.PhaseReconcilingMart
	st := ui.StatusRunning
	switch {
	case r.phase == run.PhaseQueued && ended:
		label, st = "not run", ui.StatusSkipped
	case r.phase == run.PhaseQueued:
		st = ui.StatusPending
	case r.phase == run.StatusFailed:
		st = ui.StatusFailed
	case r.phase == flow.PhaseMartSkipped:
		st = ui.StatusSkipped
	case r.loadDone() && !busy:
		st = ui.StatusOK
		if r.quarantined > 0 {
			st = ui.StatusWarn
		}
	case ended:
		label, st = "stopped", ui.StatusSkipped
	}
	pr := ui.ProgressRow{Name: r.name, State: label, Status: st, Rows: r.read, Held: r.quarantined, Frac: -1, RowsPerSec: -1, MBPerSec: -1}
	switch {
	case r.started.IsZero():
		pr.Rows, pr.Held = -1, -1
	case r.loadDone():
		// Final: the whole input was read; the rate is the load's average.
		if r.phase != run.StatusFailed {
			pr.Frac = 1
		} else if r.total > 0 {
			pr.Frac = min(float64(r.bytes)/float64(r.total), 0.99)
		}
		if d := r.finished.Sub(r.started); d > 0 && r.read > 0 {
			pr.RowsPerSec, pr.MBPerSec = rate(r.read, d), rate(r.bytes, d)/1e6
		}
	default:
		if r.total > 0 {
			pr.Frac = min(float64(r.bytes)/float64(r.total), 0.99)
		}
		w := s.window[r.name]
		if len(w) >= 2 {
			first, last := w[0], w[len(w)-1]
			if d := last.at.Sub(first.at); d > 0 {
				pr.RowsPerSec, pr.MBPerSec = rate(last.rows-first.rows, d), rate(last.bytes-first.bytes, d)/1e6
				if bps := rate(last.bytes-first.bytes, d); r.total > r.bytes && bps > 0 {
					pr.ETA = time.Duration(float64(r.total-r.bytes) / bps * float64(time.Second))
				}
			}
		} else if d := now.Sub(r.started); d > 0 && r.read > 0 {
			pr.RowsPerSec, pr.MBPerSec = rate(r.read, d), rate(r.bytes, d)/1e6
		}
	}
	return pr
}

// Update handles the run's messages.
func (s *runScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		if !s.running() {
			return nil
		}
		var cmd tea.Cmd
		s.spin, cmd = s.spin.Update(msg)
		return cmd
	case runTickMsg:
		if msg.gen != s.gen || !s.running() {
			return nil
		}
		s.poll()
		return s.tick()
	case runDoneMsg:
		if msg.gen != s.gen {
			return nil
		}
		s.ended = s.now()
		s.poll()
		if s.cancel != nil {
			s.cancel()
		}
		s.outcome, s.err = msg.outcome, msg.err
		s.state = rsDone
		if msg.err != nil && msg.outcome == nil {
			s.state = rsFailed
		}
	}
	return nil
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func (s *runScreen) Render() string {
	t := s.theme
	var b []string
	add := func(l ...string) { b = append(b, l...) }
	head := t.Title.Render("Run · load, reconcile, report")
	switch s.state {
	case rsReady:
		add(head, "")
		name := "the plan"
		if s.plan != nil {
			base, marts := 0, 0
			for _, t := range s.plan.Tables {
				if t.IsMart() {
					marts++
				} else {
					base++
				}
			}
			name = fmt.Sprintf("%d table(s) of %s", base, ui.Sanitize(s.plan.Platform.Prefix))
			if marts > 0 {
				name += fmt.Sprintf(", builds %d mart(s)", marts)
			}
		}
		add(ui.Wrap("Gate 3 approved. Enter loads "+name+", reconciles every committed table (gate 4) and writes the report.", s.w, "")...)
		for _, l := range ui.Wrap("The plan runs only when its data model was approved under its current hash (lima-tui approve --gate data-model).", s.w, "") {
			add(t.Muted.Render(l))
		}
		add("")
		add(ui.Wrap(s.refreshLine(), s.w, "")...)
		return strings.Join(b, "\n")
	}
	var read, quar int64
	var bytes int64
	for _, r := range s.rows {
		read += r.read
		quar += r.quarantined
		bytes += r.bytes
	}
	elapsed := s.now().Sub(s.started)
	if !s.ended.IsZero() {
		elapsed = s.ended.Sub(s.started)
	}
	counters := fmt.Sprintf("%d table(s) · %s rows read · %s held back · %s · %s", len(s.rows), ui.Count(read), ui.Count(quar), ui.Bytes(bytes), elapsed.Round(time.Second))
	switch s.state {
	case rsRunning, rsConfirm, rsCancelling:
		add(head, s.spin.View()+" "+counters)
	default:
		add(head, counters)
	}
	add("")
	add(s.table()...)
	add("")
	switch s.state {
	case rsConfirm:
		add(t.Warn.Render(ui.StatusWarn.Glyph() + " Cancel the run? y cancels (nothing half-visible is committed), n keeps it running."))
	case rsCancelling:
		add(t.Warn.Render(ui.StatusWarn.Glyph() + " cancelling: the tables in flight are rolled back…"))
	case rsDone:
		add(s.doneLines()...)
		if s.refresh > 0 {
			add(ui.Wrap(s.refreshLine(), s.w, "")...)
		}
	case rsFailed:
		add(s.failLines()...)
	}
	return strings.Join(b, "\n")
}

// table renders the progress board: one row per table of the run.
func (s *runScreen) table() []string {
	if len(s.rows) == 0 {
		return []string{s.theme.Muted.Render("  waiting for the first table…")}
	}
	rows := make([]ui.ProgressRow, 0, len(s.rows))
	for _, r := range s.rows {
		rows = append(rows, s.view(r))
	}
	return ui.ProgressBoard(s.theme, s.w, rows)
}

func (s *runScreen) doneLines() []string {
	t := s.theme
	var out []string
	o := s.outcome
	status := "done"
	if o != nil && o.Report != nil {
		status = o.Report.Status
	}
	mark := ui.StatusOK
	switch {
	case s.err != nil || (o != nil && o.Report != nil && o.Report.Status != reports.StatusOK):
		mark = ui.StatusFailed
	case o != nil && o.Report != nil && len(o.Report.HeldBackMost) > 0:
		// Committed and balanced, but a table held back most of its rows.
		mark = ui.StatusWarn
	}
	runID := ""
	if o != nil && o.Result != nil {
		runID = o.Result.RunID
	}
	out = append(out, t.Status(mark)+" "+t.Text.Bold(true).Render(fmt.Sprintf("run %s: %s", ui.Sanitize(runID), ui.Sanitize(status))))
	if o != nil && o.Report != nil {
		for _, h := range o.Report.HeldBackMost {
			out = append(out, ui.Fit(t.Warn.Render("⚠")+" "+ui.Sanitize(h), s.w))
		}
	}
	if s.err != nil {
		out = append(out, ui.Wrap("    "+ui.Sanitize(s.err.Error()), s.w, "    ")...)
	}
	if o != nil && o.ReportPath != "" {
		rp := ui.Sanitize(o.ReportPath)
		if md := strings.TrimSuffix(o.ReportPath, filepath.Ext(o.ReportPath)) + ".md"; md != o.ReportPath {
			rp += " (and .md)"
		}
		out = append(out, ui.Fit("  report: "+rp, s.w))
	}
	if o != nil && o.Result != nil {
		out = append(out, t.Muted.Render("  balance per table: read = loaded + held back + skipped"))
		for _, tr := range o.Result.Tables {
			ok := tr.RowsRead == tr.RowsLoaded+tr.RowsQuarantined+tr.RowsSkipped
			st, rel := ui.StatusOK, "="
			if !ok {
				st, rel = ui.StatusFailed, "≠"
			}
			out = append(out, ui.Fit(fmt.Sprintf("%s %s: %s %s %s + %s + %s  (%s)", t.Status(st), ui.Sanitize(tr.Name), ui.Count(tr.RowsRead), rel,
				ui.Count(tr.RowsLoaded), ui.Count(tr.RowsQuarantined), ui.Count(tr.RowsSkipped), ui.Sanitize(tr.Status)), s.w))
		}
	}
	return out
}

func (s *runScreen) failLines() []string {
	t := s.theme
	head := "the run failed; nothing half-visible was committed"
	fix := "read the message, fix the cause, then enter runs again"
	switch {
	case errors.Is(s.err, context.Canceled):
		head, fix = "the run was cancelled; nothing half-visible was committed", "enter runs again"
	case errors.Is(s.err, flow.ErrPrecondition):
		head = "a precondition failed; nothing was written"
		fix = "esc goes back to gate 2, which shows the evidence and the fix"
	}
	out := []string{t.Failed.Render(ui.StatusFailed.Glyph()) + " " + head}
	if s.err != nil && !errors.Is(s.err, context.Canceled) {
		out = append(out, ui.Wrap("    "+ui.Sanitize(s.err.Error()), s.w, "    ")...)
	}
	return append(out, "    fix: "+fix)
}
