// Package hivesink writes Hive-style partitioned Parquet tables: zstd
// Parquet files under <warehouse>/<namespace>/<table>/load_date=YYYY-MM-DD/
// <key>=<value>/, partitioned by the load date and the table's partition
// fields, with values escaped so no value can leave its table's folder.
//
// A run is published atomically: Stage writes files under
// <table>/_staging/<stage-id>/ (invisible to every reader: Hive, Athena and
// Spark skip folders that start with "_"); Commit moves them into their
// partition folders and then writes a manifest
// <table>/_lima/commits/<seq>-<load-id>.json listing the files, their rows
// and the lima.* properties (load id, run id, watermark). The manifest is
// the commit marker: Lima reads (Scan, FindLoad, Current, History) only
// files that a committed manifest lists. A run that stops between staging
// and the manifest leaves a publish record in its staging folder; the next
// OpenTable of that table removes the files it published and the staging
// folder, so the load is as if it never happened and the rerun loads it
// again. A full refresh (CommitProps.Replace) writes a manifest that
// supersedes every earlier file, then removes the superseded files.
//
// Files go through iceberg-go's io package (io.LoadFS), so the same code
// writes to a local folder (file://) and to S3 (s3://) once the S3 IO is
// registered. With a Registrar (Glue), Commit registers the table and its
// new partitions before publishing.
package hivesink

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/internal/faultpoint"
	"github.com/lima-lake/lima/internal/fileuri"
)

// Fault points (LIMA_FAULTPOINT) inside Commit, for crash tests.
const (
	// FaultBeforePublish: the files are staged and the publish record is
	// written; nothing is in a partition folder yet.
	FaultBeforePublish = "hive-before-publish"
	// FaultMidPublish: the first file was moved into its partition folder,
	// the manifest is not written.
	FaultMidPublish = "hive-mid-publish"
	// FaultAfterManifest: the manifest is written (the load is committed),
	// the staging folder is not removed yet.
	FaultAfterManifest = "hive-after-manifest"
)

// LoadDateKey is the first partition key of every table; a table that has
// a column of that name gets AltLoadDateKey instead, so the Hive column
// and partition names stay disjoint.
const (
	LoadDateKey    = "load_date"
	AltLoadDateKey = "lima_load_date"
)

// Defaults.
const (
	DefaultTargetFileSize = 128 << 20
	DefaultRowGroupRows   = 64 << 10
	DefaultMaxOpenFiles   = 16
)

// Options configure the sink.
type Options struct {
	// Warehouse is the lake: a folder (absolute or relative to the current
	// directory) or a URI (file://, s3://).
	Warehouse string
	// IOProps are handed to io.LoadFS (s3.region, s3.endpoint, …).
	IOProps map[string]string
	// TargetFileSize: a data file is closed and a new one started when it
	// reaches this many bytes (default 128 MiB).
	TargetFileSize int64
	// RowGroupRows bounds a Parquet row group (default 65,536 rows).
	RowGroupRows int64
	// MaxOpenFiles bounds the partitions written at once; the least
	// recently written file is closed when a new partition needs one
	// (default 16).
	MaxOpenFiles int
	// Now is the clock of the load date (default time.Now; UTC dates).
	Now func() time.Time
	// Registrar, when set, registers tables and partitions in a catalog
	// (Glue) as part of every commit.
	Registrar Registrar
	// Database is the catalog database of the tables (default: the
	// table's namespace).
	Database string
	// Allocator for Arrow memory (default memory.DefaultAllocator).
	Allocator memory.Allocator
}

// Sink writes Hive-style Parquet tables.
type Sink struct {
	opts  Options
	root  string // warehouse URI without a trailing slash
	fs    icebergio.IO
	local bool // a local folder: rename is atomic; object stores copy

	mu     sync.Mutex
	active map[string]bool // stage ids staged by this sink and not yet committed or discarded
}

var _ sink.Sink = (*Sink)(nil)

