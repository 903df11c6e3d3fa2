package flow

// Table maintenance: `lima-tui maintain` expires old snapshots by the
// plan's retention policy (maintenance:) and removes orphan files older
// than its safety window, under the workspace lock, in a lake this
// workspace owns.
//
// Exactly-once depends on what older snapshots say, so expiry keeps:
//   - the current snapshot and the lineage back to the table's newest
//     load (a full-mode rerun compares its load id with the last load's;
//     the watermark, gate 4's expectations and its replay adjustment all
//     start there);
//   - every snapshot carrying a load id whose exceptions the state store
//     still holds pending (the next run publishes them only when it finds
//     the load in the table);
//   - every replay snapshot listing an exception the state store still has
//     as fixed (the next replay marks it replayed instead of replaying it
//     again).
//
// And it carries forward, in the table property lima.retired written in
// the expiring commit, the load ids of every snapshot that goes (a rerun
// of an older append-mode load is still found) and their file lists
// (lima.files, lima.cdc.files: the watcher and change capture never load a
// file twice).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/internal/faultpoint"
)

// Fault points of maintenance (LIMA_FAULTPOINT), for crash tests: inside
// a table's expiry commit (its new metadata file written, the catalog's
// pointer not moved), right after the expiry committed, after the first
// file only the expired snapshots used was removed, after the expiry and
// its cleanup, and after its first orphan was removed.
const (
	FaultMaintainInsideExpireCommit = "maintain-inside-expire-commit"
	FaultMaintainAfterExpireCommit  = icesink.FaultAfterExpireCommit
	FaultMaintainMidExpiredFiles    = icesink.FaultMidExpiredFiles
	FaultMaintainAfterExpire        = "maintain-after-expire"
	FaultMaintainMidOrphans         = icesink.FaultMidOrphans
)

// MaintainOptions configure Maintain.
type MaintainOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	// Tables to maintain (default: every table of the plan); history
	// tables go with their tables.
	Tables   []string
	DryRun   bool
	LockWait time.Duration
	// Now is the clock (tests); zero: time.Now.
	Now time.Time
}

// MaintainResult is what maintenance did to one table.
type MaintainResult struct {
	Table  string `json:"table"`
	Format string `json:"format"` // iceberg | hive
	DryRun bool   `json:"dry_run,omitempty"`
	icesink.ExpireResult
	icesink.OrphanResult
	// Note says what was done to a table that needs nothing (hive).
	Note string `json:"note,omitempty"`
}

