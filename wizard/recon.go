package wizard

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

// The reconciliation browser shows gate 4 as the run produced it (the
// run's report): per table the counts, the control totals with their
// variance and the checks, and a bar chart of the rows loaded and held
// back. Enter drills into a table: its failed checks first, the control
// totals, the sample rows side by side (source, lake) and its exceptions
// by rule and owner, counted by the ledger.

// reconCountsMsg carries one table's exceptions by rule and owner.
type reconCountsMsg struct {
	table          string
	byRule, byOwer map[string]int64
	err            error
}

type reconKeys struct {
	Drill, Exceptions, Teardown, Back, Up, Down ui.Binding
}

type reconScreen struct {
	app    *app
	theme  ui.Theme
	w, h   int
	keys   reconKeys
	report *reports.Report
	// past: the report is the last run's, opened without running — its
	// gate 4 is what was checked then, and the screen says so.
	past   bool
	cur    int
	drill  bool
	top    int // scroll of the drill view
	counts map[string]reconCountsMsg
	// tornDown: gate 5 removed the lake after this run.
	tornDown bool
}

func newRecon(a *app) *reconScreen {
	nb := ui.NewBinding
	s := &reconScreen{app: a, theme: a.theme, counts: map[string]reconCountsMsg{}}
	s.keys = reconKeys{
		Drill: nb("enter", "open table", "enter").Act(func() tea.Cmd {
			s.drill, s.top = true, 0
			if tr, ok := s.table(); ok && !s.tornDown {
				if _, done := s.counts[tr.Name]; !done {
					return countsCmd(a.ctx, a.store, tr)
				}
			}
			return nil
		}),
		Exceptions: nb("e", "exceptions", "e").Act(func() tea.Cmd { return a.openExceptions(ledger.Filter{}) }),
		Teardown:   nb("T", "teardown", "T").Act(a.openTeardown),
		Back:       nb("esc", "back", "esc", "shift+tab").Act(func() tea.Cmd { a.pop(); return nil }),
		Up:         nb("↑/k", "move", "up", "k").Quiet().Act(func() tea.Cmd { s.cur = max(0, s.cur-1); return nil }),
		Down: nb("↓/j", "move", "down", "j").Act(func() tea.Cmd {
			if s.report != nil {
				s.cur = max(0, min(len(s.report.Tables)-1, s.cur+1))
			}
			return nil
		}),
	}
	return s
}

func (s *reconScreen) SetSize(w, h int) { s.w, s.h = w, h }
func (s *reconScreen) Typing() bool     { return false }

// Show sets the run's report.
func (s *reconScreen) Show(r *reports.Report) {
	s.report, s.cur, s.drill, s.top, s.tornDown, s.past = r, 0, false, 0, false, false
	s.counts = map[string]reconCountsMsg{}
}

func (s *reconScreen) table() (reports.TableReport, bool) {
	if s.report == nil || s.cur >= len(s.report.Tables) {
		return reports.TableReport{}, false
	}
	return s.report.Tables[s.cur], true
}

func (s *reconScreen) Keys() []ui.Binding {
	k := s.keys
	nb := ui.NewBinding
	if s.drill {
		scroll := func(d func() int) func() tea.Cmd { return func() tea.Cmd { s.top = max(0, s.top+d()); return nil } }
		k.Back = nb("esc", "back", "esc", "shift+tab").Act(func() tea.Cmd { s.drill = false; return nil })
		k.Drill = nb("enter", "its exceptions", "enter").Act(func() tea.Cmd {
			f := ledger.Filter{}
			if tr, ok := s.table(); ok {
				f.Table = tr.Name
			}
			return s.app.openExceptions(f)
		})
		if s.tornDown {
			k.Drill = k.Drill.Disable("torn down: the ledger is gone")
		}
		k.Up = nb("↑/k", "scroll", "up", "k").Quiet().Act(scroll(func() int { return -1 }))
		k.Down = nb("↓/j", "scroll", "down", "j").Act(scroll(func() int { return 1 }))
		page := nb("pgup/pgdn", "scroll a page", "pgup", "pgdown", "space").Quiet().Do(func(msg tea.KeyPressMsg) tea.Cmd {
			if msg.String() == "pgup" {
				return scroll(func() int { return -max(1, s.h/2) })()
			}
			return scroll(func() int { return max(1, s.h/2) })()
		})
		return []ui.Binding{k.Drill, k.Back, k.Down, k.Teardown, k.Up, page}
	}
	if s.tornDown {
		k.Exceptions = k.Exceptions.Disable("torn down: the ledger is gone")
	}
	if s.report == nil || len(s.report.Tables) == 0 {
		k.Drill = k.Drill.Disable("no table in this run")
	}
	return []ui.Binding{k.Drill, k.Exceptions, k.Down, k.Teardown, k.Back, k.Up}
}