// Open opens the warehouse.
func Open(ctx context.Context, o Options) (*Sink, error) {
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = DefaultTargetFileSize
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.MaxOpenFiles <= 0 {
		o.MaxOpenFiles = DefaultMaxOpenFiles
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	root := o.Warehouse
	if root == "" {
		return nil, errors.New("hivesink: no warehouse")
	}
	if fileuri.Is(root) {
		p, err := fileuri.ToPath(root)
		if err != nil {
			return nil, fmt.Errorf("hivesink: warehouse %s: %w", root, err)
		}
		root = filepath.ToSlash(p)
	} else if !strings.Contains(root, "://") {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("warehouse: %w", err)
		}
		// A plain path, not a file:// URI: the local IO percent-decodes
		// URIs, which would undo the escaping of partition values.
		root = filepath.ToSlash(abs)
	}
	root = strings.TrimRight(root, "/")
	fsys, err := icebergio.LoadFS(s3Context(ctx, root), s3Props(root, o.IOProps), root)
	if err != nil {
		return nil, fmt.Errorf("hivesink: warehouse %s: %w", root, err)
	}
	if _, ok := fsys.(icebergio.WriteFileIO); !ok {
		return nil, fmt.Errorf("hivesink: the file system of %s cannot write", root)
	}
	if _, ok := fsys.(icebergio.ListableIO); !ok {
		return nil, fmt.Errorf("hivesink: the file system of %s cannot list", root)
	}
	return &Sink{opts: o, root: root, fs: fsys, local: !strings.Contains(root, "://"), active: map[string]bool{}}, nil
}

// Close releases nothing: files are closed as they are written.
func (s *Sink) Close() error { return nil }

// Root is the warehouse URI.
func (s *Sink) Root() string { return s.root }

// TableLocation is the folder URI of a table.
func (s *Sink) TableLocation(namespace, name string) string {
	return s.root + "/" + namespace + "/" + name
}

func safeName(s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") || strings.HasPrefix(s, "_") {
		return fmt.Errorf("hivesink: %q cannot be a folder name of the lake", s)
	}
	return nil
}

// partField is one partition key of a table.
type partField struct {
	key       string // folder key
	col       int    // column index
	transform string
	param     int
	hiveType  string
}

// tableMeta is <table>/_lima/table.json: the columns the table was created
// with, so that a silent schema change is refused.
type tableMeta struct {
	Format    int          `json:"format"`
	Columns   []metaColumn `json:"columns"`
	Partition []string     `json:"partition"`
}

type metaColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// OpenTable opens the table, creating its definition when it is new, and
// settles what an interrupted commit left behind (see the package doc).
func (s *Sink) OpenTable(ctx context.Context, spec sink.TableSpec) (sink.Table, error) {
	if err := safeName(spec.Namespace); err != nil {
		return nil, err
	}
	if err := safeName(spec.Name); err != nil {
		return nil, err
	}
	if len(spec.Types) != len(spec.Columns) || len(spec.Required) != len(spec.Columns) {
		return nil, errors.New("hivesink: columns, types and required differ in length")
	}
	t := &Table{s: s, spec: spec, root: s.TableLocation(spec.Namespace, spec.Name)}
	fields := make([]arrow.Field, len(spec.Columns))
	meta := tableMeta{Format: 1}
	for i, c := range spec.Columns {
		fields[i] = arrow.Field{Name: c.Name, Type: clean.ArrowType(spec.Types[i]), Nullable: !spec.Required[i]}
		meta.Columns = append(meta.Columns, metaColumn{Name: c.Name, Type: spec.Types[i].String(), Required: spec.Required[i]})
	}
	t.schema = arrow.NewSchema(fields, nil)
	t.loadKey = LoadDateKey
	for _, c := range spec.Columns {
		if strings.EqualFold(c.Name, LoadDateKey) {
			t.loadKey = AltLoadDateKey
		}
	}
	keys := map[string]bool{t.loadKey: true}
	for _, p := range spec.Partition {
		pf, err := t.partField(p)
		if err != nil {
			return nil, err
		}
		if keys[pf.key] {
			return nil, fmt.Errorf("hivesink: table %s: partition key %s appears twice (%s is always the first key)", spec.Name, pf.key, t.loadKey)
		}
		keys[pf.key] = true
		t.parts = append(t.parts, pf)
		meta.Partition = append(meta.Partition, p.String())
	}
	metaPath := t.root + "/_lima/table.json"
	b, err := t.readFile(metaPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		nb, _ := json.MarshalIndent(meta, "", "  ")
		if err := t.writeFile(metaPath, nb); err != nil {
			return nil, fmt.Errorf("hivesink: table %s: %w", spec.Name, err)
		}
	case err != nil:
		return nil, fmt.Errorf("hivesink: table %s: %w", spec.Name, err)
	default:
		var have tableMeta
		if err := json.Unmarshal(b, &have); err != nil {
			return nil, fmt.Errorf("hivesink: table %s: %s is damaged: %w", spec.Name, metaPath, err)
		}
		if err := sameColumns(have, meta); err != nil {
			return nil, fmt.Errorf("table %s.%s: %w; %s", spec.Namespace, spec.Name, err, hiveEvolutionFix)
		}
	}
	if err := t.recover(ctx); err != nil {
		return nil, fmt.Errorf("hivesink: table %s: settle an interrupted commit: %w", spec.Name, err)
	}
	return t, nil
}

