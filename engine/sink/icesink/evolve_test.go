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
	if _, err = tbl.AppendTable(ctx, at, 10, nil); err != nil {
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

// An upsert's delta commit (delete by key + append) carries the plan's
// evolution too: a column added and a column widened, the key 2 replaced;
// the rows read back under the new schema, old rows with a null in the new
// column.
func TestEvolveWithDeltaCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	spec := sink.TableSpec{Name: "u", Namespace: "ns",
		Columns:  []plan.Column{{Name: "id", Type: "long"}, {Name: "n", Type: "int"}},
		Types:    []plan.Type{{Kind: plan.Long}, {Kind: plan.Int}},
		Required: []bool{true, false}}
	lt, err := sk.OpenTable(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	st, err := lt.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, lt.Schema())
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
		b.Field(1).(*array.Int32Builder).AppendValues([]int32{10, 20, 30}, nil)
		yield(b.NewRecordBatch(), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lt.Commit(ctx, st, sink.CommitProps{LoadID: "l1", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	// n int → long; tag string added between id and n.
	spec2 := sink.TableSpec{Name: "u", Namespace: "ns",
		Columns:  []plan.Column{{Name: "id", Type: "long"}, {Name: "tag", Type: "string"}, {Name: "n", Type: "long"}},
		Types:    []plan.Type{{Kind: plan.Long}, {Kind: plan.String}, {Kind: plan.Long}},
		Required: []bool{true, false, false}}
	lt2, err := sk.OpenTable(ctx, spec2)
	if err != nil {
		t.Fatal(err)
	}
	st, err = lt2.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, lt2.Schema())
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{2, 4}, nil)
		b.Field(1).(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
		b.Field(2).(*array.Int64Builder).AppendValues([]int64{5000000000, 40}, nil)
		yield(b.NewRecordBatch(), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.AppendValues([]int64{2, 4}, nil)
	karr := kb.NewArray()
	ksc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	keys := sink.Keys{Columns: []string{"id"}, Batches: []arrow.RecordBatch{array.NewRecordBatch(ksc, []arrow.Array{karr}, 2)}}
	c, err := lt2.(sink.KeyDeleter).CommitDelta(ctx, st, sink.CommitProps{LoadID: "l2", RunID: "r2"}, keys)
	if err != nil {
		t.Fatal(err)
	}
	if c.Deleted != 1 {
		t.Errorf("deleted %d rows, want 1 (key 2)", c.Deleted)
	}
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{"ns", "u"})
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, f := range tbl.Schema().Fields() {
		fields = append(fields, fmt.Sprintf("%d %s %s", f.ID, f.Name, f.Type))
	}
	if got := fmt.Sprint(fields); got != "[1 id long 3 tag string 2 n long]" {
		t.Fatalf("schema %s", got)
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			got[rec.Column(0).(*array.Int64).Value(r)] = rec.Column(1).ValueStr(r) + "/" + rec.Column(2).ValueStr(r)
		}
		rec.Release()
	}
	want := map[int64]string{1: "(null)/10", 2: "x/5000000000", 3: "(null)/30", 4: "y/40"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}