// countsCmd asks the ledger for the table's exceptions of this load.
func countsCmd(ctx context.Context, st ledger.Store, tr reports.TableReport) tea.Cmd {
	if st == nil {
		return nil
	}
	f := ledger.Filter{Table: tr.Name, LoadID: tr.LoadID}
	return func() tea.Msg {
		m := reconCountsMsg{table: tr.Name}
		m.byRule, m.err = st.CountBy(ctx, f, ledger.ByRule)
		if m.err == nil {
			m.byOwer, m.err = st.CountBy(ctx, f, ledger.ByOwner)
		}
		return m
	}
}

// Update takes the ledger's counts of a table's exceptions.
func (s *reconScreen) Update(msg tea.Msg) tea.Cmd {
	if msg, ok := msg.(reconCountsMsg); ok {
		s.counts[msg.table] = msg
	}
	return nil
}

func gateGlyph(t ui.Theme, status string) string {
	return t.Status(statusOf(status))
}

func (s *reconScreen) Render() string {
	if s.report == nil {
		return s.theme.Title.Render("Gate 4 · reconciliation") + "\n\n" + s.theme.Muted.Render("no run yet: the reconciliation shows after a run")
	}
	if s.drill {
		return s.renderDrill()
	}
	return s.renderList()
}

func (s *reconScreen) renderList() string {
	t := s.theme
	r := s.report
	var out []string
	add := func(l ...string) { out = append(out, l...) }
	verdict := t.OK.Render(ui.StatusOK.Glyph()) + " every table reconciles"
	if r.Headline != "" && r.Headline != reports.HeadlineAll {
		verdict = t.OK.Render(ui.StatusOK.Glyph()) + " " + ui.Sanitize(r.Headline)
		if len(r.NotChecked) > 0 {
			verdict = t.Warn.Render(ui.StatusWarn.Glyph()) + " " + ui.Sanitize(r.Headline)
		}
	}
	switch r.Status {
	case reports.StatusReconciliationFailed:
		verdict = t.Failed.Render(ui.StatusFailed.Glyph()) + " loaded, but gate 4 failed"
	case reports.StatusFailed:
		verdict = t.Failed.Render(ui.StatusFailed.Glyph()) + " the run failed"
	}
	add(ui.Fit(t.Title.Render("Gate 4 · reconciliation")+"  "+t.Muted.Render("run "+ui.Sanitize(r.RunID))+"  "+verdict, s.w))
	if s.past {
		add(ui.Fit(t.Muted.Render("the last run's report, as gate 4 checked it when the run ended ("+r.FinishedAt.UTC().Format("2006-01-02 15:04 UTC")+"); lima-tui reconcile checks the lake again"), s.w))
	}
	for _, h := range r.HeldBackMost {
		add(ui.Fit(t.Warn.Render("⚠")+" "+ui.Sanitize(h), s.w))
	}
	if s.tornDown {
		add(ui.Fit(t.Warn.Render(ui.StatusWarn.Glyph())+" torn down since (gate 5): these tables and their exceptions are gone", s.w))
	}
	add("")
	// The columns are as wide as their widest value (2,000,020 rows need
	// more than 8 cells); the table names take what is left, so the counts,
	// the balance and the checks are never cut.
	type reconRow struct{ read, loaded, held, skip, bal, totals, checks string }
	rowsOf := make([]reconRow, len(r.Tables))
	wRead, wLoaded, wHeld, wSkip, wTotals, wChecks := len("read"), len("loaded"), len("held"), len("skip"), len("totals"), len("checks")
	for i, tr := range r.Tables {
		bal := ui.StatusOK.Glyph() + " yes"
		if !tr.Balanced {
			bal = ui.StatusFailed.Glyph() + " NO"
		}
		exact, off := 0, 0
		for _, ct := range tr.ControlTotals {
			if ct.Variance == "" || ct.Variance == "0" || strings.Trim(ct.Variance, "0.") == "" {
				exact++
			} else {
				off++
			}
		}
		totals := fmt.Sprintf("%d match", exact)
		if off > 0 {
			totals = fmt.Sprintf("%d off", off)
		}
		if len(tr.ControlTotals) == 0 {
			totals = "–"
		}
		// The count report.md gives (reports.ChecksLine): every check.
		pass, _, fail, all := reports.CheckCounts(tr.Checks)
		checks := fmt.Sprintf("%s %d/%d", gateGlyph(t, tr.Reconciliation), pass, all)
		if fail > 0 { // warnings are in the count, named on the table's screen
			checks += fmt.Sprintf(" (%d failed)", fail)
		}
		rw := reconRow{ui.Count(tr.RowsRead), ui.Count(tr.RowsLoaded), ui.Count(tr.RowsQuarantined), ui.Count(tr.RowsSkipped), bal, totals, checks}
		rowsOf[i] = rw
		wRead, wLoaded, wHeld, wSkip = max(wRead, len(rw.read)), max(wLoaded, len(rw.loaded)), max(wHeld, len(rw.held)), max(wSkip, len(rw.skip))
		wTotals, wChecks = max(wTotals, ui.Width(totals)), max(wChecks, ui.Width(checks))
	}
	const wBal = 8
	// marker(2) name sp read sp loaded sp held sp skip 2sp bal sp totals sp checks
	fixed := 2 + 1 + wRead + 1 + wLoaded + 1 + wHeld + 1 + wSkip + 2 + wBal + 1 + wTotals + 1 + wChecks
	nw := 8
	for _, tr := range r.Tables {
		nw = max(nw, ui.Width(ui.Sanitize(tr.Name)))
	}
	nw = min(nw, max(8, s.w-fixed))
	add(t.Muted.Render(ui.Fit(fmt.Sprintf("  %-*s %*s %*s %*s %*s  %-*s %-*s %s", nw, "table", wRead, "read", wLoaded, "loaded", wHeld, "held", wSkip, "skip", wBal, "balance", wTotals, "totals", "checks"), s.w)))
	// With more tables than fit, the table and the chart show a window
	// of them around the focused one.
	lo, hi := s.window(len(r.Tables))
	if lo > 0 {
		add(t.Muted.Render(fmt.Sprintf("  … %d table(s) above", lo)))
	}
	for i := lo; i < hi; i++ {
		tr := r.Tables[i]
		rw := rowsOf[i]
		marker := t.Blank
		if i == s.cur {
			marker = t.FocusMarker
		}
		name := ui.Fit(ui.Sanitize(tr.Name), nw)
		name += strings.Repeat(" ", max(0, nw-ui.Width(name)))
		if i == s.cur {
			name = t.Focus.Render(name)
		}
		add(ui.Fit(fmt.Sprintf("%s %s %*s %*s %*s %*s  %s %s %s", marker, name, wRead, rw.read, wLoaded, rw.loaded,
			wHeld, rw.held, wSkip, rw.skip, padTo(rw.bal, wBal), padTo(rw.totals, wTotals), rw.checks), s.w))
	}
	if hi < len(r.Tables) {
		add(t.Muted.Render(fmt.Sprintf("  … %d table(s) below: ↓ moves", len(r.Tables)-hi)))
	}
	for _, m := range r.Marts {
		add(ui.Fit(fmt.Sprintf("%s mart %s → %s: %s, %s rows from %s fact rows", gateGlyph(t, m.Reconciliation), ui.Sanitize(m.Name),
			ui.Sanitize(m.Table), ui.Sanitize(m.Status), ui.Count(m.Rows), ui.Count(m.FactRows)), s.w))
	}
	// The bar chart: loaded (=) and held back (!) per table, to scale.
	add("", t.Muted.Render("rows loaded (=) and held back (!) per table"))
	var most int64 = 1
	for _, tr := range r.Tables {
		most = max(most, tr.RowsLoaded+tr.RowsQuarantined)
	}
	bw := max(10, min(40, s.w-nw-30))
	for _, tr := range r.Tables[lo:hi] {
		l := int(math.Round(float64(tr.RowsLoaded) / float64(most) * float64(bw)))
		q := int(math.Ceil(float64(tr.RowsQuarantined) / float64(most) * float64(bw)))
		name := ui.Fit(ui.Sanitize(tr.Name), nw)
		name += strings.Repeat(" ", max(0, nw-ui.Width(name)))
		bar := strings.Repeat("=", l) + t.Warn.Render(strings.Repeat("!", q)) + strings.Repeat(" ", max(0, bw-l-q))
		add(ui.Fit(fmt.Sprintf("  %s %s %s loaded · %s held", name, bar, ui.Count(tr.RowsLoaded), ui.Count(tr.RowsQuarantined)), s.w))
	}
	if r.Exceptions.Total > 0 { // the words of the run summary and report.md; wrapped, never cut
		g := ui.StatusWarn.Glyph()
		lines := ui.Wrap(g+fmt.Sprintf(" %s — owners: %s; e opens the exception browser",
			reports.HeldBack(r.Exceptions, ui.Count), ui.Sanitize(countList(r.Exceptions.ByOwner))), s.w, "  ")
		lines[0] = t.Warn.Render(g) + strings.TrimPrefix(lines[0], g)
		add("")
		add(lines...)
	}
	return strings.Join(out, "\n")
}

