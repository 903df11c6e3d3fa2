package icesink

import (
	"context"
	"iter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

var _ sink.RangeScanner = (*Table)(nil)

// ScanFrom reads the current snapshot's rows whose column is at least from
// (int64, time.Time or string): the predicate goes to the scan planner,
// which skips data files whose statistics (and partitions) lie wholly below
// it. A value whose kind does not fit the column scans every file; the
// caller filters the rows either way.
func (t *Table) ScanFrom(ctx context.Context, columns []string, column string, from any) (iter.Seq2[arrow.RecordBatch, error], error) {
	tbl, err := t.s.cat.LoadTable(ctx, t.ident)
	if err != nil {
		return nil, err
	}
	opts := []table.ScanOption{table.WithSelectedFields(columns...)}
	if f, ok := tbl.Schema().FindFieldByName(column); ok {
		if e := lowerBoundExpr(f.Type, column, from); e != nil {
			opts = append(opts, table.WithRowFilter(e))
		}
	}
	_, it, err := tbl.Scan(opts...).ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	return it, nil
}

// lowerBoundExpr is column >= from as an Iceberg predicate, or nil.
func lowerBoundExpr(typ iceberg.Type, column string, from any) iceberg.BooleanExpression {
	ref := iceberg.Reference(column)
	switch v := from.(type) {
	case time.Time:
		switch typ.(type) {
		case iceberg.TimestampType, iceberg.TimestampTzType:
			return iceberg.GreaterThanEqual(ref, iceberg.Timestamp(v.UnixMicro()))
		case iceberg.DateType:
			return iceberg.GreaterThanEqual(ref, iceberg.Date(v.Unix()/86400))
		}
	case int64:
		switch typ.(type) {
		case iceberg.Int64Type:
			return iceberg.GreaterThanEqual(ref, v)
		case iceberg.Int32Type:
			if v >= -1<<31 && v < 1<<31 {
				return iceberg.GreaterThanEqual(ref, int32(v))
			}
		}
	case string:
		if _, ok := typ.(iceberg.StringType); ok {
			return iceberg.GreaterThanEqual(ref, v)
		}
	}
	return nil
}
