package flow_test

import (
	"context"
	"testing"

	"github.com/lima-lake/lima/flow"
)

// TestReconcileNamesTheSnapshotItRead: gate 4 pins the snapshot it reads
// and names it — every verdict said "snapshot 0" — and `reconcile` without
// a run id checks every table as its newest load left it, also when the
// newest run found everything already loaded (it exited 1: "no saved
// expectations").
func TestReconcileNamesTheSnapshotItRead(t *testing.T) {
	ws, p := newDemo(t)
	first := runOnce(t, ws, p, flow.RunOptions{})
	recs, err := flow.Reconcile(context.Background(), ws, p, first.Report.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		_, tbl := loadIceberg(t, ws, p, rec.Table)
		if want := tbl.CurrentSnapshot().SnapshotID; rec.SnapshotID != want {
			t.Errorf("%s: gate 4 names snapshot %d, the table's current snapshot is %d", rec.Table, rec.SnapshotID, want)
		}
	}
	// A rerun loads nothing and saves no expectations.
	again := runOnce(t, ws, p, flow.RunOptions{})
	for _, tr := range again.Report.Tables {
		if tr.Status != "already_loaded" {
			t.Fatalf("rerun: %s is %s, want already_loaded", tr.Name, tr.Status)
		}
	}
	recs, err = flow.Reconcile(context.Background(), ws, p, "")
	if err != nil {
		t.Fatalf("reconcile after a rerun that loaded nothing: %v", err)
	}
	if len(recs) != len(first.Report.Tables) {
		t.Fatalf("reconcile checked %d tables, want the %d the first run loaded", len(recs), len(first.Report.Tables))
	}
	for _, rec := range recs {
		_, tbl := loadIceberg(t, ws, p, rec.Table)
		if rec.Status != "pass" || rec.SnapshotID != tbl.CurrentSnapshot().SnapshotID {
			t.Errorf("reconcile %s: %s at snapshot %d, want pass at %d", rec.Table, rec.Status, rec.SnapshotID, tbl.CurrentSnapshot().SnapshotID)
		}
	}
}
