package ui

import (
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"github.com/charmbracelet/x/ansi"
)

func selectView(t *testing.T, theme Theme) (*huh.Form, string) {
	t.Helper()
	v := "b"
	f := huh.NewForm(huh.NewGroup(huh.NewSelect[string]().Options(huh.NewOptions("a", "b", "c")...).Value(&v))).
		WithTheme(HuhTheme(theme)).WithKeyMap(HuhKeyMap()).WithShowHelp(false).WithWidth(40)
	f.Init()
	f.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
	return f, f.View()
}

func TestHuhThemeMonoHasNoColour(t *testing.T) {
	_, v := selectView(t, MustTheme(ThemeMono))
	for _, sgr := range []string{"[38;", "[48;", "[3", "[9"} {
		if strings.Contains(v, "\x1b"+sgr) {
			t.Errorf("mono form has a colour sequence %q: %q", sgr, v)
		}
	}
	// The focused option is marked by the marker and by reverse video,
	// not by colour.
	plain := ansi.Strip(v)
	if !strings.Contains(plain, "> b") {
		t.Errorf("the recommended option is not under the marker:\n%s", plain)
	}
	if !regexp.MustCompile(`\x1b\[([0-9]+;)*7(;[0-9]+)*mb`).MatchString(v) {
		t.Errorf("the focused option is not reversed: %q", v)
	}
}

func TestHuhThemeProjectorMarksFocusBold(t *testing.T) {
	_, v := selectView(t, MustTheme(ThemeProjector))
	if !strings.Contains(ansi.Strip(v), "▶ b") {
		t.Errorf("projector marker missing:\n%s", ansi.Strip(v))
	}
	if strings.Contains(v, "\x1b[2m") || strings.Contains(v, ";2m") {
		t.Errorf("projector form has faint text: %q", v)
	}
}

func TestHuhKeyMapLeavesCtrlCAndBackToTheScreen(t *testing.T) {
	f, _ := selectView(t, MustTheme(ThemeMono))
	for _, k := range []tea.KeyPressMsg{{Code: 'c', Mod: tea.ModCtrl}, {Code: tea.KeyTab, Mod: tea.ModShift}, {Code: tea.KeyTab}} {
		_, cmd := f.Update(k)
		if f.State != huh.StateNormal {
			t.Fatalf("%s ended the form: state %v", k.String(), f.State)
		}
		if cmd != nil {
			if msg := cmd(); msg != nil {
				t.Errorf("%s made the form send %T", k.String(), msg)
			}
		}
	}
}