// hiveEvolutionFix is what to do when the plan changes a Hive-style
// table: its folders and the Parquet files in them keep the columns and
// partitioning they were written with (pattern iceberg evolves instead).
const hiveEvolutionFix = "a Hive-style table keeps the columns, types and partitioning it was created with, --full-refresh included: keep the lake's definition in the plan, load the new model under another table name, or remove the table (lima-tui teardown) and load it again; tables of pattern iceberg evolve in place"

func sameColumns(have, want tableMeta) error {
	if len(have.Columns) != len(want.Columns) {
		return fmt.Errorf("the lake table has %d columns, the plan %d; change the table explicitly (schema evolution is not automatic)", len(have.Columns), len(want.Columns))
	}
	for i := range have.Columns {
		h, w := have.Columns[i], want.Columns[i]
		if h.Name != w.Name || h.Type != w.Type {
			return fmt.Errorf("column %d is %s %s in the lake but %s %s in the plan", i+1, h.Name, h.Type, w.Name, w.Type)
		}
	}
	if !slices.Equal(have.Partition, want.Partition) {
		return fmt.Errorf("the lake table is partitioned by %v, the plan by %v; a Hive table's folders cannot be re-partitioned in place", have.Partition, want.Partition)
	}
	return nil
}

func (t *Table) partField(p plan.PartitionField) (partField, error) {
	col := -1
	for i, c := range t.spec.Columns {
		if c.Name == p.Column {
			col = i
		}
	}
	if col < 0 {
		return partField{}, fmt.Errorf("hivesink: partition column %s is not a column", p.Column)
	}
	typ := t.spec.Types[col]
	pf := partField{col: col, transform: p.Transform, param: p.Param, key: strings.ToLower(p.Column)}
	switch p.Transform {
	case "", plan.TransformIdentity:
		pf.transform = plan.TransformIdentity
		if !p.AcceptsType(typ) {
			return partField{}, fmt.Errorf("hivesink: cannot partition by %s of type %s", p.Column, typ)
		}
		pf.hiveType = HiveType(typ)
	case plan.TransformYear, plan.TransformMonth, plan.TransformDay, plan.TransformHour:
		if !p.AcceptsType(typ) {
			return partField{}, fmt.Errorf("hivesink: %s needs a date or timestamp column, %s is %s", p.String(), p.Column, typ)
		}
		pf.key += "_" + p.Transform
		pf.hiveType = "string"
	case plan.TransformTruncate:
		switch typ.Kind {
		case plan.Int, plan.Long, plan.String:
		default:
			return partField{}, fmt.Errorf("hivesink: %s: a Hive table truncates int, long and string columns only", p.String())
		}
		pf.key += fmt.Sprintf("_trunc_%d", p.Param)
		pf.hiveType = HiveType(typ)
	default:
		return partField{}, fmt.Errorf("hivesink: %s: a Hive table cannot be partitioned by %s (use identity, year, month, day, hour or truncate; bucket needs Iceberg)", p.String(), p.Transform)
	}
	return pf, nil
}

// Table is an open Hive-style table.
type Table struct {
	s      *Sink
	spec   sink.TableSpec
	root   string
	schema *arrow.Schema
	parts  []partField
	// loadKey is the load date's folder key (LoadDateKey or AltLoadDateKey).
	loadKey string

	// Recovered lists what OpenTable settled: one line per interrupted
	// commit found in _staging.
	Recovered []string
}

var (
	_ sink.Table     = (*Table)(nil)
	_ sink.Scanner   = (*Table)(nil)
	_ sink.Historian = (*Table)(nil)
)

// Schema is the Arrow schema rows are written with.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Location is the table's folder URI.
func (t *Table) Location() string { return t.root }

