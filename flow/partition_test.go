package flow_test

import (
	"context"
	"testing"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// Every partition transform the plan names creates a table that loads,
// reconciles and reports the expected partition spec.
func TestAllPartitionTransformsLoad(t *testing.T) {
	ws, p := workspace(t, map[string][]byte{
		"t.csv": []byte("id,name,country,d,ts\n1,alpha,KR,2025-12-31,2025-12-31T23:00:00\n2,beta,DE,2026-01-01,2026-01-01T01:00:00\n3,gamma,KR,2026-06-15,2026-06-15T12:30:00\n"),
	}, `schema_version: 1
platform: {prefix: parts}
sources: {in: {kind: files, path: in}}
tables:
  t:
    source: {name: in, files: [t.csv]}
    columns:
      - {name: id, type: long, required: true}
      - {name: name, type: string}
      - {name: country, type: string}
      - {name: d, type: date}
      - {name: ts, type: timestamp, formats: ["yyyy-MM-ddTHH:mm:ss"]}
    partition: ["year(d)", "bucket(4, id)", "truncate(2, name)", "hour(ts)", "country"]
    load: {keys: [id]}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := tableReport(t, out.Report, "t")
	if tr.RowsLoaded != 3 || tr.Reconciliation != gates.Pass {
		t.Fatalf("loaded %d, gate 4 %s: %+v", tr.RowsLoaded, tr.Reconciliation, tr.Checks)
	}
	_, tbl := loadIceberg(t, ws, p, "t")
	spec := tbl.Spec()
	want := []string{"year", "bucket[4]", "truncate[2]", "hour", "identity"}
	if spec.NumFields() != len(want) {
		t.Fatalf("spec %v", spec)
	}
	for i, w := range want {
		if got := spec.Field(i).Transform.String(); got != w {
			t.Errorf("partition field %d: %s, want %s", i, got, w)
		}
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil || len(tasks) != 3 { // every row differs in year/hour: 3 partitions
		t.Fatalf("%d data files (%v), want 3", len(tasks), err)
	}
}
