package reports

import (
	"fmt"
	"slices"
	"time"
)

// WatchReport is the latency of one micro-batch: for every file, from the
// moment the watcher first saw it (at most one poll interval after it
// arrived) to the moment its rows were visible (the table's commit).
type WatchReport struct {
	Files        []WatchFile `json:"files"`
	P50LatencyMS int64       `json:"p50_latency_ms"`
	MaxLatencyMS int64       `json:"max_latency_ms"`
	AvgLatencyMS int64       `json:"avg_latency_ms"`
}

// WatchFile is one file of a micro-batch.
type WatchFile struct {
	Table     string    `json:"table"`
	Name      string    `json:"name"`
	FirstSeen time.Time `json:"first_seen"`
	VisibleAt time.Time `json:"visible_at"`
	LatencyMS int64     `json:"latency_ms"`
}

// Latency summarises latencies in milliseconds: the median (nearest rank:
// the ⌈n/2⌉-th smallest), the maximum and the mean (rounded down); all 0
// for none.
func Latency(ms []int64) (p50, maxMS, avg int64) {
	if len(ms) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	var total int64
	for _, v := range s {
		total += v
	}
	return s[(len(s)+1)/2-1], s[len(s)-1], total / int64(len(s))
}

// Summarize sets P50, Max and Avg from the files' latencies.
func (w *WatchReport) Summarize() {
	ms := make([]int64, len(w.Files))
	for i, f := range w.Files {
		ms[i] = f.LatencyMS
	}
	w.P50LatencyMS, w.MaxLatencyMS, w.AvgLatencyMS = Latency(ms)
}

// LatencyLine is the one-line latency summary of report.md and of the
// summary lima-tui prints after each micro-batch.
func LatencyLine(p50, maxMS, avg int64, files int) string {
	return fmt.Sprintf("latency from arrival (first seen) to visible: p50 %d ms, max %d ms, average %d ms over %d file(s)", p50, maxMS, avg, files)
}

// Line is the micro-batch's LatencyLine.
func (w *WatchReport) Line() string {
	return LatencyLine(w.P50LatencyMS, w.MaxLatencyMS, w.AvgLatencyMS, len(w.Files))
}
