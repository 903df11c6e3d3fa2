package migrate

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lima-lake/lima/engine/mart"
	"github.com/lima-lake/lima/engine/plan"
)

// DataCol is a column the data files hold.
type DataCol struct {
	Name  string
	Type  plan.Type
	Arrow arrow.DataType
	// index is the column's index in the files.
	index int
}

// Layout is the table as Hive readers see it: the files' columns (those
// the catalog declares, for a Glue table) and the partition keys, whose
// values come from the folders; KeyInFiles says which keys the files also
// hold as a column.
type Layout struct {
	Data       []DataCol
	Keys       []Column
	KeyInFiles []bool
}

// ColumnNames lists every column: data columns, then the partition keys
// the files do not hold.
func (l *Layout) ColumnNames() []string {
	var out []string
	for _, d := range l.Data {
		out = append(out, d.Name)
	}
	for i, k := range l.Keys {
		if !l.KeyInFiles[i] {
			out = append(out, k.Name)
		}
	}
	return out
}

func fileSchema(ctx context.Context, src *Source, f File) (*arrow.Schema, error) {
	r, err := src.fs.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.Path, err)
	}
	defer r.Close()
	pr, err := file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s is not a Parquet file: %w", f.Path, err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	return fr.Schema()
}

// Resolve reads every file's footer: all must have the same flat columns
// of types Lima knows; for a Glue table every declared column must be in
// them (only the declared columns are the table's, as for Hive readers).
func Resolve(ctx context.Context, src *Source, files []File) (*Layout, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s has no data files", ErrNotHive, src.Name())
	}
	var first *arrow.Schema
	for _, f := range files {
		sc, err := fileSchema(ctx, src, f)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = sc
			continue
		}
		if !sc.Equal(first) {
			return nil, fmt.Errorf("%w: %s has columns %s, %s has %s (files of one table must share their columns)", ErrNotHive, files[0].Path, fieldList(first), f.Path, fieldList(sc))
		}
	}
	l := &Layout{Keys: src.PartitionKeys, KeyInFiles: make([]bool, len(src.PartitionKeys))}
	declared := map[string]bool{}
	for _, c := range src.Columns {
		declared[strings.ToLower(c.Name)] = true
	}
	inFile := map[string]int{}
	for i, fld := range first.Fields() {
		inFile[strings.ToLower(fld.Name)] = i
	}
	for _, c := range src.Columns {
		if _, ok := inFile[strings.ToLower(c.Name)]; !ok {
			return nil, fmt.Errorf("%w: the catalog declares column %s, the data files (%s) do not hold it", ErrNotHive, c.Name, files[0].Path)
		}
	}
	keyIdx := map[string]int{}
	for i, k := range src.PartitionKeys {
		keyIdx[strings.ToLower(k.Name)] = i
	}
	for i, fld := range first.Fields() {
		name := strings.ToLower(fld.Name)
		if ki, ok := keyIdx[name]; ok {
			l.KeyInFiles[ki] = true
		}
		if src.Kind == "glue" && !declared[name] {
			if _, isKey := keyIdx[name]; !isKey {
				continue // not a column of the table for Hive readers
			}
		}
		pt, err := mart.PlanType(fld.Type)
		if err != nil {
			return nil, fmt.Errorf("%w: column %s of %s: %v", ErrNotHive, fld.Name, files[0].Path, err)
		}
		l.Data = append(l.Data, DataCol{Name: fld.Name, Type: pt, Arrow: fld.Type, index: i})
	}
	return l, nil
}

func fieldList(sc *arrow.Schema) string {
	var parts []string
	for _, f := range sc.Fields() {
		parts = append(parts, f.Name+" "+f.Type.String())
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// readFile yields the batches of one data file, the layout's data columns.
func readFile(ctx context.Context, src *Source, l *Layout, f File, mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		r, err := src.fs.Open(f.Path)
		if err != nil {
			yield(nil, fmt.Errorf("open %s: %w", f.Path, err))
			return
		}
		defer r.Close()
		pr, err := file.NewParquetReader(r)
		if err != nil {
			yield(nil, fmt.Errorf("read %s: %w", f.Path, err))
			return
		}
		defer pr.Close()
		fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 8192}, mem)
		if err != nil {
			yield(nil, fmt.Errorf("read %s: %w", f.Path, err))
			return
		}
		idx := make([]int, len(l.Data))
		for i, d := range l.Data {
			idx[i] = d.index
		}
		rr, err := fr.GetRecordReader(ctx, idx, nil)
		if err != nil {
			yield(nil, fmt.Errorf("read %s: %w", f.Path, err))
			return
		}
		defer rr.Release()
		for rr.Next() {
			rec := rr.RecordBatch()
			rec.Retain()
			if !yield(rec, nil) {
				rec.Release()
				return
			}
		}
		if err := rr.Err(); err != nil {
			yield(nil, fmt.Errorf("read %s: %w", f.Path, err))
		}
	}
}
