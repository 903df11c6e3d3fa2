package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

// writeParquet writes the record batch as a parquet file.
func writeParquet(t *testing.T, rec arrow.RecordBatch, rowGroup int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup))
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func openOne(t *testing.T, files map[string][]byte, opts source.Options) (source.RowReader, error) {
	t.Helper()
	src := New(writeTree(t, files))
	units, err := src.List(context.Background(), []string{"*"})
	if err != nil || len(units) != 1 {
		t.Fatalf("List = %v, %v; want one unit", units, err)
	}
	return src.Open(context.Background(), units[0], opts)
}

func typesRecord(t *testing.T) arrow.RecordBatch {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 18, Scale: 3}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "naive", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	name := b.Field(1).(*array.StringBuilder)
	name.Append("Ann")
	name.AppendNull()
	name.AppendNull()
	amount := b.Field(2).(*array.Decimal128Builder)
	amount.Append(decimal128.FromI64(-150000))
	amount.Append(decimal128.FromI64(12345))
	amount.AppendNull()
	day := b.Field(3).(*array.Date32Builder)
	day.Append(19723)
	day.Append(0)
	day.AppendNull()
	ts := b.Field(4).(*array.TimestampBuilder)
	ts.Append(1704067200123456)
	ts.Append(0)
	ts.AppendNull()
	naive := b.Field(5).(*array.TimestampBuilder)
	naive.Append(1704067200500)
	naive.Append(-1)
	naive.AppendNull()
	f := b.Field(6).(*array.Float64Builder)
	f.Append(0.1)
	f.Append(1e21)
	f.AppendNull()
	f32 := b.Field(7).(*array.Float32Builder)
	f32.Append(0.1)
	f32.Append(1.5)
	f32.AppendNull()
	ok := b.Field(8).(*array.BooleanBuilder)
	ok.Append(true)
	ok.Append(false)
	ok.AppendNull()
	bin := b.Field(9).(*array.BinaryBuilder)
	bin.Append([]byte{0x00, 0xFF})
	bin.Append([]byte{})
	bin.AppendNull()
	tags := b.Field(10).(*array.ListBuilder)
	tagv := tags.ValueBuilder().(*array.Int32Builder)
	tags.Append(true)
	tagv.AppendValues([]int32{1, 2}, nil)
	tags.Append(true)
	tags.AppendNull()
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

func TestParquetRoundTrip(t *testing.T) {
	data := writeParquet(t, typesRecord(t), 1024)
	rr, err := openOne(t, map[string][]byte{"t.parquet": data}, source.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer rr.Close()
	wantCols := []string{"id", "name", "amount", "day", "ts", "naive", "f", "f32", "ok", "bin", "tags"}
	if got := rr.Columns(); !reflect.DeepEqual(got, wantCols) {
		t.Fatalf("Columns() = %q, want %q", got, wantCols)
	}
	want := []struct {
		values []string
		nulls  []bool
	}{
		{[]string{"1", "Ann", "-150.000", "2024-01-01", "2024-01-01T00:00:00.123456Z", "2024-01-01T00:00:00.5", "0.1", "0.1", "true", "AP8=", "[1,2]"}, nil},
		{[]string{"2", "", "12.345", "1970-01-01", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999", "1e+21", "1.5", "false", "", "[]"},
			[]bool{false, true, false, false, false, false, false, false, false, false, false}},
		{[]string{"3", "", "", "", "", "", "", "", "", "", ""},
			[]bool{false, true, true, true, true, true, true, true, true, true, true}},
	}
	rows, err := sourcetest.ReadAll(rr)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		got := rows[i]
		if got.Kind != source.Data || !reflect.DeepEqual(got.Values, w.values) || !reflect.DeepEqual(got.Nulls, w.nulls) ||
			got.Raw != nil || got.Loc != (source.Locator{Unit: "t.parquet", Row: int64(i + 1)}) {
			t.Errorf("row %d:\n got  %v %q nulls %v raw %q loc %+v\n want data %q nulls %v", i+1,
				got.Kind, got.Values, got.Nulls, got.Raw, got.Loc, w.values, w.nulls)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := rr.Next(); err != io.EOF {
			t.Fatalf("Next after EOF = %v, want io.EOF", err)
		}
	}
	if err := rr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rr.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestParquetManyBatches(t *testing.T) {
	const n = 20_000 // several 8192-row batches over several row groups
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int32Builder).Append(int32(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rr, err := openOne(t, map[string][]byte{"big.parquet": writeParquet(t, rec, 5000)}, source.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer rr.Close()
	for i := 0; ; i++ {
		row, err := rr.Next()
		if err == io.EOF {
			if i != n {
				t.Fatalf("%d rows, want %d", i, n)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if row.Loc.Row != int64(i+1) || row.Values[0] != strconv.Itoa(i) {
			t.Fatalf("row %d: %q at %+v", i+1, row.Values, row.Loc)
		}
	}
}

func TestParquetEmpty(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer b.Release()
	rec := b.NewRecordBatch()
	defer rec.Release()
	rr, err := openOne(t, map[string][]byte{"e.parquet": writeParquet(t, rec, 10)}, source.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer rr.Close()
	if got := rr.Columns(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("Columns() = %q", got)
	}
	if _, err := rr.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
}

func TestParquetUnreadable(t *testing.T) {
	good := writeParquet(t, typesRecord(t), 1024)
	tests := map[string][]byte{
		"text":           []byte("id,name\n1,a\n"),
		"empty":          {},
		"bad magic":      append(append([]byte("PAR1"), bytes.Repeat([]byte{7}, 64)...), "PAR2"...),
		"garbage footer": append(append([]byte("PAR1"), bytes.Repeat([]byte{7}, 64)...), "PAR1"...),
		"truncated":      good[:len(good)-9],
		"cut in half":    good[:len(good)/2],
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			rr, err := openOne(t, map[string][]byte{"x.parquet": data}, source.Options{})
			if err == nil {
				_, err = sourcetest.ReadAll(rr)
				rr.Close()
			}
			var ue *UnreadableError
			if !errors.Is(err, source.ErrUnreadable) || !errors.As(err, &ue) || ue.Reason == "" {
				t.Fatalf("err = %v, want an *UnreadableError", err)
			}
		})
	}
}
