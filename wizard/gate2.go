package wizard

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

type gate2State int

const (
	g2Idle gate2State = iota
	g2Loading
	g2Running
	g2Done
	g2Error
)

// planLoadedMsg carries the plan gate 2 checks.
type planLoadedMsg struct {
	gen int
	p   *plan.Plan
	err error
}

// checksMsg carries gate 2's findings.
type checksMsg struct {
	gen      int
	findings []gates.Finding
}

type gate2Keys struct {
	Rerun, Next, Back, Up, Down, Page ui.Binding
}

// gate2Screen runs the preconditions and shows each with its evidence and,
// when it failed, its fix.
type gate2Screen struct {
	app      *app
	theme    ui.Theme
	w, h     int
	keys     gate2Keys
	state    gate2State
	gen      int
	plan     *plan.Plan
	pending  []string
	findings []gates.Finding
	err      string
	spin     spinner.Model
	offset   int
}

func newGate2(a *app) *gate2Screen {
	t := a.theme
	s := &gate2Screen{app: a, theme: t, spin: spinner.New(spinner.WithSpinner(spinner.Line), spinner.WithStyle(t.Running))}
	scroll := func(d int) func() tea.Cmd {
		return func() tea.Cmd { s.offset = max(0, min(s.offset+d, 1000)); return nil }
	}
	s.keys = gate2Keys{
		Rerun: ui.NewBinding("r", "re-run the checks", "r").Act(s.Start),
		Next: ui.NewBinding("enter", "continue to gate 3", "enter").Act(func() tea.Cmd {
			a.push(a.gate3)
			return a.gate3.Start()
		}),
		Back: ui.NewBinding("esc", "back to gate 1", "esc", "shift+tab").Act(func() tea.Cmd {
			a.pop()
			a.gate1.Reopen()
			return nil
		}),
		Up:   ui.NewBinding("↑/k", "scroll", "up", "k").Quiet().Act(scroll(-1)),
		Down: ui.NewBinding("↓/j", "scroll", "down", "j").Act(scroll(1)),
		Page: ui.NewBinding("pgup/pgdn", "scroll a page", "pgup", "pgdown").Quiet().Do(func(k tea.KeyPressMsg) tea.Cmd {
			if k.String() == "pgup" {
				return scroll(-max(1, s.h/2))()
			}
			return scroll(max(1, s.h/2))()
		}),
	}
	return s
}

func (s *gate2Screen) SetSize(w, h int) { s.w, s.h = w, h }
func (s *gate2Screen) Typing() bool     { return false }

// Start loads the plan and runs the checks, in Cmds.
func (s *gate2Screen) Start() tea.Cmd {
	planPath := s.app.planPath
	s.gen++
	gen := s.gen
	s.state, s.err, s.findings, s.pending, s.offset = g2Loading, "", nil, nil, 0
	load := func() tea.Msg {
		p, err := plan.Load(planPath)
		return planLoadedMsg{gen: gen, p: p, err: err}
	}
	return tea.Batch(s.spin.Tick, load)
}

func (s *gate2Screen) failed() int { return len(gates.FailedFindings(s.findings)) }

func (s *gate2Screen) Keys() []ui.Binding {
	k := s.keys
	switch s.state {
	case g2Loading, g2Running:
		k.Rerun = k.Rerun.Disable("the checks are running")
		k.Next = k.Next.Disable("the checks are running")
	case g2Error:
		k.Next = k.Next.Disable("the plan could not be read")
	case g2Done:
		if n := s.failed(); n > 0 {
			k.Next = k.Next.Disable(fmt.Sprintf("%d check(s) failed: apply the fix, then r re-runs", n))
		}
	}
	return []ui.Binding{k.Next, k.Rerun, k.Back, k.Down, k.Up, k.Page}
}

