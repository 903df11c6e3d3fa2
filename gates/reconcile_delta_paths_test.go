package gates_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/gates"
)

// TestDeltaPathOnlyForTheUpsertsOwnSnapshot: the delta proof is taken for
// an upsert's own snapshot and for nothing else — each condition of
// deltaCheckable alone sends gate 4 to the full re-read.
func TestDeltaPathOnlyForTheUpsertsOwnSnapshot(t *testing.T) {
	l, e, _ := deltaLake(t)
	if p := deltaTPath(t, l.reconcile(e)); p != "delta" {
		t.Fatalf("the upsert's own snapshot: %s path, want delta", p)
	}
	cases := map[string]func(*gates.Expectation){
		"mode full":          func(e *gates.Expectation) { e.Mode = plan.ModeFull },
		"no delta expected":  func(e *gates.Expectation) { e.Delta = nil },
		"no key":             func(e *gates.Expectation) { e.Keys = nil },
		"no snapshot pinned": func(e *gates.Expectation) { e.SnapshotID = 0 },
		"another snapshot":   func(e *gates.Expectation) { e.SnapshotID-- },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			e2 := e
			edit(&e2)
			rec := l.reconcile(e2)
			if name == "no key" {
				// No key: no key check at all, but no delta check either.
				for _, f := range rec.Checks {
					if f.Name == "delta: live rows from the manifests" {
						t.Fatalf("keyless expectation proved as a delta: %+v", rec.Checks)
					}
				}
				return
			}
			if p := deltaTPath(t, rec); p != "full" {
				t.Fatalf("%s path, want full", p)
			}
		})
	}
}

// TestDeltaPathTamperLaterSnapshot: a commit behind Lima's back after the
// upsert makes the current snapshot another one than the load's: the
// delta proof is not taken, the full re-read is, and it sees the row (a
// second row of key 5).
func TestDeltaPathTamperLaterSnapshot(t *testing.T) {
	l, e, _ := deltaLake(t)
	l.appendBehind([]tRow{{id: 5, name: strp("behind"), amount: 1, day: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)}}, nil)
	rec := l.reconcile(e)
	if p := deltaTPath(t, rec); p != "full" {
		t.Fatalf("%s path, want full", p)
	}
	if rec.LakeRows != 17 {
		t.Fatalf("gate 4: %d lake rows (want 17 = 10 + 5 + 1 new + 1 behind)", rec.LakeRows)
	}
	wantStatus(t, rec, "unique key (id)", gates.Fail)
}

// TestDeltaPathNeedsAParentAndNoReplace: an upsert snapshot without a
// parent (the table's first) or one that replaced the table is re-read
// whole.
func TestDeltaPathNeedsAParentAndNoReplace(t *testing.T) {
	t.Run("first snapshot", func(t *testing.T) {
		l := loadLake(t, tRows(), "L1")
		e := expectFor(tRows(), "L1")
		c, _, err := l.tbl.Current(l.ctx)
		if err != nil {
			t.Fatal(err)
		}
		e.Mode, e.SnapshotID, e.Delta = plan.ModeUpsert, c.SnapshotID, &gates.DeltaExpect{}
		rec := l.reconcile(e)
		if p := deltaTPath(t, rec); p != "full" {
			t.Fatalf("%s path, want full", p)
		}
		if rec.Status != gates.Pass {
			t.Fatalf("gate 4: %s %+v", rec.Status, rec.Checks)
		}
	})
	t.Run("replace", func(t *testing.T) {
		l := loadLake(t, tRows(), "L1")
		c := l.commitRows(tRows(), sink.CommitProps{LoadID: "L2", RunID: "run-L2", Replace: true})
		e := expectFor(tRows(), "L2")
		e.Mode, e.SnapshotID, e.Delta = plan.ModeUpsert, c.SnapshotID, &gates.DeltaExpect{}
		rec := l.reconcile(e)
		if p := deltaTPath(t, rec); p != "full" {
			t.Fatalf("%s path, want full", p)
		}
		if rec.Status != gates.Pass {
			t.Fatalf("gate 4: %s %+v", rec.Status, rec.Checks)
		}
	})
}

// TestDeltaPathNeedsBothCapabilities: a sink that cannot say what a
// snapshot changed, or cannot look keys up, or fails to read the
// manifests, is re-read whole.
func TestDeltaPathNeedsBothCapabilities(t *testing.T) {
	l, e, _ := deltaLake(t)
	for name, sc := range map[string]sink.Scanner{
		"no key finder":    deltaTNoKeyFinder{Table: l.tbl},
		"no delta reader":  deltaTNoDeltaReader{Table: l.tbl},
		"manifests unread": deltaTManifests{Table: l.tbl, err: errors.New("manifest list unreadable")},
	} {
		t.Run(name, func(t *testing.T) {
			if p := deltaTPath(t, deltaTReconcile(t, l, sc, e)); p != "full" {
				t.Fatalf("%s path, want full", p)
			}
		})
	}
	if p := deltaTPath(t, deltaTReconcile(t, l, deltaTManifests{Table: l.tbl}, e)); p != "delta" {
		t.Fatalf("the wrapper itself: %s path, want delta", p)
	}
}
