package flow

// Compaction: micro-batches and change capture leave many small data files
// (and position deletes); `lima-tui compact`, or the watcher after every N
// micro-batches, rewrites them with iceberg-go's own bin-pack planner
// (table/compaction) and rewrite (Table.RewriteDataFiles) in one atomic
// snapshot. The rows are unchanged; the snapshot is of kind "compaction"
// and carries the table's watermark and change position forward.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	"github.com/google/uuid"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/internal/faultpoint"
)

// CompactOptions configure Compact.
type CompactOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	// Tables to compact (default: every base table); their history tables
	// are compacted too.
	Tables []string
	// MinInputFiles is the fewest small files worth a rewrite (default 2).
	MinInputFiles int
	// TargetFileSize of the rewritten files (default 128 MiB).
	TargetFileSize int64
	LockWait       time.Duration
}

// CompactResult is what a compaction did to one table.
type CompactResult struct {
	Table        string `json:"table"`
	FilesBefore  int    `json:"files_before"`
	FilesAfter   int    `json:"files_after"`
	DeletesAfter int    `json:"delete_files_after"`
	Rewritten    int    `json:"files_rewritten"`
	// DeadDeletesDropped are delete files that applied to no live data
	// file any more, dropped in the compaction's snapshot.
	DeadDeletesDropped int   `json:"dead_delete_files_dropped,omitempty"`
	SnapshotID         int64 `json:"snapshot_id,omitempty"`
}

// Compact rewrites the small files of the plan's tables.
func Compact(ctx context.Context, o CompactOptions) ([]CompactResult, error) {
	if o.MinInputFiles <= 0 {
		o.MinInputFiles = 2
	}
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = 128 << 20
	}
	p := o.Plan
	unlock, err := Lock(ctx, o.Workspace, o.LockWait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := checkOwner(ctx, o.Workspace, p, "the compaction", true); err != nil {
		return nil, err
	}
	st, err := OpenLedger(ctx, o.Workspace, p)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sk, err := OpenSink(ctx, o.Workspace, p, nil)
	if err != nil {
		return nil, err
	}
	defer sk.Close()
	if err := removeInterrupted(ctx, st, sk, p); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range p.TableNames() {
		t := p.Tables[n]
		if t.Type == plan.TableMart || (len(o.Tables) > 0 && !slices.Contains(o.Tables, n)) {
			continue
		}
		names = append(names, n)
		if t.KeepsHistory() {
			names = append(names, plan.HistoryTable(n))
		}
	}
	var out []CompactResult
	for _, n := range names {
		tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), n})
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue
		}
		if err != nil {
			return out, err
		}
		r, err := compactTable(ctx, tbl, sk.Catalog(), st, p.Namespace()+"."+n, o)
		if err != nil {
			return out, fmt.Errorf("compact %s: %w", n, err)
		}
		r.Table = n
		out = append(out, r)
	}
	return out, nil
}

// Fault points of a compaction (LIMA_FAULTPOINT, crash tests): after its
// data files are written (before its manifests), inside its commit (the
// new metadata file written, the catalog's pointer not moved), after its
// commit.
const (
	FaultCompactAfterDataFiles = "compact-after-data-files"
	FaultCompactInsideCommit   = "compact-inside-commit"
	FaultCompactAfterCommit    = "compact-after-commit"
)

