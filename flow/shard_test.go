package flow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/flow"
)

// TestShardsThatCleanedDifferentlyAreNotCommitted: a decimal column
// without a pinned separator is read with the convention each shard's
// sample suggests; two shards that chose differently would load the same
// text as different numbers, so the commit refuses them.
func TestShardsThatCleanedDifferentlyAreNotCommitted(t *testing.T) {
	ctx := context.Background()
	ws, p := workspace(t, map[string][]byte{
		"a.csv": []byte("id,amount\n1,\"1.234,50\"\n2,\"2.000,25\"\n3,\"10,75\"\n"),
		"b.csv": []byte("id,amount\n4,\"1,234.50\"\n5,\"2,000.25\"\n6,10.75\n"),
	}, `schema_version: 1
platform: {prefix: shc}
sources: {in: {kind: files, path: in}}
tables:
  pay:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(10,2)"}
    load: {keys: [id]}
`)
	var expect, in bytes.Buffer
	for i, f := range []string{"a.csv", "b.csv"} {
		s := flow.Shard{LoadID: "ld-c", Table: "pay", Shard: string(rune('0' + i)), Attempt: "a",
			Inputs: []flow.ShardInput{{URI: "file://" + filepath.Join(ws.Dir, "in", f)}}}
		b, _ := json.Marshal(s)
		expect.Write(append(b, '\n'))
		in.Write(append(b, '\n'))
	}
	var out bytes.Buffer
	if err := flow.Worker(ctx, flow.WorkerOptions{Workspace: ws, Plan: p, Log: io.Discard}, &in, &out); err != nil {
		t.Fatal(err)
	}
	var castings []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m flow.Manifest
		if err := json.Unmarshal([]byte(l), &m); err != nil || !m.OK || m.Accounting.RowsLoaded != 3 {
			t.Fatalf("manifest %v: %s", err, l)
		}
		castings = append(castings, m.Casting)
	}
	if castings[0] == castings[1] || castings[0] == "" {
		t.Fatalf("the shards report the same casting %q: the test's inputs do not make them choose differently", castings[0])
	}
	oc, err := flow.Commit(ctx, flow.CommitOptions{Workspace: ws, Plan: p, LoadID: "ld-c", Expect: &expect, Manifests: []io.Reader{&out}})
	if err != nil {
		t.Fatal(err)
	}
	// The table's load failed, as a run's table does: the report says why
	// and the exit code is not 0.
	if rep := tableReport(t, oc.Report, "pay"); rep.Status != "failed" || !strings.Contains(rep.Error, "different rules") || oc.Report.ExitCode() == 0 {
		t.Fatalf("commit: table %s %q, exit %d; want a failure naming the different rules", rep.Status, rep.Error, oc.Report.ExitCode())
	}
	if st := readLake(t, ws, p, "pay"); st.snapshots != 0 {
		t.Fatalf("a refused commit made %d snapshots", st.snapshots)
	}
}
