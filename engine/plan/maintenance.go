package plan

import (
	"fmt"
	"time"
)

// Maintenance is the retention policy `lima-tui maintain` applies to every
// Iceberg table of the plan: snapshots beyond the newest RetainLast that
// are also older than MaxSnapshotAge are expired, then files in the
// table's data and metadata folders that no retained snapshot or metadata
// file references and that are older than OrphanOlderThan are removed.
// Cron runs `lima-tui maintain --schedule` on its own cron expression (in
// schedule.timezone). Absent fields take the defaults below.
type Maintenance struct {
	// RetainLast is how many snapshots of each table's lineage are always
	// kept, whatever their age (default 5, at least 1).
	RetainLast int `yaml:"retain_last,omitempty"`
	// MaxSnapshotAge: a snapshot beyond RetainLast expires once it is
	// older than this (default 7d; 0s: by count alone). A duration such as
	// 36h, 7d or 2w.
	MaxSnapshotAge string `yaml:"max_snapshot_age,omitempty"`
	// OrphanOlderThan is the safety window of orphan removal: an
	// unreferenced file younger than this is kept (default 3d, at least
	// 1h), so a file a writer has not committed yet is never taken.
	OrphanOlderThan string `yaml:"orphan_older_than,omitempty"`
	// Cron is when `lima-tui maintain --schedule` runs (five fields or
	// @daily, …), in schedule.timezone.
	Cron string `yaml:"cron,omitempty"`
}

// Maintenance defaults and bounds.
const (
	DefaultRetainLast      = 5
	DefaultMaxSnapshotAge  = 7 * 24 * time.Hour
	DefaultOrphanOlderThan = 3 * 24 * time.Hour
	MinOrphanOlderThan     = time.Hour
)

// Retention is a resolved Maintenance.
type Retention struct {
	RetainLast      int
	MaxSnapshotAge  time.Duration
	OrphanOlderThan time.Duration
}

// Retention resolves the policy, defaults applied (a nil Maintenance is
// every default).
func (m *Maintenance) Retention() (Retention, error) {
	r := Retention{RetainLast: DefaultRetainLast, MaxSnapshotAge: DefaultMaxSnapshotAge, OrphanOlderThan: DefaultOrphanOlderThan}
	if m == nil {
		return r, nil
	}
	if m.RetainLast < 0 {
		return r, fmt.Errorf("retain_last: %d is negative; keep at least 1 snapshot", m.RetainLast)
	}
	if m.RetainLast > 0 {
		r.RetainLast = m.RetainLast
	}
	if m.MaxSnapshotAge != "" {
		d, err := parseAge(m.MaxSnapshotAge)
		if err != nil {
			return r, fmt.Errorf("max_snapshot_age: %w", err)
		}
		r.MaxSnapshotAge = d
	}
	if m.OrphanOlderThan != "" {
		d, err := parseAge(m.OrphanOlderThan)
		if err != nil {
			return r, fmt.Errorf("orphan_older_than: %w", err)
		}
		if d < MinOrphanOlderThan {
			return r, fmt.Errorf("orphan_older_than: %s is shorter than the %s safety window; a file a writer has not committed yet could be taken", d, MinOrphanOlderThan)
		}
		r.OrphanOlderThan = d
	}
	return r, nil
}

// parseAge reads 36h, 90m, 7d, 2w or 0s.
func parseAge(s string) (time.Duration, error) {
	if s == "0" || s == "0s" {
		return 0, nil
	}
	return parseSpan(s)
}

// maintenance validates the maintenance block.
func (v *validator) maintenance() {
	m := v.p.Maintenance
	if m == nil {
		return
	}
	if m.RetainLast < 0 {
		v.add("maintenance.retain_last", "%d is negative; keep at least 1 snapshot", m.RetainLast)
	}
	if m.MaxSnapshotAge != "" {
		if _, err := parseAge(m.MaxSnapshotAge); err != nil {
			v.add("maintenance.max_snapshot_age", "%v", err)
		}
	}
	if m.OrphanOlderThan != "" {
		if d, err := parseAge(m.OrphanOlderThan); err != nil {
			v.add("maintenance.orphan_older_than", "%v", err)
		} else if d < MinOrphanOlderThan {
			v.add("maintenance.orphan_older_than", "%s is shorter than the %s safety window", d, MinOrphanOlderThan)
		}
	}
	if m.Cron != "" {
		if err := CheckCron(m.Cron); err != nil {
			v.add("maintenance.cron", "%v", err)
		}
	}
}
