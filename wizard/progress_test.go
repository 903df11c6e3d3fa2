package wizard

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
)

// names is whether a board line names table name: whole, or cut to at
// least 12 characters and "…".
func names(line, name string) bool {
	f := strings.Fields(line)
	if len(f) < 2 {
		return false
	}
	cut, ok := strings.CutSuffix(f[1], "…")
	return f[1] == name || ok && len([]rune(cut)) >= 12 && strings.HasPrefix(name, cut)
}

// boardLine is the screen's line for table name.
func (h *harness) boardLine(name string) string {
	h.t.Helper()
	for _, l := range strings.Split(h.screen(), "\n") {
		if names(l, name) {
			return l
		}
	}
	h.t.Fatalf("no line for %s on the screen:\n%s", name, h.screen())
	return ""
}

var (
	leftRE  = regexp.MustCompile(`~\d+s left`)
	fullBar = regexp.MustCompile(`\[#+\] 100%`)
)

// TestRunBoardTellsTheTruth drives the run screen with live counters the
// way the engine and flow set them, on a clock the test moves.
func TestRunBoardTellsTheTruth(t *testing.T) {
	release := make(chan struct{})
	d := Deps{Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return nil, context.Canceled
		}
	}}
	h := toRun(t, d)
	defer close(release)
	order := run.RunOrder(h.m.run.plan, nil)
	if len(order) < 3 {
		t.Fatalf("the demo plan's run order %v: want several tables", order)
	}
	h.key("enter")

	// The first frame, before the engine reported anything: every table of
	// the run, in load order, queued.
	for _, sz := range [][2]int{{100, 30}, {80, 24}} {
		h.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		lines := strings.Split(h.screen(), "\n")
		at := 0
		for _, n := range order {
			for at < len(lines) && !names(lines[at], n) {
				at++
			}
			if at == len(lines) {
				t.Fatalf("%dx%d: %s missing from the first frame, or out of load order %v:\n%s", sz[0], sz[1], n, order, h.screen())
			}
			if !strings.Contains(lines[at], "queued") {
				t.Errorf("%dx%d: %s not queued: %q", sz[0], sz[1], n, lines[at])
			}
		}
	}
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})

	// The engine's counters: the first table reads 10 MB, 1 MB a second.
	p := &run.Progress{}
	p.Queue(order...)
	h.m.run.snap = p.Snapshot
	first, second := p.Snapshot()[0], p.Snapshot()[1]
	begin := h.now
	first.MarkStarted(begin)
	first.Phase.Store("loading")
	first.TotalBytes.Store(10_000_000)
	tick := func(d time.Duration, bytes int64) {
		h.now = h.now.Add(d)
		first.Bytes.Store(bytes)
		first.RowsRead.Store(bytes / 100)
		h.send(runTickMsg{gen: h.m.run.gen})
	}
	tick(0, 1_000_000)
	tick(time.Second, 2_000_000)
	a := h.boardLine(order[0])
	// 8 MB left at 1 MB/s over the window; 10,000 rows/s.
	for _, want := range []string{"reading", "20,000", "10.0k/s", "20%", "~8s left"} {
		if !strings.Contains(a, want) {
			t.Errorf("frame 1: %q lacks %q", a, want)
		}
	}
	if l := h.boardLine(order[1]); !strings.Contains(l, "queued") {
		t.Errorf("the second table before it starts: %q", l)
	}
	h.golden("run_board")
	tick(time.Second, 4_000_000) // 2 MB/s over the window's 2 s
	b := h.boardLine(order[0])
	if ea, eb := leftRE.FindString(a), leftRE.FindString(b); ea == "" || eb == "" || ea == eb {
		t.Errorf("the time left did not move: %q then %q", a, b)
	}
	if !strings.Contains(b, "~4s left") || !strings.Contains(b, "40%") {
		t.Errorf("frame 2 (6 MB left at 1.5 MB/s): %q", b)
	}

	// The load ends short of the listed bytes (the engine counts rows'
	// raw text): the bar is final at 100%, the rate the load's average.
	h.now = begin.Add(4 * time.Second)
	first.Bytes.Store(9_700_000)
	first.RowsRead.Store(97_000)
	first.Quarantined.Store(3)
	first.MarkFinished(h.now)
	first.Phase.Store(run.StatusLoaded)
	second.MarkStarted(h.now)
	second.Phase.Store("listing")
	h.send(runTickMsg{gen: h.m.run.gen})
	h.now = h.now.Add(20 * time.Second)
	h.send(runTickMsg{gen: h.m.run.gen})
	done := h.boardLine(order[0])
	avg := fmt.Sprintf("%.1fk/s", 97_000/4.0/1000)
	for _, want := range []string{"loaded", "97,000", "100%", avg} {
		if !strings.Contains(done, want) {
			t.Errorf("finished table: %q lacks %q", done, want)
		}
	}
	if !fullBar.MatchString(done) {
		t.Errorf("finished table: the bar is not full: %q", done)
	}
	if leftRE.MatchString(done) {
		t.Errorf("a finished table shows a time left: %q", done)
	}
	if l := h.boardLine(order[1]); !strings.Contains(l, "listing files") {
		t.Errorf("second table: %q", l)
	}

	// Gate 4 re-reads the table; then a mart is built: both labelled.
	p.SetPhase(order[0], flow.PhaseReconciling)
	mart := order[len(order)-1]
	p.SetPhase(mart, flow.PhaseBuildingMart)
	h.send(runTickMsg{gen: h.m.run.gen})
	if l := h.boardLine(order[0]); !strings.Contains(l, "reconciling (gate 4)") || !strings.Contains(l, "100%") {
		t.Errorf("gate 4: %q", l)
	}
	if l := h.boardLine(mart); !strings.Contains(l, "building mart") {
		t.Errorf("mart %s: %q", mart, l)
	}

	// At 80 and at 60 columns the bar stays.
	for _, w := range []int{80, 60} {
		h.send(tea.WindowSizeMsg{Width: w, Height: 24})
		if l := h.boardLine(order[0]); !fullBar.MatchString(l) {
			t.Errorf("%d columns: no bar: %q", w, l)
		}
	}
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
}
