package plan

import (
	"os"
	"strings"
	"testing"
	"time"
)

func withMaintenance(t *testing.T, block string) (*Plan, error) {
	t.Helper()
	data, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse([]byte(string(data)+"maintenance:\n"+block), "platform.yaml")
	if err != nil {
		return nil, err
	}
	return p, p.Validate()
}

func TestMaintenanceFields(t *testing.T) {
	p, err := withMaintenance(t, "  retain_last: 3\n  max_snapshot_age: 2w\n  orphan_older_than: 36h\n  cron: \"30 3 * * 0\"\n")
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Maintenance.Retention()
	if err != nil || r.RetainLast != 3 || r.MaxSnapshotAge != 14*24*time.Hour || r.OrphanOlderThan != 36*time.Hour || p.Maintenance.Cron != "30 3 * * 0" {
		t.Fatalf("retention %+v, %v", r, err)
	}
	// Absent: Iceberg-like defaults.
	if r, err := (*Maintenance)(nil).Retention(); err != nil || r.RetainLast != 5 || r.MaxSnapshotAge != 7*24*time.Hour || r.OrphanOlderThan != 3*24*time.Hour {
		t.Fatalf("defaults %+v, %v", r, err)
	}
	// 0s: by count alone.
	p, err = withMaintenance(t, "  max_snapshot_age: 0s\n")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := p.Maintenance.Retention(); r.MaxSnapshotAge != 0 {
		t.Fatalf("0s = %s", r.MaxSnapshotAge)
	}
	for block, want := range map[string]string{
		"  retain_last: -1\n":        "maintenance.retain_last",
		"  max_snapshot_age: soon\n": "maintenance.max_snapshot_age",
		"  orphan_older_than: 10m\n": "maintenance.orphan_older_than",
		"  orphan_older_than: 0s\n":  "maintenance.orphan_older_than",
		"  cron: \"every night\"\n":  "maintenance.cron",
		"  retain_lats: 2\n":         "retain_last", // unknown field, did you mean
	} {
		_, err := withMaintenance(t, block)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", block, err, want)
		}
	}
}
