package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
)

// HuhTheme maps a Lima theme onto a huh form theme, so the forms embedded
// in the gate screens draw with the same styles as the rest of the TUI
// (mono and NO_COLOR stay colourless, projector keeps its bold, reversed
// focus). The field has no left border: the gate screen frames it.
//
// In a select the option under the cursor takes the theme's focus style
// (reversed in mono and projector), the marker before it too.
func HuhTheme(t Theme) huh.Theme { return huhTheme(t, t.Focus) }

// HuhMultiTheme is HuhTheme for a multi-select, where huh draws the ticked
// options (not the one under the cursor) with the selected style: those
// are bold after their [x].
func HuhMultiTheme(t Theme) huh.Theme { return huhTheme(t, t.Text.Bold(true)) }

func huhTheme(t Theme, selected lipgloss.Style) huh.Theme {
	return huh.ThemeFunc(func(bool) *huh.Styles {
		var s huh.Styles
		plain := lipgloss.NewStyle()
		s.Form.Base = plain
		s.Group.Base = plain
		s.Group.Title = t.Title
		s.Group.Description = t.Muted
		s.FieldSeparator = plain.SetString("\n\n")

		f := &s.Focused
		f.Base = plain
		f.Card = plain
		f.Title = t.Text.Bold(true)
		f.NoteTitle = t.Title
		f.Description = t.Muted
		f.ErrorIndicator = t.Failed.SetString(" " + StatusFailed.Glyph())
		f.ErrorMessage = t.Error
		// The focused option: the theme's focus marker and focus style.
		f.SelectSelector = t.Key.SetString(t.FocusMarker)
		f.Option = t.Text
		f.NextIndicator = t.Key.MarginLeft(1).SetString("→")
		f.PrevIndicator = t.Key.MarginRight(1).SetString("←")
		f.MultiSelectSelector = t.Key.SetString(t.FocusMarker)
		f.SelectedOption = selected
		f.SelectedPrefix = t.OK.SetString("[x] ")
		f.UnselectedOption = t.Text
		f.UnselectedPrefix = t.Muted.SetString("[ ] ")
		// The focused button carries the focus marker, not only a style:
		// "> Keep" reads the same without colour or reverse video.
		f.FocusedButton = t.Focus.SetString(strings.TrimSpace(t.FocusMarker)).MarginRight(2)
		f.BlurredButton = t.Text.SetString(" ").MarginRight(2)
		f.Next = f.FocusedButton
		f.Directory = t.Default
		f.File = t.Text
		f.TextInput.Prompt = t.Key
		f.TextInput.Text = t.Text
		f.TextInput.Placeholder = t.Muted
		f.TextInput.Cursor = t.Focus
		f.TextInput.CursorText = t.Text

		s.Blurred = s.Focused
		s.Blurred.SelectSelector = plain.SetString(t.Blank)
		s.Blurred.MultiSelectSelector = plain.SetString(t.Blank)
		s.Blurred.TextInput.Prompt = t.Muted
		s.Blurred.NextIndicator = plain
		s.Blurred.PrevIndicator = plain

		s.Help.ShortKey = t.Key
		s.Help.ShortDesc = t.Text
		s.Help.ShortSeparator = t.Muted
		s.Help.FullKey = t.Key
		s.Help.FullDesc = t.Text
		s.Help.FullSeparator = t.Muted
		s.Help.Ellipsis = t.Muted
		return &s
	})
}

// HuhKeyMap is huh's key map as Lima uses it inside a gate screen: the
// screen owns ctrl+c (always safe), q, ?, /, esc and shift+tab (back) and
// d / ctrl+d (the defaults for the rest), so the form does not quit, filter
// or page with them; enter answers.
func HuhKeyMap() *huh.KeyMap {
	k := huh.NewDefaultKeyMap()
	off := func(b *key.Binding) { b.SetEnabled(false) }
	off(&k.Quit)
	for _, b := range []*key.Binding{&k.Input.Prev, &k.Select.Prev, &k.MultiSelect.Prev, &k.Confirm.Prev, &k.Note.Prev, &k.Text.Prev,
		&k.Select.Filter, &k.MultiSelect.Filter, &k.Select.HalfPageDown, &k.MultiSelect.HalfPageDown,
		&k.Select.HalfPageUp, &k.MultiSelect.HalfPageUp, &k.MultiSelect.SelectAll} {
		off(b)
	}
	// enter answers; tab is not a second way to do it.
	k.Input.Next = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "answer"))
	k.Select.Next = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "choose"))
	k.MultiSelect.Next = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm the ticked"))
	k.Confirm.Next = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "answer"))
	return k
}
