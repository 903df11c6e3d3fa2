package flow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/s3test"
)

// TestShardsOnS3 is the distributed load where AWS Glue runs it: the
// source objects and the warehouse on S3 (raw/ on by default there). The
// workers run in this process; a speculative duplicate attempt's files are
// removed from the bucket by the commit, and the table holds the good rows
// of every object once.
func TestShardsOnS3(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ctx := context.Background()
	good := map[string]string{} // id → v, written down as the objects are
	held := 0
	for i := range 4 {
		var b strings.Builder
		b.WriteString("id,v\n")
		for j := range 20 {
			id := fmt.Sprint(i*100 + j)
			if j%7 == 3 {
				fmt.Fprintf(&b, "%s,not-a-number\n", id)
				held++
				continue
			}
			good[id] = fmt.Sprint(j * 3)
			fmt.Fprintf(&b, "%s,%d\n", id, j*3)
		}
		if err := cl.Put(ctx, bucket, fmt.Sprintf("in/p-%d.csv", i), strings.NewReader(b.String()), nil); err != nil {
			t.Fatal(err)
		}
	}
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: shs3}
storage: {warehouse: 's3://`+bucket+`/lake'}
sources: {in: {kind: files, path: "s3://`+bucket+`/in"}}
tables:
  parts:
    source: {name: in, files: ["p-*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: v, type: long}
    load: {keys: [id]}
`)
	var expect, lines bytes.Buffer
	for i := range 4 {
		s := flow.Shard{LoadID: "ld-s3", Table: "parts", Shard: fmt.Sprint(i), Inputs: []flow.ShardInput{{URI: fmt.Sprintf("s3://%s/in/p-%d.csv", bucket, i)}}}
		b, _ := json.Marshal(s)
		expect.Write(append(b, '\n'))
		for _, a := range []string{"a", "b"}[:1+i%2] { // shards 1 and 3 twice
			s.Attempt = a
			b, _ := json.Marshal(s)
			lines.Write(append(b, '\n'))
		}
	}
	var manifests bytes.Buffer
	if err := flow.Worker(ctx, flow.WorkerOptions{Workspace: ws, Plan: p, Log: io.Discard}, &lines, &manifests); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(manifests.String(), `"ok":true`); n != 6 {
		t.Fatalf("%d successful manifests of 6:\n%s", n, manifests.String())
	}
	parquet := func() []string {
		objs, err := cl.List(ctx, bucket, "lake/")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			if strings.HasSuffix(o.Key, ".parquet") {
				out = append(out, "s3://"+bucket+"/"+o.Key)
			}
		}
		sort.Strings(out)
		return out
	}
	before := parquet()
	// The manifests on S3 as Spark's saveAsTextFile leaves them: part
	// files (the first without a final newline) and _SUCCESS; the expected
	// shards as one object.
	ml := strings.SplitAfter(strings.TrimSuffix(manifests.String(), "\n"), "\n")
	for key, body := range map[string]string{"out/part-00000": strings.TrimSuffix(strings.Join(ml[:3], ""), "\n"), "out/part-00001": strings.Join(ml[3:], ""), "out/_SUCCESS": "", "expect.jsonl": expect.String()} {
		if err := cl.Put(ctx, bucket, key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	mr, err := flow.OpenLines(ctx, "s3://"+bucket+"/out/")
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	er, err := flow.OpenLines(ctx, "s3://"+bucket+"/expect.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close()
	oc, err := flow.Commit(ctx, flow.CommitOptions{Workspace: ws, Plan: p, LoadID: "ld-s3", Expect: er, Manifests: []io.Reader{mr}})
	if err != nil {
		t.Fatal(err)
	}
	if rep := tableReport(t, oc.Report, "parts"); rep.Reconciliation != gates.Pass || rep.RowsLoaded != int64(len(good)) || rep.RowsQuarantined != int64(held) {
		t.Fatalf("report: gate 4 %s, loaded %d (want %d), held %d (want %d): %+v", rep.Reconciliation, rep.RowsLoaded, len(good), rep.RowsQuarantined, held, rep.Checks)
	}
	if len(oc.Chosen) != 4 {
		t.Fatalf("chosen %v", oc.Chosen)
	}
	for s, a := range oc.Chosen {
		if a != "a" {
			t.Errorf("shard %s: attempt %s chosen, want the first in attempt order (a)", s, a)
		}
	}
	// The table read back with iceberg-go (through S3), as a reader would.
	sk, err := flow.OpenSink(ctx, ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), "parts"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	got := map[string]string{}
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for r := range int(rec.NumRows()) {
			id := rec.Column(0).ValueStr(r)
			if _, dup := got[id]; dup {
				t.Fatalf("id %s twice in the table", id)
			}
			got[id] = rec.Column(1).ValueStr(r)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(good) || len(tbl.Metadata().Snapshots()) != 1 {
		t.Fatalf("table (%d snapshots) %v\nwant  %v", len(tbl.Metadata().Snapshots()), got, good)
	}
	after := parquet()
	var live []string
	for _, task := range tasks {
		live = append(live, task.File.FilePath())
	}
	sort.Strings(live)
	if fmt.Sprint(after) != fmt.Sprint(live) || len(before) != len(after)+2 {
		t.Fatalf("parquet objects: %d before the commit, after %v, live %v", len(before), after, live)
	}
}
