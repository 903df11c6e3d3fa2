// Package icesink writes Apache Iceberg tables through iceberg-go, registered
// in an embedded SQL catalog on SQLite (pure Go). It owns the commit loop:
// data files are written once; the commit is retried with bounded, jittered
// backoff, and before every retry the table is reloaded and searched for the
// load id, so a commit whose outcome was unknown is never applied twice.
package icesink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/s3x"
)

// Options configure the sink.
type Options struct {
	// CatalogPath is the SQLite catalog file (created 0600 in a 0700 folder).
	CatalogPath string
	// Warehouse is the lake folder (absolute) or a URI.
	Warehouse string
	// MaxAttempts bounds commit attempts (default 6).
	MaxAttempts int
	// BaseBackoff is the first retry delay (default 50ms), doubled each
	// attempt with full jitter.
	BaseBackoff time.Duration
	// WrapCatalog, when set, wraps the catalog the commit goes through; tests
	// use it to inject commit failures.
	WrapCatalog func(table.CatalogIO) table.CatalogIO
	// TargetFileSize of data files in bytes (default 128 MiB).
	TargetFileSize int64
	// S3 configures a warehouse on S3 (s3://bucket/prefix); nil reads it
	// from the environment (s3x.FromEnv). Only the endpoint, region and
	// addressing become FileIO properties, held in memory; credentials come
	// from the SDK's default chain (see s3warehouse.go).
	S3 *s3x.Config
	// Inventory records the write id of every staging until its commit
	// (stagings.go); nil records nothing.
	Inventory sink.Inventory
	// WriteID, when set, is the write id of every staging instead of a
	// random UUID: a worker's shard (flow/shard.go) names its files after
	// its load, shard and attempt, so attempts never collide and the
	// commit can tell the winner's files from the losers' (adopt.go).
	WriteID string
}

// Sink is an Iceberg sink on a SQL catalog.
type Sink struct {
	opts Options
	db   *sql.DB         // nil for a catalog opened by OpenCatalog
	cat  catalog.Catalog // SQL (Open), Glue or REST (OpenCatalog)
}

var _ sink.Sink = (*Sink)(nil)

// Open opens (creating if needed) the catalog.
func Open(ctx context.Context, o Options) (*Sink, error) {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 6
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = 50 * time.Millisecond
	}
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = 128 << 20
	}
	if err := os.MkdirAll(filepath.Dir(o.CatalogPath), 0o700); err != nil {
		return nil, fmt.Errorf("catalog folder: %w", err)
	}
	if f, err := os.OpenFile(o.CatalogPath, os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		return nil, fmt.Errorf("catalog file: %w", err)
	} else {
		f.Close()
	}
	warehouse := o.Warehouse
	if !strings.Contains(warehouse, "://") {
		abs, err := filepath.Abs(warehouse)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("warehouse: %w", err)
		}
		if warehouse, err = fileuri.FromPath(abs); err != nil {
			return nil, err
		}
	}
	catalogURI, err := fileuri.FromPath(o.CatalogPath)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	dsn := catalogURI + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	db.SetMaxOpenConns(1)
	// Opening creates the catalog's tables if missing, a write: while another
	// process commits (a watcher, a scheduled run) SQLite can answer BUSY
	// at once instead of waiting out the busy timeout, so opening retries
	// for a bounded time.
	var cat *sqlcat.Catalog
	for wait, deadline := 20*time.Millisecond, time.Now().Add(15*time.Second); ; wait = min(2*wait, time.Second) {
		cat, err = sqlcat.NewCatalog("lima", db, sqlcat.SQLite, catalogProps(warehouse, o.S3))
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(wait):
			continue
		}
		break
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return &Sink{opts: o, db: db, cat: cat}, nil
}

// isBusy reports SQLite's "database is locked" (SQLITE_BUSY).
func isBusy(err error) bool {
	m := err.Error()
	return strings.Contains(m, "SQLITE_BUSY") || strings.Contains(m, "database is locked")
}

// Catalog exposes the underlying iceberg-go catalog (teardown, tests).
func (s *Sink) Catalog() catalog.Catalog { return s.cat }

