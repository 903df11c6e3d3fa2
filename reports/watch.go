package reports

import "time"

// WatchReport is the latency of one micro-batch: for every file, from the
// moment the watcher first saw it to the moment its rows were visible (the
// table's commit).
type WatchReport struct {
	Files        []WatchFile `json:"files"`
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
