package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Binding is a key binding carrying its handler, its help text and, when
// disabled, why (lazygit style). A screen's bindings are the only way a
// key acts on it: the key line, the help and the dispatch all read the
// same list, so they cannot disagree. Pressing a disabled binding says
// its reason instead of acting.
type Binding struct {
	key.Binding
	// Reason says why the binding is disabled; "" when it is enabled.
	Reason string
	// Run is what the binding does; it is given the key pressed (a
	// binding of several keys, such as ↑/↓, tells them apart).
	Run func(tea.KeyPressMsg) tea.Cmd
	// HelpOnly bindings are listed by the help, not on the key line
	// (lazygit's DisplayOnScreen false): aliases and page keys.
	HelpOnly bool
}

// NewBinding makes an enabled binding.
func NewBinding(keyHelp, desc string, keys ...string) Binding {
	return Binding{Binding: key.NewBinding(key.WithKeys(keys...), key.WithHelp(keyHelp, desc))}
}

// Do returns the binding with its handler.
func (b Binding) Do(run func(tea.KeyPressMsg) tea.Cmd) Binding {
	b.Run = run
	return b
}

// Act returns the binding with a handler that does not need the key.
func (b Binding) Act(run func() tea.Cmd) Binding {
	b.Run = func(tea.KeyPressMsg) tea.Cmd { return run() }
	return b
}

// Quiet returns the binding listed by the help only, not the key line.
func (b Binding) Quiet() Binding {
	b.HelpOnly = true
	return b
}

// Find is the first binding msg presses, enabled or not.
func Find(bs []Binding, msg tea.KeyPressMsg) (Binding, bool) {
	for _, b := range bs {
		if b.Pressed(msg) {
			return b, true
		}
	}
	return Binding{}, false
}

// Disable returns the binding disabled for the reason given.
func (b Binding) Disable(reason string) Binding {
	b.Reason = reason
	return b
}

// Enable returns the binding enabled.
func (b Binding) Enable() Binding {
	b.Reason = ""
	return b
}

// Enabled reports whether the binding acts.
func (b Binding) Enabled() bool { return b.Reason == "" }

// Pressed reports whether msg is one of the binding's keys, enabled or not.
func (b Binding) Pressed(msg tea.KeyPressMsg) bool {
	s := msg.String()
	for _, k := range b.Keys() {
		if k == s {
			return true
		}
	}
	return false
}

// Matches reports whether msg presses the binding and it is enabled.
func (b Binding) Matches(msg tea.KeyPressMsg) bool { return b.Enabled() && b.Pressed(msg) }

// HelpEntry renders "key desc", or "key desc (disabled: reason)".
func (b Binding) HelpEntry(t Theme) string {
	h := b.Help()
	if !b.Enabled() {
		return t.Disabled.Render(h.Key+" "+h.Desc) + " " + t.Muted.Render("(disabled: "+b.Reason+")")
	}
	return t.Key.Render(h.Key) + " " + t.Text.Render(h.Desc)
}

// GlobalKeys are the keys every screen shares.
type GlobalKeys struct {
	Help, Filter, Back, Quit, Interrupt Binding
}

// DefaultGlobalKeys: ? help, / filter, esc back, q quit, ctrl+c always safe.
func DefaultGlobalKeys() GlobalKeys {
	return GlobalKeys{
		Help:      NewBinding("?", "help", "?"),
		Filter:    NewBinding("/", "filter", "/").Disable("nothing to filter on this screen"),
		Back:      NewBinding("esc", "back", "esc"),
		Quit:      NewBinding("q", "quit", "q"),
		Interrupt: NewBinding("ctrl+c", "quit safely", "ctrl+c"),
	}
}

// StartKeys open what the last run left, without running again: its gate 4
// and the exception queue (shown once gate 1's questions are answered).
type StartKeys struct {
	LastRun, Queue Binding
}

// DefaultStartKeys: g the last run's gate 4, e the exception queue; both
// disabled until the workspace has a run.
func DefaultStartKeys() StartKeys {
	const why = "no run in this workspace yet"
	return StartKeys{
		LastRun: NewBinding("g", "last run's gate 4", "g").Disable(why),
		Queue:   NewBinding("e", "exception queue", "e").Disable(why),
	}
}

// Typing returns the keys while a text field has the focus: q, ? and /
// are text then.
func (k GlobalKeys) Typing(typing bool) GlobalKeys {
	if typing {
		const why = "typing: the key is text here; press esc to leave the field"
		k.Quit = k.Quit.Disable(why)
		k.Help = k.Help.Disable(why)
		k.Filter = k.Filter.Disable(why)
	}
	return k
}

// All lists the bindings in help order.
func (k GlobalKeys) All() []Binding {
	return []Binding{k.Help, k.Filter, k.Back, k.Quit, k.Interrupt}
}

// HelpLine renders the enabled bindings of the key line on one line.
func HelpLine(t Theme, bs ...Binding) string {
	var parts []string
	for _, b := range bs {
		if b.Enabled() && !b.HelpOnly {
			parts = append(parts, b.HelpEntry(t))
		}
	}
	return strings.Join(parts, t.Muted.Render(" · "))
}

// HelpWrap is HelpLine packed into lines of at most width cells, an entry
// never split; past maxLines the last line is cut with "…". Screens give
// it two lines at full size, so the key line is complete at 100×30.
func HelpWrap(t Theme, width, maxLines int, bs ...Binding) []string {
	sep := t.Muted.Render(" · ")
	var lines []string
	cur := ""
	for _, b := range bs {
		if !b.Enabled() || b.HelpOnly {
			continue
		}
		e := b.HelpEntry(t)
		switch {
		case cur == "":
			cur = e
		case Width(cur)+Width(sep)+Width(e) <= width:
			cur += sep + e
		default:
			lines = append(lines, cur)
			cur = e
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	if maxLines < 1 {
		maxLines = 1
	}
	if len(lines) > maxLines {
		lines = append(lines[:maxLines-1], strings.Join(lines[maxLines-1:], sep))
	}
	for i := range lines {
		lines[i] = Fit(lines[i], width)
	}
	return lines
}

// HelpFull renders every binding, one a line, disabled ones with their
// reason.
func HelpFull(t Theme, bs ...Binding) string {
	lines := make([]string, len(bs))
	for i, b := range bs {
		lines[i] = "  " + b.HelpEntry(t)
	}
	return strings.Join(lines, "\n")
}

// RenameKeys rename in place on gate 3's edit screen: the column being
// edited, or its table (a text field opens, prefilled with the name).
type RenameKeys struct {
	Column, Table, Keep, Cancel Binding
}

// DefaultRenameKeys: n renames the column, N the table; in the field
// enter renames and esc keeps the name.
func DefaultRenameKeys() RenameKeys {
	return RenameKeys{
		Column: NewBinding("n", "rename column", "n"),
		Table:  NewBinding("N", "rename table", "N", "shift+n"),
		Keep:   NewBinding("enter", "rename", "enter"),
		Cancel: NewBinding("esc", "keep the name", "esc"),
	}
}
