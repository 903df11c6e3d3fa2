package flow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/reports"

	"github.com/apache/iceberg-go/table"
)

// StatePath is the SQLite state store of a workspace.
func (w Workspace) StatePath() string { return filepath.Join(w.StateDir(), "state.db") }

// OpenLedger opens the plan's state store: SQLite in .lima/state.db, or
// PostgreSQL from the DSN in the environment variable the plan names.
func OpenLedger(ctx context.Context, ws Workspace, p *plan.Plan) (ledger.Store, error) {
	switch p.Storage.State {
	case "postgres":
		dsn := os.Getenv(p.Storage.StateDSNEnv)
		if dsn == "" {
			return nil, fmt.Errorf("%w: state: postgres, but the environment variable %s is empty; export the DSN there", ErrPrecondition, p.Storage.StateDSNEnv)
		}
		var opts []ledger.PostgresOption
		if p.Storage.StateSchema != "" {
			opts = append(opts, ledger.WithSchema(p.Storage.StateSchema))
		}
		st, err := ledger.OpenPostgres(ctx, dsn, opts...)
		if err != nil {
			// The driver's message can echo the DSN: name the variable only.
			return nil, fmt.Errorf("%w: open the PostgreSQL state store from $%s failed", ErrPrecondition, p.Storage.StateDSNEnv)
		}
		return st, nil
	}
	st, err := ledger.OpenSQLite(ws.StatePath())
	if err != nil {
		return nil, fmt.Errorf("%w: open the state store: %w", ErrPrecondition, err)
	}
	return st, nil
}

// RecoverPending settles exceptions left pending by a run that stopped
// between writing them and committing (or between committing and
// publishing): if the table has a snapshot carrying the load id, they are
// published; otherwise the load never became visible and they are removed.
func RecoverPending(ctx context.Context, st ledger.Store, sk sink.Sink, p *plan.Plan) (published, discarded int64, err error) {
	loads, err := st.PendingLoads(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, l := range loads {
		committed, err := hasLoad(ctx, sk, p.Namespace(), l.Table, l.LoadID)
		if err != nil {
			return published, discarded, err
		}
		if !committed {
			// A change-capture batch that changed no row commits only to
			// its history table (run.PropCDCNoop).
			if ice, ok := sk.(*icesink.Sink); !ok {
			} else if h, err := ice.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), plan.HistoryTable(l.Table)}); err == nil {
				for _, s := range h.Metadata().Snapshots() {
					if s.Summary != nil && s.Summary.Properties[sink.PropLoadID] == l.LoadID && s.Summary.Properties[run.PropCDCNoop] == "true" {
						committed = true
					}
				}
				// Expired by lima-tui maintain: carried forward.
				if r, err := sink.ParseRetired(h.Properties()[sink.PropRetired]); err != nil {
					return published, discarded, err
				} else if c, ok := r.Commit(l.LoadID); ok && c.Props[run.PropCDCNoop] == "true" {
					committed = true
				}
			}
		}
		if committed {
			n, err := st.Publish(ctx, l.Table, l.LoadID)
			if err != nil {
				return published, discarded, err
			}
			published += n
		} else {
			n, err := st.DiscardPending(ctx, l.Table, l.LoadID)
			if err != nil {
				return published, discarded, err
			}
			discarded += n
		}
	}
	return published, discarded, nil
}

