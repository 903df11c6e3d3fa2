package flow

import (
	"context"
	"fmt"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/gates"
)

// addUpsertCheck adds gate 4's key equality of an upsert that compared
// keys with the source (gates.UpsertKeys) to the table's reconciliation.
func addUpsertCheck(rec *gates.Reconciliation, tr *run.TableResult) {
	if rec == nil || tr == nil {
		return
	}
	f := gates.UpsertKeys(tr.Upsert, tr.RowsQuarantined, rec.LakeRows)
	if f == nil {
		return
	}
	addFinding(rec, *f)
}

func addFinding(rec *gates.Reconciliation, f gates.Finding) {
	rec.Checks = append(rec.Checks, f)
	if f.Status == gates.Fail {
		rec.Status = gates.Fail
	}
}

// addSourceCount adds gate 4's whole-table count of a database table
// (gates.SourceCount): every run, whatever the mode, the lake's rows are
// compared with the source table's count(*) taken in the read snapshot.
// For a full load the rows not loaded are this load's held-back and
// skipped rows; otherwise the table's unresolved exceptions (open or
// fixed) in the ledger.
func addSourceCount(ctx context.Context, rec *gates.Reconciliation, tr *run.TableResult, t *plan.Table, st ledger.Store) {
	if rec == nil || tr == nil || tr.SourceTotals == nil {
		return // files: no source count to compare with
	}
	in := gates.CountInput{Mode: tr.Mode, LakeRows: rec.LakeRows}
	if t != nil {
		in.Detect = t.Load.DetectDeletes
		if in.Mode == "" {
			in.Mode = t.Load.Mode
		}
	}
	if tr.Upsert != nil {
		in.DeletesCompared = tr.Upsert.DeletesChecked
	}
	if tr.SourceTotals.TableRows == nil {
		addFinding(rec, gates.Finding{Name: gates.SourceCountName, Status: gates.Warn,
			Detail: "the source table's whole count was not taken in the read snapshot: not decided"})
		return
	}
	in.SourceRows = *tr.SourceTotals.TableRows
	if in.Mode == "" || in.Mode == plan.ModeFull {
		in.Held = tr.RowsQuarantined + tr.RowsSkipped
		in.HeldNote = fmt.Sprintf("this load held back %d and skipped %d", tr.RowsQuarantined, tr.RowsSkipped)
	} else {
		var n int64
		for _, s := range []string{ledger.StatusOpen, ledger.StatusFixed} {
			c, err := st.Count(ctx, ledger.Filter{Table: tr.Name, Status: s})
			if err != nil {
				addFinding(rec, gates.Finding{Name: gates.SourceCountName, Status: gates.Warn,
					Detail: "the held-back rows could not be counted in the ledger: not decided: " + err.Error()})
				return
			}
			n += c
		}
		in.Held, in.HeldNote = n, "unresolved exceptions of the table in the ledger"
	}
	if h, ok := tr.Table.(sink.Historian); ok && !in.DeletesCompared {
		if hist, err := h.History(ctx); err == nil {
			for _, c := range hist {
				if v := c.Props[run.PropDeletesChecked]; v != "" {
					in.LastCompared = v
					break
				}
			}
		}
	}
	addFinding(rec, gates.SourceCount(in))
}

// countOnly is gate 4 for a database table whose run read the source but
// committed nothing (every row read was unchanged, held back or skipped):
// the whole-table count is still compared every run, so rows deleted at the
// source cannot hide behind a run that loaded nothing. The lake's rows are
// the current snapshot's live rows as its manifests state them (exact: gate
// 4's "metadata row count" holds them equal to the rows a reader reads at
// every commit). Nil when the table has no such count.
func countOnly(ctx context.Context, tr *run.TableResult, t *plan.Table, st ledger.Store) *gates.Reconciliation {
	if tr == nil || tr.Status != run.StatusNothingToLoad || tr.SourceTotals == nil {
		return nil
	}
	mc, ok := tr.Table.(sink.MetaCounter)
	if !ok {
		return nil
	}
	m, err := mc.MetaRows(ctx, 0)
	if err != nil {
		return nil
	}
	rec := &gates.Reconciliation{Table: tr.Name, Status: gates.Pass, LakeRows: m.Live()}
	addSourceCount(ctx, rec, tr, t, st)
	return rec
}
