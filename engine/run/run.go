// Package run loads the tables of a plan: source → clean → checks → sink,
// with one atomic commit per table per run and exact row accounting:
// rows_read = rows_loaded + rows_quarantined + rows_skipped.
package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.yaml.in/yaml/v3"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/keyset"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/internal/s3x"
)

// Statuses of a table load.
const (
	StatusLoaded        = "loaded"
	StatusAlreadyLoaded = "already_loaded"
	StatusNothingToLoad = "nothing_to_load"
	StatusFailed        = "failed"
	// StatusStaged: a stage-only life (Options.StageOnly) staged its rows
	// and committed nothing.
	StatusStaged = "staged"
)

// Skip reasons: the only reasons a row read is neither loaded nor held back.
const (
	SkipHeader         = "header"
	SkipBlank          = "blank_line"
	SkipBelowWatermark = "at_or_below_watermark"
)

// ErrErrorBudget marks a table whose held-back rows exceed its budget.
var ErrErrorBudget = errors.New("error budget exceeded")

// Rule ids of held-back rows besides clean's cell rules.
const (
	RuleMalformed = "malformed_row"
	RuleUnique    = "unique"
	RuleFile      = "unreadable_file"
)

// Options of a load.
type Options struct {
	// Workspace is the folder holding platform.yaml; relative source paths
	// resolve against it.
	Workspace  string
	Plan       *plan.Plan
	Sink       sink.Sink
	Quarantine Quarantine
	// Tables limits the run to these tables (all when empty).
	Tables []string
	// FullRefresh reloads even when the input was already loaded.
	FullRefresh bool
	RunID       string
	// BatchRows per Arrow record batch (default 8192).
	BatchRows int
	// Progress, when set, receives live counters.
	Progress *Progress
	Alloc    memory.Allocator
	// SampleRows used to infer untyped columns (default 10,000).
	SampleRows int
	// KnownFixes, when set, returns the fixes ops recorded for rows of a
	// table (from the exception ledger). A row that fails again exactly as
	// it did — same file, same bytes — is loaded with its recorded fix, so a
	// full reload keeps the rows that were fixed and replayed.
	KnownFixes func(ctx context.Context, table string) (map[FixKey]KnownFix, error)
	// Land, when set, is called once a table's load will run, before any
	// row is read: the raw/ layer copies the units there unchanged. An
	// error fails the table; nothing of it is committed.
	Land func(ctx context.Context, table, loadID string, src source.Source, units []source.Unit) error
	// LandExtract, when set, lands the extract of a database table (its
	// rows as read, written during the read to the temp file at path)
	// after the read succeeded and before the commit. An error fails the
	// table; nothing of it is committed. See dbextract.go.
	LandExtract func(ctx context.Context, table, loadID, path string, ex rawland.Extract) error
	// OnlyFiles limits a table's files to these names (a micro-batch of
	// the watcher); a table not in the map reads all its files.
	OnlyFiles map[string][]string
	// AppendOnly makes full-mode tables append (mode micro_batch) and
	// records each file's name, size and sha256 in the commit (PropFiles).
	AppendOnly bool
	// LoadID, when set, names the load instead of the input's fingerprint:
	// a distributed load's shards share the driver's load id (shard.go).
	LoadID string
	// StageOnly ends every table's life after the stage and the
	// conservation guard: nothing is committed, the staged files are kept
	// (TableResult.Staged) and the held rows stay in the quarantine. A
	// distributed worker's shard (shard.go); file sources in mode full only.
	StageOnly bool
}

// FixKey identifies a source row by its file and exact bytes.
type FixKey struct {
	Unit string
	Raw  [32]byte
}

// NewFixKey builds the key of a row.
func NewFixKey(unit string, raw []byte) FixKey { return FixKey{Unit: unit, Raw: sha256.Sum256(raw)} }

// KnownFix is a recorded fix.
type KnownFix struct {
	ExceptionID int64
	Status      string
	Fixed       map[string]string
}

// FixApplied is the normalization name of a recorded fix applied on load.
const FixApplied = "fixed value from the exception ledger"

// FileResult is what happened to one input file.
type FileResult struct {
	Name         string `json:"name"`
	OriginalName string `json:"original_name,omitempty"`
	Bytes        int64  `json:"bytes"`
	RowsRead     int64  `json:"rows_read"`
	Status       string `json:"status"` // read, unreadable
	Error        string `json:"error,omitempty"`
}

// TableResult is the outcome of one table.
type TableResult struct {
	Name            string
	Mode            string
	LoadID          string
	Status          string
	Commit          sink.Commit
	WatermarkBefore string
	WatermarkAfter  string
	RowsRead        int64
	RowsLoaded      int64
	RowsQuarantined int64
	RowsSkipped     int64
	SkippedBy       map[string]int64
	QuarantinedBy   map[string]int64
	// HeldByOwner counts held-back rows and files by owner.
	HeldByOwner    map[string]int64
	Files          []FileResult
	FileExceptions []Exception
	// Exceptions are the first held-back rows (up to 100) for the report.
	Exceptions     []Exception
	Normalizations []clean.Normalization
	Source         Stats
	// SourceTotals are a database source's own count and sums (nil for
	// files).
	SourceTotals *SourceTotals
	// Findings are decisions taken from the data that a person should see
	// (a number convention chosen or left ambiguous).
	Findings []string
	// AppliedFixes are the ids of exceptions whose recorded fix was applied
	// to a row of this load.
	AppliedFixes []int64
	StagedFiles  int
	StagedBytes  int64
	InputBytes   int64
	Started      time.Time
	Finished     time.Time
	// Phases: where the wall time between Started and Finished went
	// (phases.go); Gate4 is added by whoever reconciles the table.
	Phases Phases
	Err    error
	// Columns and Types are the resolved schema; Keys the key columns.
	Columns  []string
	Types    []plan.Type
	Required []bool
	Keys     []string
	// Partition source columns.
	PartitionColumns []string
	Table            sink.Table
	// Upsert is what a load of mode upsert did (nil otherwise).
	Upsert *UpsertResult
	// ReadNote says how a database table was read when parallel reads
	// were asked for (in how many ranges, or why serially).
	ReadNote string
	// ExceptionCounts: what the run did to the table's exception queue
	// (ledgerq.go).
	ExceptionCounts
	// Staged is what a stage-only life staged (Options.StageOnly), kept
	// for another process's commit.
	Staged sink.Staged
	// Casting fingerprints how the rows were cleaned and cast (each
	// column's type, formats, normalizations, null tokens, currency — some
	// chosen from the input's sample): the shards of one load must agree.
	Casting string
}

// Balanced reports whether the conservation identity holds.
func (t *TableResult) Balanced() bool {
	return t.RowsRead == t.RowsLoaded+t.RowsQuarantined+t.RowsSkipped
}

// Result of a run.
type Result struct {
	RunID    string
	Started  time.Time
	Finished time.Time
	Tables   []*TableResult
}

// Progress holds live counters, safe for concurrent reads.
type Progress struct {
	mu     sync.Mutex
	tables map[string]*TableProgress
	order  []string
}

// TableProgress are one table's live counters.
type TableProgress struct {
	Table       string
	Phase       atomic.Value // string
	RowsRead    atomic.Int64
	Loaded      atomic.Int64
	Quarantined atomic.Int64
	Bytes       atomic.Int64
	TotalBytes  atomic.Int64
	// start and end: when the table's load began and ended (unix nanos; 0:
	// not yet). A queued table has neither.
	start, end atomic.Int64
}

// MarkStarted records when the table's work began (the first call wins).
func (tp *TableProgress) MarkStarted(t time.Time) { tp.start.CompareAndSwap(0, t.UnixNano()) }

// MarkFinished records when the table's load ended (the first call wins).
func (tp *TableProgress) MarkFinished(t time.Time) { tp.end.CompareAndSwap(0, t.UnixNano()) }

// StartedAt is when the table's work began; zero while it is queued.
func (tp *TableProgress) StartedAt() time.Time { return unixNano(tp.start.Load()) }

// FinishedAt is when the table's load ended; zero while it is going.
func (tp *TableProgress) FinishedAt() time.Time { return unixNano(tp.end.Load()) }

func unixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// PhaseQueued is the phase of a table the run has not started yet.
const PhaseQueued = "queued"

// entry returns the table's counters, registering it (queued) if new.
func (p *Progress) entry(name string) *TableProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tables == nil {
		p.tables = map[string]*TableProgress{}
	}
	tp := p.tables[name]
	if tp == nil {
		tp = &TableProgress{Table: name}
		tp.Phase.Store(PhaseQueued)
		p.tables[name] = tp
		p.order = append(p.order, name)
	}
	return tp
}

