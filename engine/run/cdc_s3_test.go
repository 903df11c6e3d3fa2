package run

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/internal/s3test"
)

// TestCDCFromS3 applies change files dropped under an S3 prefix (as DMS-like
// tools deliver them) against the loopback S3 server: the lake equals the
// changes applied by hand, a rerun reads nothing, and the same bytes under
// another key are held back as a file seen twice.
func TestCDCFromS3(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	e := newCDCEnv(t)
	p, err := plan.Parse([]byte(strings.Replace(cdcPlan, "path: in}", "path: s3://"+bucket+"/in}", 1)), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.plan = p
	put := func(key, body string) {
		t.Helper()
		if err := cl.Put(context.Background(), bucket, "in/changes/"+key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	put("c001.csv", "op,seq,id,name,amount\nI,1,1,ann,10\nI,2,2,bob,20\nI,3,3,cy,30\n")
	tr := e.run(t)
	if tr.RowsRead != 4 || tr.RowsLoaded != 3 || !tr.Balanced() {
		t.Fatalf("first run: read %d loaded %d balanced %v", tr.RowsRead, tr.RowsLoaded, tr.Balanced())
	}
	second := "op,seq,id,name,amount\nU,4,1,ann,11\nD,5,3,,\nI,6,4,dee,40\n"
	put("c002.csv", second)
	tr = e.run(t)
	if tr.RowsLoaded != 3 || tr.Commit.Deleted != 2 || !tr.Balanced() {
		t.Fatalf("second run: loaded %d deleted %d balanced %v", tr.RowsLoaded, tr.Commit.Deleted, tr.Balanced())
	}
	got := map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	// By hand: 1 updated to 11, 2 untouched, 3 deleted, 4 inserted.
	want := map[string]string{"1": "ann|11", "2": "bob|20", "4": "dee|40"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake %v, want %v", got, want)
	}
	if tr = e.run(t); tr.Status != StatusNothingToLoad || tr.RowsRead != 0 {
		t.Fatalf("rerun: %s read %d", tr.Status, tr.RowsRead)
	}
	put("c003.csv", second)
	tr = e.run(t)
	if tr.QuarantinedBy[RuleCDCFileSeenTwice] != 1 || tr.RowsLoaded != 0 || !tr.Balanced() {
		t.Fatalf("a re-delivered file: %v loaded %d", tr.QuarantinedBy, tr.RowsLoaded)
	}
}
