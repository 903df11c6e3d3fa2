package ui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
)

// Theme names.
const (
	ThemeDark      = "dark"
	ThemeLight     = "light"
	ThemeProjector = "projector"
	ThemeMono      = "mono"
)

// ThemeNames lists the themes in the order they are offered.
var ThemeNames = []string{ThemeDark, ThemeLight, ThemeProjector, ThemeMono}

// Status is what a glyph shows: meaning is never carried by colour alone.
type Status int

// Statuses.
const (
	StatusOK Status = iota
	StatusFailed
	StatusWarn
	StatusRunning
	StatusSkipped
	StatusPending
)

// Glyph is the status's glyph: ✓ ok, ✗ failed, ! held/warn, … running,
// – skipped, · pending.
func (s Status) Glyph() string {
	switch s {
	case StatusOK:
		return "✓"
	case StatusFailed:
		return "✗"
	case StatusWarn:
		return "!"
	case StatusRunning:
		return "…"
	case StatusSkipped:
		return "–"
	}
	return "·"
}

// Theme is every style the TUI draws with, in one place.
type Theme struct {
	Name string
	// Title is a screen's heading; Text plain text; Muted secondary text
	// (never faint in the projector and mono themes).
	Title, Text, Muted lipgloss.Style
	// Focus is the focused item; Default marks a recommended answer.
	Focus, Default lipgloss.Style
	// Key is a key in the help line; Disabled a disabled binding.
	Key, Disabled lipgloss.Style
	// Status styles per status.
	OK, Failed, Warn, Running lipgloss.Style
	// Error is an error line.
	Error lipgloss.Style
	// FocusMarker prefixes the focused row; Blank is as wide, for the others.
	FocusMarker, Blank string
}

// NewTheme returns the named theme.
func NewTheme(name string) (Theme, error) {
	base := lipgloss.NewStyle()
	t := Theme{Name: name, FocusMarker: "> ", Blank: "  ",
		Text: base, Title: base.Bold(true), Key: base.Bold(true)}
	fg := func(c string) lipgloss.Style { return base.Foreground(lipgloss.Color(c)) }
	switch name {
	case ThemeDark:
		t.Muted = fg("#8a8a8a")
		t.Title = fg("#c9a7ff").Bold(true)
		t.Focus = fg("#ffd866").Bold(true)
		t.Default = fg("#78dce8")
		t.Key = fg("#c9a7ff").Bold(true)
		t.Disabled = fg("#6a6a6a").Faint(true)
		t.OK, t.Failed, t.Warn, t.Running = fg("#a9dc76"), fg("#ff6188").Bold(true), fg("#fc9867"), fg("#78dce8")
		t.Error = fg("#ff6188")
	case ThemeLight:
		t.Muted = fg("#5f5f5f")
		t.Title = fg("#5a2ca0").Bold(true)
		t.Focus = fg("#1c4fbf").Bold(true)
		t.Default = fg("#006d77")
		t.Key = fg("#5a2ca0").Bold(true)
		t.Disabled = fg("#9a9a9a")
		t.OK, t.Failed, t.Warn, t.Running = fg("#1a7f37"), fg("#b3261e").Bold(true), fg("#9a6700"), fg("#0550ae")
		t.Error = fg("#b3261e")
	case ThemeProjector:
		// High contrast, no faint text, bold focus markers.
		t.FocusMarker = "▶ "
		t.Muted = fg("#ffffff")
		t.Text = fg("#ffffff")
		t.Title = fg("#ffffff").Bold(true).Underline(true)
		t.Focus = fg("#ffff00").Bold(true).Reverse(true)
		t.Default = fg("#00ffff").Bold(true)
		t.Key = fg("#ffff00").Bold(true)
		t.Disabled = fg("#ffffff").Strikethrough(true)
		t.OK, t.Failed, t.Warn, t.Running = fg("#00ff00").Bold(true), fg("#ff3030").Bold(true), fg("#ffff00").Bold(true), fg("#00ffff").Bold(true)
		t.Error = fg("#ff3030").Bold(true)
	case ThemeMono:
		// No colour: bold and reverse only.
		t.Muted = base
		t.Focus = base.Bold(true).Reverse(true)
		t.Default = base.Bold(true)
		t.Disabled = base
		t.OK, t.Failed, t.Warn, t.Running = base, base.Bold(true), base.Bold(true), base
		t.Error = base.Bold(true)
	default:
		return Theme{}, fmt.Errorf("unknown theme %q: use %s", Sanitize(name), strings.Join(ThemeNames, ", "))
	}
	return t, nil
}

// MustTheme is NewTheme for a known name; it panics on an unknown one.
func MustTheme(name string) Theme {
	t, err := NewTheme(name)
	if err != nil {
		panic(err)
	}
	return t
}

// ResolveTheme picks the theme name: NO_COLOR with any non-empty value
// forces mono; then the --theme flag; then LIMA_THEME; then dark. getenv is
// os.Getenv (a parameter for tests).
func ResolveTheme(flag string, getenv func(string) string) (Theme, error) {
	if getenv("NO_COLOR") != "" {
		return MustTheme(ThemeMono), nil
	}
	name := strings.TrimSpace(flag)
	if name == "" {
		name = strings.TrimSpace(getenv("LIMA_THEME"))
	}
	if name == "" {
		name = ThemeDark
	}
	name = strings.ToLower(name)
	if !slices.Contains(ThemeNames, name) {
		return Theme{}, fmt.Errorf("unknown theme %q: use %s", Sanitize(name), strings.Join(ThemeNames, ", "))
	}
	return NewTheme(name)
}

// Status renders a status glyph with its word, styled; the glyph alone
// carries the meaning.
func (t Theme) Status(s Status) string {
	return t.statusStyle(s).Render(s.Glyph())
}

func (t Theme) statusStyle(s Status) lipgloss.Style {
	switch s {
	case StatusOK:
		return t.OK
	case StatusFailed:
		return t.Failed
	case StatusWarn:
		return t.Warn
	case StatusRunning:
		return t.Running
	}
	return t.Muted
}

// StatusText renders text in the style of a status.
func (t Theme) StatusText(s Status, text string) string { return t.statusStyle(s).Render(text) }

// Colorless reports whether the theme draws without colour.
func (t Theme) Colorless() bool { return t.Name == ThemeMono }
