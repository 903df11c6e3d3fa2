package icesink_test

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// A table written by another tool with a float (32-bit) column: the plan
// has no 32-bit float, so its column is double; the next commit widens the
// column in place (field id kept) and the old values read back as doubles.
func TestEvolveFloatToDouble(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	cat := sk.Catalog()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"ns", "m"}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Float32})
	tbl, err := cat.CreateTable(ctx, ident, sc, catalog.WithProperties(iceberg.Properties{"lima.managed": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	// Two rows as the other tool wrote them: 1.5 and 2.25 are exact in
	// 32 bits.
	asc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Float32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.Float32Builder).AppendValues([]float32{1.5, 2.25}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	at := array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
	if tbl, err = tbl.AppendTable(ctx, at, 10, nil); err != nil {
		t.Fatal(err)
	}

	spec := sink.TableSpec{Name: "m", Namespace: "ns",
		Columns:  []plan.Column{{Name: "id", Type: "long"}, {Name: "v", Type: "double"}},
		Types:    []plan.Type{{Kind: plan.Long}, {Kind: plan.Double}},
		Required: []bool{true, false}}
	lt, err := sk.OpenTable(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	// 0.1 is not exact in 32 bits: a double column keeps it exactly.
	st, err := lt.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, lt.Schema())
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(3)
		b.Field(1).(*array.Float64Builder).Append(0.1)
		yield(b.NewRecordBatch(), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lt.Commit(ctx, st, sink.CommitProps{LoadID: "l1", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	tbl, err = cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := tbl.Schema().FindFieldByName("v")
	if f.ID != 2 || f.Type.String() != "double" {
		t.Fatalf("v is %d %s, want field 2 double", f.ID, f.Type)
	}
	got := map[int64]string{}
	for id, v := range readFloats(t, tbl) {
		got[id] = v
	}
	want := map[int64]string{1: "1.5", 2: "2.25", 3: "0.1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

func readFloats(t *testing.T, tbl *table.Table) iter.Seq2[int64, string] {
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return func(yield func(int64, string) bool) {
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			ids := rec.Column(0).(*array.Int64)
			for r := 0; r < int(rec.NumRows()); r++ {
				var s string
				switch v := rec.Column(1).(type) {
				case *array.Float64:
					s = fmt.Sprint(v.Value(r))
				case *array.Float32:
					s = "float32 " + fmt.Sprint(v.Value(r))
				}
				if !yield(ids.Value(r), s) {
					rec.Release()
					return
				}
			}
			rec.Release()
		}
	}
}