// compactTable compacts one table. The commit is recorded first
// (beginCommit: the write ids its data files are named with), so what a
// compaction killed before its commit wrote — data files, manifests, a
// metadata file — is removed by the next run, maintain or compact.
func compactTable(ctx context.Context, tbl *table.Table, cat table.CatalogIO, st ledger.Store, key string, o CompactOptions) (CompactResult, error) {
	var r CompactResult
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return r, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return r, err
	}
	r.FilesBefore = len(tasks)
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes = o.TargetFileSize
	cfg.MinFileSizeBytes = o.TargetFileSize * 3 / 4
	cfg.MaxFileSizeBytes = o.TargetFileSize * 9 / 5
	cfg.MinInputFiles = uint(o.MinInputFiles)
	cfg.DeleteFileThreshold = 1 // a file with position deletes is rewritten without them
	pl, err := cfg.PlanCompaction(tasks)
	if err != nil {
		return r, err
	}
	groups := make([]table.CompactionTaskGroup, 0, len(pl.Groups))
	removing := map[string]struct{}{}
	for _, g := range pl.Groups {
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
		r.Rewritten += len(g.Tasks)
		for _, t := range g.Tasks {
			removing[t.File.FilePath()] = struct{}{}
		}
	}
	// The rewrite drops the position delete files of the files it rewrites.
	// A delete file written for several data files (iceberg-go's own delete
	// writes, which Lima used before) must not go while one of its data
	// files stays: those files join the rewrite of their group.
	if err := closeOverDeletes(ctx, tbl, tasks, groups, removing); err != nil {
		return r, err
	}
	r.Rewritten = len(removing)
	// Delete files that apply to no data file staying live (their files
	// are rewritten now, or were removed before) go in the same snapshot.
	dead, err := icesink.DeadDeletes(ctx, tbl, cur, removing)
	if err != nil {
		return r, fmt.Errorf("find dead delete files: %w", err)
	}
	r.DeadDeletesDropped = len(dead)
	if len(pl.Groups) == 0 && len(dead) == 0 {
		r.FilesAfter = r.FilesBefore
		return r, nil
	}
	// The snapshot carries the watermark and the change position forward
	// (the table's current state), but no load id: it loaded nothing.
	props := iceberg.Properties{sink.PropKind: run.KindCompaction}
	if cur.Summary != nil {
		for _, k := range []string{sink.PropWatermark, run.PropCDCOrdering, run.PropCDCFile} {
			if v, ok := cur.Summary.Properties[k]; ok {
				props[k] = v
			}
		}
	}
	writeIDs, done, err := beginCommit(ctx, st, key, len(groups))
	if err != nil {
		return r, err
	}
	tbl = icesink.InsideCommit(tbl, cat, FaultCompactInsideCommit)
	// One atomic snapshot, as iceberg-go's Table.RewriteDataFiles stages
	// it (its groups executed, their results applied, the dead delete
	// files dropped once each), but each group written with a write id of
	// the record. With no group the snapshot only drops dead delete files.
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(props)
	dropped := map[string]bool{}
	applied := 0
	for i, g := range groups {
		gr, err := rewriteGroup(ctx, icesink.DataFileFault(tbl, cat), g, o.TargetFileSize, writeIDs[i])
		if err != nil {
			return r, err // the record stays: the next run removes what the group wrote
		}
		if len(gr.OldDataFiles) == 0 && len(gr.NewDataFiles) == 0 {
			continue
		}
		rw.ApplyResult(gr)
		applied++
		for _, df := range slices.Concat(gr.SafePosDeletes, gr.SafeDeletionVectors) {
			dropped[df.FilePath()] = true
		}
	}
	faultpoint.Hit(FaultCompactAfterDataFiles)
	for _, d := range dead {
		if !dropped[d.FilePath()] {
			dropped[d.FilePath()] = true
			rw.DeleteFile(d)
		}
	}
	if applied == 0 && len(dead) == 0 {
		r.FilesAfter = r.FilesBefore
		return r, done(ctx)
	}
	if err := rw.Commit(ctx); err != nil {
		return r, fmt.Errorf("commit compaction: %w", err)
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		return r, fmt.Errorf("commit compaction: %w", err)
	}
	faultpoint.Hit(FaultCompactAfterCommit)
	if err := done(ctx); err != nil {
		return r, err
	}
	r.SnapshotID = after.CurrentSnapshot().SnapshotID
	tasks, err = after.Scan().PlanFiles(ctx)
	if err != nil {
		return r, err
	}
	r.FilesAfter = len(tasks)
	for _, t := range tasks {
		r.DeletesAfter += len(t.DeleteFiles)
	}
	return r, nil
}

// rewriteGroup is iceberg-go's ExecuteCompactionGroup with the group's
// files named with writeID (that function draws its own write UUID, which
// no record of Lima's could name): it reads the group's tasks with their
// deletes applied, writes them clustered to files of the target size, and
// lists the old files and the delete files only they used. A table of
// format version 3 or more (row lineage, which Lima does not write) goes
// through ExecuteCompactionGroup itself.
func rewriteGroup(ctx context.Context, tbl *table.Table, g table.CompactionTaskGroup, target int64, writeID string) (table.CompactionGroupResult, error) {
	if tbl.Metadata().Version() >= 3 {
		return table.ExecuteCompactionGroup(ctx, tbl, g, table.WithCompactionTargetFileSize(target))
	}
	gr := table.CompactionGroupResult{PartitionKey: g.PartitionKey, BytesBefore: g.TotalSizeBytes}
	if len(g.Tasks) == 0 {
		return gr, nil
	}
	sc, records, err := tbl.Scan().ReadTasks(ctx, g.Tasks)
	if err != nil {
		return gr, fmt.Errorf("read tasks for compaction group %q: %w", g.PartitionKey, err)
	}
	opts := []table.WriteRecordOption{table.WithClusteredWrite(), table.WithWriteUUID(uuid.MustParse(writeID))}
	if target > 0 {
		opts = append(opts, table.WithTargetFileSize(target))
	}
	for df, err := range table.WriteRecords(ctx, tbl, sc, records, opts...) {
		if err != nil {
			return gr, fmt.Errorf("write compacted files for group %q: %w", g.PartitionKey, err)
		}
		gr.NewDataFiles = append(gr.NewDataFiles, df)
		gr.BytesAfter += df.FileSizeBytes()
	}
	for _, t := range g.Tasks {
		gr.OldDataFiles = append(gr.OldDataFiles, t.File)
	}
	gr.SafePosDeletes = table.CollectSafePositionDeletes(g.Tasks)
	gr.SafeDeletionVectors = table.CollectSafeDeletionVectors(g.Tasks)
	return gr, nil
}

// closeOverDeletes adds to the groups every live data file that shares a
// position delete file with a file being rewritten, until none is left out.
func closeOverDeletes(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, groups []table.CompactionTaskGroup, removing map[string]struct{}) error {
	byPath := make(map[string]table.FileScanTask, len(tasks))
	for _, t := range tasks {
		byPath[t.File.FilePath()] = t
	}
	seen := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for gi := range groups {
			for ti := 0; ti < len(groups[gi].Tasks); ti++ {
				for _, d := range groups[gi].Tasks[ti].DeleteFiles {
					if seen[d.FilePath()] {
						continue
					}
					seen[d.FilePath()] = true
					targets, err := icesink.DeleteTargets(ctx, tbl, d)
					if err != nil {
						return fmt.Errorf("read delete file %s: %w", d.FilePath(), err)
					}
					for _, p := range targets {
						if _, in := removing[p]; in {
							continue
						}
						if t, live := byPath[p]; live {
							groups[gi].Tasks = append(groups[gi].Tasks, t)
							groups[gi].TotalSizeBytes += t.File.FileSizeBytes()
							removing[p] = struct{}{}
							changed = true
						}
					}
				}
			}
		}
	}
	return nil
}
