package ui

import (
	"strings"
	"testing"
	"time"
)

func TestLeftAndRate(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                          "",
		1500 * time.Millisecond:    "~2s left", // rounded up
		12 * time.Second:           "~12s left",
		125 * time.Second:          "~2m05s left",
		(70*60 + 30) * time.Second: "~1h10m left",
	} {
		if got := Left(d); got != want {
			t.Errorf("Left(%s) = %q, want %q", d, got, want)
		}
	}
	for r, want := range map[float64]string{-1: "", 850: "850/s", 24_250: "24.2k/s", 1_250_000: "1.2M/s"} {
		if got := Rate(r); got != want {
			t.Errorf("Rate(%v) = %q, want %q", r, got, want)
		}
	}
}

// The board keeps the bar at 60, 80 and 100 columns, never wider than
// the width, and gives way strictly by priority.
func TestProgressBoardKeepsTheBar(t *testing.T) {
	th := MustTheme(ThemeMono)
	rows := []ProgressRow{
		{Name: "inspections_by_supplier_month", State: "reconciling (gate 4)", Status: StatusRunning, Rows: 97_000, Held: 3, Frac: 1, RowsPerSec: 24_250, MBPerSec: 2.4},
		{Name: "suppliers\x1b[2J", State: "reading", Status: StatusRunning, Rows: 20_000, Held: 0, Frac: 0.2, RowsPerSec: 10_000, MBPerSec: 1, ETA: 8 * time.Second},
		{Name: "shipments", State: "queued", Status: StatusPending, Rows: -1, Held: -1, Frac: -1, RowsPerSec: -1, MBPerSec: -1},
	}
	for _, w := range []int{60, 80, 100, 140} {
		out := ProgressBoard(th, w, rows)
		if len(out) != 4 {
			t.Fatalf("%d columns: %d lines, want a header and 3 rows", w, len(out))
		}
		for i, l := range out {
			if Width(l) > w {
				t.Errorf("%d columns: line %d is %d cells: %q", w, i, Width(l), l)
			}
			if strings.Contains(l, "\x1b") {
				t.Errorf("%d columns: an escape reached the board: %q", w, l)
			}
		}
		if !strings.Contains(out[1], "] 100%") || !strings.Contains(out[2], "]  20%") {
			t.Errorf("%d columns: no bar:\n%s", w, strings.Join(out, "\n"))
		}
		if !strings.Contains(out[2], "~8s left") {
			t.Errorf("%d columns: the time left is gone:\n%s", w, strings.Join(out, "\n"))
		}
		if strings.Contains(out[3], "[") || strings.Contains(out[3], "0") {
			t.Errorf("%d columns: a queued table shows counters: %q", w, out[3])
		}
		// MB/s, the least needed, shows only when everything else does.
		if strings.Contains(out[0], "MB/s") && !strings.Contains(out[0], "held") {
			t.Errorf("%d columns: MB/s shown before held back rows: %q", w, out[0])
		}
	}
	if h := ProgressBoard(th, 140, rows)[0]; !strings.Contains(h, "MB/s") || !strings.Contains(h, "rows/s") {
		t.Errorf("140 columns: not every column: %q", h)
	}
}
