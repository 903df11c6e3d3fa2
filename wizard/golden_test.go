package wizard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lima-lake/lima/ui"
)

// goldenSizes are the terminal sizes every golden screen is kept at: the
// projector's 100×30, a laptop's 80×24 and 60×15, below the wizard's
// minimum, where every screen must say so instead of drawing half of
// itself.
var goldenSizes = [][2]int{{100, 30}, {80, 24}, {60, 15}}

// compareGolden resizes the screen to each golden size and compares what
// screen returns with testdata/name_WxH.txt (-update rewrites them); every
// line must fit the width and the screen fill the height. It leaves the
// screen at 100×30.
func compareGolden(t *testing.T, name string, send func(tea.Msg), screen func() string) {
	t.Helper()
	for _, sz := range goldenSizes {
		send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		got := screen()
		for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if w := ansi.StringWidth(l); w > sz[0] {
				t.Errorf("%s %dx%d: line %d is %d cells wide", name, sz[0], sz[1], i+1, w)
			}
		}
		if n := strings.Count(got, "\n"); n != sz[1] {
			t.Errorf("%s %dx%d: %d lines, want %d", name, sz[0], sz[1], n, sz[1])
		}
		checkGoldenFile(t, fmt.Sprintf("%s_%dx%d.txt", name, sz[0], sz[1]), got)
	}
	send(tea.WindowSizeMsg{Width: 100, Height: 30})
}

// checkGoldenFile compares got with testdata/file, or writes it with
// -update.
func checkGoldenFile(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./wizard/ -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", file, path, got, want)
	}
}

// visibleEscapes shows a styled screen's escape sequences as text (ESC as
// "␛"), so a golden keeps the theme's styles readable in a diff.
func visibleEscapes(s string) string { return strings.ReplaceAll(s, "\x1b", "␛") }

// TestProjectorThemeGolden keeps gate 3 in the projector theme at 100×30
// with its styles: high contrast, the ▶ focus marker, nothing faint.
func TestProjectorThemeGolden(t *testing.T) {
	h, _ := toGate3Themed(t, Deps{}, ui.MustTheme(ui.ThemeProjector))
	styled := h.m.Render()
	if strings.Contains(styled, "\x1b[2m") || strings.Contains(styled, ";2m") {
		t.Error("the projector theme renders faint text")
	}
	if !strings.Contains(ansi.Strip(styled), "▶ ") {
		t.Error("the projector theme's focus marker ▶ is not on the screen")
	}
	lines := strings.Split(styled, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	checkGoldenFile(t, "gate3_model_projector_100x30.txt", visibleEscapes(strings.Join(lines, "\n")+"\n"))
}

// TestKeyLineCompleteAt100x30: on every golden screen at 100×30 the key
// line (the last two lines) names every key whole — nothing cut with "…".
func TestKeyLineCompleteAt100x30(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*_100x30.txt"))
	if err != nil || len(files) < 10 {
		t.Fatalf("golden screens at 100x30: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(ansi.Strip(string(b)), "\n"), "\n")
		for _, l := range lines[max(0, len(lines)-2):] {
			if strings.HasSuffix(strings.TrimRight(l, " "), "…") {
				t.Errorf("%s: the key line is cut: %q", f, l)
			}
		}
	}
}
