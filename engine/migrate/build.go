package migrate

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/s3x"
)

// Methods.
const (
	InPlace = "in-place"
	Rewrite = "rewrite"
)

// TradeOffs are shown before anything happens.
var TradeOffs = map[string][]string{
	InPlace: {
		"writes no data: the Iceberg table lists the existing Parquet files where they are (metadata only, fast)",
		"the Hive files become the Iceberg table's files: they must stay where they are — files a Hive writer adds later are not seen by the Iceberg table, and removing or rewriting one breaks it",
		"the partition layout stays the Hive one (identity partitions on the Hive keys)",
		"needs every partition key inside the data files: iceberg-go v0.7.0 reads a column a file lacks as NULL (it does not take identity partition values from the metadata), so tables whose keys live only in the folder names are refused",
	},
	Rewrite: {
		"reads every row and writes it anew (zstd Parquet) under the partition spec you choose (--partition, e.g. month(order_date), bucket(16, id))",
		"takes time and storage for a second copy; the Hive files are left untouched",
		"the Iceberg table owns its files: the Hive folders can be retired later, by you",
		"conservation: rows read must equal rows written, or nothing is committed",
	},
}

// Target is where the Iceberg table is created: a Lima Iceberg sink (the
// embedded SQLite catalog, a warehouse on disk or S3).
type Target struct {
	Sink      *icesink.Sink
	Namespace string
	Name      string
}

func (t Target) ident() table.Identifier { return table.Identifier{t.Namespace, t.Name} }

// Built is an Iceberg table built from the Hive files.
type Built struct {
	Table     *table.Table
	RowsRead  int64 // rewrite: rows read from the Hive files
	RowsAdded int64 // rows the snapshot added (its summary)
}