// Update handles gate 2's messages.
func (s *gate2Screen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		if s.state != g2Loading && s.state != g2Running {
			return nil
		}
		var cmd tea.Cmd
		s.spin, cmd = s.spin.Update(msg)
		return cmd
	case planLoadedMsg:
		if msg.gen != s.gen {
			return nil
		}
		if msg.err != nil {
			s.state, s.err = g2Error, msg.err.Error()
			return nil
		}
		s.plan, s.state, s.pending = msg.p, g2Running, expectedChecks(msg.p)
		p, gen, a := msg.p, msg.gen, s.app
		return func() tea.Msg { return checksMsg{gen: gen, findings: a.deps.Preconditions(a.ctx, a.ws, p)} }
	case checksMsg:
		if msg.gen != s.gen {
			return nil
		}
		s.state, s.findings, s.pending = g2Done, msg.findings, nil
	}
	return nil
}

// expectedChecks names the checks gate 2 will run, shown with spinners
// until the findings arrive.
func expectedChecks(p *plan.Plan) []string {
	var out []string
	for _, n := range p.SourceNames() {
		out = append(out, "source "+n)
	}
	for _, n := range p.TableNames() {
		if t := p.Tables[n]; t != nil && t.Source != nil && !t.IsMart() {
			out = append(out, "table "+n)
		}
	}
	return append(out, "target writable", "catalog", "state store", "lake ownership", "disk space", "memory", "clock")
}

func (s *gate2Screen) Render() string {
	t := s.theme
	head := t.Title.Render("Gate 2 · preconditions")
	var lines []string
	var verdict string
	switch s.state {
	case g2Idle, g2Loading:
		lines = append(lines, s.spin.View()+" reading the plan…")
	case g2Error:
		lines = append(lines, ui.Wrap(t.Failed.Render(ui.StatusFailed.Glyph())+" cannot read the plan: "+ui.Sanitize(s.err), s.w, "    ")...)
		lines = append(lines, "    fix: correct platform.yaml (lima-tui check shows the line), then r re-runs")
	case g2Running:
		head += "  " + t.Muted.Render(fmt.Sprintf("%d check(s) running", len(s.pending)))
		for _, n := range s.pending {
			lines = append(lines, ui.Fit(s.spin.View()+" "+ui.Sanitize(n)+"  "+t.Muted.Render("checking…"), s.w))
		}
	case g2Done:
		counts := map[string]int{}
		for _, f := range s.findings {
			counts[f.Status]++
		}
		sum := fmt.Sprintf("%d passed · %d failed · %d warning(s) · %d skipped", counts[gates.Pass], counts[gates.Fail], counts[gates.Warn], counts[gates.Skip])
		head += "  " + t.Muted.Render(sum)
		// Failed checks first, then warnings: what needs a person is on
		// the first screen; the order within each kind is gate 2's.
		shown := slices.Clone(s.findings)
		rank := map[string]int{gates.Fail: 0, gates.Warn: 1}
		slices.SortStableFunc(shown, func(a, b gates.Finding) int {
			ra, oka := rank[a.Status]
			rb, okb := rank[b.Status]
			if !oka {
				ra = 2
			}
			if !okb {
				rb = 2
			}
			return ra - rb
		})
		for _, f := range shown {
			lines = append(lines, findingLines(t, f, s.w)...)
		}
		// The verdict stays on screen below the scrolling list.
		if n := s.failed(); n > 0 {
			verdict = t.Failed.Render(ui.StatusFailed.Glyph()) + fmt.Sprintf(" %d check(s) failed: nothing will be written until they pass. Apply the fix, then press r.", n)
		} else {
			verdict = t.OK.Render(ui.StatusOK.Glyph()) + " every check passes: enter goes on to gate 3, the data model"
		}
	}
	// Scroll: the heading and the verdict stay; the list scrolls within the height.
	room := max(1, s.h-2)
	if verdict != "" {
		room = max(1, room-2)
	}
	lines = lines[min(s.offset, max(0, len(lines)-room)):]
	if len(lines) > room {
		lines = append(lines[:room-1], t.Muted.Render(fmt.Sprintf("… %d more line(s): ↓ scrolls", len(lines)-room+1)))
	}
	out := head + "\n\n" + strings.Join(lines, "\n")
	if verdict != "" {
		out += "\n\n" + ui.Fit(verdict, s.w)
	}
	return out
}
