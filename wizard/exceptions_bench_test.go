package wizard

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/ui"
)

// BenchmarkBrowserFirstScreen1M seeds 1,000,000 exceptions (once, with
// ledger.SeedAndMeasure) and measures the browser's first screen — count,
// first page, render — and one keypress (down, rendered). It runs only with
// LIMA_BENCH_1M=1: seeding takes minutes.
//
//	LIMA_BENCH_1M=1 go test ./wizard/ -run '^$' -bench BrowserFirstScreen1M -benchtime 5x
func BenchmarkBrowserFirstScreen1M(b *testing.B) {
	if os.Getenv("LIMA_BENCH_1M") != "1" {
		b.Skip("set LIMA_BENCH_1M=1 to seed 1,000,000 exceptions and measure")
	}
	ctx := context.Background()
	st, err := ledger.OpenSQLite(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	res, err := ledger.SeedAndMeasure(ctx, st, 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded: %v", res)
	var first, key time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		m := NewExceptions(ExceptionsOptions{Store: st, Theme: ui.MustTheme(ui.ThemeMono), Filter: ledger.Filter{Owner: "owner_07", Overdue: true}})
		_, c := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		run2(tea.Batch(c, m.Init()), m)
		_ = m.Render()
		first += time.Since(t)
		if !m.counted || len(m.pages) == 0 {
			b.Fatal("first screen incomplete")
		}
		t = time.Now()
		_, c = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
		run2(c, m)
		_ = m.Render()
		key += time.Since(t)
	}
	b.StopTimer()
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms/first-screen")
	b.ReportMetric(float64(key.Microseconds())/1000/float64(b.N), "ms/down")
}

// run2 runs a Cmd synchronously (no timeout: the benchmark waits for the
// ledger) and delivers the browser's own results.
func run2(cmd tea.Cmd, m *Exceptions) {
	for _, msg := range collectAll(cmd) {
		switch msg.(type) {
		case bPageMsg, bCountMsg, bDetailMsg, bActionMsg:
			_, c := m.Update(msg)
			run2(c, m)
		}
	}
}

func collectAll(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if bm, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range bm {
			out = append(out, collectAll(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}