// table is the table's counters as its load starts.
func (p *Progress) table(name string) *TableProgress {
	if p == nil {
		return &TableProgress{Table: name}
	}
	tp := p.entry(name)
	tp.Phase.Store("waiting")
	tp.MarkStarted(time.Now())
	return tp
}

// Queue registers tables the run will work on, in that order, as queued,
// so that every one of them is visible before it starts. Names already
// registered keep their place.
func (p *Progress) Queue(names ...string) {
	if p == nil {
		return
	}
	for _, n := range names {
		p.entry(n)
	}
}

// lookup returns a registered table's counters, or nil.
func (p *Progress) lookup(name string) *TableProgress {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tables[name]
}

// SetPhase records the phase of a registered table for work after (or
// besides) its load: gate 4's re-read, a mart's build. The first phase set
// starts its clock. A table never registered is left out.
func (p *Progress) SetPhase(name, phase string) {
	tp := p.lookup(name)
	if tp == nil {
		return
	}
	tp.Phase.Store(phase)
	tp.MarkStarted(time.Now())
}

// Finish records a registered table's last phase and ends its clock.
func (p *Progress) Finish(name, phase string) {
	tp := p.lookup(name)
	if tp == nil {
		return
	}
	tp.MarkStarted(time.Now())
	tp.MarkFinished(time.Now())
	tp.Phase.Store(phase)
}

// Snapshot returns the tables' progress in the order they were registered.
func (p *Progress) Snapshot() []*TableProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*TableProgress, 0, len(p.order))
	for _, n := range p.order {
		out = append(out, p.tables[n])
	}
	return out
}

// RunOrder is the tables a run of p works on, in the order it works on
// them: the base tables (only those in only, when given) in load order,
// then every mart all of whose inputs are among them.
func RunOrder(p *plan.Plan, only []string) []string {
	var base []string
	for _, n := range p.TableNames() {
		t := p.Tables[n]
		if (t.Type != "" && t.Type != "base") || (len(only) > 0 && !slices.Contains(only, n)) {
			continue
		}
		base = append(base, n)
	}
	out := loadOrder(p, base)
	for _, n := range p.TableNames() {
		t := p.Tables[n]
		if !t.Built() {
			continue
		}
		all := true
		for _, f := range t.From {
			all = all && slices.Contains(base, f)
		}
		if all {
			out = append(out, n)
		}
	}
	return out
}

// Load runs the plan's tables one after the other.
func Load(ctx context.Context, o Options) (*Result, error) {
	if o.Plan == nil || o.Sink == nil || o.Quarantine == nil {
		return nil, errors.New("run: plan, sink and quarantine are required")
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 8192
	}
	if o.SampleRows <= 0 {
		o.SampleRows = 10000
	}
	if o.Alloc == nil {
		o.Alloc = memory.DefaultAllocator
	}
	names := o.Plan.TableNames()
	if len(o.Tables) > 0 {
		for _, t := range o.Tables {
			if _, ok := o.Plan.Tables[t]; !ok {
				return nil, fmt.Errorf("run: no table %q in the plan (tables: %s)", t, strings.Join(names, ", "))
			}
		}
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(o.Tables, n) })
	}
	res := &Result{RunID: o.RunID, Started: time.Now().UTC()}
	order := loadOrder(o.Plan, names)
	for _, name := range order {
		if t := o.Plan.Tables[name]; t.Type == "" || t.Type == "base" {
			o.Progress.Queue(name)
		}
	}
	for _, name := range order {
		t := o.Plan.Tables[name]
		if t.Type != "" && t.Type != "base" {
			continue
		}
		var tr *TableResult
		if o.StageOnly {
			tr = stageShard(ctx, o, name, t) // shard.go
		} else if t.Load.Mode == plan.ModeCDC {
			tr = loadCDC(ctx, o, name, t)
		} else {
			tr = loadTable(ctx, o, name, t)
		}
		res.Tables = append(res.Tables, tr)
		if ctx.Err() != nil {
			break
		}
	}
	res.Finished = time.Now().UTC()
	return res, nil
}

type resolved struct {
	// findings are decisions taken from the profile that a person should see.
	findings []string
	cols     []string
	srcNames []string
	types    []plan.Type
	required []bool
	specs    []clean.ColumnSpec
}

// sourceFor opens the source of a table and returns the globs (or the one
// table name) that select its units. Close a database source with
// closeSource when done.
func (o *Options) sourceFor(ctx context.Context, t *plan.Table) (source.Source, []string, error) {
	if t.Source == nil {
		return nil, nil, errors.New("table has no source")
	}
	s, ok := o.Plan.Sources[t.Source.Name]
	if !ok || s == nil {
		return nil, nil, fmt.Errorf("unknown source %q", t.Source.Name)
	}
	switch {
	case s.Kind == plan.SourceFiles && s3x.IsURI(s.Path):
		src, err := s3src.Open(ctx, s.Path) // objects below an S3 prefix
		if err != nil {
			return nil, nil, err
		}
		return src, t.Source.Files, nil
	case s.Kind == plan.SourceFiles:
		root := s.Path
		if !filepath.IsAbs(root) {
			root = filepath.Join(o.Workspace, root)
		}
		return files.New(root), t.Source.Files, nil
	case s.IsDatabase():
		d, err := openDatabase(ctx, o.Workspace, t.Source.Name, s, t.Source)
		if err != nil {
			return nil, nil, err
		}
		return d, []string{d.unit}, nil
	case s.IsDynamoDB():
		return openDynamo(ctx, o.Plan, t.Source.Name, s, t.Source)
	}
	return nil, nil, fmt.Errorf("source %q: kind %q is not supported", t.Source.Name, s.Kind)
}

// closeSource closes a source that holds a connection (a database).
func closeSource(src source.Source) {
	if c, ok := src.(io.Closer); ok {
		c.Close()
	}
}

func sourceOptions(p *plan.Plan, t *plan.Table, cols []string) source.Options {
	so := source.Options{Format: t.Source.Format, Header: t.Source.CSV.Header, Columns: cols, Encoding: t.Source.Encoding, MaxRecordBytes: p.ETL.MaxRecordBytes}
	if so.Encoding == "" {
		if s := p.Sources[t.Source.Name]; s != nil {
			so.Encoding = s.Encoding
		}
	}
	if d := t.Source.CSV.Delimiter; d != "" {
		if d == `\t` || d == "tab" {
			so.Delimiter = '\t'
		} else {
			so.Delimiter = []rune(d)[0]
		}
	}
	if q := t.Source.CSV.Quote; q != "" {
		so.Quote = []rune(q)[0]
	}
	return so
}