// window is the range of tables shown: all when they fit (the table and
// the chart take a line per table each, around 10 lines of frame), else
// a window around the focused table.
func (s *reconScreen) window(n int) (int, int) {
	room := max(2, (s.h-10-len(s.report.Marts))/2)
	if n <= room {
		return 0, n
	}
	room = max(1, room-1) // a "… more" line
	lo := max(0, min(s.cur-room/2, n-room))
	return lo, lo + room
}

// countList renders counts as "a 3, b 1", largest first.
func countList(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		name := k
		if name == "" {
			name = "(no owner)"
		}
		parts[i] = fmt.Sprintf("%s %s", name, ui.Count(m[k]))
	}
	return strings.Join(parts, ", ")
}

func (s *reconScreen) renderDrill() string {
	t := s.theme
	tr, _ := s.table()
	var lines []string
	add := func(l ...string) { lines = append(lines, l...) }
	head := ui.Fit(t.Title.Render("Gate 4 · "+ui.Sanitize(tr.Name))+"  "+gateGlyph(t, tr.Reconciliation)+" "+ui.Sanitize(tr.Reconciliation)+
		t.Muted.Render(fmt.Sprintf("  snapshot %d · %s", tr.SnapshotID, ui.Sanitize(tr.Status))), s.w)
	rel := "="
	if !tr.Balanced {
		rel = "≠"
	}
	add(fmt.Sprintf("read %s %s loaded %s + held back %s + skipped %s", ui.Count(tr.RowsRead), rel, ui.Count(tr.RowsLoaded), ui.Count(tr.RowsQuarantined), ui.Count(tr.RowsSkipped)))

	var failed, rest []gates.Finding
	for _, c := range tr.Checks {
		if c.Status == gates.Fail {
			failed = append(failed, c)
		} else {
			rest = append(rest, c)
		}
	}
	add("", t.Title.Render(fmt.Sprintf("Failed checks (%d)", len(failed))))
	if len(failed) == 0 {
		add(t.OK.Render(ui.StatusOK.Glyph()) + " none")
	}
	for _, f := range failed {
		add(findingLines(t, f, s.w)...)
	}

	add("", t.Title.Render("Control totals"))
	if len(tr.ControlTotals) == 0 {
		add(t.Muted.Render("  none (no integer or decimal column to sum)"))
	} else {
		add(t.Muted.Render(ui.Fit(fmt.Sprintf("  %-20s %18s %18s %12s", "column", "source", "lake", "variance"), s.w)))
		for _, c := range slices.Sorted(maps.Keys(tr.ControlTotals)) {
			ct := tr.ControlTotals[c]
			g := ui.StatusOK
			if ct.Variance != "" && strings.Trim(ct.Variance, "0.") != "" {
				g = ui.StatusFailed
			}
			kind := "exact"
			if !ct.Exact {
				kind = "tolerance"
			}
			add(ui.Fit(fmt.Sprintf("%s %-20s %18s %18s %12s  %s", t.Status(g), ui.Sanitize(c), ui.Sanitize(ct.Source), ui.Sanitize(ct.Target), ui.Sanitize(orZero(ct.Variance)), kind), s.w))
		}
	}

	add("", t.Title.Render("Exceptions of this load"))
	c, ok := s.counts[tr.Name]
	switch {
	case tr.RowsQuarantined == 0 && (!ok || len(c.byRule) == 0):
		add(t.OK.Render(ui.StatusOK.Glyph()) + " none held back")
	case !ok:
		add(t.Muted.Render("  counting in the ledger…"))
	case c.err != nil:
		add(t.Failed.Render(ui.StatusFailed.Glyph()) + " " + ui.Sanitize(c.err.Error()))
	default:
		add(ui.Fit("  by rule:  "+ui.Sanitize(countList(c.byRule)), s.w))
		add(ui.Fit("  by owner: "+ui.Sanitize(countList(c.byOwer)), s.w))
		add(t.Muted.Render("  enter opens them in the exception browser"))
	}

	add("", t.Title.Render(fmt.Sprintf("Sample rows, source | lake (%d)", len(tr.Samples))))
	if len(tr.Samples) == 0 {
		add(t.Muted.Render("  none for this table (nothing loaded in this run)"))
	}
	half := max(10, (s.w-26)/2)
	for _, sp := range tr.Samples {
		g := ui.StatusOK
		if !sp.Match {
			g = ui.StatusFailed
		}
		add(ui.Fit(t.Status(g)+" "+t.Text.Bold(true).Render(ui.Sanitize(sp.Locator)), s.w))
		for _, c := range slices.Sorted(maps.Keys(sp.Source)) {
			src, lake := sp.Source[c], sp.Lake[c]
			mark := " "
			if sp.Lake != nil && src != lake {
				mark = ui.StatusFailed.Glyph()
			}
			if raw, ok := sp.Raw[c]; ok { // the text as read, then the value cleaned
				src = raw + " → " + src
			}
			add(ui.Fit(fmt.Sprintf("  %s %-20s %s │ %s", mark, ui.Fit(ui.Sanitize(c), 20), padTo(ui.Fit(ui.Sanitize(src), half), half), ui.Fit(ui.Sanitize(lake), half)), s.w))
		}
	}

	if len(rest) > 0 {
		add("", t.Title.Render(fmt.Sprintf("Other checks (%d)", len(rest))))
		for _, f := range rest {
			add(findingLines(t, f, s.w)...)
		}
	}

	room := max(1, s.h-2)
	s.top = max(0, min(s.top, len(lines)-room))
	view := lines[s.top:min(len(lines), s.top+room)]
	if more := len(lines) - s.top - len(view); more > 0 {
		view[len(view)-1] = t.Muted.Render(fmt.Sprintf("… %d more line(s): ↓ scrolls", more+1))
	}
	return head + "\n\n" + strings.Join(view, "\n")
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func padTo(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-ui.Width(s)))
}