// Close closes the catalog.
func (s *Sink) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// IcebergType maps a plan type to an Iceberg type.
func IcebergType(t plan.Type) iceberg.Type {
	switch t.Kind {
	case plan.Int:
		return iceberg.PrimitiveTypes.Int32
	case plan.Long:
		return iceberg.PrimitiveTypes.Int64
	case plan.Double:
		return iceberg.PrimitiveTypes.Float64
	case plan.Decimal:
		return iceberg.DecimalTypeOf(t.Precision, t.Scale)
	case plan.Date:
		return iceberg.PrimitiveTypes.Date
	case plan.Timestamp:
		return iceberg.PrimitiveTypes.Timestamp
	case plan.TimestampTZ:
		return iceberg.PrimitiveTypes.TimestampTz
	case plan.Boolean:
		return iceberg.PrimitiveTypes.Bool
	case plan.Binary:
		return iceberg.PrimitiveTypes.Binary
	}
	return iceberg.PrimitiveTypes.String
}

func transformOf(p plan.PartitionField) (iceberg.Transform, error) {
	switch p.Transform {
	case "", "identity":
		return iceberg.IdentityTransform{}, nil
	case "year":
		return iceberg.YearTransform{}, nil
	case "month":
		return iceberg.MonthTransform{}, nil
	case "day":
		return iceberg.DayTransform{}, nil
	case "hour":
		return iceberg.HourTransform{}, nil
	case "bucket":
		return iceberg.BucketTransform{NumBuckets: p.Param}, nil
	case "truncate":
		return iceberg.TruncateTransform{Width: p.Param}, nil
	}
	return nil, fmt.Errorf("unknown partition transform %q", p.Transform)
}

func partitionName(p plan.PartitionField) string {
	switch p.Transform {
	case "", "identity":
		return p.Column
	case "bucket", "truncate":
		return fmt.Sprintf("%s_%s_%d", p.Column, p.Transform, p.Param)
	}
	return p.Column + "_" + p.Transform
}

// Schema builds the Iceberg schema of a spec, field ids 1..n in column order.
func Schema(spec sink.TableSpec) *iceberg.Schema {
	fields := make([]iceberg.NestedField, len(spec.Columns))
	for i, c := range spec.Columns {
		fields[i] = iceberg.NestedField{ID: i + 1, Name: c.Name, Type: IcebergType(spec.Types[i]), Required: spec.Required[i], Doc: c.Description}
	}
	return iceberg.NewSchema(0, fields...)
}

// OpenTable loads the table, creating its namespace and the table when
// missing. An existing table whose columns differ from the plan is an error
// (schema evolution is explicit, not silent).
func (s *Sink) OpenTable(ctx context.Context, spec sink.TableSpec) (sink.Table, error) {
	ns := table.Identifier{spec.Namespace}
	ident := table.Identifier{spec.Namespace, spec.Name}
	if ok, err := s.cat.CheckNamespaceExists(ctx, ns); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	} else if !ok {
		if err := s.cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("catalog: create namespace %s: %w", spec.Namespace, err)
		}
	}
	sc := Schema(spec)
	tbl, err := s.cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		opts := []iceberg.PartitionOption{}
		for _, p := range spec.Partition {
			tr, err := transformOf(p)
			if err != nil {
				return nil, err
			}
			f, ok := sc.FindFieldByName(p.Column)
			if !ok {
				return nil, fmt.Errorf("partition column %s is not a column", p.Column)
			}
			opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, partitionName(p), tr, sc, nil))
		}
		ps, err := iceberg.NewPartitionSpecOpts(opts...)
		if err != nil {
			return nil, fmt.Errorf("partition spec: %w", err)
		}
		tbl, err = s.cat.CreateTable(ctx, ident, sc,
			catalog.WithPartitionSpec(&ps),
			catalog.WithProperties(iceberg.Properties{
				table.ParquetCompressionKey: "zstd",
				"lima.managed":              "true",
			}))
		if err != nil && errors.Is(err, catalog.ErrTableAlreadyExists) {
			tbl, err = s.cat.LoadTable(ctx, ident)
		}
		if err != nil {
			return nil, fmt.Errorf("create table %s: %w", strings.Join(ident, "."), err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	t := &Table{s: s, ident: ident}
	sch := tbl.Schema()
	// The plan against the table's metadata: a difference becomes schema
	// and spec evolution in the transaction of the next commit (see
	// evolve.go); rows are staged under the evolved schema and spec.
	want := FieldsOf(spec)
	ev, err := Diff(tbl.Schema(), tbl.Spec(), want, spec.Partition)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", strings.Join(ident, "."), err)
	}
	if !ev.Empty() {
		tx := tbl.NewTransaction()
		if err := ev.Apply(tx, strings.Join(ident, "."), true); err != nil {
			return nil, fmt.Errorf("table %s: %w", strings.Join(ident, "."), err)
		}
		st, err := tx.StagedTable()
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", strings.Join(ident, "."), err)
		}
		t.pending = &pendingEvolution{ev: ev, want: want, part: spec.Partition, schema: st.Schema(), spec: st.Spec(), staged: st.Table}
		sch = st.Schema()
	}
	asc, err := table.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		return nil, err
	}
	t.arrow = asc
	return t, nil
}