// loadID fingerprints the input: the table's plan, and each file's name,
// size and modification time. The same input gives the same load id, so a
// rerun finds its own snapshot and adds nothing.
func loadID(name, planHash string, units []source.Unit, fullRefresh bool, runID string) string {
	h := sha256.New()
	fmt.Fprintf(h, "table=%s\nplan=%s\n", name, planHash)
	for _, u := range units {
		if u.ETag != "" { // an object: key, size and ETag (S3)
			fmt.Fprintf(h, "%s\x00%d\x00etag:%s\n", u.Name, u.Size, u.ETag)
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", u.Name, u.Size, u.ModTime)
	}
	if fullRefresh {
		fmt.Fprintf(h, "refresh=%s\n", runID)
	}
	return "ld-" + hex.EncodeToString(h.Sum(nil))[:20]
}

// tableHash fingerprints what of a table's plan shapes its rows. YAML
// with omitempty, not %v or JSON: a pointer field (a check's min) must hash
// by value, not by address, and a field added to the plan in a later Lima
// must not change the hash of plans that do not use it (which would reload
// every table once after an upgrade).
func tableHash(p *plan.Plan, name string) string {
	t := p.Tables[name]
	b, err := yaml.Marshal(struct {
		Source         *plan.TableSource `yaml:"source,omitempty"`
		Columns        []plan.Column     `yaml:"columns,omitempty"`
		Partition      []string          `yaml:"partition,omitempty"`
		Load           any               `yaml:"load,omitempty"`
		Checks         []plan.Check      `yaml:"checks,omitempty"`
		ControlColumns []string          `yaml:"control_columns,omitempty"`
	}{t.Source, t.Columns, t.Partition, t.Load, t.Checks, t.ControlColumns})
	if err != nil {
		panic(err) // plain data always marshals
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func loadTable(ctx context.Context, o Options, name string, t *plan.Table) *TableResult {
	lc := newLifecycle(name, t.Mode(), o.Progress.table(name))
	return lc.live(ctx, &fileLoad{lifecycle: lc, pendingLoad: pendingLoad{o: &o, res: lc.tr}, o: o, name: name, t: t})
}

// pendingLoad is the ledger side of a load that holds exceptions in the
// quarantine under its load id: published with the commit, dropped by an
// abort.
type pendingLoad struct {
	o   *Options
	res *TableResult
}

func (p pendingLoad) dropPending(ctx context.Context) {
	_ = p.o.Quarantine.Discard(ctx, p.res.Name, p.res.LoadID)
}

func (p pendingLoad) publish(ctx context.Context) error {
	return p.o.Quarantine.Publish(ctx, p.res.Name, p.res.LoadID)
}

// land copies the units of the load to raw/ unchanged, before any row is read.
func (p pendingLoad) land(ctx context.Context, prog *TableProgress, src source.Source, units []source.Unit) error {
	if p.o.Land == nil {
		return nil
	}
	prog.Phase.Store("landing raw")
	if err := p.o.Land(ctx, p.res.Name, p.res.LoadID, src, units); err != nil {
		return fmt.Errorf("raw/ landing: %w", err)
	}
	return nil
}

// fileLoad is the life of a load of files, objects or a database table
// (every mode but change capture).
type fileLoad struct {
	*lifecycle
	pendingLoad
	o     Options
	name  string
	t     *plan.Table
	src   source.Source
	isDB  bool
	units []source.Unit
	rs    *resolved
	tbl   sink.Table
	l     *loader
}

func (f *fileLoad) open(ctx context.Context) (bool, error) {
	o, t, tr, prog := f.o, f.t, f.tr, f.prog
	src, globs, err := o.sourceFor(ctx, t)
	if err != nil {
		return false, err
	}
	f.src = src
	f.onClose(func() { closeSource(src) })
	_, f.isDB = src.(*dbSource)
	if lv, ok := src.(source.Live); ok && lv.Live() {
		f.isDB = true // a live table (DynamoDB): read afresh every run, nothing to land
	}
	prog.Phase.Store("listing")
	units, err := src.List(ctx, globs)
	if err != nil {
		return false, fmt.Errorf("list %s: %w", t.Source.Name, err)
	}
	if only, ok := o.OnlyFiles[f.name]; ok {
		units = slices.DeleteFunc(units, func(u source.Unit) bool { return !slices.Contains(only, u.Name) })
	}
	f.units = units
	if o.AppendOnly && tr.Mode == plan.ModeFull {
		tr.Mode = ModeMicroBatch
	}
	for _, u := range units {
		tr.InputBytes += u.Size
	}
	prog.TotalBytes.Store(tr.InputBytes)

	if f.rs, err = resolveColumns(ctx, o, t, src, units); err != nil {
		return false, err
	}
	if lo, ok := src.(interface{ LeftOut() []string }); ok {
		f.rs.findings = append(f.rs.findings, lo.LeftOut()...) // pipes, devices, links outside
	}
	for _, p := range t.Partition {
		pf, err := plan.ParsePartition(p)
		if err == nil {
			tr.PartitionColumns = append(tr.PartitionColumns, pf.Column)
		}
	}
	if f.tbl, err = openTable(ctx, o, f.name, t, f.rs, tr, prog); err != nil {
		return false, err
	}

	// A database table has no size or modification time to fingerprint:
	// every run reads it afresh (a full load replaces the table's files).
	tr.LoadID = loadID(f.name, tableHash(o.Plan, f.name), units, o.FullRefresh || f.isDB, o.RunID)
	if o.LoadID != "" {
		tr.LoadID = o.LoadID
	}
	if f.cur, f.hasCur, err = f.tbl.Current(ctx); err != nil {
		return false, err
	}
	if f.hasCur {
		tr.WatermarkBefore = f.cur.Watermark
	}
	// Rerun of the same input: the load is already in the table.
	if o.FullRefresh {
		return false, nil
	}
	var found bool
	var c sink.Commit
	if tr.Mode == "full" {
		// Replays of fixed exceptions append to a full table without
		// changing what its last load was.
		last, ok, err := f.tbl.LastLoad(ctx)
		if err != nil {
			return false, err
		}
		found, c = ok && last.LoadID == tr.LoadID, last
	} else if c, found, err = f.tbl.FindLoad(ctx, tr.LoadID); err != nil {
		return false, err
	}
	if !found {
		return false, nil
	}
	c.AlreadyCommitted = true
	tr.Commit = c
	tr.Status = StatusAlreadyLoaded
	tr.WatermarkAfter = c.Watermark
	for _, u := range units {
		tr.Files = append(tr.Files, FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "already loaded"})
	}
	return true, nil
}

func (f *fileLoad) stage(ctx context.Context) error {
	o, t, tr, prog, rs, tbl, src, units := f.o, f.t, f.tr, f.prog, f.rs, f.tbl, f.src, f.units
	if !f.isDB {
		t0 := time.Now()
		err := f.land(ctx, prog, src, units)
		f.st.land = time.Since(t0)
		if err != nil {
			return err
		}
	}
	l, err := newLoader(ctx, o, tr, t, rs, tbl, prog)
	if err != nil {
		return err
	}
	f.l = l
	l.workers = castWorkers(o.Plan)
	f.onClose(func() { l.caster.Release() })
	f.onClose(l.closeKeys)
	f.onClose(func() { l.extract.discard() })
	if o.KnownFixes != nil {
		if l.fixes, err = o.KnownFixes(ctx, f.name); err != nil {
			return fmt.Errorf("read the recorded fixes: %w", err)
		}
	}
	if err := l.prepareDB(ctx, src, tbl); err != nil {
		return err
	}
	if keepsOrdinaryHistory(t) {
		if l.hist, err = startHistory(ctx, o, f.name, rs, tr.LoadID); err != nil {
			return fmt.Errorf("open the history of %s: %w", f.name, err)
		}
	}

	// Read and cast on this goroutine's child; the sink consumes batches
	// from a bounded channel, so memory stays flat whatever the input size.
	batches := make(chan arrow.RecordBatch, 4)
	readErr := make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var readerEnd time.Time // written before close(batches), read after it
	go func() {
		defer close(batches)
		defer func() { readerEnd = time.Now() }()
		defer func() {
			// A bug must fail this table with a clear error, not take the
			// process (and the other tables' commits) down.
			if r := recover(); r != nil {
				readErr <- fmt.Errorf("internal error while reading %s: %v", f.name, r)
			}
		}()
		so := sourceOptions(o.Plan, t, rs.srcNames)
		for _, typ := range rs.types {
			so.ColumnTypes = append(so.ColumnTypes, typ.String())
		}
		readErr <- l.readAll(rctx, src, units, so, batches)
	}()
	prog.Phase.Store("loading")
	// The writer's busy time: Stage's wall time less its waits for the
	// next batch.
	var idle time.Duration
	stageStart := time.Now()
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for {
			w := time.Now()
			b, ok := <-batches
			idle += time.Since(w)
			if !ok {
				return
			}
			if !yield(b, nil) {
				b.Release()
				cancel()
				for b := range batches {
					b.Release()
				}
				return
			}
		}
	}
	staged, stageErr := tbl.Stage(ctx, seq)
	stageEnd := time.Now()
	f.staged = staged
	cancel()
	for b := range batches { // drain if Stage stopped early
		b.Release()
	}
	rerr := <-readErr
	f.st.read, f.st.castCheck, f.st.writeWait = l.st.read, l.st.castCheck, l.st.writeWait
	f.st.writeBusy = max(0, stageEnd.Sub(stageStart)-idle)
	if tail := stageEnd.Sub(readerEnd); tail > 0 { // the writer's tail after the last batch
		f.st.writeWait += tail
	}
	if l.hist != nil {
		hstaged, herr := l.hist.finish()
		f.history = &stagedHistory{tbl: l.hist.tbl, staged: hstaged, props: sink.CommitProps{LoadID: tr.LoadID, RunID: o.RunID}}
		stageErr = errors.Join(stageErr, herr)
	}
	if err := errors.Join(rerr, stageErr); err != nil {
		return err
	}
	tr.Source = l.stats.finish()
	l.finishTotals()
	tr.Normalizations = l.caster.Normalizations()
	for _, c := range slices.Sorted(maps.Keys(l.fixCnt)) { // sorted by column: the same report every run
		tr.Normalizations = append(tr.Normalizations, clean.Normalization{Column: c, Fix: FixApplied, Count: l.fixCnt[c]})
	}
	tr.RowsLoaded = staged.Rows()
	f.want = tr.Source.Rows
	tr.StagedFiles, tr.StagedBytes = staged.Files(), staged.Bytes()
	// A full refresh replaces the table: its watermark restarts from what
	// this read saw (none when it saw no row).
	tr.WatermarkAfter = tr.WatermarkBefore
	if o.FullRefresh {
		tr.WatermarkAfter = ""
	}
	if l.wmSet {
		tr.WatermarkAfter = clean.FormatCell(rs.types[l.wmCol], l.wm)
	}
	return nil
}

// budgetVerdict is the error budget of table t: above it the load is
// refused (nothing committed, the exceptions kept for inspection).
func budgetVerdict(p *plan.Plan, t *plan.Table, tr *TableResult, name string) (verdict, error) {
	if count, share, ok, err := p.Budget(t); err != nil {
		return verdict{}, err
	} else if ok {
		data := tr.RowsLoaded + tr.RowsQuarantined
		over := (share == 0 && tr.RowsQuarantined > count) || (share > 0 && data > 0 && float64(tr.RowsQuarantined) > share*float64(data))
		if over {
			limit := fmt.Sprintf("%d rows", count)
			if share > 0 {
				limit = fmt.Sprintf("%g%% of %d data rows = %.1f rows", share*100, data, share*float64(data))
			}
			return verdict{refuse: fmt.Errorf("%w: %d rows held back, above the error budget of %s; nothing of %s was committed, the exceptions are kept for inspection",
				ErrErrorBudget, tr.RowsQuarantined, limit, name)}, nil
		}
	}
	return verdict{}, nil
}

// replaces: a full load or a full refresh replaces the table's rows.
func (f *fileLoad) replaces() bool { return f.tr.Mode == plan.ModeFull || f.o.FullRefresh }

func (f *fileLoad) check(ctx context.Context) (verdict, error) {
	tr, l := f.tr, f.l
	if err := l.finishDB(ctx, f.tbl); err != nil {
		return verdict{}, err
	}
	// Nothing to add and nothing to replace (every row held back, or no
	// rows, on a table that has no snapshot yet; or an append of nothing):
	// no snapshot is made, and the exceptions are published now — they
	// are the whole outcome of this load.
	if f.staged.Rows() == 0 && (!f.replaces() || !f.hasCur) && !l.pendingDeletes() {
		return verdict{noSnapshot: StatusNothingToLoad}, nil
	}
	// The error budget: above it nothing of the table is committed; the
	// exceptions are kept (published) for inspection.
	if v, err := budgetVerdict(f.o.Plan, f.t, tr, f.name); err != nil || v.refuse != nil {
		return v, err
	}
	// The database extract lands before anything is committed.
	return verdict{}, l.landExtract(ctx)
}

func (f *fileLoad) commit(ctx context.Context) (sink.Commit, error) {
	o, tr := f.o, f.tr
	var extra map[string]string
	// The files' identities go with the rows, so a watcher started later
	// does not load them again (bounded: the summary lives in the metadata).
	if !f.isDB && !o.AppendOnly && len(f.units) <= MaxRecordedFiles {
		extra, _ = filesProp(f.units) // best effort: the load does not depend on it
	}
	if o.AppendOnly {
		var err error
		if extra, err = filesProp(f.units); err != nil {
			return sink.Commit{}, err
		}
	}
	return f.l.commit(ctx, f.tbl, f.staged, sink.CommitProps{LoadID: tr.LoadID, RunID: o.RunID, Watermark: tr.WatermarkAfter, Replace: f.replaces(), Extra: extra})
}

func (f *fileLoad) settle(ctx context.Context, committed bool) error {
	err := f.publish(ctx)
	if err != nil && committed {
		return fmt.Errorf("committed snapshot %d but publishing its exceptions failed: %w", f.tr.Commit.SnapshotID, err)
	}
	return err
}

// tableSpec is the sink's description of a plan table.
func tableSpec(p *plan.Plan, name string, t *plan.Table, rs *resolved) (sink.TableSpec, error) {
	spec := sink.TableSpec{Name: name, Namespace: p.Namespace(), Types: rs.types, Required: rs.required}
	for i, c := range rs.cols {
		col, _ := t.Column(c)
		pc := plan.Column{Name: c}
		if col != nil {
			pc = *col
		}
		pc.Type = rs.types[i].String()
		spec.Columns = append(spec.Columns, pc)
	}
	for _, ps := range t.Partition {
		pf, err := plan.ParsePartition(ps)
		if err != nil {
			return spec, err
		}
		spec.Partition = append(spec.Partition, pf)
	}
	return spec, nil
}

// referenceSets reads, for each references check of t, the values of the
// referenced column from that table's current snapshot in the lake.
func referenceSets(ctx context.Context, o Options, t *plan.Table) (clean.RefSets, error) {
	refs := clean.RefSets{}
	for _, ch := range t.Checks {
		if ch.Rule != plan.RuleReferences {
			continue
		}
		if _, done := refs[ch.References]; done {
			continue
		}
		name, col, _ := strings.Cut(ch.References, ".")
		rt, ok := o.Plan.Tables[name]
		if !ok {
			return nil, fmt.Errorf("references %s: no table %s in the plan", ch.References, name)
		}
		src, globs, err := o.sourceFor(ctx, rt)
		if err != nil {
			return nil, err
		}
		units, err := src.List(ctx, globs)
		if err != nil {
			closeSource(src)
			return nil, err
		}
		rs, err := resolveColumns(ctx, o, rt, src, units)
		closeSource(src)
		if err != nil {
			return nil, err
		}
		spec, err := tableSpec(o.Plan, name, rt, rs)
		if err != nil {
			return nil, err
		}
		tbl, err := o.Sink.OpenTable(ctx, spec)
		if err != nil {
			return nil, err
		}
		if _, ok, err := tbl.Current(ctx); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("check references %s: table %s has not been loaded yet; load it first (it is ordered first when both are in the run)", ch.References, name)
		}
		sc, ok := tbl.(sink.Scanner)
		if !ok {
			return nil, fmt.Errorf("check references %s: the sink cannot read %s back", ch.References, name)
		}
		it, err := sc.Scan(ctx, 0, []string{col})
		if err != nil {
			return nil, err
		}
		set := map[string]struct{}{}
		for rec, err := range it {
			if err != nil {
				return nil, err
			}
			a := rec.Column(0)
			for r := 0; r < a.Len(); r++ {
				if !a.IsNull(r) {
					set[formatArrow(a, r)] = struct{}{}
				}
			}
			rec.Release()
		}
		refs[ch.References] = set
	}
	return refs, nil
}

