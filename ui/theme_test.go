package ui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveTheme(t *testing.T) {
	cases := []struct {
		flag string
		env  map[string]string
		want string
		err  bool
	}{
		{"", nil, ThemeDark, false},
		{"light", nil, ThemeLight, false},
		{"", map[string]string{"LIMA_THEME": "projector"}, ThemeProjector, false},
		{"light", map[string]string{"LIMA_THEME": "projector"}, ThemeLight, false},
		{"light", map[string]string{"NO_COLOR": "1"}, ThemeMono, false},
		{"", map[string]string{"NO_COLOR": "0", "LIMA_THEME": "dark"}, ThemeMono, false},
		{"", map[string]string{"NO_COLOR": ""}, ThemeDark, false},
		{"neon", nil, "", true},
		{"MONO", nil, ThemeMono, false},
	}
	for _, c := range cases {
		th, err := ResolveTheme(c.flag, env(c.env))
		if (err != nil) != c.err {
			t.Errorf("ResolveTheme(%q, %v) error = %v", c.flag, c.env, err)
			continue
		}
		if th.Name != c.want {
			t.Errorf("ResolveTheme(%q, %v) = %q, want %q", c.flag, c.env, th.Name, c.want)
		}
	}
}

func TestMonoHasNoColour(t *testing.T) {
	th := MustTheme(ThemeMono)
	for _, s := range []string{th.Status(StatusOK), th.Status(StatusFailed), th.Status(StatusWarn), th.Focus.Render("x"),
		th.Muted.Render("m"), th.Default.Render("d"), th.Error.Render("e"), th.Title.Render("t")} {
		if strings.Contains(s, "38;") || strings.Contains(s, "48;") {
			t.Errorf("mono renders colour: %q", s)
		}
	}
	if dark := MustTheme(ThemeDark).Status(StatusOK); !strings.Contains(dark, "38;") {
		t.Errorf("dark should render colour: %q", dark)
	}
}

func TestProjectorHasNoFaint(t *testing.T) {
	th := MustTheme(ThemeProjector)
	for name, s := range map[string]bool{"muted": th.Muted.GetFaint(), "disabled": th.Disabled.GetFaint(), "text": th.Text.GetFaint()} {
		if s {
			t.Errorf("projector %s is faint", name)
		}
	}
	if !th.Focus.GetBold() || th.FocusMarker == "> " {
		t.Errorf("projector focus should be bold with a bold marker: %q", th.FocusMarker)
	}
}

func TestGlyphsCarryMeaning(t *testing.T) {
	want := map[Status]string{StatusOK: "✓", StatusFailed: "✗", StatusWarn: "!", StatusRunning: "…"}
	for _, name := range ThemeNames {
		th := MustTheme(name)
		for s, g := range want {
			if got := ansi.Strip(th.Status(s)); got != g {
				t.Errorf("%s: Status(%d) = %q, want %q", name, s, got, g)
			}
		}
	}
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

func TestKeysDisabledWithReason(t *testing.T) {
	k := DefaultGlobalKeys()
	if !k.Quit.Matches(press("q")) || !k.Back.Matches(press("esc")) || !k.Interrupt.Matches(press("ctrl+c")) {
		t.Fatal("q, esc and ctrl+c should match when not typing")
	}
	typing := k.Typing(true)
	if typing.Quit.Matches(press("q")) {
		t.Error("q must not quit while typing")
	}
	if !typing.Quit.Pressed(press("q")) || typing.Quit.Reason == "" {
		t.Error("q while typing should be recognised as a disabled binding with a reason")
	}
	if !typing.Interrupt.Matches(press("ctrl+c")) {
		t.Error("ctrl+c must always be safe")
	}
	full := ansi.Strip(HelpFull(MustTheme(ThemeMono), typing.All()...))
	if !strings.Contains(full, "q quit (disabled: typing") {
		t.Errorf("help should say why q is disabled:\n%s", full)
	}
	line := ansi.Strip(HelpLine(MustTheme(ThemeMono), k.All()...))
	if strings.Contains(line, "filter") || !strings.Contains(line, "? help") {
		t.Errorf("help line should list enabled bindings only: %q", line)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		w, h int
		want SizeClass
	}{
		{100, 30, SizeFull}, {80, 24, SizeFull}, {79, 24, SizeCompact}, {80, 23, SizeCompact},
		{60, 15, SizeCompact}, {59, 30, SizeTooSmall}, {100, 15, SizeCompact}, {100, 14, SizeTooSmall}, {0, 0, SizeTooSmall},
	}
	for _, c := range cases {
		if got := Classify(c.w, c.h); got != c.want {
			t.Errorf("Classify(%d, %d) = %d, want %d", c.w, c.h, got, c.want)
		}
	}
	s := ansi.Strip(TooSmall(MustTheme(ThemeMono), 40, 10))
	if !strings.Contains(s, "too small") || !strings.Contains(s, "q") {
		t.Errorf("TooSmall = %q", s)
	}
	for _, l := range strings.Split(s, "\n") {
		if ansi.StringWidth(l) > 40 {
			t.Errorf("line wider than 40: %q", l)
		}
	}
}

func TestFormatters(t *testing.T) {
	if got := Bar(12, 0.5); got != "[#####.....]" {
		t.Errorf("Bar = %q", got)
	}
	if got := Bar(12, 2); got != "[##########]" {
		t.Errorf("Bar over 1 = %q", got)
	}
	if got := Count(1234567); got != "1,234,567" {
		t.Errorf("Count = %q", got)
	}
	if got := Count(-1000); got != "-1,000" {
		t.Errorf("Count = %q", got)
	}
	if got := Bytes(1_500_000); got != "1.5 MB" {
		t.Errorf("Bytes = %q", got)
	}
	if got := Fit("abcdef", 4); got != "abc…" {
		t.Errorf("Fit = %q", got)
	}
	if got := Wrap("one two three four", 9, "  "); strings.Join(got, "|") != "one two|  three|  four" {
		t.Errorf("Wrap = %q", got)
	}
}

func TestHelpWrapKeepsEntriesWhole(t *testing.T) {
	th := MustTheme(ThemeMono)
	bs := []Binding{NewBinding("enter", "approve", "enter"), NewBinding("t", "type", "t"), NewBinding("x", "reject", "x").Disable("no"),
		NewBinding("esc", "back", "esc"), NewBinding("q", "quit", "q")}
	strip := func(ls []string) []string {
		for i := range ls {
			ls[i] = ansi.Strip(ls[i])
		}
		return ls
	}
	// 24 cells: entries are packed whole, a disabled one left out.
	if got := strip(HelpWrap(th, 24, 3, bs...)); !slices.Equal(got, []string{"enter approve · t type", "esc back · q quit"}) {
		t.Errorf("HelpWrap at 24 = %q", got)
	}
	// Past maxLines the rest joins the last line, cut with "…".
	if got := strip(HelpWrap(th, 14, 2, bs...)); len(got) != 2 || got[0] != "enter approve" || !strings.HasSuffix(got[1], "…") || ansi.StringWidth(got[1]) > 14 {
		t.Errorf("HelpWrap at 14 = %q", got)
	}
	if got := strip(HelpWrap(th, 200, 2, bs...)); !slices.Equal(got, []string{"enter approve · t type · esc back · q quit"}) {
		t.Errorf("HelpWrap at 200 = %q", got)
	}
}