// PartitionKeys are the folder keys in path order, load_date first.
func (t *Table) PartitionKeys() []string {
	out := []string{t.loadKey}
	for _, p := range t.parts {
		out = append(out, p.key)
	}
	return out
}

func (t *Table) readFile(uri string) ([]byte, error) {
	if r, ok := t.s.fs.(icebergio.ReadFileIO); ok {
		return r.ReadFile(uri)
	}
	f, err := t.s.fs.Open(uri)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, st.Size())
	_, err = f.ReadAt(b, 0)
	return b, err
}

// writeFile writes a small file; on a local folder through a temporary
// name and a rename, so a reader never sees half of it (an object store's
// PUT is atomic by itself).
func (t *Table) writeFile(uri string, b []byte) error {
	w := t.s.fs.(icebergio.WriteFileIO)
	if r, ok := t.s.fs.(icebergio.RenameIO); ok && t.s.local {
		dir, base := uri[:strings.LastIndexByte(uri, '/')], uri[strings.LastIndexByte(uri, '/')+1:]
		tmp := dir + "/.tmp-" + newID() + "-" + base
		if err := w.WriteFile(tmp, b); err != nil {
			return err
		}
		if err := r.Rename(tmp, uri); err != nil {
			_ = t.s.fs.Remove(tmp)
			return err
		}
		return nil
	}
	return w.WriteFile(uri, b)
}