// loadOrder puts tables after the tables their references checks read.
func loadOrder(p *plan.Plan, names []string) []string {
	placed := map[string]bool{}
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	var out []string
	for len(out) < len(names) {
		progress := false
		for _, n := range names {
			if placed[n] {
				continue
			}
			ready := true
			for _, ch := range p.Tables[n].Checks {
				if ch.Rule == plan.RuleReferences {
					dep, _, _ := strings.Cut(ch.References, ".")
					if in[dep] && !placed[dep] && dep != n {
						ready = false
					}
				}
			}
			if ready {
				placed[n] = true
				out = append(out, n)
				progress = true
			}
		}
		if !progress { // a cycle: keep the remaining ones in name order
			for _, n := range names {
				if !placed[n] {
					placed[n] = true
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// resolveColumns decides the columns and types: the plan's, inferring any
// missing type from a sample of up to SampleRows data rows across files.
func resolveColumns(ctx context.Context, o Options, t *plan.Table, src source.Source, units []source.Unit) (*resolved, error) {
	rs := &resolved{}
	// A database says its columns' types: they are taken from discovery,
	// never inferred from a sample.
	var dbTypes map[string]string
	var dbCols []string
	if d, ok := src.(*dbSource); ok {
		cols, types, findings, err := d.describeTable(ctx)
		if err != nil {
			return nil, err
		}
		dbCols, dbTypes = cols, map[string]string{}
		for i, c := range cols {
			dbTypes[c] = types[i]
		}
		rs.findings = append(rs.findings, findings...)
	} else if ty, ok := src.(source.Typed); ok {
		// A source that types its own values (DynamoDB): its types, asked
		// for only when the plan leaves some out (a profile reads items).
		dbCols, dbTypes = []string{}, map[string]string{}
		untyped := len(t.Columns) == 0
		for _, c := range t.Columns {
			untyped = untyped || c.Type == ""
			dbCols = append(dbCols, c.SourceName)
			if c.SourceName == "" {
				dbCols[len(dbCols)-1] = c.Name
			}
		}
		if untyped && len(units) > 0 {
			cols, types, findings, err := ty.ColumnTypes(ctx, units[0])
			if err != nil {
				return nil, err
			}
			dbCols = cols
			for i, c := range cols {
				dbTypes[c] = types[i]
			}
			rs.findings = append(rs.findings, findings...)
		}
	}
	srcNames := func(c plan.Column) string {
		if c.SourceName != "" {
			return c.SourceName
		}
		return c.Name
	}
	needInfer := len(t.Columns) == 0
	for _, c := range t.Columns {
		if c.Type == "" {
			needInfer = true
		}
		// The decimal separator of a decimal column is chosen from the
		// sample, never row by row.
		if typ, err := plan.ParseType(c.Type); err == nil && (typ.Kind == plan.Decimal || typ.Kind == plan.Double) && !slices.Contains(c.Normalize, "decimal_comma") {
			needInfer = true
		}
	}
	var samples map[string][]string
	var header []string
	if dbTypes != nil {
		needInfer, header = false, dbCols
	}
	if needInfer {
		var err error
		header, samples, err = sample(ctx, src, units, sourceOptions(o.Plan, t, nil), o.SampleRows)
		if err != nil {
			return nil, err
		}
	}
	cols := t.Columns
	if len(cols) == 0 {
		for _, h := range header {
			cols = append(cols, plan.Column{Name: sanitizeName(h), SourceName: h})
		}
		if len(cols) == 0 {
			return nil, errors.New("no columns in the plan and none found in the source")
		}
	}
	required := map[string]bool{}
	for _, c := range t.RequiredColumns() {
		required[c] = true
	}
	var nullTokens []string
	if t.Source != nil && t.Source.NullTokens != nil {
		nullTokens = t.Source.NullTokens
	}
	if dbTypes != nil {
		// SQL NULL is the only null: an empty string stays a string.
		nullTokens = []string{}
	}
	// Naive timestamps are read in the source's time zone.
	tz := ""
	if t.Source != nil {
		tz = t.Source.Timezone
		if s := o.Plan.Sources[t.Source.Name]; tz == "" && s != nil {
			tz = s.Timezone
		}
	}
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil || tz == "Local" {
			return nil, fmt.Errorf("timezone %q is not a known IANA time zone (e.g. Asia/Seoul, UTC)", tz)
		}
		loc = l
	}
	for _, c := range cols {
		var typ plan.Type
		formats := c.Formats
		if c.Type != "" {
			var err error
			if typ, err = plan.ParseType(c.Type); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
		} else if dbTypes != nil {
			dt, ok := dbTypes[srcNames(c)]
			if !ok {
				return nil, fmt.Errorf("column %s: no readable column %s in the source table (found: %s)", c.Name, srcNames(c), strings.Join(dbCols, ", "))
			}
			var err error
			if typ, err = plan.ParseType(dt); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
		} else {
			inf := clean.Infer(samples[srcNames(c)], nullTokens)
			typ = inf.Type
			if len(formats) == 0 {
				formats = inf.Formats
			}
		}
		if dbTypes != nil && len(formats) == 0 {
			formats = canonicalFormats(typ)
		}
		normalize := slices.Clone(c.Normalize)
		// Key columns are compared as NFC text: NFD input (as macOS writes
		// Korean) must not make a second key.
		if t.IsKey(c.Name) && typ.Kind == plan.String && !slices.Contains(normalize, "nfc") {
			normalize = append([]string{"nfc"}, normalize...)
		}
		if (typ.Kind == plan.Decimal || typ.Kind == plan.Double) && !slices.Contains(normalize, "decimal_comma") && samples != nil {
			d := clean.DetectNumberStyle(samples[srcNames(c)])
			switch {
			case d.Ambiguous:
				rs.findings = append(rs.findings, fmt.Sprintf("column %s fits both number conventions (%s); read with a decimal point — add normalize: [decimal_comma] if that is wrong", c.Name, d.Evidence))
			case d.Style.DecimalComma:
				normalize = append(normalize, "decimal_comma")
				rs.findings = append(rs.findings, fmt.Sprintf("column %s uses a decimal comma (%s)", c.Name, d.Evidence))
			}
		}
		rs.cols = append(rs.cols, c.Name)
		rs.srcNames = append(rs.srcNames, srcNames(c))
		rs.types = append(rs.types, typ)
		rs.required = append(rs.required, required[c.Name] || c.Required)
		rs.specs = append(rs.specs, clean.ColumnSpec{Name: c.Name, Type: typ, Required: required[c.Name] || c.Required,
			Formats: formats, Normalize: normalize, NullTokens: nullTokens, Location: loc, AllowControl: c.AllowControlChars, Currency: c.Currency})
	}
	return rs, nil
}

func sanitizeName(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "c_" + s
	}
	return s
}

// sample reads up to n data rows across units, by column name.
func sample(ctx context.Context, src source.Source, units []source.Unit, so source.Options, n int) ([]string, map[string][]string, error) {
	out := map[string][]string{}
	var header []string
	got := 0
	for _, u := range units {
		if got >= n {
			break
		}
		rd, err := src.Open(ctx, u, so)
		if err != nil {
			continue // an unreadable file is reported by the load itself
		}
		cols := rd.Columns()
		if header == nil {
			header = cols
		}
		for got < n {
			row, err := rd.Next()
			if err != nil {
				break
			}
			if row.Kind != source.Data {
				continue
			}
			for i, v := range row.Values {
				if i < len(cols) {
					if row.Nulls != nil && row.Nulls[i] {
						v = ""
					}
					out[cols[i]] = append(out[cols[i]], v)
				}
			}
			got++
		}
		rd.Close()
	}
	return header, out, nil
}

type loader struct {
	o       Options
	tr      *TableResult
	t       *plan.Table
	rs      *resolved
	caster  *clean.Caster
	checks  []clean.RowCheck
	keyCols []int
	// keys are the load's keys so far (first occurrence wins), within
	// etl.key_memory_mb, spilled to .lima/tmp beyond it.
	keys *keyset.Set
	// tableKeys are the keys already in the table (incremental loads;
	// nil otherwise).
	tableKeys *keyset.Set
	seeds     [2]maphash.Seed
	stats     *statsBuilder
	prog      *TableProgress
	wmCol     int
	wm        clean.Cell
	wmSet     bool
	prevWM    clean.Cell
	hasPrev   bool
	pending   []Exception
	fixes     map[FixKey]KnownFix
	fixCnt    map[string]int64
	router    *Router
	now       time.Time
	idx       []int
	// occ counts the held rows' bytes within the current file (hold).
	occ     map[[32]byte]int
	occUnit string
	// extra: the file's header columns no plan column reads, kept with a
	// held-back row's values so that a replay after a plan change (a column
	// added or renamed) finds them (checkHeader).
	extra []extraCol
	vals  []string
	nulls []bool
	// heldSums sum the held-back rows' control values of a database source.
	heldSums map[string]*Sum
	// up is the state of a load of mode upsert (nil otherwise).
	up *upsert
	// window: the lake rows a database read re-reads (lookback.go).
	window *lookbackWindow
	// dbReader is the database reader of the load (nil for files).
	dbReader *sqldb.Reader
	// extract is the raw/ extract of a database read (dbextract.go).
	extract *dbExtract
	// hist stages the table's history (history: true); locs are the
	// source locators of the rows of the pending batch.
	hist *historyTee
	locs []string
	// st accumulates the reader's time in the source, in casting and
	// waiting on the writer (tick); base and mark are its clock.
	st   stageTimes
	base time.Time
	mark time.Duration
	// kbuf is keyHash's buffer.
	kbuf []byte
	// workers cast the rows of a load in parallel (parallel.go); 0 or 1:
	// the sequential path.
	workers int
	// touched keeps the key set's Touch reads (settleChunks) alive.
	touched uint64
	// preKey is the hash of the key cells of the row being settled, as a
	// parallel worker computed it (preKeyed: it did, on the row as read).
	preKey   [2]uint64
	preKeyed bool
}

// keyHash hashes a row's key cells exactly as hashKey hashes their
// clean.FormatCell texts (each followed by a NUL; readTableKeys and the
// upsert's lake keys hash the same bytes), from a reused buffer, without
// making a string per value.
func (l *loader) keyHash(cells []clean.Cell) [2]uint64 {
	return l.keyHashInto(&l.kbuf, cells)
}

// keyHashInto is keyHash with the caller's buffer (the parallel workers
// hash with their own).
func (l *loader) keyHashInto(buf *[]byte, cells []clean.Cell) [2]uint64 {
	b := (*buf)[:0]
	for _, i := range l.keyCols {
		b = clean.AppendCell(b, l.rs.types[i], cells[i])
		b = append(b, 0)
	}
	*buf = b
	return [2]uint64{maphash.Bytes(l.seeds[0], b), maphash.Bytes(l.seeds[1], b)}
}

// tick adds the time since the last tick to bucket. It reads the monotonic
// clock once (time.Since), cheap enough to run twice per row.
func (l *loader) tick(bucket *time.Duration) {
	now := time.Since(l.base)
	*bucket += now - l.mark
	l.mark = now
}

func newLoader(ctx context.Context, o Options, tr *TableResult, t *plan.Table, rs *resolved, tbl sink.Table, prog *TableProgress) (*loader, error) {
	caster, err := clean.NewCaster(rs.specs, tbl.Schema(), o.Alloc)
	if err != nil {
		return nil, err
	}
	l := &loader{o: o, tr: tr, t: t, rs: rs, caster: caster, prog: prog, wmCol: -1, router: NewRouter(o.Plan), now: time.Now().UTC(), fixCnt: map[string]int64{},
		keys: keyset.New(keySetOptions(o)), seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	refs, err := referenceSets(ctx, o, t)
	if err != nil {
		caster.Release()
		return nil, err
	}
	if l.checks, err = clean.CompileChecks(t.Checks, rs.cols, rs.types, refs); err != nil {
		caster.Release()
		return nil, err
	}
	idx := map[string]int{}
	for i, c := range rs.cols {
		idx[c] = i
	}
	for _, k := range t.Load.Keys {
		i, ok := idx[k]
		if !ok {
			caster.Release()
			return nil, fmt.Errorf("key column %s is not a column", k)
		}
		l.keyCols = append(l.keyCols, i)
	}
	for _, ch := range t.Checks {
		if ch.Rule == "unique" && len(t.Load.Keys) == 0 {
			if i, ok := idx[ch.Column]; ok {
				l.keyCols = append(l.keyCols, i)
			}
		}
	}
	var minmax []int
	sumCols := controlColumns(t, rs, idx)
	for _, c := range tr.PartitionColumns {
		if i, ok := idx[c]; ok && !slices.Contains(minmax, i) {
			minmax = append(minmax, i)
		}
	}
	if t.Load.Watermark != "" {
		i, ok := idx[t.Load.Watermark]
		if !ok {
			caster.Release()
			return nil, fmt.Errorf("watermark column %s is not a column", t.Load.Watermark)
		}
		l.wmCol = i
		if !slices.Contains(minmax, i) {
			minmax = append(minmax, i)
		}
		if tr.Mode == "incremental" && tr.WatermarkBefore != "" && !o.FullRefresh {
			prev, err := parseCanonical(rs.types[i], tr.WatermarkBefore)
			if err != nil {
				caster.Release()
				return nil, fmt.Errorf("previous watermark %q: %w", tr.WatermarkBefore, err)
			}
			l.prevWM, l.hasPrev = prev, true
		}
	}
	if (tr.Mode == "incremental" || tr.Mode == ModeMicroBatch) && len(l.keyCols) > 0 && !o.FullRefresh {
		if err := l.readTableKeys(ctx, tbl); err != nil {
			caster.Release()
			l.closeKeys()
			return nil, fmt.Errorf("read the keys already in the table: %w", err)
		}
	}
	seed := uint64(0)
	for _, b := range []byte(tr.LoadID) {
		seed = seed*131 + uint64(b)
	}
	l.stats = newStatsBuilder(rs.cols, rs.types, sumCols, minmax, l.keyCols, seed)
	return l, nil
}

// controlColumns are the columns gate 4 sums: the plan's, else every
// numeric column that is not a key.
func controlColumns(t *plan.Table, rs *resolved, idx map[string]int) []int {
	control := t.ControlColumns
	if len(control) == 0 {
		for i, c := range rs.cols {
			switch rs.types[i].Kind {
			case plan.Int, plan.Long, plan.Decimal, plan.Double:
				if !slices.Contains(t.Load.Keys, c) {
					control = append(control, c)
				}
			}
		}
	}
	var out []int
	for _, c := range control {
		if i, ok := idx[c]; ok {
			out = append(out, i)
		}
	}
	return out
}

// keySetOptions are the options of a load's key sets: etl.key_memory_mb
// each, spilled to the workspace's .lima/tmp (the OS temp folder without a
// workspace).
func keySetOptions(o Options) keyset.Options {
	ko := keyset.Options{Budget: o.Plan.ETL.KeyMemoryBytes()}
	if o.Workspace != "" {
		ko.Dir = filepath.Join(o.Workspace, ".lima", "tmp")
	}
	return ko
}

// closeKeys releases the loader's key sets and their spill files.
func (l *loader) closeKeys() {
	l.keys.Close()
	if l.tableKeys != nil {
		l.tableKeys.Close()
	}
	if l.up != nil {
		l.up.closeKeys()
	}
}

// readTableKeys loads the hashes of the keys in the table's current
// snapshot, so an incremental load cannot append a key twice.
func (l *loader) readTableKeys(ctx context.Context, tbl sink.Table) error {
	if l.tableKeys != nil {
		l.tableKeys.Close()
	}
	l.tableKeys = keyset.New(keySetOptions(l.o))
	if _, ok, err := tbl.Current(ctx); err != nil || !ok {
		return err
	}
	sc, ok := tbl.(sink.Scanner)
	if !ok {
		return errors.New("the sink cannot read the table back")
	}
	var names []string
	for _, i := range l.keyCols {
		names = append(names, l.rs.cols[i])
	}
	it, err := sc.Scan(ctx, 0, names)
	if err != nil {
		return err
	}
	for rec, err := range it {
		if err != nil {
			return err
		}
		cols := make([]arrow.Array, len(names))
		for j, n := range names {
			for ci, f := range rec.Schema().Fields() {
				if f.Name == n {
					cols[j] = rec.Column(ci)
				}
			}
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			var h1, h2 maphash.Hash
			h1.SetSeed(l.seeds[0])
			h2.SetSeed(l.seeds[1])
			for _, a := range cols {
				s := "NULL"
				if a != nil {
					s = formatArrow(a, r)
				}
				h1.WriteString(s)
				h1.WriteByte(0)
				h2.WriteString(s)
				h2.WriteByte(0)
			}
			if _, err := l.tableKeys.Add([2]uint64{h1.Sum64(), h2.Sum64()}); err != nil {
				rec.Release()
				return err
			}
		}
		rec.Release()
	}
	return nil
}

// canonicalFormats are the layouts of clean.FormatCell's text of t.
func canonicalFormats(t plan.Type) []string {
	switch t.Kind {
	case plan.Date:
		return []string{"yyyy-MM-dd"}
	case plan.Timestamp:
		return []string{"yyyy-MM-ddTHH:mm:ss.SSSSSS"}
	case plan.TimestampTZ:
		return []string{"yyyy-MM-ddTHH:mm:ss.SSSSSSXXX"}
	}
	return nil
}

// parseCanonical parses a value written by clean.FormatCell.
func parseCanonical(t plan.Type, s string) (clean.Cell, error) {
	spec := clean.ColumnSpec{Name: "watermark", Type: t, NullTokens: []string{}, Formats: canonicalFormats(t), AllowControl: true}
	sc := arrow.NewSchema([]arrow.Field{{Name: "watermark", Type: clean.ArrowType(t), Nullable: true}}, nil)
	c, err := clean.NewCaster([]clean.ColumnSpec{spec}, sc, memory.DefaultAllocator)
	if err != nil {
		return clean.Cell{}, err
	}
	defer c.Release()
	if errs := c.Cast([]string{s}, nil); errs != nil {
		return clean.Cell{}, errors.New(errs[0].Reason)
	}
	return c.Cells()[0], nil
}

// route sets the owner and deadline of an exception from its first failure.
func (l *loader) route(e *Exception) {
	col, rule := "", ""
	if len(e.Errors) > 0 {
		col, rule = e.Errors[0].Column, e.Errors[0].Rule
	}
	e.Owner, e.Deadline = l.router.Route(e.Table, col, rule, l.now)
	l.tr.HeldByOwner[e.Owner]++
}

func (l *loader) hold(ctx context.Context, e Exception) error {
	if e.Level == "row" && len(e.Raw) > 0 && e.Loc.Unit != "" && e.Fingerprint == "" {
		// A bad row of a file is its bytes and which occurrence of them in
		// the file it is — not its line: deleting or adding rows above it
		// does not make it another exception (a waived row stays waived).
		if l.occUnit != e.Loc.Unit || l.occ == nil {
			l.occUnit, l.occ = e.Loc.Unit, map[[32]byte]int{}
		}
		h := sha256.Sum256([]byte(e.Raw))
		l.occ[h]++
		e.Fingerprint = fmt.Sprintf("occ:%d", l.occ[h])
	}
	l.route(&e)
	l.tr.RowsQuarantined++
	l.prog.Quarantined.Add(1)
	for _, r := range e.Rules() {
		l.tr.QuarantinedBy[r]++
	}
	if len(l.tr.Exceptions) < 100 {
		l.tr.Exceptions = append(l.tr.Exceptions, e)
	}
	l.pending = append(l.pending, e)
	if l.tr.SourceTotals != nil && e.Level == "row" {
		l.addHeld(e.Values)
	}
	if len(l.pending) >= 1024 {
		return l.flush(ctx)
	}
	return nil
}

func (l *loader) flush(ctx context.Context) error {
	if len(l.pending) == 0 {
		return nil
	}
	err := l.o.Quarantine.Hold(ctx, l.pending)
	l.pending = l.pending[:0]
	return err
}

func (l *loader) skip(reason string) {
	l.tr.RowsSkipped++
	l.tr.SkippedBy[reason]++
}

func (l *loader) readAll(ctx context.Context, src source.Source, units []source.Unit, so source.Options, out chan<- arrow.RecordBatch) error {
	l.base, l.mark = time.Now(), 0
	// Everything up to a send is casting (building the batch, the
	// history's copy); the send itself is waiting on the writer.
	defer l.tick(&l.st.castCheck)
	emit := func() error {
		if l.caster.Len() == 0 {
			return nil
		}
		b := l.caster.NewBatch()
		if l.hist != nil {
			if err := l.hist.add(ctx, b, l.locs); err != nil {
				b.Release()
				return err
			}
			l.locs = l.locs[:0]
		}
		l.tick(&l.st.castCheck)
		defer l.tick(&l.st.writeWait)
		select {
		case out <- b:
			return nil
		case <-ctx.Done():
			b.Release()
			return ctx.Err()
		}
	}
	l.startCounted(src)
	if l.workers > 1 {
		if err := l.readParallel(ctx, src, units, so, l.workers, emit); err != nil {
			return err
		}
	} else {
		for _, u := range units {
			fr, err := l.readUnit(ctx, src, u, so, emit)
			l.tr.Files = append(l.tr.Files, fr)
			if err != nil {
				return err
			}
		}
	}
	l.finishCounted(src)
	if err := emit(); err != nil {
		return err
	}
	return l.flush(ctx)
}

// openTable records the resolved columns on the result and opens the lake
// table (creating it when missing).
func openTable(ctx context.Context, o Options, name string, t *plan.Table, rs *resolved, tr *TableResult, prog *TableProgress) (sink.Table, error) {
	tr.Columns, tr.Types, tr.Required = rs.cols, rs.types, rs.required
	tr.Findings = rs.findings
	tr.Casting = castingOf(rs.specs)
	tr.Keys = t.Load.Keys
	spec, err := tableSpec(o.Plan, name, t, rs)
	if err != nil {
		return nil, err
	}
	prog.Phase.Store("opening table")
	tbl, err := o.Sink.OpenTable(ctx, spec)
	if err != nil {
		return nil, err
	}
	tr.Table = tbl
	return tbl, nil
}

// nonData accounts for a row that carries no data — a header or blank line
// is skipped, a malformed row held back — and says whether it was one.
func (l *loader) nonData(ctx context.Context, row source.Row) (bool, error) {
	switch row.Kind {
	case source.Header:
		l.skip(SkipHeader)
	case source.Blank:
		l.skip(SkipBlank)
	case source.Malformed:
		rule := RuleMalformed
		if row.Rule != "" {
			rule = row.Rule
		}
		return true, l.hold(ctx, Exception{RunID: l.o.RunID, LoadID: l.tr.LoadID, Table: l.tr.Name, Level: "row", Loc: row.Loc, Raw: string(row.Raw),
			Errors: []clean.CellError{{Rule: rule, Reason: row.Reason}}, Encoding: row.Encoding})
	default:
		return false, nil
	}
	return true, nil
}

// fileError turns a unit-level failure into a file exception; the load
// goes on, and the rows already read from the unit stay accounted for.
func (l *loader) fileError(ctx context.Context, fr *FileResult, u source.Unit, err error) (FileResult, error) {
	fr.Status, fr.Error = "unreadable", err.Error()
	e := Exception{RunID: l.o.RunID, LoadID: l.tr.LoadID, Table: l.tr.Name, Level: "file", Fingerprint: UnitFingerprint(u),
		Loc:    source.Locator{Unit: u.Name, Row: fr.RowsRead},
		Errors: []clean.CellError{{Rule: RuleFile, Reason: err.Error()}}}
	l.route(&e)
	l.tr.FileExceptions = append(l.tr.FileExceptions, e)
	return *fr, l.o.Quarantine.Hold(ctx, []Exception{e})
}

// readUnit reads one file. A unit-level failure becomes a file exception
// and the load goes on; rows already read from it stay accounted for.
func (l *loader) readUnit(ctx context.Context, src source.Source, u source.Unit, so source.Options, emit func() error) (FileResult, error) {
	fr := FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "read"}
	fileErr := func(err error) (FileResult, error) { return l.fileError(ctx, &fr, u, err) }
	l.tick(&l.st.castCheck)
	rd, err := src.Open(ctx, u, so)
	if err != nil {
		return fileErr(err)
	}
	defer rd.Close()
	if err := l.checkHeader(rd.Columns(), so); err != nil {
		return fileErr(err)
	}
	if r, ok := rd.(*sqldb.Reader); ok {
		// Before the first row: the same snapshot the rows come from.
		if err := l.sourceTotals(ctx, u, r); err != nil {
			return fileErr(err)
		}
	}
	// From here each row's time is split at two ticks: the source's Next
	// (read), and everything else up to the next row (cast_check).
	l.tick(&l.st.read)
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return fr, ctx.Err()
		}
		l.tick(&l.st.castCheck)
		row, err := rd.Next()
		l.tick(&l.st.read)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fileErr(err)
		}
		if l.extract != nil {
			if err := l.extract.add(row); err != nil {
				return fr, err
			}
		}
		fr.RowsRead++
		l.tr.RowsRead++
		l.prog.RowsRead.Add(1)
		l.prog.Bytes.Add(int64(len(row.Raw) + 1))
		if l.supersededRow(rd) {
			l.skip(SkipSuperseded)
			continue
		}
		if done, err := l.nonData(ctx, row); err != nil {
			return fr, err
		} else if done {
			continue
		}
		if err := l.row(ctx, row); err != nil {
			return fr, err
		}
		if l.caster.Len() >= l.o.BatchRows {
			if err := emit(); err != nil {
				return fr, err
			}
		}
	}
	return fr, nil
}