// pendingEvolution is the evolution an open table's next commit applies.
type pendingEvolution struct {
	ev     *Evolution
	want   []plan.Field
	part   []plan.PartitionField
	schema *iceberg.Schema       // the evolved schema rows are staged under
	spec   iceberg.PartitionSpec // the evolved default spec
	staged *table.Table          // the table as the evolution leaves it
}

// Evolution is what the next commit changes in the table's schema and
// partitioning (nil: nothing).
func (t *Table) Evolution() *Evolution {
	if t.pending == nil {
		return nil
	}
	return t.pending.ev
}

// evolve adds the pending evolution to the commit's transaction, computed
// again against the table as it is now; the result must be the schema and
// spec the files were staged under. Only a commit that replaces every row
// may apply an incompatible change.
func (t *Table) evolve(tbl *table.Table, tx *table.Transaction, replace bool) error {
	pe := t.pending
	if pe == nil {
		return nil
	}
	name := strings.Join(t.ident, ".")
	ev, err := Diff(tbl.Schema(), tbl.Spec(), pe.want, pe.part)
	if err != nil {
		return err
	}
	if err := ev.Apply(tx, name, replace || tbl.CurrentSnapshot() == nil); err != nil {
		return err
	}
	st, err := tx.StagedTable()
	if err != nil {
		return err
	}
	if st.Schema().ID != pe.schema.ID || !st.Schema().Equals(pe.schema) || !st.Spec().Equals(pe.spec) {
		return fmt.Errorf("%w: the schema or partitioning of %s changed while this load was written; nothing of it was committed, run it again", sink.ErrCommitFailed, name)
	}
	return nil
}

// writeTable is the table rows are written into: as the pending evolution
// leaves it, else as it is.
func (t *Table) writeTable(ctx context.Context) (*table.Table, error) {
	if t.pending != nil {
		return t.pending.staged, nil
	}
	return t.s.cat.LoadTable(ctx, t.ident)
}

// Table is an open Iceberg table.
type Table struct {
	s       *Sink
	ident   table.Identifier
	arrow   *arrow.Schema
	pending *pendingEvolution
	// reads counts what key look-ups read (findkeys.go).
	reads keyReads
}

var (
	_ sink.Table         = (*Table)(nil)
	_ sink.Scanner       = (*Table)(nil)
	_ sink.RetiredReader = (*Table)(nil)
)

// Schema is the Arrow schema, with Iceberg field ids.
func (t *Table) Schema() *arrow.Schema { return t.arrow }

// Ident is the catalog identifier.
func (t *Table) Ident() table.Identifier { return t.ident }

func (t *Table) load(ctx context.Context) (*table.Table, error) {
	tbl, err := t.s.cat.LoadTable(ctx, t.ident)
	if err != nil {
		return nil, err
	}
	if t.s.opts.WrapCatalog != nil {
		inner := tbl
		tbl = table.New(inner.Identifier(), inner.Metadata(), inner.MetadataLocation(),
			func(ctx context.Context) (icebergio.IO, error) { return inner.FS(ctx) }, t.s.opts.WrapCatalog(t.s.cat))
	}
	return tbl, nil
}

// Load returns a fresh iceberg-go handle of the table.
func (t *Table) Load(ctx context.Context) (*table.Table, error) { return t.load(ctx) }

func commitOf(s *table.Snapshot) sink.Commit {
	c := sink.Commit{SnapshotID: s.SnapshotID}
	if s.Summary != nil {
		c.LoadID = s.Summary.Properties[sink.PropLoadID]
		c.RunID = s.Summary.Properties[sink.PropRunID]
		c.Watermark = s.Summary.Properties[sink.PropWatermark]
		c.Kind = s.Summary.Properties[sink.PropKind]
		c.Props = map[string]string{}
		for k, v := range s.Summary.Properties {
			if strings.HasPrefix(k, "lima.") {
				c.Props[k] = v
			}
		}
	}
	if c.Kind == "" {
		c.Kind = sink.KindLoad
	}
	return c
}