// list returns the paths of the files under dir, relative to it, sorted;
// a missing dir is empty.
func (t *Table) list(dir string) ([]string, error) {
	l := t.s.fs.(icebergio.ListableIO)
	var out []string
	err := l.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		p = filepath.ToSlash(p)
		switch {
		case strings.HasPrefix(p, dir+"/"):
			out = append(out, p[len(dir)+1:])
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Strings(out)
	return out, err
}

func (t *Table) removeAll(dir string) error {
	if r, ok := t.s.fs.(icebergio.RemoveAllIO); ok {
		return r.RemoveAll(dir)
	}
	files, err := t.list(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		if err := t.s.fs.Remove(dir + "/" + f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// Manifest is one commit: <table>/_lima/commits/<seq>-<load-id>.json.
type Manifest struct {
	Format    int               `json:"format"`
	Seq       int64             `json:"seq"`
	LoadID    string            `json:"load_id"`
	RunID     string            `json:"run_id"`
	Watermark string            `json:"watermark,omitempty"`
	Kind      string            `json:"kind"`
	Replace   bool              `json:"replace"`
	Committed time.Time         `json:"committed_at"`
	Rows      int64             `json:"rows"`
	Bytes     int64             `json:"bytes"`
	Props     map[string]string `json:"props"`
	Files     []DataFile        `json:"files"`
}

// DataFile is a published data file.
type DataFile struct {
	// Path is relative to the table folder: load_date=…/key=…/part-….parquet.
	Path  string `json:"path"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// Dir is the partition folder of the file, relative to the table.
func (f DataFile) Dir() string {
	if i := strings.LastIndexByte(f.Path, '/'); i >= 0 {
		return f.Path[:i]
	}
	return ""
}

func manifestName(seq int64, loadID string) string {
	return fmt.Sprintf("%012d-%s.json", seq, EscapeValue(loadID))
}

// Manifests reads the committed manifests in commit order. A manifest
// that does not parse (a write torn by a crash on a file system without
// rename) is not a commit.
func (t *Table) Manifests(ctx context.Context) ([]Manifest, error) {
	dir := t.root + "/_lima/commits"
	names, err := t.list(dir)
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, n := range names {
		if strings.Contains(n, "/") || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := t.readFile(dir + "/" + n)
		if err != nil {
			return nil, err
		}
		var m Manifest
		if json.Unmarshal(b, &m) != nil || m.Format != 1 || m.LoadID == "" {
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

func commitOf(m Manifest) sink.Commit {
	c := sink.Commit{SnapshotID: m.Seq, LoadID: m.LoadID, RunID: m.RunID, Watermark: m.Watermark, Kind: m.Kind, Props: map[string]string{}}
	for k, v := range m.Props {
		c.Props[k] = v
	}
	if c.Kind == "" {
		c.Kind = sink.KindLoad
	}
	return c
}

func findLoad(ms []Manifest, loadID string) (Manifest, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].LoadID == loadID {
			return ms[i], true
		}
	}
	return Manifest{}, false
}

// FindLoad looks for the commit carrying loadID.
func (t *Table) FindLoad(ctx context.Context, loadID string) (sink.Commit, bool, error) {
	ms, err := t.Manifests(ctx)
	if err != nil {
		return sink.Commit{}, false, err
	}
	m, ok := findLoad(ms, loadID)
	if !ok {
		return sink.Commit{}, false, nil
	}
	return commitOf(m), true, nil
}

// Current is the newest commit.
func (t *Table) Current(ctx context.Context) (sink.Commit, bool, error) {
	ms, err := t.Manifests(ctx)
	if err != nil || len(ms) == 0 {
		return sink.Commit{}, false, err
	}
	return commitOf(ms[len(ms)-1]), true, nil
}

// LastLoad is the newest commit of kind load.
func (t *Table) LastLoad(ctx context.Context) (sink.Commit, bool, error) {
	ms, err := t.Manifests(ctx)
	if err != nil {
		return sink.Commit{}, false, err
	}
	for i := len(ms) - 1; i >= 0; i-- {
		if c := commitOf(ms[i]); c.Kind == sink.KindLoad {
			return c, true, nil
		}
	}
	return sink.Commit{}, false, nil
}

// History lists every commit, newest first.
func (t *Table) History(ctx context.Context) ([]sink.Commit, error) {
	ms, err := t.Manifests(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sink.Commit, 0, len(ms))
	for i := len(ms) - 1; i >= 0; i-- {
		out = append(out, commitOf(ms[i]))
	}
	return out, nil
}

// liveFiles is the file set as of commit seq (0: the newest): a replace
// starts a new set, an append adds to it.
func liveFiles(ms []Manifest, seq int64) ([]DataFile, bool) {
	var set []DataFile
	found := seq == 0
	for _, m := range ms {
		if seq != 0 && m.Seq > seq {
			break
		}
		if m.Replace {
			set = nil
		}
		set = append(set, m.Files...)
		if m.Seq == seq {
			found = true
		}
	}
	return set, found
}

// LiveFiles are the files readers see now.
func (t *Table) LiveFiles(ctx context.Context) ([]DataFile, error) {
	ms, err := t.Manifests(ctx)
	if err != nil {
		return nil, err
	}
	set, _ := liveFiles(ms, 0)
	return set, nil
}

// publishRecord is _staging/<stage-id>/_publish.json, written before the
// first file moves: what to undo if the commit does not finish.
type publishRecord struct {
	LoadID string   `json:"load_id"`
	Final  []string `json:"final"`
}

const publishRecordName = "_publish.json"

// recover settles the staging folders this sink is not using: a load whose
// manifest exists only lost its cleanup; any other load is rolled back —
// the files it moved into partition folders are removed (unless a manifest
// lists them) and so is its staging folder.
func (t *Table) recover(ctx context.Context) error {
	staging := t.root + "/_staging"
	files, err := t.list(staging)
	if err != nil || len(files) == 0 {
		return err
	}
	ids := map[string]bool{}
	for _, f := range files {
		ids[strings.SplitN(f, "/", 2)[0]] = true
	}
	var ms []Manifest
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range ids {
			if !yield(id) {
				return
			}
		}
	}) {
		t.s.mu.Lock()
		busy := t.s.active[id]
		t.s.mu.Unlock()
		if busy {
			continue
		}
		if ms == nil {
			if ms, err = t.Manifests(ctx); err != nil {
				return err
			}
		}
		var rec publishRecord
		b, err := t.readFile(staging + "/" + id + "/" + publishRecordName)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			t.Recovered = append(t.Recovered, fmt.Sprintf("staging %s: never committed; removed", id))
		case err != nil:
			return err
		case json.Unmarshal(b, &rec) != nil:
			t.Recovered = append(t.Recovered, fmt.Sprintf("staging %s: damaged publish record; removed", id))
		default:
			if m, ok := findLoad(ms, rec.LoadID); ok {
				n := 0
				if m.Replace {
					// Killed before the files it replaced were removed.
					if n, err = t.removeSuperseded(ms, m); err != nil {
						return err
					}
				}
				t.Recovered = append(t.Recovered, fmt.Sprintf("load %s: committed; removed %d file(s) it replaced and its staging folder", rec.LoadID, n))
				break
			}
			listed := map[string]bool{}
			for _, m := range ms {
				for _, f := range m.Files {
					listed[f.Path] = true
				}
			}
			n := 0
			for _, f := range rec.Final {
				if listed[f] || !validRel(f) {
					continue
				}
				err := t.s.fs.Remove(t.root + "/" + f)
				switch {
				case err == nil:
					n++
				case !errors.Is(err, fs.ErrNotExist):
					return err
				}
			}
			t.Recovered = append(t.Recovered, fmt.Sprintf("load %s: interrupted before its manifest; removed %d published file(s) and its staging folder", rec.LoadID, n))
		}
		if err := t.removeAll(staging + "/" + id); err != nil {
			return err
		}
	}
	return nil
}

// validRel reports whether a relative path stays inside the table folder.
func validRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Commit publishes the staged files and writes the manifest.
func (t *Table) Commit(ctx context.Context, s sink.Staged, p sink.CommitProps) (sink.Commit, error) {
	st, ok := s.(*staged)
	if !ok || st.t != t {
		return sink.Commit{}, errors.New("hivesink: staged files of another table")
	}
	if p.LoadID == "" {
		return sink.Commit{}, errors.New("hivesink: a commit needs a load id")
	}
	if st.done {
		return sink.Commit{}, errors.New("hivesink: these staged files were already committed or discarded")
	}
	kind := p.Kind
	if kind == "" {
		kind = sink.KindLoad
	}
	props := map[string]string{sink.PropLoadID: p.LoadID, sink.PropRunID: p.RunID, sink.PropRows: strconv.FormatInt(st.rows, 10), sink.PropKind: kind}
	if p.Watermark != "" {
		props[sink.PropWatermark] = p.Watermark
	}
	for k, v := range p.Extra {
		if !strings.HasPrefix(k, "lima.") {
			return sink.Commit{}, fmt.Errorf("hivesink: extra property %q must start with \"lima.\"", k)
		}
		props[k] = v
	}
	ms, err := t.Manifests(ctx)
	if err != nil {
		return sink.Commit{}, fmt.Errorf("%w: %s: read the commits: %v", sink.ErrCommitFailed, t.spec.Name, err)
	}
	if m, ok := findLoad(ms, p.LoadID); ok {
		// The load is in the table already: these staged files are not
		// needed (nothing of them was published).
		_ = st.Discard(context.WithoutCancel(ctx))
		c := commitOf(m)
		c.AlreadyCommitted, c.Attempts = true, 1
		return c, nil
	}
	// The catalog first: new partitions point at folders that are still
	// empty, so a reader of the catalog sees no row of this load before the
	// files move.
	if t.s.opts.Registrar != nil {
		if err := t.register(ctx, st); err != nil {
			return sink.Commit{}, fmt.Errorf("%w: %s: catalog: %v", sink.ErrCommitFailed, t.spec.Name, err)
		}
	}
	stageDir := t.root + "/_staging/" + st.id
	rec := publishRecord{LoadID: p.LoadID}
	final := make([]DataFile, len(st.files))
	for i, f := range st.files {
		final[i] = DataFile{Path: f.dir + "/part-" + st.id + "-" + fmt.Sprintf("%05d", i) + ".zstd.parquet", Rows: f.rows, Bytes: f.bytes}
		rec.Final = append(rec.Final, final[i].Path)
	}
	b, _ := json.Marshal(rec)
	if err := t.writeFile(stageDir+"/"+publishRecordName, b); err != nil {
		return sink.Commit{}, fmt.Errorf("%w: %s: %v", sink.ErrCommitFailed, t.spec.Name, err)
	}
	faultpoint.Hit(FaultBeforePublish)
	for i, f := range st.files {
		if err := t.move(stageDir+"/"+f.rel, t.root+"/"+final[i].Path); err != nil {
			t.unpublish(final[:i])
			return sink.Commit{}, fmt.Errorf("%w: %s: publish %s: %v", sink.ErrCommitFailed, t.spec.Name, final[i].Path, err)
		}
		if i == 0 {
			faultpoint.Hit(FaultMidPublish)
		}
	}
	var seq int64 = 1
	if len(ms) > 0 {
		seq = ms[len(ms)-1].Seq + 1
	}
	m := Manifest{Format: 1, Seq: seq, LoadID: p.LoadID, RunID: p.RunID, Watermark: p.Watermark, Kind: kind, Replace: p.Replace,
		Committed: t.s.opts.Now().UTC(), Rows: st.rows, Bytes: st.bytes, Props: props, Files: final}
	mb, _ := json.MarshalIndent(m, "", "  ")
	if err := t.writeFile(t.root+"/_lima/commits/"+manifestName(seq, p.LoadID), mb); err != nil {
		t.unpublish(final)
		return sink.Commit{}, fmt.Errorf("%w: %s: write the manifest: %v", sink.ErrCommitFailed, t.spec.Name, err)
	}
	faultpoint.Hit(FaultAfterManifest)
	st.done = true
	t.s.release(st.id)
	if p.Replace {
		// Readers through manifests see the new set already; tools that
		// read partition folders (Athena) see it once the old files go.
		// Before the staging folder: while its publish record is there, a
		// process killed here has its next open finish the removal.
		_, _ = t.removeSuperseded(append(ms, m), m)
	}
	_ = t.removeAll(stageDir)
	_ = t.s.fs.Remove(t.root + "/_staging") // only when empty
	c := commitOf(m)
	c.Attempts = 1
	return c, nil
}

// removeSuperseded removes the files the commits before the replacing
// commit m listed that no commit keeps live now (ms: every commit, m's
// included); a file already gone is fine. It returns how many it removed.
func (t *Table) removeSuperseded(ms []Manifest, m Manifest) (int, error) {
	var before []Manifest
	for _, x := range ms {
		if x.Seq < m.Seq {
			before = append(before, x)
		}
	}
	live := map[string]bool{}
	now, _ := liveFiles(ms, 0)
	for _, f := range now {
		live[f.Path] = true
	}
	old, _ := liveFiles(before, 0)
	n := 0
	var errs []error
	for _, f := range old {
		if live[f.Path] || !validRel(f.Path) {
			continue
		}
		err := t.s.fs.Remove(t.root + "/" + f.Path)
		switch {
		case err == nil:
			n++
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// unpublish removes files a failed commit already moved.
func (t *Table) unpublish(files []DataFile) {
	for _, f := range files {
		_ = t.s.fs.Remove(t.root + "/" + f.Path)
	}
}

// move renames on a local folder, else copies and removes (an object
// store's rename is a copy anyway).
func (t *Table) move(from, to string) error {
	if r, ok := t.s.fs.(icebergio.RenameIO); ok && t.s.local {
		if m, ok := t.s.fs.(icebergio.MkdirAllIO); ok {
			if err := m.MkdirAll(to[:strings.LastIndexByte(to, '/')]); err != nil {
				return err
			}
		}
		return r.Rename(from, to)
	}
	src, err := t.s.fs.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := t.s.fs.(icebergio.WriteFileIO).Create(to)
	if err != nil {
		return err
	}
	if _, err := dst.ReadFrom(src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return t.s.fs.Remove(from)
}

func (s *Sink) hold(id string) {
	s.mu.Lock()
	s.active[id] = true
	s.mu.Unlock()
}

func (s *Sink) release(id string) {
	s.mu.Lock()
	delete(s.active, id)
	s.mu.Unlock()
}

// HasLoad reports whether the table namespace.name has a commit carrying
// loadID; a table that does not exist has none. The flow uses it to settle
// the exceptions of an interrupted run.
func (s *Sink) HasLoad(ctx context.Context, namespace, name, loadID string) (bool, error) {
	if safeName(namespace) != nil || safeName(name) != nil {
		return false, nil
	}
	t := &Table{s: s, root: s.TableLocation(namespace, name)}
	ms, err := t.Manifests(ctx)
	if err != nil {
		return false, err
	}
	_, ok := findLoad(ms, loadID)
	return ok, nil
}

// TableColumns reads the columns a table was created with (its
// _lima/table.json); ok false when the table does not exist.
func (s *Sink) TableColumns(namespace, name string) (cols []string, ok bool, err error) {
	if err := safeName(namespace); err != nil {
		return nil, false, err
	}
	if err := safeName(name); err != nil {
		return nil, false, err
	}
	t := &Table{s: s, root: s.TableLocation(namespace, name)}
	b, err := t.readFile(t.root + "/_lima/table.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var meta tableMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, false, fmt.Errorf("hivesink: table %s: %w", name, err)
	}
	for _, c := range meta.Columns {
		cols = append(cols, c.Name)
	}
	return cols, true, nil
}
