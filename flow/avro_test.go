package flow_test

import (
	"bytes"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2/ocf"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

const avroOrders = `{"type":"record","name":"order","fields":[
 {"name":"id","type":"long"},
 {"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}]},
 {"name":"placed","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"status","type":{"type":"enum","name":"st","symbols":["OPEN","SHIPPED"]}}
]}`

// avroOrderFile writes orders first..last with the Avro library's own
// container writer; amount is id × 0.25 (null for multiples of 50).
func avroOrderFile(t *testing.T, first, last int64, codec ocf.CodecName) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(avroOrders, &buf, ocf.WithCodec(codec), ocf.WithBlockLength(64))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	for id := first; id <= last; id++ {
		var amount any = big.NewRat(id, 4)
		if id%50 == 0 {
			amount = nil
		}
		st := "OPEN"
		if id%3 == 0 {
			st = "SHIPPED"
		}
		placed := base.Add(time.Duration(id) * time.Minute)
		if err := enc.Encode(map[string]any{"id": id, "amount": amount, "placed": placed,
			"day": time.Date(placed.Year(), placed.Month(), placed.Day(), 0, 0, 0, 0, time.UTC), "status": st}); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Avro files load exactly through the whole pipeline: counts, the exact
// decimal sum, gate 4; a truncated file is one file-level exception and the
// rows it had before the cut are not loaded (the file is held whole).
func TestAvroSourceLoadsExactly(t *testing.T) {
	cut := avroOrderFile(t, 2001, 2500, ocf.Null)
	ws, p := workspace(t, map[string][]byte{
		"av/a.avro":         avroOrderFile(t, 1, 1000, ocf.Deflate),
		"av/b.avro":         avroOrderFile(t, 1001, 2000, ocf.Snappy),
		"av/truncated.avro": cut[:len(cut)*2/3],
	}, `schema_version: 1
platform: {prefix: av}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["av/*.avro"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(12,2)"}
      - {name: placed, type: timestamp}
      - {name: day, type: date}
      - {name: status, type: string}
    partition: ["month(day)"]
    load: {keys: [id]}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Report.Tables[0]
	// Σ id/4 over 1..2000 without the 40 multiples of 50, computed apart:
	// Σ 1..2000 = 2,001,000; Σ of 50·k for k in 1..40 = 50 × 820 = 41,000.
	want := new(big.Rat).SetFrac64(2001000-41000, 4)
	if tr.RowsRead != 2000 || tr.RowsLoaded != 2000 || tr.RowsQuarantined != 0 || tr.Reconciliation != gates.Pass {
		t.Fatalf("avro load: read %d loaded %d held %d, gate 4 %s; files %+v; exceptions %+v", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.Reconciliation, tr.Files, out.Report.Exceptions)
	}
	if ct := tr.ControlTotals["amount"]; ct.Source != want.FloatString(2) || ct.Target != want.FloatString(2) {
		t.Fatalf("amount totals %+v, want %s", ct, want.FloatString(2))
	}
	if len(out.Report.Tables[0].Files) != 3 {
		t.Fatalf("files %+v", tr.Files)
	}
	held := 0
	for _, f := range tr.Files {
		if f.Name == "av/truncated.avro" {
			held++
			if f.Status == "read" {
				t.Fatalf("truncated file: %+v", f)
			}
		}
	}
	if held != 1 || out.Report.Exceptions.Files != 1 {
		t.Fatalf("truncated file not held as one file exception: files %d, %+v", out.Report.Exceptions.Files, tr.Files)
	}
	if fmt.Sprint(tr.Balanced) != "true" {
		t.Fatalf("not balanced: %+v", tr)
	}
}