// checkHeader verifies a file has every column the plan reads, and maps
// the plan's columns to the file's fields (l.idx, l.extra).
func (l *loader) checkHeader(cols []string, _ source.Options) error {
	var err error
	l.idx, l.extra, err = headerMap(l.rs.srcNames, cols, l.idx[:0], l.extra[:0])
	return err
}

// headerMap maps the plan's source columns to a file's header: idx[i] is
// the field of plan column i, extra the header columns no plan column
// reads. It appends to idx and extra (pass them empty).
func headerMap(srcNames, cols []string, idx []int, extra []extraCol) ([]int, []extraCol, error) {
	pos := map[string]int{}
	for j, c := range cols {
		k := strings.ToLower(strings.TrimSpace(c))
		if _, ok := pos[k]; !ok {
			pos[k] = j
		}
	}
	var missing []string
	for _, want := range srcNames {
		j, ok := pos[strings.ToLower(want)]
		if !ok {
			missing = append(missing, want)
		}
		idx = append(idx, j)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return idx, extra, fmt.Errorf("columns missing from the file: %s (found: %s)", strings.Join(missing, ", "), strings.Join(cols, ", "))
	}
	used := map[int]bool{}
	for _, j := range idx {
		used[j] = true
	}
	for j, c := range cols {
		if name := strings.TrimSpace(c); !used[j] && name != "" && pos[strings.ToLower(name)] == j {
			extra = append(extra, extraCol{name, j})
		}
	}
	return idx, extra, nil
}

