package dynamo_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/dynamo"
	"github.com/lima-lake/lima/engine/source/sourcetest"
	"github.com/lima-lake/lima/internal/s3test"
	"github.com/lima-lake/lima/internal/s3x"
)

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// putExport writes an export folder by hand: the summary, the manifest
// lines and the data files.
func putExport(t *testing.T, cl *s3x.Client, bucket, summary, manifest string, data map[string]string) string {
	t.Helper()
	ctx := context.Background()
	root := "x/AWSDynamoDB/01/"
	put := func(key string, b []byte) {
		if err := cl.Put(ctx, bucket, key, bytes.NewReader(b), nil); err != nil {
			t.Fatal(err)
		}
	}
	put(root+"manifest-summary.json", []byte(summary))
	put(root+"manifest-files.json", []byte(manifest))
	for name, body := range data {
		put(root+name, gz(body))
	}
	return "s3://" + bucket + "/" + root
}

func TestExportReadsItemsAndChecksTheManifest(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	ctx := context.Background()
	const sum = `{"itemCount":3,"outputFormat":"DYNAMODB_JSON","exportType":"FULL_EXPORT"}`
	manifest := `{"itemCount":2,"dataFileS3Key":"x/AWSDynamoDB/01/data/a.json.gz"}` + "\n" + `{"itemCount":1,"dataFileS3Key":"x/AWSDynamoDB/01/data/b.json.gz"}` + "\n"
	data := map[string]string{
		"data/a.json.gz": `{"Item":{"id":{"N":"1"},"amt":{"N":"1.25"},"m":{"M":{"b":{"S":"x"},"a":{"N":"2"}}}}}` + "\n" + `{"Item":{"id":{"N":"2"},"amt":{"N":"-0.5"}}}` + "\n",
		"data/b.json.gz": `not json` + "\n",
	}
	uri := putExport(t, cl, bucket, sum, manifest, data)
	e, err := dynamo.NewExport(cl, uri, dynamo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	units, err := e.List(ctx, []string{"**"})
	if err != nil || len(units) != 2 || units[0].Name != "data/a.json.gz" || units[0].ETag == "" {
		t.Fatalf("List = %+v, %v; want data/a.json.gz and data/b.json.gz with ETags", units, err)
	}
	cols := []string{"id", "amt", "m"}
	var rows []source.Row
	for _, u := range units {
		rr, err := e.Open(ctx, u, source.Options{Columns: cols})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := sourcetest.ReadAll(rr)
		rr.Close()
		if err != nil {
			t.Fatalf("%s: %v", u.Name, err)
		}
		rows = append(rows, rs...)
	}
	if len(rows) != 3 || rows[0].Values[2] != `{"a":2,"b":"x"}` || !rows[1].Nulls[2] || rows[2].Kind != source.Malformed || string(rows[2].Raw) != "not json" {
		t.Fatalf("rows %+v", rows)
	}
	if rows[0].Loc.Line != 1 || rows[1].Loc.Line != 2 || rows[2].Loc.Unit != "data/b.json.gz" {
		t.Errorf("locators %+v %+v %+v", rows[0].Loc, rows[1].Loc, rows[2].Loc)
	}
	n, sums := e.ReadTotals()
	if n != 3 || sums["amt"] != "0.75" || sums["id"] != "3" {
		t.Fatalf("ReadTotals = %d %v, want 3 items (the malformed line counted), amt 0.75, id 3", n, sums)
	}

	// A data file with fewer items than its manifest line is unreadable.
	bucket2 := s3test.Bucket(t, cl)
	uri = putExport(t, cl, bucket2, `{"itemCount":2,"outputFormat":"DYNAMODB_JSON"}`, `{"itemCount":2,"dataFileS3Key":"x/AWSDynamoDB/01/data/a.json.gz"}`,
		map[string]string{"data/a.json.gz": `{"Item":{"id":{"N":"1"}}}` + "\n"})
	e, _ = dynamo.NewExport(cl, uri, dynamo.Options{})
	units, err = e.List(ctx, []string{"**"})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := e.Open(ctx, units[0], source.Options{Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sourcetest.ReadAll(rr); !errors.Is(err, source.ErrUnreadable) || !strings.Contains(err.Error(), "manifest-files.json says 2") {
		t.Fatalf("short data file: %v, want unreadable (manifest says 2)", err)
	}
	rr.Close()

	// An ION export, a manifest that disagrees with the summary, a data
	// file outside the folder: refused with the reason.
	for _, tc := range []struct{ sum, manifest, want string }{
		{`{"itemCount":0,"outputFormat":"ION"}`, ``, "Lima reads DYNAMODB_JSON exports"},
		{`{"itemCount":5,"outputFormat":"DYNAMODB_JSON"}`, `{"itemCount":2,"dataFileS3Key":"x/AWSDynamoDB/01/data/a.json.gz"}`, "the export is incomplete"},
		{`{"itemCount":2}`, `{"itemCount":2,"dataFileS3Key":"elsewhere/a.json.gz"}`, "not below the export folder"},
		{`{"itemCount":1,"exportType":"INCREMENTAL_EXPORT"}`, ``, "Lima reads full exports"},
	} {
		b := s3test.Bucket(t, cl)
		uri := putExport(t, cl, b, tc.sum, tc.manifest, nil)
		e, _ := dynamo.NewExport(cl, uri, dynamo.Options{})
		if _, err := e.List(ctx, []string{"**"}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("summary %s: %v, want %q", tc.sum, err, tc.want)
		}
	}
}
