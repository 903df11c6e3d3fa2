package run

import (
	"fmt"
	"testing"
)

// The committed position is (ordering, file): a later batch's change with
// the same ordering value is behind it when its file name sorts before the
// position's file (held back as change_sequence_backwards), and after it
// when the name sorts after (applied). Expected values are counted by hand.
func TestCDCSameOrderingInAnEarlierNamedFileIsBackwards(t *testing.T) {
	e := newCDCEnv(t)
	// Run 1: position becomes ordering 5 in c002.csv.
	e.write(t, "c002.csv", "op,seq,id,name,amount\nI,4,1,ann,10\nI,5,2,bob,20\n")
	tr := e.run(t)
	if tr.RowsLoaded != 2 || tr.RowsQuarantined != 0 {
		t.Fatalf("run 1: loaded %d, held %v", tr.RowsLoaded, tr.QuarantinedBy)
	}
	// Run 2: c001.csv sorts before c002.csv; its ordering 5 equals the
	// position's, so the update is behind the position. Its ordering 6 row
	// is ahead and applies.
	e.write(t, "c001.csv", "op,seq,id,name,amount\nU,5,1,stale,99\nI,6,3,cy,30\n")
	tr = e.run(t)
	if tr.RowsRead != 3 || tr.RowsLoaded != 1 || tr.RowsQuarantined != 1 || tr.QuarantinedBy[RuleCDCBackwards] != 1 || !tr.Balanced() {
		t.Fatalf("run 2: read %d, loaded %d, held %v (want 3 read, 1 loaded, 1 %s)", tr.RowsRead, tr.RowsLoaded, tr.QuarantinedBy, RuleCDCBackwards)
	}
	// Run 3: c003.csv sorts after c001.csv (the position is now 6 in
	// c001.csv); ordering 6 in a later-named file is not backwards.
	e.write(t, "c003.csv", "op,seq,id,name,amount\nU,6,2,bob,25\n")
	tr = e.run(t)
	if tr.RowsLoaded != 1 || tr.RowsQuarantined != 0 {
		t.Fatalf("run 3: loaded %d, held %v (the same ordering in a later-named file applies)", tr.RowsLoaded, tr.QuarantinedBy)
	}
	got := map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	want := map[string]string{"1": "ann|10", "2": "bob|25", "3": "cy|30"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake %v, want %v", got, want)
	}
}
