package run

// History of ordinary loads (table history: true): every row a load
// accepts is also appended to <table>_history with the operation "load",
// the valid-from time of the load, the load id and its source locator
// (file:line). The history is committed first, under the same load id, so a
// crash between the two commits is completed by the rerun (the history
// finds its load id and adds nothing) and a version is never written twice.

import (
	"context"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// OpLoad is the history operation of a row written by an ordinary load.
const OpLoad = "load"

// historyTee stages the history of a load while the load stages the table:
// each batch the loader emits is extended with the lineage columns and sent
// to a second Stage running on its own goroutine.
type historyTee struct {
	o         Options
	tbl       sink.Table
	loadID    string
	validFrom time.Time
	ch        chan arrow.RecordBatch
	done      chan struct{}
	staged    sink.Staged
	err       error
}

func startHistory(ctx context.Context, o Options, name string, rs *resolved, loadID string) (*historyTee, error) {
	spec, _ := historySpec(o.Plan, name, rs)
	tbl, err := o.Sink.OpenTable(ctx, spec)
	if err != nil {
		return nil, err
	}
	h := &historyTee{o: o, tbl: tbl, loadID: loadID, validFrom: time.Now().UTC(), ch: make(chan arrow.RecordBatch, 2), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		h.staged, h.err = tbl.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) {
			for b := range h.ch {
				if !yield(b, nil) {
					b.Release()
					for b := range h.ch {
						b.Release()
					}
					return
				}
			}
		})
		for b := range h.ch { // Stage failed early: drain
			b.Release()
		}
	}()
	return h, nil
}

// add sends the history of one batch: its columns (shared, not copied) and
// the lineage columns. locs are the batch rows' source locators.
func (h *historyTee) add(ctx context.Context, b arrow.RecordBatch, locs []string) error {
	if int64(len(locs)) != b.NumRows() {
		return errors.New("internal error: history locators do not match the batch")
	}
	n := int(b.NumRows())
	cols := make([]arrow.Array, 0, b.NumCols()+int64(len(historyColumns)))
	for i := 0; i < int(b.NumCols()); i++ {
		c := b.Column(i)
		c.Retain()
		cols = append(cols, c)
	}
	mem := h.o.Alloc
	str := func(v func(i int) string, null bool) arrow.Array {
		sb := array.NewStringBuilder(mem)
		defer sb.Release()
		for i := 0; i < n; i++ {
			if null {
				sb.AppendNull()
			} else {
				sb.Append(v(i))
			}
		}
		return sb.NewArray()
	}
	schema := h.tbl.Schema()
	tsType := schema.Field(int(b.NumCols()) + 2).Type.(*arrow.TimestampType)
	tb := array.NewTimestampBuilder(mem, tsType)
	for i := 0; i < n; i++ {
		tb.Append(arrow.Timestamp(h.validFrom.UnixMicro()))
	}
	ts := tb.NewArray()
	tb.Release()
	cols = append(cols,
		str(func(int) string { return OpLoad }, false),
		str(nil, true),
		ts,
		str(func(int) string { return h.loadID }, false),
		str(func(i int) string { return locs[i] }, false))
	rec := array.NewRecordBatch(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	select {
	case h.ch <- rec:
		return nil
	case <-h.done:
		rec.Release()
		if h.err != nil {
			return h.err
		}
		return errors.New("the history stopped staging")
	case <-ctx.Done():
		rec.Release()
		return ctx.Err()
	}
}

// finish waits for the history's staging.
func (h *historyTee) finish() (sink.Staged, error) {
	close(h.ch)
	<-h.done
	return h.staged, h.err
}

// keepsOrdinaryHistory is true for a table that is not change capture and
// switched history on.
func keepsOrdinaryHistory(t *plan.Table) bool { return t.History && t.Load.Mode != plan.ModeCDC }