// Maintain expires snapshots and removes orphan files of the plan's
// Iceberg tables.
func Maintain(ctx context.Context, o MaintainOptions) ([]MaintainResult, error) {
	p := o.Plan
	pol, err := p.Maintenance.Retention()
	if err != nil {
		return nil, fmt.Errorf("%w: maintenance.%w", ErrUsage, err)
	}
	for _, t := range o.Tables {
		if _, ok := p.Tables[t]; !ok {
			return nil, fmt.Errorf("%w: --table %s: the plan has no such table", ErrUsage, t)
		}
	}
	unlock, err := Lock(ctx, o.Workspace, o.LockWait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := checkOwner(ctx, o.Workspace, p, "maintenance", false); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range p.TableNames() {
		if len(o.Tables) > 0 && !slices.Contains(o.Tables, n) {
			continue
		}
		names = append(names, n)
		if p.Tables[n].KeepsHistory() {
			names = append(names, plan.HistoryTable(n))
		}
	}
	if p.Pattern() == plan.PatternHive {
		var out []MaintainResult
		for _, n := range names {
			out = append(out, MaintainResult{Table: n, Format: "hive", DryRun: o.DryRun,
				Note: "nothing to do: a Hive-style table has no snapshots to expire, and the files of a killed load are removed by the next run"})
		}
		return out, nil
	}
	st, err := OpenLedger(ctx, o.Workspace, p)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	pendingLoads, err := st.PendingLoads(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the pending loads: %w", err)
	}
	pending := map[string]bool{}
	for _, l := range pendingLoads {
		pending[l.LoadID] = true
	}
	sk, err := OpenSink(ctx, o.Workspace, p, nil)
	if err != nil {
		return nil, err
	}
	defer sk.Close()
	if !o.DryRun {
		if err := removeInterrupted(ctx, st, sk, p); err != nil {
			return nil, err
		}
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	var out []MaintainResult
	for _, n := range names {
		tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), n})
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue
		}
		if err != nil {
			return out, err
		}
		r := MaintainResult{Table: n, Format: "iceberg", DryRun: o.DryRun}
		newestLoad := false
		protect := func(c sink.Commit) (bool, string) {
			if c.Kind == sink.KindLoad && c.LoadID != "" && !newestLoad {
				newestLoad = true
				return true, "the newest load (reruns, watermark, gate 4)"
			}
			if pending[c.LoadID] && c.LoadID != "" {
				return true, "its load's exceptions are still pending in the state store"
			}
			if c.Kind == sink.KindReplay && c.Props[run.PropReplayExceptions] != "" {
				ids, err := run.ParseIDs(c.Props[run.PropReplayExceptions])
				if err != nil {
					return true, "its replayed exceptions cannot be read"
				}
				for _, id := range ids {
					e, err := st.Get(ctx, id)
					if err != nil && !errors.Is(err, ledger.ErrNotFound) {
						return true, "the state store could not say whether its exceptions are marked replayed"
					}
					if err == nil && e.Status == ledger.StatusFixed {
						return true, "it replayed exceptions the state store has not marked replayed yet"
					}
				}
			}
			return false, ""
		}
		var done func(context.Context) error
		if !o.DryRun {
			if _, done, err = beginCommit(ctx, st, p.Namespace()+"."+n, 1); err != nil {
				return out, fmt.Errorf("maintain %s: %w", n, err)
			}
		}
		tbl = icesink.InsideCommit(tbl, sk.Catalog(), FaultMaintainInsideExpireCommit)
		tbl, r.ExpireResult, err = icesink.Expire(ctx, tbl, icesink.ExpirePolicy{RetainLast: pol.RetainLast, MaxAge: pol.MaxSnapshotAge,
			Protect: protect, ListProps: []string{run.PropFiles, run.PropCDCFiles}, DryRun: o.DryRun, Now: now})
		if err != nil {
			return out, fmt.Errorf("maintain %s: %w", n, err) // the record stays: the next one removes what the commit wrote
		}
		if done != nil {
			if err := done(ctx); err != nil {
				return out, fmt.Errorf("maintain %s: %w", n, err)
			}
		}
		faultpoint.Hit(FaultMaintainAfterExpire)
		if r.OrphanResult, err = icesink.RemoveOrphans(ctx, tbl, pol.OrphanOlderThan, o.DryRun); err != nil {
			return out, fmt.Errorf("maintain %s: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// beginCommit records, in the state store's inventory of stagings and
// under the workspace lock, that a commit of table (namespace.name) other
// than a load's — an expiry, a compaction — begins now, and returns the
// function that forgets it once the commit and its cleanup are done. A
// process killed in between leaves the record; the next run, maintain or
// compact (removeStaged, holding the lock) then removes, as for a load
// killed inside its commit, the files iceberg-go wrote for the commit and
// never made current: the files of the table's metadata/ folder named as
// iceberg-go names them, written since the record, that no metadata
// version references (icesink RemoveUncommitted).
//
// The record's write ids (n of them, at least one) are fresh UUIDs: a
// commit that writes data files names them with one (a compaction: one
// per group, since iceberg-go numbers the files of each write from 0), so
// RemoveStaged removes by name what it wrote and never committed.
func beginCommit(ctx context.Context, st ledger.Store, tableKey string, n int) ([]string, func(context.Context) error, error) {
	ids := make([]string, max(n, 1))
	for i := range ids {
		ids[i] = uuid.NewString()
		if err := st.BeginStaging(ctx, ledger.Staging{WriteID: ids[i], Table: tableKey}); err != nil {
			return nil, nil, fmt.Errorf("record the commit of %s: %w", tableKey, err)
		}
	}
	return ids, func(ctx context.Context) error {
		for _, id := range ids {
			if err := st.EndStaging(context.WithoutCancel(ctx), id); err != nil {
				return fmt.Errorf("forget the commit of %s: %w", tableKey, err)
			}
		}
		return nil
	}, nil
}

// removeInterrupted removes, before maintain or compact commits anything,
// what a killed maintain, compaction or load left half-committed
// (removeStaged, as a run does at its start). Only when sk is the plan's
// own sink, the embedded catalog (OpenSink): a staging of a table sk does
// not have would be forgotten with its files still in the plan's catalog.
func removeInterrupted(ctx context.Context, st ledger.Store, sk sink.Sink, p *plan.Plan) error {
	if p.Pattern() == plan.PatternHive || p.Catalog() != plan.CatalogSQLite {
		return nil
	}
	if _, err := removeStaged(ctx, st, sk); err != nil {
		return fmt.Errorf("remove what an interrupted commit wrote: %w", err)
	}
	return nil
}