// findLive looks for a snapshot carrying loadID in the table's current
// state: the current snapshot and its ancestors back to (and including) the
// latest commit that replaced the table. A commit looks there before it
// (re)tries. A load id found only before that replace is history — the same
// plan and files loaded again after a plan changed and changed back — and
// taking it for this commit reported "loaded" while the table kept the other
// plan's schema and rows. Snapshots written before lima.replace existed are
// walked through: for them this is the whole lineage.
func findLive(tbl *table.Table, loadID string) (sink.Commit, bool) {
	meta := tbl.Metadata()
	for snap := meta.CurrentSnapshot(); snap != nil; {
		var props map[string]string
		if snap.Summary != nil {
			props = snap.Summary.Properties
		}
		if props[sink.PropLoadID] == loadID {
			return commitOf(snap), true
		}
		if props[sink.PropReplace] == "true" || snap.ParentSnapshotID == nil {
			break
		}
		snap = meta.SnapshotByID(*snap.ParentSnapshotID)
	}
	return sink.Commit{}, false
}

func findLoad(tbl *table.Table, loadID string) (sink.Commit, bool, error) {
	snaps := tbl.Metadata().Snapshots()
	for i := len(snaps) - 1; i >= 0; i-- {
		if snaps[i].Summary != nil && snaps[i].Summary.Properties[sink.PropLoadID] == loadID {
			return commitOf(&snaps[i]), true, nil
		}
	}
	// A load whose snapshot lima-tui maintain expired is still the
	// table's: its facts were carried forward into the table's properties.
	r, err := sink.ParseRetired(tbl.Properties()[sink.PropRetired])
	if err != nil {
		return sink.Commit{}, false, err
	}
	c, ok := r.Commit(loadID)
	return c, ok, nil
}

// Retired returns the facts of the snapshots lima-tui maintain expired
// (sink.PropRetired).
func (t *Table) Retired(ctx context.Context) (sink.Retired, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return sink.Retired{}, err
	}
	return sink.ParseRetired(tbl.Properties()[sink.PropRetired])
}

// FindLoad looks for a snapshot carrying loadID.
func (t *Table) FindLoad(ctx context.Context, loadID string) (sink.Commit, bool, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return sink.Commit{}, false, err
	}
	return findLoad(tbl, loadID)
}

// Current returns the current snapshot's commit.
func (t *Table) Current(ctx context.Context) (sink.Commit, bool, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return sink.Commit{}, false, err
	}
	s := tbl.CurrentSnapshot()
	if s == nil {
		return sink.Commit{}, false, nil
	}
	return commitOf(s), true, nil
}

// History returns the commits of the current snapshot's lineage, newest
// first.
func (t *Table) History(ctx context.Context) ([]sink.Commit, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return nil, err
	}
	var out []sink.Commit
	for s := tbl.CurrentSnapshot(); s != nil; {
		out = append(out, commitOf(s))
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return out, nil
}

