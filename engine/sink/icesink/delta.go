package icesink

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

var _ sink.KeyDeleter = (*Table)(nil)

// CommitDelta deletes the committed rows whose key is in del and appends
// the staged rows in ONE snapshot (an Iceberg row delta: the new data
// files and one position delete file per data file that loses rows),
// carrying the load id and the watermark. Only live rows are deleted: a
// position an earlier commit deleted is not deleted again. The rows
// appended are never removed by it.
func (t *Table) CommitDelta(ctx context.Context, s sink.Staged, p sink.CommitProps, del sink.Keys) (sink.Commit, error) {
	if p.Replace {
		return sink.Commit{}, fmt.Errorf("icesink: a delta commit cannot also replace the table")
	}
	if del.Len() == 0 {
		return t.Commit(ctx, s, p)
	}
	// The keys are checked as an Iceberg expression would take them
	// (typed, no nulls); the rows to delete are found by statistics
	// (findkeys.go).
	if _, err := keyFilter(del); err != nil {
		return sink.Commit{}, err
	}
	return t.commit(ctx, s, p, &rowDelta{keys: del})
}

// deletedBy sums the rows removed by the snapshots carrying loadID.
func deletedBy(tbl *table.Table, loadID string) int64 {
	var n int64
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil || s.Summary.Properties[sink.PropLoadID] != loadID {
			continue
		}
		for _, k := range []string{"deleted-records", "added-position-deletes"} {
			if v, err := strconv.ParseInt(s.Summary.Properties[k], 10, 64); err == nil {
				n += v
			}
		}
	}
	return n
}

// keyFilter turns key tuples into a row filter: an IN list for a one-column
// key, otherwise an OR of per-tuple ANDs built as a balanced tree (so a
// large batch does not make a deep expression).
func keyFilter(del sink.Keys) (iceberg.BooleanExpression, error) {
	if len(del.Columns) == 0 {
		return nil, fmt.Errorf("icesink: delete keys name no column")
	}
	var tuples [][]iceberg.Literal
	for _, b := range del.Batches {
		if int(b.NumCols()) != len(del.Columns) {
			return nil, fmt.Errorf("icesink: key batch has %d columns, want %d", b.NumCols(), len(del.Columns))
		}
		for r := 0; r < int(b.NumRows()); r++ {
			tup := make([]iceberg.Literal, len(del.Columns))
			for c := range del.Columns {
				lit, err := literalAt(b.Column(c), r)
				if err != nil {
					return nil, fmt.Errorf("icesink: key %s: %w", del.Columns[c], err)
				}
				tup[c] = lit
			}
			tuples = append(tuples, tup)
		}
	}
	if len(del.Columns) == 1 {
		lits := make([]iceberg.Literal, len(tuples))
		for i, tup := range tuples {
			lits[i] = tup[0]
		}
		return iceberg.SetPredicate(iceberg.OpIn, iceberg.Reference(del.Columns[0]), lits), nil
	}
	preds := make([]iceberg.BooleanExpression, len(tuples))
	for i, tup := range tuples {
		var e iceberg.BooleanExpression = iceberg.LiteralPredicate(iceberg.OpEQ, iceberg.Reference(del.Columns[0]), tup[0])
		for c := 1; c < len(tup); c++ {
			e = iceberg.NewAnd(e, iceberg.LiteralPredicate(iceberg.OpEQ, iceberg.Reference(del.Columns[c]), tup[c]))
		}
		preds[i] = e
	}
	return balancedOr(preds), nil
}

func balancedOr(ps []iceberg.BooleanExpression) iceberg.BooleanExpression {
	switch len(ps) {
	case 0:
		return iceberg.AlwaysFalse{}
	case 1:
		return ps[0]
	}
	m := len(ps) / 2
	return iceberg.NewOr(balancedOr(ps[:m]), balancedOr(ps[m:]))
}

// literalAt converts one Arrow key value to an Iceberg literal of the
// column's type. Null keys cannot identify a row and are refused.
func literalAt(a arrow.Array, i int) (iceberg.Literal, error) {
	if a.IsNull(i) {
		return nil, fmt.Errorf("a null key value cannot identify a row")
	}
	switch v := a.(type) {
	case *array.Int32:
		return iceberg.NewLiteral(v.Value(i)), nil
	case *array.Int64:
		return iceberg.NewLiteral(v.Value(i)), nil
	case *array.String:
		return iceberg.NewLiteral(v.Value(i)), nil
	case *array.LargeString:
		return iceberg.NewLiteral(v.Value(i)), nil
	case *array.Boolean:
		return iceberg.NewLiteral(v.Value(i)), nil
	case *array.Float64:
		return iceberg.NewLiteral(v.Value(i)), nil
	case *array.Date32:
		return iceberg.NewLiteral(iceberg.Date(v.Value(i))), nil
	case *array.Timestamp:
		return iceberg.NewLiteral(iceberg.Timestamp(v.Value(i))), nil
	case *array.Decimal128:
		dt := v.DataType().(*arrow.Decimal128Type)
		return iceberg.NewLiteral(iceberg.Decimal{Val: v.Value(i), Scale: int(dt.Scale)}), nil
	case *array.Binary:
		return iceberg.NewLiteral(append([]byte(nil), v.Value(i)...)), nil
	}
	return nil, fmt.Errorf("key type %s is not supported", a.DataType())
}
