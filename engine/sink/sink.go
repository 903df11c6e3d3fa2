// Package sink defines where rows go. A Sink opens tables; a Table stages
// data files (invisible to readers) and commits them atomically, one commit
// per table per run, carrying the load id and the watermark.
//
// Optional capabilities are discovered by type assertion: a Table that can
// be read back for reconciliation implements Scanner.
package sink

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lima-lake/lima/engine/plan"
)

// Snapshot summary properties Lima writes with every commit.
const (
	PropLoadID    = "lima.load-id"
	PropRunID     = "lima.run-id"
	PropWatermark = "lima.watermark"
	PropRows      = "lima.rows"
	// PropKind is "load" for a run's load and "replay" for fixed exceptions
	// committed by `lima-tui exceptions replay`.
	PropKind = "lima.kind"
	// PropReplace marks a commit that replaced the table (a full load or a
	// full refresh): a commit looks for its load id only back to the latest
	// such snapshot.
	PropReplace = "lima.replace"
)

// Commit kinds.
const (
	KindLoad   = "load"
	KindReplay = "replay"
)

// TableSpec describes a table to open or create.
type TableSpec struct {
	Name      string
	Namespace string
	Columns   []plan.Column
	Types     []plan.Type // parsed types, parallel to Columns
	Required  []bool      // parallel to Columns
	Partition []plan.PartitionField
}

// Commit describes a committed load.
type Commit struct {
	SnapshotID int64
	LoadID     string
	RunID      string
	Watermark  string
	Kind       string
	// Props are the snapshot's lima.* summary properties.
	Props map[string]string
	// AlreadyCommitted is true when the load id was found in the table
	// (after an unknown commit outcome, or on a rerun): nothing new was added.
	AlreadyCommitted bool
	// Attempts is how many commit attempts were made.
	Attempts int
	// Deleted is how many committed rows a CommitDelta removed.
	Deleted int64
}

// CommitProps are what a commit carries.
type CommitProps struct {
	LoadID    string
	RunID     string
	Watermark string
	// Replace makes the commit replace every data file of the table (a full
	// refresh); otherwise it appends.
	Replace bool
	// Kind is KindLoad (default) or KindReplay.
	Kind string
	// Extra summary properties; keys start with "lima.".
	Extra map[string]string
}

// PropSumPrefix prefixes the control sums a replay commit records
// ("lima.sum.cost"), so gate 4 can account for replayed rows later.
const PropSumPrefix = "lima.sum."

// Staged is the output of a write that is not yet visible.
type Staged interface {
	Rows() int64
	Files() int
	Bytes() int64
	// Discard removes the staged files; used when the run fails before commit.
	Discard(ctx context.Context) error
}

// Table is an open lake table.
type Table interface {
	// Schema is the Arrow schema rows must be written with.
	Schema() *arrow.Schema
	// FindLoad returns the commit that carries loadID, if any.
	FindLoad(ctx context.Context, loadID string) (Commit, bool, error)
	// Current returns the table's current commit, if any.
	Current(ctx context.Context) (Commit, bool, error)
	// LastLoad returns the newest commit of kind load in the current
	// snapshot's history (replays of fixed exceptions are skipped).
	LastLoad(ctx context.Context) (Commit, bool, error)
	// Stage writes the batches as data files that are not yet visible.
	Stage(ctx context.Context, batches iter.Seq2[arrow.RecordBatch, error]) (Staged, error)
	// Commit makes staged files visible in one atomic snapshot. It never
	// applies the same load id twice: before every retry it looks for it.
	Commit(ctx context.Context, s Staged, p CommitProps) (Commit, error)
}

// Inventory is where a sink records, before it writes a load's first data
// file, the write id that every file of that staging is named with, and
// forgets it once the files are committed or removed (the state store
// implements it). A staging still recorded when the next run starts
// belongs to a process that was killed: its files are removed by name
// (StagingRemover), never by walking for whatever looks unreferenced.
type Inventory interface {
	BeginStaging(ctx context.Context, table, writeID string) error
	EndStaging(ctx context.Context, writeID string) error
}

// StagingRemover is the optional capability of a sink that names staged
// files with a write id: RemoveStaged removes the files of the table
// (table: namespace.name) named with writeID that no snapshot of the table
// references, and returns how many it removed. A table that does not exist
// has nothing to remove.
type StagingRemover interface {
	RemoveStaged(ctx context.Context, table, writeID string) (int, error)
}

// CommitLeftoverRemover is the optional capability of a sink whose commit
// writes metadata files it cannot name with the write id (iceberg-go draws
// its own commit UUID): RemoveUncommitted removes the files of the table's
// metadata a commit begun at or after since wrote and never made current,
// and returns how many it removed. The caller holds the workspace lock
// the interrupted process held from since until it died.
type CommitLeftoverRemover interface {
	RemoveUncommitted(ctx context.Context, table string, since time.Time) (int, error)
}

// Historian lists the commits of the current snapshot's lineage, newest
// first.
type Historian interface {
	History(ctx context.Context) ([]Commit, error)
}

// Scanner reads a committed snapshot back (gate 4 uses it).
type Scanner interface {
	Scan(ctx context.Context, snapshotID int64, columns []string) (iter.Seq2[arrow.RecordBatch, error], error)
}

// MetaCounter is the optional capability of a sink whose metadata states
// a row count (Iceberg manifests): an engine that trusts metadata counts
// the records of the live data files minus the records of the live delete
// files. Gate 4 checks that this equals the rows a reader reads.
type MetaCounter interface {
	// MetaRows counts the snapshot's rows from its metadata (0: current).
	MetaRows(ctx context.Context, snapshotID int64) (MetaRows, error)
}