// LastLoad walks back from the current snapshot to the newest load.
func (t *Table) LastLoad(ctx context.Context) (sink.Commit, bool, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return sink.Commit{}, false, err
	}
	for s := tbl.CurrentSnapshot(); s != nil; {
		c := commitOf(s)
		if c.Kind == sink.KindLoad && c.LoadID != "" {
			return c, true, nil
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return sink.Commit{}, false, nil
}

type staged struct {
	t     *Table
	files []iceberg.DataFile
	rows  int64
	bytes int64
	// writeID is in the name of every file of the staging (the data
	// files' write UUID, the delete files' prefix).
	writeID string
	// adopted: the files were staged by other processes (Adopt); a
	// discard keeps them for a later commit of the same load.
	adopted bool
}

func (s *staged) Rows() int64  { return s.rows }
func (s *staged) Files() int   { return len(s.files) }
func (s *staged) Bytes() int64 { return s.bytes }

func (s *staged) Discard(ctx context.Context) error {
	if s.adopted {
		s.files = nil
		return nil
	}
	tbl, err := s.t.load(ctx)
	if err != nil {
		return err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range s.files {
		if err := fs.Remove(f.FilePath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.files = nil
	if len(errs) == 0 {
		s.t.endStaging(ctx, s.writeID)
	}
	return errors.Join(errs...)
}

// Stage writes the batches into data files under the table's data folder.
// They are not visible until Commit.
func (t *Table) Stage(ctx context.Context, batches iter.Seq2[arrow.RecordBatch, error]) (sink.Staged, error) {
	tbl, err := t.writeTable(ctx)
	if err != nil {
		return nil, err
	}
	tbl = DataFileFault(tbl, t.s.cat) // crash tests only: unarmed, tbl itself
	st := &staged{t: t, writeID: t.s.opts.WriteID}
	if st.writeID == "" {
		st.writeID = uuid.NewString()
	}
	wid, err := uuid.Parse(st.writeID)
	if err != nil {
		return nil, fmt.Errorf("icesink: write id %q: %w", st.writeID, err)
	}
	if err := t.beginStaging(ctx, st.writeID); err != nil {
		return nil, err
	}
	for df, err := range table.WriteRecords(ctx, tbl, t.arrow, batches, table.WithWriteUUID(wid),
		table.WithTargetFileSize(t.s.opts.TargetFileSize), table.WithMaxWriteWorkers(2),
		// Bounded buffers: a few batches per writer and row groups of 32k
		// rows keep memory flat whatever the input size.
		table.WithRecordBatchBufferSize(4), table.WithParquetRowGroupLimit(32<<10)) {
		if err != nil {
			_ = st.Discard(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("write data files: %w", err)
		}
		st.files = append(st.files, df)
		st.rows += df.Count()
		st.bytes += df.FileSizeBytes()
	}
	return st, nil
}

// Commit makes the staged files visible in one snapshot.
func (t *Table) Commit(ctx context.Context, s sink.Staged, p sink.CommitProps) (sink.Commit, error) {
	return t.commit(ctx, s, p, nil)
}

// rowDelta is what a delta commit deletes: the rows whose key is in keys.
type rowDelta struct {
	keys sink.Keys
}

// commit is the commit loop. Every attempt makes exactly one snapshot:
//   - an append (AddDataFiles);
//   - a full refresh (p.Replace): every live data file AND every live
//     delete file of the table is replaced by the staged files;
//   - a delta (del != nil): position deletes for the live rows of the keys
//     (rows already deleted are not deleted again) and the staged rows, in
//     one RowDelta.
func (t *Table) commit(ctx context.Context, s sink.Staged, p sink.CommitProps, del *rowDelta) (sink.Commit, error) {
	st, ok := s.(*staged)
	if !ok || st.t != t {
		return sink.Commit{}, errors.New("icesink: staged files of another table")
	}
	if p.LoadID == "" {
		return sink.Commit{}, errors.New("icesink: a commit needs a load id")
	}
	kind := p.Kind
	if kind == "" {
		kind = sink.KindLoad
	}
	props := iceberg.Properties{sink.PropLoadID: p.LoadID, sink.PropRunID: p.RunID, sink.PropRows: fmt.Sprint(st.rows), sink.PropKind: kind}
	if p.Watermark != "" {
		props[sink.PropWatermark] = p.Watermark
	}
	if p.Replace {
		props[sink.PropReplace] = "true"
	}
	for k, v := range p.Extra {
		if !strings.HasPrefix(k, "lima.") {
			return sink.Commit{}, fmt.Errorf("icesink: extra property %q must start with \"lima.\"", k)
		}
		props[k] = v
	}
	// Delete files an attempt wrote; removed once that attempt is known
	// not to have committed.
	var written []string
	var wfs icebergio.IO
	dropWritten := func() {
		for _, f := range written {
			_ = wfs.Remove(f)
		}
		written = nil
	}
	var lastErr error
	for attempt := 1; attempt <= t.s.opts.MaxAttempts; attempt++ {
		if attempt > 1 {
			if err := sleepBackoff(ctx, t.s.opts.BaseBackoff, attempt-1); err != nil {
				return sink.Commit{}, err
			}
		}
		tbl, err := t.load(ctx)
		if err != nil {
			lastErr = err
			continue
		}
		// Look before (re)trying: the previous attempt may have been applied.
		if c, found := findLive(tbl, p.LoadID); found {
			c.AlreadyCommitted = true
			c.Attempts = attempt
			if del != nil {
				c.Deleted = deletedBy(tbl, p.LoadID)
			}
			return c, nil
		}
		dropWritten()
		fs, err := tbl.FS(ctx)
		if err != nil {
			lastErr = err
			continue
		}
		wfs = fs
		tx := tbl.NewTransaction()
		if err := t.evolve(tbl, tx, p.Replace); err != nil { // plan evolution (evolve.go)
			return sink.Commit{}, err
		}
		var deleted int64
		switch {
		case del != nil:
			fds, err := t.positionDeletes(ctx, tbl, del.keys)
			if err != nil {
				lastErr = err
				continue
			}
			var dfs []iceberg.DataFile
			for _, fd := range fds {
				df, err := writePositionDeletes(tbl, fs, fd, st.writeID)
				if err != nil {
					dropWritten()
					return sink.Commit{}, fmt.Errorf("write position deletes: %w", err)
				}
				written = append(written, df.FilePath())
				dfs = append(dfs, df)
				deleted += int64(len(fd.pos))
			}
			if len(dfs) == 0 && len(st.files) == 0 {
				return sink.Commit{}, fmt.Errorf("%w: the commit of %s deletes no row and adds none", sink.ErrNothingToCommit, strings.Join(t.ident, "."))
			}
			rd := tx.NewRowDelta(props).AddRows(st.files...).AddDeletes(dfs...)
			if err := rd.Commit(ctx); err != nil {
				dropWritten()
				return sink.Commit{}, fmt.Errorf("stage the row delta: %w", err)
			}
		case p.Replace && tbl.CurrentSnapshot() != nil:
			old, oldDeletes, err := liveFiles(fs, tbl.CurrentSnapshot())
			if err != nil {
				lastErr = err
				continue
			}
			if len(oldDeletes) > 0 {
				err = tx.ReplaceFiles(ctx, old, st.files, oldDeletes, props)
			} else {
				err = tx.ReplaceDataFilesWithDataFiles(ctx, old, st.files, props)
			}
			if err != nil {
				return sink.Commit{}, fmt.Errorf("stage replace: %w", err)
			}
		default:
			if err := tx.AddDataFiles(ctx, st.files, props); err != nil {
				return sink.Commit{}, fmt.Errorf("stage append: %w", err)
			}
		}
		ntbl, err := tx.Commit(ctx)
		if err == nil {
			written = nil
			snap := ntbl.CurrentSnapshot()
			if snap == nil || snap.Summary == nil || snap.Summary.Properties[sink.PropLoadID] != p.LoadID {
				// Nothing staged and nothing to delete: iceberg-go adds no
				// snapshot, and the previous one must not pass for this load.
				return sink.Commit{}, fmt.Errorf("%w: the commit of %s made no snapshot", sink.ErrNothingToCommit, strings.Join(t.ident, "."))
			}
			c := commitOf(snap)
			c.Attempts = attempt
			c.Deleted = deleted
			t.endStaging(ctx, st.writeID)
			return c, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	// The last attempt's outcome may be unknown: look once more.
	if tbl, err := t.load(context.WithoutCancel(ctx)); err == nil {
		if c, found := findLive(tbl, p.LoadID); found {
			c.AlreadyCommitted = true
			c.Attempts = t.s.opts.MaxAttempts
			if del != nil {
				c.Deleted = deletedBy(tbl, p.LoadID)
			}
			return c, nil
		}
		dropWritten()
	}
	if lastErr == nil {
		lastErr = errors.New("no attempt was made")
	}
	return sink.Commit{}, fmt.Errorf("%w: %s after %d attempts: %w", sink.ErrCommitFailed, strings.Join(t.ident, "."), t.s.opts.MaxAttempts, lastErr)
}

func sleepBackoff(ctx context.Context, base time.Duration, n int) error {
	d := base << min(n, 8)
	d = time.Duration(rand.Int64N(int64(d)) + int64(base)/2)
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// Scan reads a snapshot (0: current) back as Arrow batches.
func (t *Table) Scan(ctx context.Context, snapshotID int64, columns []string) (iter.Seq2[arrow.RecordBatch, error], error) {
	tbl, err := t.s.cat.LoadTable(ctx, t.ident)
	if err != nil {
		return nil, err
	}
	var opts []table.ScanOption
	if snapshotID != 0 {
		opts = append(opts, table.WithSnapshotID(snapshotID))
	}
	if len(columns) > 0 {
		opts = append(opts, table.WithSelectedFields(columns...))
	}
	_, it, err := tbl.Scan(opts...).ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	return it, nil
}

// ArrowType re-exports the Arrow type used for a plan type.
func ArrowType(t plan.Type) arrow.DataType { return clean.ArrowType(t) }
