package flow

import (
	"context"
	"fmt"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

// ReplayOptions of a replay run.
type ReplayOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	Table     string
	By        string
}

// Replay commits the fixed exceptions that now pass, proves them with gate
// 4 and writes a report like any run.
func Replay(ctx context.Context, o ReplayOptions) (*Outcome, error) {
	unlock, err := Lock(o.Workspace, 0)
	if err != nil {
		return nil, err
	}
	defer unlock()
	sk, err := OpenSink(ctx, o.Workspace, o.Plan, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: open the catalog: %w", ErrPrecondition, err)
	}
	defer sk.Close()
	st, err := OpenLedger(ctx, o.Workspace, o.Plan)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if _, _, err := RecoverPending(ctx, st, sk, o.Plan); err != nil {
		return nil, err
	}
	runID := NewRunID(time.Now())
	started := time.Now().UTC()
	if err := st.BeginRun(ctx, ledger.Run{ID: runID, Started: started, Status: "running", PlanHash: o.Plan.Hash()}); err != nil {
		return nil, err
	}
	trs, err := run.Replay(ctx, run.ReplayOptions{Workspace: o.Workspace.Dir, Plan: o.Plan, Sink: sk, Store: st, Table: o.Table, RunID: runID, By: o.By})
	if err != nil {
		_ = st.FinishRun(context.WithoutCancel(ctx), runID, reports.StatusFailed, time.Now().UTC(), nil)
		return nil, err
	}
	res := &run.Result{RunID: runID, Started: started, Tables: trs}
	recs := map[string]*gates.Reconciliation{}
	var exps []gates.Expectation
	for _, tr := range trs {
		if tr.Status != run.StatusLoaded {
			continue
		}
		e := gates.Expect(tr)
		exps = append(exps, e)
		if sc, ok := tr.Table.(sink.Scanner); ok {
			rec, err := gates.Reconcile(ctx, sc, e)
			if err != nil {
				rec = &gates.Reconciliation{Table: tr.Name, Status: gates.Fail, Checks: []gates.Finding{{Name: "read back", Status: gates.Fail, Detail: err.Error()}}}
			}
			recs[tr.Name] = rec
		}
	}
	res.Finished = time.Now().UTC()
	rep := reports.Build(o.Plan, res, recs)
	path, err := reports.Write(o.Workspace.ReportsDir(), rep, exps)
	if err != nil {
		return nil, err
	}
	if err := st.FinishRun(ctx, runID, rep.Status, res.Finished, nil); err != nil {
		return nil, err
	}
	return &Outcome{Report: rep, ReportPath: path, Result: res}, nil
}