// settleExceptions finishes a load's work on the exception queue: after a
// load that read the whole source and replaced its table (mode full, or a
// full refresh), the open and fixed exceptions it did not meet are closed
// as superseded by it — their rows are no longer in the source; then the
// table's result says how many exceptions were new, seen again and gone.
// A failure is the table's error: its data is committed already.
func settleExceptions(ctx context.Context, st ledger.Store, tr *run.TableResult, fullRefresh bool) {
	if tr.LoadID != "" && tr.Status == run.StatusAlreadyLoaded && tr.Mode == plan.ModeFull {
		// The table's last load is this input's: a run killed after that
		// commit and before settling left the exceptions of rows it no
		// longer met open. Settling again is idempotent.
		if _, err := st.Supersede(ctx, tr.Name, tr.LoadID, nil, "lima"); err != nil && tr.Err == nil {
			tr.Err = fmt.Errorf("closing the exceptions of rows no longer in the source failed: %w", err)
		}
		return
	}
	if tr.LoadID == "" || (tr.Status != run.StatusLoaded && tr.Status != run.StatusNothingToLoad) {
		return
	}
	if tr.Mode == plan.ModeFull || (fullRefresh && tr.Mode != plan.ModeCDC) {
		if _, err := st.Supersede(ctx, tr.Name, tr.LoadID, tr.AppliedFixes, "lima"); err != nil {
			if tr.Err == nil {
				tr.Err = fmt.Errorf("committed, but closing the exceptions of rows no longer in the source failed: %w", err)
			}
			return
		}
	}
	lc, err := st.LoadCounts(ctx, tr.Name, tr.LoadID)
	if err != nil {
		if tr.Err == nil {
			tr.Err = fmt.Errorf("committed, but counting its exceptions failed: %w", err)
		}
		return
	}
	tr.ExceptionsNew, tr.ExceptionsStillOpen, tr.ExceptionsGone = lc.New, lc.StillOpen, lc.Gone
}

// markInterrupted records as interrupted every run the state store still
// holds as running. It is called with the workspace lock held, so no other
// run of this workspace is in progress: such a run's process was killed
// (SIGKILL, a power cut, an OOM kill) before it could record its end.
func markInterrupted(ctx context.Context, st ledger.Store) ([]string, error) {
	runs, err := st.Runs(ctx, 0)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range runs {
		if r.Status != "running" || !r.Finished.IsZero() {
			continue
		}
		if err := st.FinishRun(ctx, r.ID, reports.StatusInterrupted, time.Now().UTC(), nil); err != nil {
			return ids, err
		}
		ids = append(ids, r.ID)
	}
	return ids, nil
}

// stagingInventory records a run's stagings in the state store.
type stagingInventory struct {
	st    ledger.Store
	runID string
}

func (i stagingInventory) BeginStaging(ctx context.Context, table, writeID string) error {
	return i.st.BeginStaging(ctx, ledger.Staging{WriteID: writeID, Table: table, RunID: i.runID})
}

func (i stagingInventory) EndStaging(ctx context.Context, writeID string) error {
	return i.st.EndStaging(ctx, writeID)
}

// removeStaged removes what the stagings still recorded had written: they
// belong to loads whose process was killed between writing their first
// data file and settling their commit (the workspace lock is held, so no
// load of this workspace is writing). The sink removes only files named
// with the staging's write id that no snapshot references, so a load
// killed after its commit keeps its files.
func removeStaged(ctx context.Context, st ledger.Store, sk sink.Sink) (int, error) {
	stagings, err := st.Stagings(ctx)
	if err != nil || len(stagings) == 0 {
		return 0, err
	}
	rm, ok := sk.(sink.StagingRemover)
	if !ok {
		return 0, nil // a sink without write ids records no stagings
	}
	total := 0
	for _, s := range stagings {
		n, err := rm.RemoveStaged(ctx, s.Table, s.WriteID)
		total += n
		if err != nil {
			return total, fmt.Errorf("table %s, staging %s: %w", s.Table, s.WriteID, err)
		}
		// Killed mid-commit: the commit's metadata files too.
		if lr, ok := sk.(sink.CommitLeftoverRemover); ok && !s.Started.IsZero() {
			n, err := lr.RemoveUncommitted(ctx, s.Table, s.Started)
			total += n
			if err != nil {
				return total, fmt.Errorf("table %s, staging %s: %w", s.Table, s.WriteID, err)
			}
		}
		if err := st.EndStaging(ctx, s.WriteID); err != nil {
			return total, err
		}
	}
	return total, nil
}
