package run

import (
	"context"
	"fmt"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/dynamo"
	"github.com/lima-lake/lima/internal/s3x"
)

// openDynamo opens a table's dynamodb source: a scan of source.table, or
// the export at source.export. Configuration from the AWS default chain.
func openDynamo(ctx context.Context, p *plan.Plan, name string, s *plan.Source, ts *plan.TableSource) (source.Source, []string, error) {
	opts := dynamo.PlanOptions(s, p.ETL.MaxParallelReads)
	if ts.Export != "" {
		cl, err := s3x.New(ctx, s3x.FromEnv())
		if err != nil {
			return nil, nil, fmt.Errorf("source %s: %w", name, err)
		}
		e, err := dynamo.NewExport(cl, ts.Export, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("source %s: %w", name, err)
		}
		return e, []string{"**"}, nil
	}
	cl, err := dynamo.NewClient(ctx, dynamo.FromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("source %s: %w", name, err)
	}
	return dynamo.New(cl, ts.Table, opts), []string{ts.Table}, nil
}

// startCounted prepares the source totals of a source that counts and
// sums what it reads (source.Counter) before the first row, so the rows
// held back add to the held sums.
func (l *loader) startCounted(src source.Source) {
	if _, ok := src.(source.Counter); !ok || l.tr.SourceTotals != nil {
		return
	}
	unit := l.t.Source.Table
	if unit == "" {
		unit = l.t.Source.Export
	}
	l.tr.SourceTotals = &SourceTotals{Unit: unit, Sums: map[string]string{}}
	l.heldSums = map[string]*Sum{}
	for _, i := range l.stats.sumCols {
		l.heldSums[l.rs.cols[i]] = &Sum{Type: l.rs.types[i], IsFloat: l.rs.types[i].Kind == plan.Double}
	}
}

// finishCounted records the source's own count and sums of the control
// columns once every unit was read: gate 4 proves them against the lake.
func (l *loader) finishCounted(src source.Source) {
	c, ok := src.(source.Counter)
	st := l.tr.SourceTotals
	if !ok || st == nil {
		return
	}
	if n, ok := src.(interface{ ReadNote() string }); ok {
		l.tr.ReadNote = n.ReadNote()
	}
	rows, sums := c.ReadTotals()
	st.Rows = rows
	st.TableRows = &rows
	for _, i := range l.stats.sumCols {
		v := sums[l.rs.srcNames[i]]
		if v == "" {
			v = "0" // no number in any item
		}
		st.Sums[l.rs.cols[i]] = v
	}
}
