package ui

import (
	"fmt"
	"strings"
	"time"
)

// ProgressRow is one table's line on the progress board, as computed by
// the screen that polls the counters. Text fields are sanitized here.
type ProgressRow struct {
	Name   string
	State  string // "queued", "reading", "reconciling (gate 4)", "done"…
	Status Status
	Rows   int64 // negative: not shown (a queued table)
	Held   int64 // negative: not shown
	// Frac is the share of the input done, in [0,1]; negative: unknown
	// (no bar).
	Frac float64
	// RowsPerSec: over a moving window while active, the final average
	// once done; negative: not shown.
	RowsPerSec float64
	// MBPerSec, like RowsPerSec, for the input's bytes.
	MBPerSec float64
	// ETA: the time left; zero: unknown (not shown).
	ETA time.Duration
}

// Left formats a time left as "~12s left", "~2m05s left", "~1h10m left".
func Left(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	s := int64((d + time.Second - 1) / time.Second) // round up: never promise too early
	switch {
	case s < 60:
		return fmt.Sprintf("~%ds left", s)
	case s < 3600:
		return fmt.Sprintf("~%dm%02ds left", s/60, s%60)
	}
	return fmt.Sprintf("~%dh%02dm left", s/3600, (s%3600)/60)
}

// Rate formats rows per second compactly: "850/s", "12.3k/s", "1.2M/s".
func Rate(r float64) string {
	switch {
	case r < 0:
		return ""
	case r < 10_000:
		return fmt.Sprintf("%.0f/s", r)
	case r < 1e6:
		return fmt.Sprintf("%.1fk/s", r/1e3)
	}
	return fmt.Sprintf("%.1fM/s", r/1e6)
}

// progressCol is one optional column of the board.
type progressCol struct {
	head  string
	width int
	pri   int
	cell  func(r ProgressRow) string
	right bool
}

// ProgressBoard renders one line per table, header first, in width
// columns. Name and state always show; then, as width allows and in this
// order: the bar with its percentage, the time left, rows, rows/s, held
// back rows, MB/s. At 80 and at 60 columns the bar stays.
func ProgressBoard(t Theme, width int, rows []ProgressRow) []string {
	nw, sw := 5, 5
	for _, r := range rows {
		nw = max(nw, Width(Sanitize(r.Name)))
		sw = max(sw, Width(Sanitize(r.State)))
	}
	nw = min(nw, max(8, width*23/100))
	sw = min(sw, max(10, width/4))
	count := func(n int64) string {
		if n < 0 {
			return ""
		}
		return Count(n)
	}
	// In the order they show; pri is the order they get room in.
	cols := []progressCol{
		{head: "rows", width: 9, pri: 2, cell: func(r ProgressRow) string { return count(r.Rows) }, right: true},
		{head: "rows/s", width: 8, pri: 3, cell: func(r ProgressRow) string { return Rate(r.RowsPerSec) }, right: true},
		{head: "progress", width: 13, pri: 0}, // the bar: drawn below
		{head: "left", width: 11, pri: 1, cell: func(r ProgressRow) string { return Left(r.ETA) }},
		{head: "held", width: 7, pri: 4, cell: func(r ProgressRow) string { return count(r.Held) }, right: true},
		{head: "MB/s", width: 6, pri: 5, cell: func(r ProgressRow) string {
			if r.MBPerSec < 0 {
				return ""
			}
			return fmt.Sprintf("%.1f", r.MBPerSec)
		}, right: true},
	}
	free := width - (2 + nw + 1 + sw)
	keep := make([]bool, len(cols))
	for pri := range len(cols) {
		fit := false
		for i, c := range cols {
			// Held back rows and MB/s only where the bar can still grow to 16.
			need := c.width + 1
			if c.pri >= 4 {
				need += 8
			}
			if c.pri == pri && free >= need {
				free -= c.width + 1
				keep[i], fit = true, true
			}
		}
		if !fit {
			break // strictly by priority: nothing after a column left out
		}
	}
	var use []progressCol
	barW := 0
	for i, c := range cols {
		if !keep[i] {
			continue
		}
		if c.cell == nil {
			// Leftover width goes to the bar, up to 24 cells and the percentage.
			c.width += min(free, 16)
			barW = c.width - 5
		}
		use = append(use, c)
	}
	pad := func(s string, w int, right bool) string {
		s = Fit(s, w)
		if right {
			return strings.Repeat(" ", max(0, w-Width(s))) + s
		}
		return s + strings.Repeat(" ", max(0, w-Width(s)))
	}
	hdr := "  " + pad("table", nw, false) + " " + pad("state", sw, false)
	for _, c := range use {
		hdr += " " + pad(c.head, c.width, c.right)
	}
	out := []string{t.Muted.Render(Fit(strings.TrimRight(hdr, " "), width))}
	for _, r := range rows {
		line := t.Status(r.Status) + " " + pad(Sanitize(r.Name), nw, false) + " " + pad(Sanitize(r.State), sw, false)
		for _, c := range use {
			cell := ""
			if c.cell != nil {
				cell = c.cell(r)
			} else if r.Frac >= 0 {
				cell = Bar(barW, r.Frac) + fmt.Sprintf(" %3.0f%%", 100*r.Frac)
			}
			line += " " + pad(cell, c.width, c.right)
		}
		out = append(out, Fit(strings.TrimRight(line, " "), width))
	}
	return out
}