// extraCol is a header column of the file that no plan column reads.
type extraCol struct {
	name string
	j    int
}

// row casts, checks and accepts or holds one data row. Fields are matched
// to the plan's columns by name.
func (l *loader) row(ctx context.Context, row source.Row) error {
	vals, nulls := l.project(row)
	errs := l.caster.Cast(vals, nulls)
	var all []clean.CellError
	if errs != nil {
		all = append(all, errs...)
	} else {
		all = clean.Evaluate(l.checks, l.caster.Cells(), vals, all)
	}
	return l.settle(ctx, row, vals, nulls, errs != nil, all)
}

// castRow is what of a row's fate depends on the row alone: its
// projection to the plan's columns (vals, nulls), its cast and its row
// checks. castFailed says the cast failed (all are then its errors);
// otherwise all are the failed checks. The sequential path (row) and the
// parallel workers (parallel.go) compute it the same way; settle decides
// the rest in input order.
//
// settle accepts or holds one row whose cast is the caster's current row
// (l.caster.Cells): the watermark, recorded fixes, the lookback, the key
// check, the exception, the stats and the batch. It must see the rows in
// input order. all may be appended to; it is retained by a held row.
func (l *loader) settle(ctx context.Context, row source.Row, vals []string, nulls []bool, castFailed bool, all []clean.CellError) error {
	cells := l.caster.Cells()
	// An incremental load skips rows at or below the previous watermark
	// first: the load that committed that watermark already accounted for
	// them (loaded or held back).
	wmCastOK := func() bool {
		if !castFailed {
			return true
		}
		for _, e := range all {
			if e.Column == l.rs.cols[l.wmCol] {
				return false
			}
		}
		return true
	}
	if l.hasPrev && l.wmCol >= 0 {
		wmOK := wmCastOK()
		if c := cells[l.wmCol]; wmOK && (c.Null || compareCells(l.rs.types[l.wmCol], c, l.prevWM) <= 0) {
			l.skip(SkipBelowWatermark)
			return nil
		}
	}
	// The watermark covers every row this load accounted for, held back
	// or loaded: a held row is in the ledger and must not be read again.
	if l.wmCol >= 0 {
		wmOK := wmCastOK()
		if c := cells[l.wmCol]; wmOK && !c.Null && (!l.wmSet || compareCells(l.rs.types[l.wmCol], c, l.wm) > 0) {
			l.wm, l.wmSet = c, true
		}
	}
	// A recorded fix applies whenever the same bytes fail again — a cast, a
	// check, or the key check (a fixed duplicate key passes the casts and
	// checks and fails only at the key check below, with its old key). A
	// row that now passes as read (the source or the plan changed: a type
	// widened, the other copy of a key gone) loads as read.
	fixed := false
	tryFix := func() {
		if fixed || len(l.fixes) == 0 || len(row.Raw) == 0 {
			return
		}
		fx, ok := l.fixes[NewFixKey(row.Loc.Unit, row.Raw)]
		if !ok {
			return
		}
		origOK := len(all) == 0
		fixedVals := slices.Clone(vals)
		var fixedNulls []bool
		if nulls != nil {
			fixedNulls = slices.Clone(nulls)
		}
		for i, c := range l.rs.cols {
			if v, ok := fx.Fixed[c]; ok {
				fixedVals[i] = v
				if fixedNulls != nil {
					fixedNulls[i] = false
				}
			}
		}
		if errs := l.caster.Cast(fixedVals, fixedNulls); errs == nil {
			if again := clean.Evaluate(l.checks, l.caster.Cells(), fixedVals, nil); len(again) == 0 {
				all, vals, nulls, cells, fixed = nil, fixedVals, fixedNulls, l.caster.Cells(), true
				l.tr.AppliedFixes = append(l.tr.AppliedFixes, fx.ExceptionID)
				for c := range fx.Fixed {
					l.fixCnt[c]++
				}
				return
			}
		}
		if origOK { // the fix fails where the row passed: keep the row as read
			l.recast(vals, nulls, &cells)
		}
	}
	if len(all) > 0 {
		tryFix()
	}
	if len(all) == 0 && l.unchangedInLookback(cells) {
		l.skip(SkipUnchanged)
		return nil
	}
	var key [2]uint64
	// inserted: keyOf already added the key to the load's key set (one
	// probe of the set instead of a look-up and an insert). It does so
	// only when no recorded fix can change the row afterwards and the
	// table does not have the key: then a new key is the row's for good.
	inserted := false
	keyOf := func() (dup, inTable bool, err error) {
		if l.preKeyed && !fixed {
			key = l.preKey // the worker's hash of these cells (the row as read)
		} else {
			key = l.keyHash(cells)
		}
		if l.tableKeys != nil && l.tableKeys.Len() > 0 {
			if inTable, err = l.tableKeys.Contains(key); err != nil {
				return false, false, err
			}
		}
		if !inTable && len(l.fixes) == 0 {
			dup, err = l.keys.Add(key)
			inserted = !dup && err == nil
			return dup, false, err
		}
		dup, err = l.keys.Contains(key)
		return dup, inTable, err
	}
	if len(all) == 0 && len(l.keyCols) > 0 {
		dup, inTable, err := keyOf()
		if err != nil {
			return err
		}
		if (dup || inTable) && len(l.fixes) > 0 {
			origVals, origNulls, nApplied := slices.Clone(vals), slices.Clone(nulls), len(l.tr.AppliedFixes)
			if tryFix(); fixed {
				if dup, inTable, err = keyOf(); err != nil {
					return err
				} else if dup || inTable {
					// The fixed row is a duplicate too: held back as read.
					for c := range l.fixes[NewFixKey(row.Loc.Unit, row.Raw)].Fixed {
						l.fixCnt[c]--
					}
					l.tr.AppliedFixes = l.tr.AppliedFixes[:nApplied]
					vals, nulls = origVals, origNulls
					l.recast(vals, nulls, &cells)
					if dup, inTable, err = keyOf(); err != nil {
						return err
					}
				}
			}
		}
		if dup || inTable {
			var kv []string
			for _, i := range l.keyCols {
				kv = append(kv, l.rs.cols[i]+"="+clean.FormatCell(l.rs.types[i], cells[i]))
			}
			where := " (an earlier row of this load has it)"
			if inTable {
				where = " (the table already has it; an incremental load or micro-batch appends)"
			}
			all = append(all, clean.CellError{Column: l.rs.cols[l.keyCols[0]], Value: strings.Join(kv, ","), Rule: RuleUnique,
				Reason: "duplicate key " + strings.Join(kv, ", ") + where})
		}
	}
	if len(all) > 0 {
		values := make(map[string]string, len(vals))
		for i, c := range l.rs.cols {
			if nulls == nil || !nulls[i] {
				values[c] = vals[i]
			}
		}
		for _, x := range l.extra {
			if _, taken := values[x.name]; !taken && x.j < len(row.Values) && (row.Nulls == nil || !row.Nulls[x.j]) {
				values[x.name] = row.Values[x.j]
			}
		}
		var key string
		if len(l.t.Load.Keys) > 0 {
			key = keyText(l.t.Load.Keys, values)
		}
		return l.hold(ctx, Exception{RunID: l.o.RunID, LoadID: l.tr.LoadID, Table: l.tr.Name, Level: "row", Loc: row.Loc, Raw: string(row.Raw),
			Errors: all, Values: values, Encoding: row.Encoding, Key: key})
	}
	if len(l.keyCols) > 0 && !inserted {
		if _, err := l.keys.Add(key); err != nil {
			return err
		}
	}
	if l.up != nil {
		if drop, err := l.acceptUpsert(key, cells); err != nil {
			return err
		} else if drop {
			l.skip(SkipSoftDeleted)
			return nil
		}
	}
	l.stats.add(cells, row.Loc, vals)
	l.caster.Accept()
	if l.hist != nil {
		l.locs = append(l.locs, row.Loc.String())
	}
	l.prog.Loaded.Add(1)
	return nil
}

