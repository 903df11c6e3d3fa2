package wizard

import (
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// Gate 5 is the teardown: the blast radius (gates.Inventory, built by
// flow.TeardownInventory under the run lock) and the typed confirmation.
// Typing the plan's prefix exactly and pressing enter calls flow.Teardown
// with the inventory shown, which refuses when more appeared since.

type gate5State int

const (
	g5Loading gate5State = iota
	g5Ready
	g5Removing
	g5Done
	g5Error
)

type gate5InvMsg struct {
	gen int
	p   *plan.Plan
	inv *gates.Inventory
	err error
}

type gate5DoneMsg struct {
	gen int
	res *gates.TeardownResult
	err error
	// recorded is gates.teardown as written after the removal; recErr
	// says why it could not be written.
	recorded *plan.Approval
	recErr   error
}

type gate5Screen struct {
	app   *app
	theme ui.Theme
	w, h  int
	state gate5State
	gen   int
	plan  *plan.Plan
	inv   *gates.Inventory
	res   *gates.TeardownResult
	input []rune
	top   int
	msg   string
	err   string
	// by is who confirms (the root's); recorded is the record of a
	// teardown written to platform.yaml (gates.teardown).
	by       *string
	recorded *plan.Approval
}

func newGate5(a *app) *gate5Screen { return &gate5Screen{app: a, theme: a.theme} }

func (s *gate5Screen) SetSize(w, h int) { s.w, s.h = w, h }

// Typing: the confirmation field has the focus while the blast radius shows.
func (s *gate5Screen) Typing() bool { return s.state == g5Ready }

// removed reports whether a teardown ran and removed the lake.
func (s *gate5Screen) removed() bool { return s.state == g5Done && s.err == "" && s.res != nil }

func (s *gate5Screen) prefix() string {
	if s.inv != nil && s.inv.Prefix != "" {
		return s.inv.Prefix
	}
	if s.plan != nil {
		return s.plan.Platform.Prefix
	}
	return ""
}

// approver is who confirms the teardown.
func (s *gate5Screen) approver() string {
	if s.by == nil || *s.by == "" {
		return "lima-tui"
	}
	return *s.by
}

// Start builds the blast radius in a Cmd.
func (s *gate5Screen) Start() tea.Cmd {
	d, ws, planPath, ctx := s.app.deps, s.app.ws, s.app.planPath, s.app.ctx
	s.gen++
	gen := s.gen
	s.state, s.inv, s.res, s.input, s.top, s.msg, s.err = g5Loading, nil, nil, nil, 0, "", ""
	return func() tea.Msg {
		p, err := plan.Load(planPath)
		if err != nil {
			return gate5InvMsg{gen: gen, err: err}
		}
		inv, err := d.TeardownInventory(ctx, flow.TeardownOptions{Workspace: ws, Plan: p, PlanPath: planPath})
		return gate5InvMsg{gen: gen, p: p, inv: inv, err: err}
	}
}

func (s *gate5Screen) Keys() []ui.Binding {
	nb := ui.NewBinding
	back := nb("esc", "back", "esc", "shift+tab").Act(func() tea.Cmd {
		s.app.pop()
		s.app.recon.tornDown = s.removed()
		return nil
	})
	scroll := nb("↑/↓", "scroll", "up", "down").Do(func(msg tea.KeyPressMsg) tea.Cmd {
		if msg.String() == "up" {
			s.top = max(0, s.top-1)
		} else {
			s.top++
		}
		return nil
	})
	page := nb("pgup/pgdn", "scroll a page", "pgup", "pgdown").Quiet().Do(func(msg tea.KeyPressMsg) tea.Cmd {
		if msg.String() == "pgup" {
			s.top = max(0, s.top-max(1, s.h/2))
		} else {
			s.top += max(1, s.h/2)
		}
		return nil
	})
	switch s.state {
	case g5Ready:
		confirm := nb("enter", "remove", "enter").Act(s.remove)
		if string(s.input) != s.prefix() {
			confirm = confirm.Disable("type the prefix " + s.prefix() + " exactly first")
		}
		if s.inv != nil && s.inv.Blocked() {
			confirm = confirm.Disable("a failed finding blocks the teardown")
		}
		return []ui.Binding{confirm, nb("esc", "back, nothing removed", "esc", "shift+tab").Do(back.Run), scroll, page}
	case g5Loading, g5Removing:
		return []ui.Binding{nb("ctrl+c", "quit", "ctrl+c").Act(func() tea.Cmd { return tea.Quit })}
	}
	return []ui.Binding{back, scroll, page}
}

// Refuse says why enter removes nothing.
func (s *gate5Screen) Refuse(b ui.Binding) { s.msg = "not removed: " + b.Reason }

// remove calls the teardown with the inventory shown and the prefix typed.
func (s *gate5Screen) remove() tea.Cmd {
	d, ws, planPath, ctx := s.app.deps, s.app.ws, s.app.planPath, s.app.ctx
	s.state, s.msg = g5Removing, ""
	gen, typed, inv, p, by := s.gen, string(s.input), s.inv, s.plan, s.approver()
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	return func() tea.Msg {
		_, res, err := d.Teardown(ctx, flow.TeardownOptions{Workspace: ws, Plan: p, PlanPath: planPath, Shown: inv}, typed)
		out := gate5DoneMsg{gen: gen, res: res, err: err}
		if err == nil {
			out.recorded, out.recErr = flow.RecordTeardown(planPath, by, now())
		}
		return out
	}
}

// Update handles gate 5's messages and the typing of the prefix.
func (s *gate5Screen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case gate5InvMsg:
		if msg.gen != s.gen {
			return nil
		}
		if msg.err != nil {
			s.state, s.err = g5Error, msg.err.Error()
			return nil
		}
		s.plan, s.inv, s.state = msg.p, msg.inv, g5Ready
	case gate5DoneMsg:
		if msg.gen != s.gen {
			return nil
		}
		s.res, s.state, s.top, s.recorded = msg.res, g5Done, 0, msg.recorded
		if msg.err == nil && msg.recErr != nil {
			s.err = "removed, but who confirmed it could not be recorded in platform.yaml: " + msg.recErr.Error()
		}
		if msg.err != nil {
			s.err = msg.err.Error()
			if errors.Is(msg.err, gates.ErrNotConfirmed) || errors.Is(msg.err, gates.ErrTeardownBlocked) {
				s.err = "nothing was removed: " + s.err
			}
		}
	case tea.KeyPressMsg:
		if s.state != g5Ready {
			return nil
		}
		switch k := msg.String(); {
		case k == "backspace":
			if len(s.input) > 0 {
				s.input = s.input[:len(s.input)-1]
			}
		case k == "ctrl+u":
			s.input = nil
		case msg.Text != "":
			s.input = append(s.input, []rune(msg.Text)...)
		}
		s.msg = ""
	}
	return nil
}