func (t Target) fresh(ctx context.Context) error {
	if _, err := t.Sink.Catalog().LoadTable(ctx, t.ident()); err == nil {
		return fmt.Errorf("the Iceberg table %s exists already (an earlier migration?): choose another --target, or drop it first", strings.Join(t.ident(), "."))
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

// BuildInPlace creates the Iceberg table over the existing files
// (iceberg-go's Transaction.AddFiles: the files are read for their
// statistics, never rewritten; identity partition values come from the
// files' column bounds).
func BuildInPlace(ctx context.Context, src *Source, l *Layout, files []File, tgt Target, loadID string) (*Built, error) {
	var absent []string
	for i, k := range l.Keys {
		if !l.KeyInFiles[i] {
			absent = append(absent, k.Name)
		}
	}
	if len(absent) > 0 {
		return nil, fmt.Errorf("%w: the partition key(s) %s live only in the folder names, not in the data files; iceberg-go v0.7.0 reads a column that a file lacks as NULL (it does not project identity partition values from the metadata), so an in-place table would read NULL in %s — use --method rewrite",
			ErrInPlaceUnsupported, strings.Join(absent, ", "), strings.Join(absent, ", "))
	}
	if err := tgt.fresh(ctx); err != nil {
		return nil, err
	}
	spec := sink.TableSpec{Namespace: tgt.Namespace, Name: tgt.Name}
	for _, d := range l.Data {
		spec.Columns = append(spec.Columns, plan.Column{Name: d.Name})
		spec.Types = append(spec.Types, d.Type)
		spec.Required = append(spec.Required, false)
	}
	for _, k := range l.Keys {
		spec.Partition = append(spec.Partition, plan.PartitionField{Column: fileName(l, k.Name), Transform: plan.TransformIdentity})
	}
	st, err := tgt.Sink.OpenTable(ctx, spec)
	if err != nil {
		return nil, err
	}
	tbl, err := st.(*icesink.Table).Load(ctx)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range files {
		p, err := dataURI(f.Path)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(ctx, paths, iceberg.Properties{sink.PropLoadID: loadID, sink.PropKind: "migrate", "lima.migrate.method": InPlace}, false, table.WithAddFilesConcurrency(2)); err != nil {
		return nil, fmt.Errorf("add the Hive files to %s: %w", strings.Join(tgt.ident(), "."), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit %s: %w", strings.Join(tgt.ident(), "."), err)
	}
	return &Built{Table: tbl, RowsAdded: addedRecords(tbl)}, nil
}

func fileName(l *Layout, key string) string {
	for _, d := range l.Data {
		if strings.EqualFold(d.Name, key) {
			return d.Name
		}
	}
	return key
}

func dataURI(p string) (string, error) {
	if s3x.IsURI(p) || strings.Contains(p, "://") {
		return p, nil
	}
	return fileuri.FromPath(p)
}

func addedRecords(tbl *table.Table) int64 {
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return 0
	}
	n, _ := strconv.ParseInt(s.Summary.Properties["added-records"], 10, 64)
	return n
}

// BuildRewrite reads every Hive file (with its folder's partition values,
// as Hive readers see the rows) and writes the rows anew through Lima's
// Iceberg sink (Stage, then one Commit) under the partition spec part
// (empty: identity on the Hive keys). Rows read must equal rows staged,
// or the staging is discarded and nothing is committed.
func BuildRewrite(ctx context.Context, src *Source, l *Layout, files []File, tgt Target, part []plan.PartitionField, loadID string, mem memory.Allocator) (*Built, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if err := tgt.fresh(ctx); err != nil {
		return nil, err
	}
	spec := sink.TableSpec{Namespace: tgt.Namespace, Name: tgt.Name}
	keyOf := map[string]int{}
	for i, k := range l.Keys {
		keyOf[strings.ToLower(k.Name)] = i
	}
	type colSrc struct {
		data int // index in the file batch, or -1
		key  int // index of the partition key, or -1
	}
	var srcs []colSrc
	for i, d := range l.Data {
		ki, isKey := keyOf[strings.ToLower(d.Name)]
		if !isKey {
			ki = -1
		}
		srcs = append(srcs, colSrc{data: i, key: ki})
		t := d.Type
		if isKey {
			t = l.Keys[ki].Type
		}
		spec.Columns = append(spec.Columns, plan.Column{Name: d.Name})
		spec.Types = append(spec.Types, t)
		spec.Required = append(spec.Required, false)
	}
	for i, k := range l.Keys {
		if l.KeyInFiles[i] {
			continue
		}
		srcs = append(srcs, colSrc{data: -1, key: i})
		spec.Columns = append(spec.Columns, plan.Column{Name: k.Name})
		spec.Types = append(spec.Types, k.Type)
		spec.Required = append(spec.Required, false)
	}
	if len(part) == 0 {
		for _, k := range l.Keys {
			part = append(part, plan.PartitionField{Column: fileName(l, k.Name), Transform: plan.TransformIdentity})
		}
	}
	spec.Partition = part
	st, err := tgt.Sink.OpenTable(ctx, spec)
	if err != nil {
		return nil, err
	}
	it := st.(*icesink.Table)
	schema := it.Schema()
	var rowsRead int64
	batches := func(yield func(arrow.RecordBatch, error) bool) {
		for _, f := range files {
			p := src.Partitions[f.Part]
			for rec, err := range readFile(ctx, src, l, f, mem) {
				if err != nil {
					yield(nil, err)
					return
				}
				n := int(rec.NumRows())
				cols := make([]arrow.Array, len(srcs))
				var berr error
				for i, cs := range srcs {
					want := schema.Field(i).Type
					if cs.key >= 0 {
						cols[i], berr = constArray(mem, want, p.Values[cs.key], p.Null[cs.key], n)
					} else {
						cols[i], berr = castTo(ctx, rec.Column(cs.data), want)
					}
					if berr != nil {
						break
					}
				}
				rec.Release()
				if berr != nil {
					for _, c := range cols {
						if c != nil {
							c.Release()
						}
					}
					yield(nil, fmt.Errorf("%s: %w", f.Path, berr))
					return
				}
				out := array.NewRecordBatch(schema, cols, int64(n))
				for _, c := range cols {
					c.Release()
				}
				rowsRead += int64(n)
				if !yield(out, nil) {
					return
				}
			}
		}
	}
	staged, err := it.Stage(ctx, iter.Seq2[arrow.RecordBatch, error](batches))
	if err != nil {
		return nil, err
	}
	if staged.Rows() != rowsRead {
		_ = staged.Discard(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("conservation: %d rows read from the Hive files, %d staged; nothing was committed", rowsRead, staged.Rows())
	}
	if _, err := it.Commit(ctx, staged, sink.CommitProps{LoadID: loadID, Kind: "migrate", Extra: map[string]string{"lima.migrate.method": Rewrite}}); err != nil {
		return nil, err
	}
	tbl, err := it.Load(ctx)
	if err != nil {
		return nil, err
	}
	return &Built{Table: tbl, RowsRead: rowsRead, RowsAdded: addedRecords(tbl)}, nil
}

func castTo(ctx context.Context, a arrow.Array, want arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), want) {
		a.Retain()
		return a, nil
	}
	return compute.CastArray(ctx, a, compute.SafeCastOptions(want))
}

// constArray is n copies of a partition folder value as type dt.
func constArray(mem memory.Allocator, dt arrow.DataType, v string, null bool, n int) (arrow.Array, error) {
	if null {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	var err error
	switch bb := b.(type) {
	case *array.Int32Builder:
		var x int64
		if x, err = strconv.ParseInt(strings.TrimSpace(v), 10, 32); err == nil {
			for range n {
				bb.Append(int32(x))
			}
		}
	case *array.Int64Builder:
		var x int64
		if x, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			for range n {
				bb.Append(x)
			}
		}
	case *array.Float64Builder:
		var x float64
		if x, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			for range n {
				bb.Append(x)
			}
		}
	case *array.Decimal128Builder:
		t := dt.(*arrow.Decimal128Type)
		var x decimal128.Num
		if x, err = decimal128.FromString(strings.TrimSpace(v), t.Precision, t.Scale); err == nil {
			for range n {
				bb.Append(x)
			}
		}
	case *array.Date32Builder:
		var d time.Time
		if d, err = time.Parse(time.DateOnly, strings.TrimSpace(v)); err == nil {
			for range n {
				bb.Append(arrow.Date32FromTime(d))
			}
		}
	case *array.TimestampBuilder:
		var c string
		if c, err = canonPartValue(plan.Type{Kind: plan.Timestamp}, v, false); err == nil {
			ts, _ := time.Parse(time.RFC3339Nano, c)
			unit := dt.(*arrow.TimestampType).Unit
			x, terr := arrow.TimestampFromTime(ts, unit)
			err = terr
			for range n {
				bb.Append(x)
			}
		}
	case *array.BooleanBuilder:
		var x bool
		if x, err = strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			for range n {
				bb.Append(x)
			}
		}
	case *array.StringBuilder:
		for range n {
			bb.Append(v)
		}
	default:
		return nil, fmt.Errorf("a partition value of type %s is not supported", dt)
	}
	if err != nil {
		return nil, fmt.Errorf("partition value %q as %s: %w", v, dt, err)
	}
	return b.NewArray(), nil
}

// Existing is the Iceberg table an earlier migrate run built at tgt by
// method, to validate again and switch without building twice; false when
// there is none. A table at tgt that no migration by method built is an
// error: it is not Lima's to reuse.
func Existing(ctx context.Context, tgt Target, method string) (*Built, bool, error) {
	tbl, err := tgt.Sink.Catalog().LoadTable(ctx, tgt.ident())
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("catalog: %w", err)
	}
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil || s.Summary.Properties[sink.PropKind] != "migrate" || s.Summary.Properties["lima.migrate.method"] != method {
		return nil, false, fmt.Errorf("the Iceberg table %s exists and is not a %s migration's: choose another --target", strings.Join(tgt.ident(), "."), method)
	}
	return &Built{Table: tbl, RowsAdded: addedRecords(tbl)}, true, nil
}
