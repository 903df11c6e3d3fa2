package plan

import (
	"fmt"
	"strings"
	"time"
)

// Watch configures `lima-tui run --watch` (schedule.watch): how often the
// watcher polls the file sources and commits, how many lines one
// micro-batch holds at most, and how often the loaded tables are
// compacted. The command-line flags --interval, --batch-rows and
// --compact-every override these values.
type Watch struct {
	// Interval between polls (and commits), a Go duration such as 30s or
	// 5m; empty means the default, 10s.
	Interval string `yaml:"interval,omitempty"`
	// BatchRows caps the lines of one micro-batch (0: no cap).
	BatchRows int64 `yaml:"batch_rows,omitempty"`
	// CompactEvery compacts the loaded tables after every N micro-batches
	// (0: never).
	CompactEvery int `yaml:"compact_every,omitempty"`
}

// Watch interval bounds for a plan: polling more often than once a second
// only adds load on the source (and on S3, requests); less often than once
// a day is a schedule (schedule.cron), not a watch.
const (
	DefaultWatchInterval = 10 * time.Second
	MinWatchInterval     = time.Second
	MaxWatchInterval     = 24 * time.Hour
)

// IntervalDuration parses Interval; empty gives DefaultWatchInterval.
func (w *Watch) IntervalDuration() (time.Duration, error) {
	if w == nil || strings.TrimSpace(w.Interval) == "" {
		return DefaultWatchInterval, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(w.Interval))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write a number with a unit, e.g. 30s, 5m or 1h30m", w.Interval)
	}
	if d < MinWatchInterval || d > MaxWatchInterval {
		return 0, fmt.Errorf("%s is out of range; use %s to %s", d, MinWatchInterval, MaxWatchInterval)
	}
	return d, nil
}

// watch validates schedule.watch.
func (v *validator) watch() {
	w := v.p.Schedule.Watch
	if w == nil {
		return
	}
	if _, err := w.IntervalDuration(); err != nil {
		v.add("schedule.watch.interval", "%v", err)
	}
	if w.BatchRows < 0 {
		v.add("schedule.watch.batch_rows", "%d is negative; give the most lines of one micro-batch, or 0 for no cap", w.BatchRows)
	}
	if w.CompactEvery < 0 {
		v.add("schedule.watch.compact_every", "%d is negative; give a number of micro-batches between compactions, or 0 for never", w.CompactEvery)
	}
}
