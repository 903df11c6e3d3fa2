package run

import (
	"fmt"
	"testing"
)

// TestCDCSnapshotFileLoadsBeforeTheChanges: a file of a change-capture
// table with neither the operation nor the ordering column (the base
// export the change files follow) is read as inserts ordered before every
// change; the changes then apply to its rows.
func TestCDCSnapshotFileLoadsBeforeTheChanges(t *testing.T) {
	e := newCDCEnv(t)
	// Named so that it sorts after the change file: order comes from the
	// ordering, and a snapshot has the lowest.
	e.write(t, "z_base.csv", "id,name,amount\n1,ann,10\n2,bob,20\n3,cy,30\n")
	e.write(t, "c001.csv", "op,seq,id,name,amount\nU,4,1,ann,11\nD,5,3,,\nI,6,4,dee,40\n")
	tr := e.run(t)
	// Loaded counts the last change of each key touched: 1, 2, 3 (its
	// delete) and 4; the inserts of 1 and 3 were superseded in the batch.
	if tr.RowsQuarantined != 0 || tr.RowsLoaded != 4 || tr.SkippedBy[SkipSuperseded] != 2 || !tr.Balanced() {
		t.Fatalf("read %d loaded %d quarantined %d %v skipped %v", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.QuarantinedBy, tr.SkippedBy)
	}
	got := map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	want := map[string]string{"1": "ann|11", "2": "bob|20", "4": "dee|40"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake %v, want %v", got, want)
	}
	// A later change applies on top; a file with only one of the two
	// columns is still refused.
	e.write(t, "c002.csv", "op,seq,id,name,amount\nU,7,2,bob,21\n")
	e.write(t, "c003.csv", "op,id,name,amount\nU,1,x,1\n")
	tr = e.run(t)
	status := map[string]string{}
	for _, f := range tr.Files {
		status[f.Name] = f.Status
	}
	if tr.RowsLoaded != 1 || status["changes/c002.csv"] != "read" || status["changes/c003.csv"] != "unreadable" {
		t.Fatalf("second run: loaded %d, files %+v", tr.RowsLoaded, tr.Files)
	}
}
