package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Size classes of the terminal.
type SizeClass int

// Size classes: the full layout from 80×24, compact below it, and a "too
// small" screen below 60×15.
const (
	SizeFull SizeClass = iota
	SizeCompact
	SizeTooSmall
)

// Layout thresholds.
const (
	FullWidth, FullHeight        = 80, 24
	MinWidth, MinHeight          = 60, 15
	tooSmallHint          string = "q or ctrl+c quits"
)

// Classify returns the size class of a w×h terminal.
func Classify(w, h int) SizeClass {
	switch {
	case w < MinWidth || h < MinHeight:
		return SizeTooSmall
	case w < FullWidth || h < FullHeight:
		return SizeCompact
	}
	return SizeFull
}

// TooSmall is the screen shown below 60×15: what size is needed, and how
// to quit.
func TooSmall(t Theme, w, h int) string { return TooSmallWith(t, w, h, tooSmallHint) }

// TooSmallWith is TooSmall with another last line (what the keys do while
// something is going on).
func TooSmallWith(t Theme, w, h int, hint string) string {
	lines := []string{
		t.Warn.Render("! terminal too small"),
		fmt.Sprintf("%d×%d; need %d×%d", w, h, MinWidth, MinHeight),
		t.Muted.Render(hint),
	}
	for i := range lines {
		lines[i] = Fit(lines[i], w)
	}
	return strings.Join(lines, "\n")
}

// Fit truncates a (possibly styled) line to width cells, with … when cut.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// FitLines fits every line of s to width and keeps at most height lines
// (0: all).
func FitLines(s string, width, height int) string {
	lines := strings.Split(s, "\n")
	if height > 0 && len(lines) > height {
		lines = lines[:height]
	}
	for i := range lines {
		lines[i] = Fit(lines[i], width)
	}
	return strings.Join(lines, "\n")
}

// Wrap breaks plain text into lines of at most width cells at spaces,
// indenting continuation lines by indent.
func Wrap(s string, width int, indent string) []string {
	if width <= len(indent)+1 {
		return []string{s}
	}
	var out []string
	lead := s[:len(s)-len(strings.TrimLeft(s, " "))]
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = lead + w
			lead = ""
		case ansi.StringWidth(line)+1+ansi.StringWidth(w) <= width:
			line += " " + w
		default:
			out = append(out, line)
			line = indent + w
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	for i := range out {
		out[i] = Fit(out[i], width)
	}
	return out
}

// Bar renders a progress bar of width cells for frac in [0,1], in
// characters that need no colour: [#####.....].
func Bar(width int, frac float64) string {
	if width < 3 {
		return ""
	}
	inner := width - 2
	frac = math.Max(0, math.Min(1, frac))
	n := int(math.Round(frac * float64(inner)))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", inner-n) + "]"
}

// Bytes formats a byte count as B, KB, MB, GB (decimal, as MB/s is).
func Bytes(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"KB", "MB", "GB", "TB"}
	v := float64(n) / 1000
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}

// Count formats an integer with thousands separators: 1,234,567.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Width is the cell width of s (styles ignored).
func Width(s string) int { return ansi.StringWidth(s) }
