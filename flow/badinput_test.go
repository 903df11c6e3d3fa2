package flow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// workspace writes files and a plan (approved) into a temp folder.
func workspace(t *testing.T, files map[string][]byte, yaml string) (flow.Workspace, *plan.Plan) {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		path := filepath.Join(dir, "in", name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := plan.Parse([]byte(yaml), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: "2026-11-30T00:00:00Z", PlanHash: p.Hash()}
	ws := flow.Workspace{Dir: dir}
	if err := p.Write(ws.PlanPath()); err != nil {
		t.Fatal(err)
	}
	return ws, p
}

const badInputPlan = `schema_version: 1
platform: {prefix: bad}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(10,2)"}
      - {name: note, type: string}
    load: {keys: [id]}
`

func TestBadInputBecomesExceptionsAndLosesNothing(t *testing.T) {
	files := map[string][]byte{
		// 1 header + 3 rows; "b" has an embedded CRLF kept as it was.
		"a.csv": []byte("id,amount,note\r\n1,10.50,ok\r\n2,\"1,000.25\",\"two\r\nlines\"\r\n3,7,x\r\n"),
		// The amount column is missing from the header: a file exception.
		"b.csv": []byte("id,note\n4,x\n5,y\n"),
		// 1 header, 1 good row, then a quote that never closes: the rest of
		// the file is one malformed row, held back with its bytes.
		"c.csv": []byte("id,amount,note\n6,1.00,fine\n7,2.00,\"never closed\n8,3.00,lost?\n"),
		// Not text at all.
		"d.csv": {0x00, 0x01, 0x02, 0xff, 0x00},
		// Ragged and duplicate rows.
		"e.csv": []byte("id,amount,note\n9,1,a,extra\n1,5,dup\n"),
	}
	ws, p := workspace(t, files, badInputPlan)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	// read: a 4, b 0 (file exception before any row), c 3, d 0, e 3 = 10.
	// loaded: 1, 2, 3, 6 = 4. held back: c's unterminated tail, e's ragged
	// row and e's duplicate of 1 = 3. skipped: headers of a, c, e = 3.
	if tr.RowsRead != 10 || tr.RowsLoaded != 4 || tr.RowsQuarantined != 3 || tr.RowsSkipped != 3 || !tr.Balanced() {
		t.Fatalf("read %d loaded %d held %d skipped %d", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
	}
	if len(tr.FileExceptions) != 2 {
		t.Fatalf("file exceptions %d, want 2 (b.csv missing a column, d.csv binary): %+v", len(tr.FileExceptions), tr.FileExceptions)
	}
	for _, e := range tr.FileExceptions {
		if e.Loc.Unit != "b.csv" && e.Loc.Unit != "d.csv" {
			t.Errorf("unexpected file exception %+v", e)
		}
		if e.Loc.Unit == "b.csv" && !strings.Contains(e.Errors[0].Reason, "amount") {
			t.Errorf("b.csv reason does not name the missing column: %s", e.Errors[0].Reason)
		}
	}
	var unterminated bool
	for _, e := range tr.Exceptions {
		if e.Loc.Unit == "c.csv" && strings.Contains(e.Raw, "never closed\n8,3.00,lost?") {
			unterminated = true
		}
	}
	if !unterminated {
		t.Errorf("the unterminated tail of c.csv is not held back with its bytes: %+v", tr.Exceptions)
	}
	if out.Report.Status != "ok" {
		t.Fatalf("status %s", out.Report.Status)
	}
	// The embedded CRLF arrived in the lake byte-exact.
	found := false
	for _, s := range out.Report.Tables[0].Samples {
		if s.Source["id"] == "2" {
			found = s.Lake["note"] == "two\r\nlines"
		}
	}
	_, tbl := loadIceberg(t, ws, p, "orders")
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		notes := rec.Column(2).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			if ids.Value(i) == 2 {
				found = notes.Value(i) == "two\r\nlines"
			}
		}
		rec.Release()
	}
	if !found {
		t.Error("CRLF inside a quoted field was not kept")
	}
}

func TestParquetSourceLoadsExactly(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 18, Scale: 3}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	// ids 1..1000, amount = id × 1.001 (unscaled id*1001), day cycles.
	var want int64
	for i := int64(1); i <= 1000; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		if i%100 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(i * 1001))
			want += i * 1001
		}
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(20454 + i%90))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "x.parquet")
	f, _ := os.Create(path)
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	data, _ := os.ReadFile(path)
	ws, p := workspace(t, map[string][]byte{"pq/part-0.parquet": data}, `schema_version: 1
platform: {prefix: pq}
sources:
  in: {kind: files, path: in}
tables:
  facts:
    source: {name: in, files: ["pq/*.parquet"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(18,3)"}
      - {name: day, type: date}
    partition: ["month(day)"]
    load: {keys: [id]}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Report.Tables[0]
	// Sum of i*1001 for i in 1..1000 minus the ten multiples of 100:
	// 1001 × (500500 − 5500) = 495,495,000 unscaled → 495495.000.
	if want != 495495000 {
		t.Fatalf("test arithmetic: %d", want)
	}
	if tr.RowsRead != 1000 || tr.RowsLoaded != 1000 || tr.Reconciliation != gates.Pass {
		t.Fatalf("parquet load: %+v", tr)
	}
	if ct := tr.ControlTotals["amount"]; ct.Source != "495495.000" || ct.Target != "495495.000" {
		t.Fatalf("amount totals %+v, want 495495.000", ct)
	}
}