// MetaRows is what a snapshot's metadata says about its rows.
type MetaRows struct {
	SnapshotID    int64
	DataFiles     int
	DataRows      int64 // records of the live data files
	DeleteFiles   int
	DeleteRecords int64 // records of the live delete files
	// DanglingDeleteFiles point at data files that are no longer live.
	DanglingDeleteFiles int
}

// Live is the row count the metadata implies.
func (m MetaRows) Live() int64 { return m.DataRows - m.DeleteRecords }

// RangeScanner reads the current snapshot's rows whose column is at least
// from (int64, time.Time or string, by the column's type), skipping the
// data files whose column statistics lie wholly below it. Rows below from
// may still be returned: the caller filters.
type RangeScanner interface {
	ScanFrom(ctx context.Context, columns []string, column string, from any) (iter.Seq2[arrow.RecordBatch, error], error)
}

// Keys lists row keys: Columns are key column names of the table and every
// batch holds exactly those columns, typed as in the table's schema.
type Keys struct {
	Columns []string
	Batches []arrow.RecordBatch
}

// Len is the number of key tuples.
func (k Keys) Len() int64 {
	var n int64
	for _, b := range k.Batches {
		n += b.NumRows()
	}
	return n
}

// KeyDeleter is the optional capability behind upserts and change capture:
// CommitDelta deletes every committed row whose key is in del, then appends
// the staged rows, in one atomic catalog commit carrying the load id. Rows
// the same commit appends are never deleted by it. Like Commit, it never
// applies a load id twice. Commit.Deleted reports the rows it removed.
type KeyDeleter interface {
	CommitDelta(ctx context.Context, s Staged, p CommitProps, del Keys) (Commit, error)
}

// KeyFinder is the optional capability of a sink that finds the live rows
// of a few keys without reading every key of the table: only the data
// files (and row groups) whose statistics can hold one of the keys are
// read, and of them only the key columns and extra. fn is called per
// batch of rows found; FindStats says how much was read.
type KeyFinder interface {
	FindKeys(ctx context.Context, snapshotID int64, keys Keys, extra []string, fn func(FoundRows) error) (FindStats, error)
}

// FoundRows are live rows found by key: Rec holds the key columns, then
// the extra columns asked for; Rows are the indices of the rows found in
// Rec, at positions Pos of data file File. Rec is released after the
// callback returns.
type FoundRows struct {
	File string
	Rec  arrow.RecordBatch
	Rows []int
	Pos  []int64
}

// FindStats counts what key look-ups read: of DataFiles live data files,
// FilesOpened were candidates by their key bounds; of their RowGroups,
// RowGroupsRead were candidates by their statistics, RowsRead rows decoded.
type FindStats struct {
	Calls         int   `json:"calls"`
	DataFiles     int   `json:"data_files"`
	FilesOpened   int   `json:"files_opened"`
	RowGroups     int   `json:"row_groups"`
	RowGroupsRead int   `json:"row_groups_read"`
	RowsRead      int64 `json:"rows_read"`
}

// Add adds o's counts to s.
func (s *FindStats) Add(o FindStats) {
	s.Calls += o.Calls
	s.DataFiles += o.DataFiles
	s.FilesOpened += o.FilesOpened
	s.RowGroups += o.RowGroups
	s.RowGroupsRead += o.RowGroupsRead
	s.RowsRead += o.RowsRead
}

// SnapshotChange is what one snapshot changed against its parent, from
// their manifests.
type SnapshotChange struct {
	SnapshotID int64
	// Replace: the snapshot replaced the table (PropReplace).
	Replace   bool
	HasParent bool
	ParentID  int64
	// Parent and Current are the two snapshots' manifest counts.
	Parent, Current MetaRows
	// AddedData and AddedDeletes are live in the snapshot, not in its
	// parent; RemovedData and RemovedDeletes the other way round;
	// ChangedData are files of both whose records or size differ.
	AddedData, AddedDeletes, RemovedData, RemovedDeletes, ChangedData []ChangedFile
	// KeptData counts the parent's data files still live, unchanged in
	// path, records and size.
	KeptData int
}

// ChangedFile is a data or delete file as a manifest states it; Target is
// the one data file a file-scoped position delete file applies to.
type ChangedFile struct {
	Path    string
	Records int64
	Bytes   int64
	Target  string
}

// DeltaReader is the optional capability of a sink that can say what a
// snapshot changed and read just that: gate 4 proves a delta commit from
// it without re-reading the whole table.
type DeltaReader interface {
	SnapshotChange(ctx context.Context, snapshotID int64) (SnapshotChange, error)
	// ScanFiles reads the named live data files whole, deletes applied.
	ScanFiles(ctx context.Context, snapshotID int64, paths, columns []string) (iter.Seq2[arrow.RecordBatch, error], error)
	// DeletedRows reads the rows the named position delete files delete
	// (columns of them, from the data files they point at); again counts
	// the positions they delete that other live delete files delete too.
	DeletedRows(ctx context.Context, snapshotID int64, deleteFiles, columns []string, fn func(FoundRows) error) (again int64, err error)
}

// Sink opens tables.
type Sink interface {
	OpenTable(ctx context.Context, spec TableSpec) (Table, error)
	Close() error
}

// ErrCommitFailed is returned when a commit could not be applied within the
// retry budget; nothing of the load is visible.
var ErrCommitFailed = errors.New("commit failed")

// ErrNothingToCommit is returned by a commit that would add no file and
// delete no row: it makes no snapshot, so it cannot carry the load id.
var ErrNothingToCommit = errors.New("nothing to commit")
