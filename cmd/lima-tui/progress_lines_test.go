package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
)

// The headless progress lines name gate 4's re-read and the mart's build;
// a queued or finished table prints nothing.
func TestProgressLinesNameGate4AndMarts(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p := &run.Progress{}
	p.Queue("a", "b\x1b[2J", "c", "m", "q")
	snap := p.Snapshot()
	a, b := snap[0], snap[1]
	a.MarkStarted(now.Add(-4 * time.Second))
	a.Phase.Store("loading")
	a.RowsRead.Store(40_000)
	a.Bytes.Store(4_000_000)
	a.TotalBytes.Store(8_000_000)
	b.MarkStarted(now.Add(-10 * time.Second))
	b.MarkFinished(now.Add(-2 * time.Second))
	b.RowsRead.Store(97)
	p.SetPhase("b\x1b[2J", flow.PhaseReconciling)
	p.Finish("c", run.StatusLoaded)
	p.SetPhase("m", flow.PhaseBuildingMart)
	got := progressLines(snap, now)
	want := []string{
		"lima: a: loading — 40000 rows read, 0 loaded, 0 held back, 10000 rows/s, 1.0 MB/s, 50% of input",
		`lima: b\e[2J: reconciling (gate 4) — 97 rows read`,
		"lima: m: building mart",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
