package wizard

import (
	"context"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// keyUniverse is every key the key walk presses: the printable ASCII
// characters, space, the named keys and the control keys the wizard
// knows, by the name a binding gives them.
func keyUniverse() map[string]tea.KeyPressMsg {
	out := map[string]tea.KeyPressMsg{}
	add := func(k tea.KeyPressMsg) { out[k.String()] = k }
	for r := rune(0x21); r <= 0x7e; r++ {
		add(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	add(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	for _, c := range []rune{tea.KeyEscape, tea.KeyEnter, tea.KeyTab, tea.KeyBackspace, tea.KeyUp, tea.KeyDown, tea.KeyLeft, tea.KeyRight,
		tea.KeyPgUp, tea.KeyPgDown, tea.KeyHome, tea.KeyEnd, tea.KeyDelete} {
		add(tea.KeyPressMsg{Code: c})
	}
	add(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	add(tea.KeyPressMsg{Code: 'n', Mod: tea.ModShift})
	for _, c := range "cdu" {
		add(tea.KeyPressMsg{Code: c, Mod: tea.ModCtrl})
	}
	return out
}

// checkKeys holds what the screen shown says about its keys against what
// the keys do:
//   - every binding has a handler, every key of it is a key that exists,
//     and at least one of its keys reaches it (an earlier binding with all
//     of its keys would shadow it);
//   - every enabled binding of the key line is on the key line (at 100×30
//     it is whole), and every binding is in the help;
//   - a key no binding has does nothing — no command, the screen, the
//     stack and the top unchanged — unless a field has the focus (then it
//     is text);
//   - a disabled binding pressed says something (its reason) and does
//     nothing else.
func checkKeys(t *testing.T, h *harness, state string) {
	t.Helper()
	m := h.m
	keys := keyUniverse()
	bs := m.keyBindings(false)
	typing := m.typing()
	_, full := m.top().(fullScreen)
	small := ui.Classify(m.w, m.h) == ui.SizeTooSmall
	screen := h.screen()
	if small && !strings.Contains(screen, "q or ctrl+c") {
		t.Errorf("%s: the too-small screen does not say q or ctrl+c:\n%s", state, screen)
	}
	lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	keyLine := strings.Join(lines[max(0, len(lines)-2):], "\n")
	if len(bs) == 0 {
		t.Fatalf("%s: no bindings", state)
	}
	for i, b := range bs {
		name := b.Help().Key + " " + b.Help().Desc
		if b.Enabled() && b.Run == nil {
			t.Errorf("%s: %q has no handler", state, name)
		}
		reached := false
		for _, k := range b.Keys() {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s: %q has the key %q, which no key press is", state, name, k)
			}
			if !slices.ContainsFunc(bs[:i], func(o ui.Binding) bool { return slices.Contains(o.Keys(), k) }) {
				reached = true
			}
		}
		if !reached {
			t.Errorf("%s: %q is shadowed: an earlier binding has each of its keys %v", state, name, b.Keys())
		}
		if b.Enabled() && !b.HelpOnly && !small && !strings.Contains(keyLine, name) {
			t.Errorf("%s: %q acts but is not on the key line:\n%s", state, name, keyLine)
		}
	}
	if !typing && !small {
		// The help lists every binding, help-only ones included; closing
		// it shows the screen as it was.
		listed := m.top().Keys()
		if full {
			listed = m.exc.screenKeys()
		}
		if _, cmd := m.Update(keys["?"]); cmd != nil {
			t.Errorf("%s: ? returned a command", state)
		}
		help := h.screen()
		for _, b := range listed {
			if name := b.Help().Key + " " + b.Help().Desc; b.Help().Key != "?" && !strings.Contains(help, name) {
				t.Errorf("%s: %q is not in the help:\n%s", state, name, help)
			}
		}
		m.Update(keys["esc"])
		if got := h.screen(); got != screen {
			t.Errorf("%s: ? then esc does not come back to the screen:\n%s", state, got)
		}
	}
	if !typing {
		// A key no binding has does nothing.
		for k, msg := range keys {
			if _, ok := ui.Find(bs, msg); ok {
				continue
			}
			depth, top := len(m.stack), m.top()
			_, cmd := m.Update(msg)
			if got := h.screen(); cmd != nil || got != screen || len(m.stack) != depth || m.top() != top {
				t.Errorf("%s: %q is on neither the key line nor the help, but it acts (command %v, stack %d→%d):\n%s", state, k, cmd != nil, depth, len(m.stack), got)
				return
			}
		}
	}
	// A disabled binding pressed says why, and does nothing else.
	for _, b := range bs {
		if b.Enabled() {
			continue
		}
		msg, ok := keys[b.Keys()[0]]
		if !ok || (typing && msg.Text != "") {
			continue
		}
		before, depth := h.screen(), len(m.stack)
		_, cmd := m.Update(msg)
		reason := b.Reason[:min(len(b.Reason), 20)]
		if got := h.screen(); cmd != nil || (got == before && !strings.Contains(got, reason)) || len(m.stack) != depth {
			t.Errorf("%s: disabled %q pressed: command %v, stack %d→%d, and the screen says nothing new:\n%s",
				state, b.Help().Key+" "+b.Help().Desc, cmd != nil, depth, len(m.stack), got)
		}
	}
}

// TestKeysDoWhatTheKeyLineAndHelpSay walks the wizard through a table of
// states — every screen, the help, a too-small terminal, a disabled key —
// and holds each to checkKeys.
func TestKeysDoWhatTheKeyLineAndHelpSay(t *testing.T) {
	// Gate 1's questions: a text field, a select, the summary.
	h := newHarness(t, t.TempDir(), Deps{})
	h.contains("question 1 of")
	checkKeys(t, h, "gate 1, the source folder (typed)")
	h.key("enter")
	h.contains("Which prefix")
	h.key("enter")
	h.contains("In which region")
	checkKeys(t, h, "gate 1, a select")
	h.key("ctrl+d")
	h.contains("all questions answered")
	checkKeys(t, h, "gate 1, answered")

	// Gate 2 with a failed check: enter is disabled and says why.
	g2 := toGate2(t, Deps{Preconditions: func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding { return gate2Findings() }})
	g2.contains("1 check(s) failed")
	checkKeys(t, g2, "gate 2, a check failed")

	// The demo through every gate.
	st := seedLedger(t, 6)
	d := Deps{
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			return &flow.Outcome{Report: reconReport(), Result: &run.Result{RunID: "r-1"}}, nil
		},
		OpenLedger: func(context.Context, flow.Workspace, *plan.Plan) (ledger.Store, error) { return nopClose{st}, nil },
		TeardownInventory: func(context.Context, flow.TeardownOptions) (*gates.Inventory, error) {
			return teardownInventory(), nil
		},
	}
	h, _ = toGate3(t, d)
	checkKeys(t, h, "gate 3")
	h.key("t")
	h.contains("set the type")
	checkKeys(t, h, "gate 3, the type picker")
	h.key("esc", "x")
	h.contains("Reject the model?")
	checkKeys(t, h, "gate 3, reject?")
	h.key("esc", "e")
	h.contains("keep the edits")
	checkKeys(t, h, "gate 3, the edit screen")
	h.key("n")
	h.contains("rename")
	checkKeys(t, h, "gate 3, the rename field (typed)")
	h.key("esc", "esc", "enter")
	h.contains("Gate 3 approved. Enter loads")
	checkKeys(t, h, "the run, ready")
	h.key("enter")
	h.contains("enter gate 4: reconciliation")
	checkKeys(t, h, "the run, done")
	h.key("enter")
	h.contains("Gate 4 · reconciliation")
	checkKeys(t, h, "gate 4")
	h.key("enter")
	h.contains("Gate 4 · inspections")
	checkKeys(t, h, "gate 4, a table")
	h.key("esc", "e")
	h.contains("Lima exceptions")
	checkKeys(t, h, "the exception queue")
	h.key("enter")
	h.contains("history")
	checkKeys(t, h, "the exception queue, an exception")
	h.key("esc", "/")
	checkKeys(t, h, "the exception queue, the filter (typed)")
	h.key("esc", "o")
	h.contains("owners · open exceptions")
	checkKeys(t, h, "the exception queue, the owner picker (typed)")
	h.key("esc", "a")
	h.contains("the name typed")
	checkKeys(t, h, "the exception queue, assign with the owner picker (typed)")
	h.key("esc", "esc")
	h.contains("Gate 4 · reconciliation")
	h.key("T")
	h.contains("Type the prefix erp_quality")
	checkKeys(t, h, "gate 5 (typed)")
	h.key("esc")
	h.contains("Gate 4 · reconciliation")

	// Too small: q and ctrl+c, as the screen says.
	h.send(tea.WindowSizeMsg{Width: 50, Height: 12})
	h.contains("terminal too small", "q or ctrl+c quits")
	checkKeys(t, h, "too small")

	// The approver's name, asked first.
	w := newAskingHarness(t, t.TempDir(), Deps{}, "Ji-woo Park", "git config user.name")
	w.contains("Who is approving?")
	checkKeys(t, w, "who (typed)")
}

// TestDisabledKeySaysWhy: a disabled key pressed on a screen without a
// message line of its own says its reason on the key line, until the next
// key.
func TestDisabledKeySaysWhy(t *testing.T) {
	h := toGate2(t, Deps{Preconditions: func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding { return gate2Findings() }})
	h.contains("1 check(s) failed")
	h.key("enter")
	h.contains("! enter: 1 check(s) failed: apply the fix, then r re-runs", "Gate 2 · preconditions")
	h.key("/")
	h.contains("! /: nothing to filter on this screen")
	h.key("j")
	if s := h.screen(); strings.Contains(s, "! /:") || !strings.Contains(s, "r re-run the checks") {
		t.Errorf("the reason stays after the next key:\n%s", s)
	}
}

// TestHelpOnlyBindingsStayOffTheKeyLine: the key line draws the enabled
// bindings that are not help-only; the help draws them all.
func TestHelpOnlyBindingsStayOffTheKeyLine(t *testing.T) {
	th := ui.MustTheme(ui.ThemeMono)
	bs := []ui.Binding{ui.NewBinding("enter", "go", "enter"), ui.NewBinding("pgdn", "page", "pgdown").Quiet(), ui.NewBinding("x", "gone", "x").Disable("why")}
	if got := ansi.Strip(ui.HelpLine(th, bs...)); got != "enter go" {
		t.Errorf("key line %q", got)
	}
	if got := ansi.Strip(ui.HelpFull(th, bs...)); !strings.Contains(got, "pgdn page") || !strings.Contains(got, "x gone (disabled: why)") {
		t.Errorf("help %q", got)
	}
	ran := ""
	press := ui.NewBinding("↑/↓", "move", "up", "down").Do(func(k tea.KeyPressMsg) tea.Cmd { ran = k.String(); return nil })
	if _, refused, claimed := dispatch([]ui.Binding{press}, false, tea.KeyPressMsg{Code: tea.KeyDown}); !claimed || refused != nil || ran != "down" {
		t.Errorf("dispatch: claimed %v refused %v ran %q", claimed, refused, ran)
	}
	if _, refused, _ := dispatch([]ui.Binding{bs[2]}, false, tea.KeyPressMsg{Code: 'x', Text: "x"}); refused == nil || refused.Reason != "why" {
		t.Error("a disabled binding pressed is not refused with its reason")
	}
	if _, _, claimed := dispatch([]ui.Binding{bs[2]}, true, tea.KeyPressMsg{Code: 'x', Text: "x"}); claimed {
		t.Error("while typing, a disabled binding's printable key is text, not claimed")
	}
}