func (s *gate5Screen) Render() string {
	t := s.theme
	head := t.Title.Render("Gate 5 · teardown")
	var body []string
	var foot []string
	switch s.state {
	case g5Loading:
		return head + "\n\n" + t.Muted.Render("measuring the blast radius…")
	case g5Error:
		return head + "\n\n" + strings.Join(ui.Wrap(t.Failed.Render(ui.StatusFailed.Glyph())+" "+ui.Sanitize(s.err), s.w, "    "), "\n") +
			"\n    " + t.Muted.Render("nothing was removed; esc goes back")
	case g5Ready, g5Removing:
		head += "  " + t.Warn.Render(ui.StatusWarn.Glyph()+" removes what is listed below")
		body = strings.Split(strings.TrimRight(s.inv.Summary(), "\n"), "\n")
		p := ui.Sanitize(s.prefix())
		foot = append(foot, ui.Fit(fmt.Sprintf("Type the prefix %s and press enter to remove it; esc goes back and removes nothing.", t.Key.Render(p)), s.w))
		foot = append(foot, ui.Fit(t.Muted.Render("confirmed as "+ui.Sanitize(s.approver())+", recorded in platform.yaml (gates.teardown)"), s.w))
		typed := ui.Sanitize(string(s.input))
		mark := ""
		if string(s.input) == s.prefix() {
			mark = "  " + t.OK.Render(ui.StatusOK.Glyph()) + " matches"
		}
		cursor := "█"
		if s.state == g5Removing {
			cursor, mark = "", "  "+t.Muted.Render("removing…")
		}
		foot = append(foot, ui.Fit("> "+typed+cursor+mark, s.w))
		if s.msg != "" {
			foot = append(foot, ui.Fit(t.Warn.Render(ui.StatusWarn.Glyph())+" "+ui.Sanitize(s.msg), s.w))
		}
	case g5Done:
		if s.res != nil {
			body = strings.Split(strings.TrimRight(s.res.Summary(), "\n"), "\n")
		}
		if s.err != "" {
			foot = append(foot, ui.Wrap(t.Failed.Render(ui.StatusFailed.Glyph())+" "+ui.Sanitize(s.err), s.w, "  ")...)
		} else {
			foot = append(foot, t.OK.Render(ui.StatusOK.Glyph())+" removed; platform.yaml is kept, so the wizard can build it again")
			if a := s.recorded; a != nil {
				foot = append(foot, ui.Fit(t.Muted.Render("confirmed by "+ui.Sanitize(a.ApprovedBy)+" at "+ui.Sanitize(a.ApprovedAt)+" (gates.teardown)"), s.w))
			}
		}
	}
	for i, l := range body {
		body[i] = ui.Fit(ui.Sanitize(l), s.w)
	}
	room := max(1, s.h-2-len(foot)-1)
	s.top = max(0, min(s.top, len(body)-room))
	view := body[s.top:min(len(body), s.top+room)]
	if more := len(body) - s.top - len(view); more > 0 {
		view = append(view[:len(view)-1:len(view)-1], t.Muted.Render(fmt.Sprintf("… %d more line(s): ↓ scrolls", more+1)))
	}
	for len(view) < room {
		view = append(view, "")
	}
	return head + "\n\n" + strings.Join(view, "\n") + "\n" + strings.Join(foot, "\n")
}
