package gates_test

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/gates"
)

const deltaTManifestCheck = "delta: live rows from the manifests"

// The facts of deltaLake's change, counted by hand: the previous snapshot
// holds 10 January + 5 February rows (15 live); the upsert adds one data
// file of 2 rows (ids 3 and 100) and one delete file of 1 record (id 3's
// old row), so 15 + 2 − 1 = 16 live rows; the 2 data files of the previous
// snapshot are kept.
const deltaTControlManifests = "manifests: previous snapshot 15 live rows + 2 added in 1 new data file(s) − 1 deleted by 1 new delete file(s) = 16; the snapshot states 16 live; 2 data file(s) of the previous snapshot kept unchanged (path, records, size)"

// TestDeltaManifestsControl: the manifest check of the untouched delta
// states exactly the hand-counted figures and nothing of the failures'
// clauses.
func TestDeltaManifestsControl(t *testing.T) {
	l, e, _ := deltaLake(t)
	f := finding(t, l.reconcile(e), deltaTManifestCheck)
	if f.Status != gates.Pass || f.Detail != deltaTControlManifests {
		t.Fatalf("manifest check: %s %q\nwant pass %q", f.Status, f.Detail, deltaTControlManifests)
	}
}

// TestDeltaManifestsEachFactFails: each fact a commit behind Lima's back
// leaves in a delta snapshot's manifests fails the manifest check on its
// own — the other facts and every other check of the delta still pass,
// so the check's verdict rests on that one fact — and is named in its
// detail.
func TestDeltaManifestsEachFactFails(t *testing.T) {
	gone := sink.ChangedFile{Path: "file:///lake/data/gone.parquet", Records: 0, Bytes: 1234}
	cases := []struct {
		name   string
		edit   func(*sink.SnapshotChange)
		clause string // appended to the control's detail
		other  []string
	}{
		{"a data file of the previous snapshot removed (no rows)", func(ch *sink.SnapshotChange) {
			ch.RemovedData = append(ch.RemovedData, gone)
		}, "; 1 file(s) of the previous snapshot removed or changed", nil},
		{"a delete file of the previous snapshot removed (no rows)", func(ch *sink.SnapshotChange) {
			ch.RemovedDeletes = append(ch.RemovedDeletes, gone)
		}, "; 1 file(s) of the previous snapshot removed or changed", nil},
		{"a file of the previous snapshot changed in size", func(ch *sink.SnapshotChange) {
			ch.ChangedData = append(ch.ChangedData, gone)
		}, "; 1 file(s) of the previous snapshot removed or changed", nil},
		{"two files removed and one changed", func(ch *sink.SnapshotChange) {
			ch.RemovedData = append(ch.RemovedData, gone)
			ch.RemovedDeletes = append(ch.RemovedDeletes, gone)
			ch.ChangedData = append(ch.ChangedData, gone)
		}, "; 3 file(s) of the previous snapshot removed or changed", nil},
		{"a new delete file pointing at no one data file", func(ch *sink.SnapshotChange) {
			ch.AddedDeletes[0].Target = ""
		}, "; 1 new delete file(s) do not point at one data file of the previous snapshot", nil},
		{"a new delete file pointing at the new data file", func(ch *sink.SnapshotChange) {
			ch.AddedDeletes[0].Target = ch.AddedData[0].Path
		}, "; 1 new delete file(s) do not point at one data file of the previous snapshot", nil},
		{"a delete file pointing at a removed data file", func(ch *sink.SnapshotChange) {
			ch.Current.DanglingDeleteFiles = 1
		}, "; 1 delete file(s) point at removed data files", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, e, _ := deltaLake(t)
			rec := deltaTReconcile(t, l, deltaTManifests{Table: l.tbl, edit: c.edit}, e)
			f := finding(t, rec, deltaTManifestCheck)
			if want := deltaTControlManifests + c.clause; f.Status != gates.Fail || f.Detail != want {
				t.Fatalf("manifest check: %s %q\nwant fail %q", f.Status, f.Detail, want)
			}
			deltaTOthersPass(t, rec, deltaTManifestCheck)
		})
	}
}

// TestDeltaManifestsCountOffByOne: the live rows the snapshot states must
// be exactly previous + added − deleted: one row more or fewer on either
// side fails (the manifests' counts restated; the rows re-read are the
// lake's).
func TestDeltaManifestsCountOffByOne(t *testing.T) {
	cases := []struct {
		name string
		edit func(*sink.SnapshotChange)
		want string
	}{
		{"previous snapshot one row more", func(ch *sink.SnapshotChange) { ch.Parent.DataRows++ },
			"previous snapshot 16 live rows + 2 added in 1 new data file(s) − 1 deleted by 1 new delete file(s) = 17; the snapshot states 16 live"},
		{"previous snapshot one row fewer", func(ch *sink.SnapshotChange) { ch.Parent.DataRows-- },
			"previous snapshot 14 live rows + 2 added in 1 new data file(s) − 1 deleted by 1 new delete file(s) = 15; the snapshot states 16 live"},
		{"snapshot states one row more", func(ch *sink.SnapshotChange) { ch.Current.DataRows++ },
			"previous snapshot 15 live rows + 2 added in 1 new data file(s) − 1 deleted by 1 new delete file(s) = 16; the snapshot states 17 live"},
		{"snapshot states one row fewer", func(ch *sink.SnapshotChange) { ch.Current.DeleteRecords++ },
			"previous snapshot 15 live rows + 2 added in 1 new data file(s) − 1 deleted by 1 new delete file(s) = 16; the snapshot states 15 live"},
		{"new data file states one record more", func(ch *sink.SnapshotChange) { ch.AddedData[0].Records++ },
			"previous snapshot 15 live rows + 3 added in 1 new data file(s) − 1 deleted by 1 new delete file(s) = 17; the snapshot states 16 live"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, e, _ := deltaLake(t)
			f := finding(t, deltaTReconcile(t, l, deltaTManifests{Table: l.tbl, edit: c.edit}, e), deltaTManifestCheck)
			if f.Status != gates.Fail || !strings.Contains(f.Detail, c.want) {
				t.Fatalf("manifest check: %s %q\nwant fail with %q", f.Status, f.Detail, c.want)
			}
		})
	}
	// Both sides moved together still balance: the check compares, it
	// does not just flag any change.
	l, e, _ := deltaLake(t)
	f := finding(t, deltaTReconcile(t, l, deltaTManifests{Table: l.tbl, edit: func(ch *sink.SnapshotChange) {
		ch.Parent.DataRows++
		ch.Current.DataRows++
	}}, e), deltaTManifestCheck)
	if f.Status != gates.Pass {
		t.Fatalf("manifest check of a balanced restatement: %s %q", f.Status, f.Detail)
	}
}

// deltaTOthersPass: every check of rec but the one named passes (or is
// the "not checked" finding).
func deltaTOthersPass(t *testing.T, rec *gates.Reconciliation, but ...string) {
	t.Helper()
	for _, f := range rec.Checks {
		if strings.HasPrefix(f.Name, gates.NotChecked) {
			continue
		}
		skip := false
		for _, b := range but {
			skip = skip || f.Name == b
		}
		if !skip && f.Status != gates.Pass {
			t.Errorf("check %q: %s (%s), want pass: the case fails more than the fact it sets", f.Name, f.Status, f.Detail)
		}
	}
}
