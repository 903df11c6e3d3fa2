package flow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/s3test"
)

// TestS3IncrementalFullRefreshReplaces (failure 2, S3): objects below an
// S3 prefix in mode incremental; after the objects change, `--full-refresh`
// replaces the table with exactly the rows of the objects listed now.
func TestS3IncrementalFullRefreshReplaces(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	put := func(key, body string) {
		t.Helper()
		if err := cl.Put(context.Background(), bucket, "in/"+key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	put("ev-1.csv", "id,at,v\n1,2026-01-01,10\n2,2026-01-02,20\n3,2026-01-03,30\n")
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: frs3}
sources: {in: {kind: files, path: "s3://`+bucket+`/in"}}
tables:
  events:
    source: {name: in, files: ["ev-*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: at, type: date}
      - {name: v, type: long}
    load: {mode: incremental, keys: [id], watermark: at}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	balanced(t, out.Result.Tables[0])
	put("ev-1.csv", "id,at,v\n1,2026-01-01,11\n3,2026-01-03,30\n")
	put("ev-2.csv", "id,at,v\n4,2026-01-02,40\n5,2026-01-02,50\n")
	before := readLake(t, ws, p, "events")
	out = runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	tr := out.Result.Tables[0]
	balanced(t, tr)
	st := readLake(t, ws, p, "events")
	sameMap(t, "after --full-refresh", st.column(t, "id", "v"), map[string]string{"1": "11", "3": "30", "4": "40", "5": "50"})
	metadataTruthful(t, "after --full-refresh", st)
	oneSnapshotOf(t, "full refresh", before, st, tr.LoadID, "2026-01-03")
	if rep := tableReport(t, out.Report, "events"); rep.Reconciliation != gates.Pass {
		t.Fatalf("gate 4: %s %+v", rep.Reconciliation, rep.Checks)
	}
}