// recast casts the row as read again after a recorded fix was tried on it
// and failed, so the caster's current row is the row as read.
func (l *loader) recast(vals []string, nulls []bool, cells *[]clean.Cell) {
	_ = l.caster.Cast(vals, nulls)
	*cells = l.caster.Cells()
}

// project orders a row's fields as the plan's columns, using the mapping
// checkHeader built for the current file.
func (l *loader) project(row source.Row) ([]string, []bool) {
	if cap(l.vals) < len(l.idx) {
		l.vals = make([]string, len(l.idx))
		l.nulls = make([]bool, len(l.idx))
	}
	return projectInto(l.idx, row, l.vals[:len(l.idx)], l.nulls[:len(l.idx)])
}

// projectInto fills vals and nulls (len(idx) each) with the row's fields
// at idx; the nulls it returns are nil when no field is null.
func projectInto(idx []int, row source.Row, vals []string, nulls []bool) ([]string, []bool) {
	anyNull := false
	for i, j := range idx {
		vals[i], nulls[i] = "", false
		if j < len(row.Values) {
			vals[i] = row.Values[j]
			if row.Nulls != nil && row.Nulls[j] {
				nulls[i], anyNull = true, true
			}
		} else {
			nulls[i], anyNull = true, true
		}
	}
	if !anyNull {
		return vals, nil
	}
	return vals, nulls
}
