package flow

import (
	"context"
	"time"

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
	// IDs, when given, replay only these fixed exceptions (run.ReplayOptions.IDs).
	IDs []int64
	By  string
}

// Replay commits the fixed exceptions that now pass, proves them with gate
// 4 and writes a report like any run.
func Replay(ctx context.Context, o ReplayOptions) (*Outcome, error) {
	sess, err := openSession(ctx, o.Workspace, o.Plan, "the replay", 0, nil)
	if err != nil {
		return nil, err
	}
	defer sess.close(ctx)
	sk, st, runID, started := sess.sink, sess.store, sess.runID, sess.started
	trs, err := run.Replay(ctx, run.ReplayOptions{Workspace: o.Workspace.Dir, Plan: o.Plan, Sink: sk, Store: st, Table: o.Table, IDs: o.IDs, RunID: runID, By: o.By})
	if err != nil {
		return nil, err // sess.close records the run as failed or interrupted
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
			rec, err := gates.Reconcile(ctx, sc, e, keyMemory(o.Workspace, o.Plan))
			if err != nil {
				rec = &gates.Reconciliation{Table: tr.Name, Status: gates.Fail, Checks: []gates.Finding{{Name: "read back", Status: gates.Fail, Detail: err.Error()}}}
			}
			recs[tr.Name] = rec
		}
	}
	res.Finished = time.Now().UTC()
	rep := reports.Build(o.Plan, res, recs)
	rep.Warnings = append(rep.Warnings, sess.recovered()...)
	path, err := reports.Write(o.Workspace.ReportsDir(), rep, exps)
	if err != nil {
		return nil, err
	}
	if err := sess.finish(ctx, rep.Status, res.Finished, nil); err != nil {
		return nil, err
	}
	return &Outcome{Report: rep, ReportPath: path, Result: res}, nil
}
