package run

// Change capture (load.mode cdc): the table is kept current from appended
// change files. Semantics, which the tests' reference replay restates
// independently:
//
//  1. Files. A change file is identified by its name and the sha256 of its
//     bytes. Files already applied (recorded in the lima.cdc.files property
//     of the table's snapshots) are not read again. A file whose content
//     was already applied under another name, or whose name was applied
//     with other content, is "seen twice": one file exception, its rows are
//     not read, and it is recorded so it is not reported again.
//     A file with neither the operation nor the ordering column is a
//     snapshot (the base export the changes follow): its rows are inserts
//     with an empty ordering, which orders before every change.
//  2. Order. The rows of the new files are applied in the order of the
//     ordering column (integers compare as numbers, anything else as text),
//     ties broken by file name, then by row position.
//  3. Position. A row whose (ordering, file) is below the committed
//     position (lima.cdc.ordering, lima.cdc.file) goes backwards: held back.
//  4. Operations, one after the other against the table's keys:
//     insert of a present key, update of an absent key, delete of an absent
//     key (delete_before_insert when an insert of that key follows in the
//     batch, else delete_unknown_key) are held back; the rest apply.
//  5. Collapse. Per key only the last applied change reaches the table:
//     the key's old row (if the table had it) is deleted and the last
//     insert/update row is appended, in ONE commit (sink.KeyDeleter) whose
//     snapshot carries the files applied and the new position. Every
//     applied change (collapsed or not) is appended to <table>_history.
//
// Accounting per run: rows_read = rows_loaded (the last applied change of
// each key touched) + rows_quarantined (malformed rows, failed casts and
// checks, anomalies) + rows_skipped (header, blank lines, and
// superseded_in_batch: applied changes a later change of the same key
// replaced within the batch).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/keyset"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/fsx"
)

// Snapshot properties of a change-capture commit.
const (
	// PropCDCFiles is a JSON list of the change files a commit accounted
	// for (applied or rejected as seen twice).
	PropCDCFiles = "lima.cdc.files"
	// PropCDCOrdering and PropCDCFile are the position after the commit:
	// the last ordering value applied and its file.
	PropCDCOrdering = "lima.cdc.ordering"
	PropCDCFile     = "lima.cdc.file"
	// PropCDCRefresh marks the commits of a full refresh (`run
	// --full-refresh`): every change file listed is applied again from an
	// empty table, and the table and its history are replaced — so a
	// crash between the two commits is completed as a refresh too.
	PropCDCRefresh = "lima.cdc.refresh"
)

// Rule ids of change-capture anomalies (held back in the exception ledger).
const (
	RuleCDCInvalid            = "change_invalid"
	RuleCDCFileSeenTwice      = "change_file_seen_twice"
	RuleCDCBackwards          = "change_sequence_backwards"
	RuleCDCUpdateUnknown      = "change_update_unknown_key"
	RuleCDCDeleteUnknown      = "change_delete_unknown_key"
	RuleCDCDeleteBeforeInsert = "change_delete_before_insert"
	RuleCDCInsertExisting     = "change_insert_existing_key"
)

// SkipSuperseded (upsert.go) is also the skip reason of an applied change
// that a later change of the same key replaced within the batch.

// ChangeFile is one change file a commit accounted for.
type ChangeFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Status is "applied" or "seen_twice".
	Status string `json:"status"`
	// ETag identifies an S3 object's content instead of SHA256 (the
	// object is not read a second time for a checksum).
	ETag string `json:"etag,omitempty"`
}

type change struct {
	op     byte // 'I', 'U', 'D'
	ord    string
	ordInt int64
	isInt  bool
	seq    int // read order: file name order, then row position
	file   string
	vals   []string
	nulls  []bool
	key    string
	loc    source.Locator
	raw    string
}

// CompareOrdering orders two ordering values: as integers when both are,
// else as text.
func CompareOrdering(a, b string) int {
	ai, aerr := strconv.ParseInt(a, 10, 64)
	bi, berr := strconv.ParseInt(b, 10, 64)
	if aerr == nil && berr == nil {
		switch {
		case ai < bi:
			return -1
		case ai > bi:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

func (c *change) less(d *change) bool {
	var o int
	if c.isInt && d.isInt {
		switch {
		case c.ordInt < d.ordInt:
			o = -1
		case c.ordInt > d.ordInt:
			o = 1
		}
	} else {
		o = strings.Compare(c.ord, d.ord)
	}
	if o != 0 {
		return o < 0
	}
	return c.seq < d.seq
}

// PropCDCNoop marks a history commit of a batch that applied no change
// (every row held back or skipped): it records the files and the position
// with one marker row (lima_op "none"), since a snapshot must add something.
const PropCDCNoop = "lima.cdc.noop"

// cdcState is what the lake says about the change files: which were
// accounted for, the committed position, and a batch the history table
// committed but the table did not (a crash between the two commits).
type cdcState struct {
	byName, bySHA   map[string]string
	posOrd, posFile string
	pending         []ChangeFile
	pendingLoadID   string
	pendingRefresh  bool
}

// readCDCState reads the files and the position from both lineages: every
// batch commits to the history table first (rows, or a marker when nothing
// applied), then, when rows change, to the table.
func readCDCState(ctx context.Context, tbl, htbl sink.Table) (*cdcState, error) {
	st := &cdcState{byName: map[string]string{}, bySHA: map[string]string{}}
	lineage := func(t sink.Table) ([]sink.Commit, error) {
		h, ok := t.(sink.Historian)
		if !ok {
			return nil, errors.New("change capture needs a sink that lists its commits")
		}
		return h.History(ctx)
	}
	hist, err := lineage(htbl)
	if err != nil {
		return nil, err
	}
	cur, err := lineage(tbl)
	if err != nil {
		return nil, err
	}
	// Compactions rewrite files; they account for no change file.
	isCompaction := func(c sink.Commit) bool { return c.Kind == KindCompaction }
	hist = slices.DeleteFunc(hist, isCompaction)
	cur = slices.DeleteFunc(cur, isCompaction)
	if len(hist) > 0 && hist[0].Props[PropCDCNoop] != "true" {
		if _, done, err := tbl.FindLoad(ctx, hist[0].LoadID); err != nil {
			return nil, err
		} else if !done {
			if st.pending, err = changeFilesOf(hist[0]); err != nil {
				return nil, err
			}
			st.pendingLoadID = hist[0].LoadID
			st.pendingRefresh = hist[0].Props[PropCDCRefresh] == "true"
			hist = hist[1:]
		}
	}
	pos := func(c sink.Commit) {
		o, f := c.Props[PropCDCOrdering], c.Props[PropCDCFile]
		if o == "" {
			return
		}
		if st.posOrd == "" || CompareOrdering(o, st.posOrd) > 0 || (CompareOrdering(o, st.posOrd) == 0 && f > st.posFile) {
			st.posOrd, st.posFile = o, f
		}
	}
	if len(hist) > 0 {
		pos(hist[0])
	}
	if len(cur) > 0 {
		pos(cur[0])
	}
	// The change files of snapshots lima-tui maintain expired come last:
	// they are older than every snapshot still there.
	all := append(hist, cur...)
	for _, t := range []sink.Table{htbl, tbl} {
		rr, ok := t.(sink.RetiredReader)
		if !ok {
			continue
		}
		r, err := rr.Retired(ctx)
		if err != nil {
			return nil, err
		}
		if l := r.List(PropCDCFiles); l != "" {
			all = append(all, sink.Commit{Props: map[string]string{PropCDCFiles: l}})
		}
	}
	for _, c := range all {
		fs, err := changeFilesOf(c)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if _, ok := st.byName[f.Name]; !ok { // newest first
				st.byName[f.Name] = f.SHA256
			}
			if _, ok := st.bySHA[f.SHA256]; !ok {
				st.bySHA[f.SHA256] = f.Name
			}
		}
	}
	return st, nil
}

func changeFilesOf(c sink.Commit) ([]ChangeFile, error) {
	s := c.Props[PropCDCFiles]
	if s == "" {
		return nil, nil
	}
	var fs []ChangeFile
	if err := json.Unmarshal([]byte(s), &fs); err != nil {
		return nil, fmt.Errorf("snapshot %d: %s: %w", c.SnapshotID, PropCDCFiles, err)
	}
	return fs, nil
}

// UnitFile is the file a unit's path reads: the path itself, or for a
// workbook's sheet ("book.xlsx#Sheet") the workbook.
func UnitFile(path string) string {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		for i := 0; i < len(path); i++ {
			if path[i] == '#' {
				if st, serr := os.Stat(path[:i]); serr == nil && st.Mode().IsRegular() {
					return path[:i]
				}
			}
		}
	}
	return path
}

// unitSHA256 checksums a change file through its source when the source
// can open the unit's bytes (an S3 object), else as a local file.
func unitSHA256(ctx context.Context, src source.Source, u source.Unit) (string, error) {
	ro, ok := src.(source.RawOpener)
	if !ok {
		return fileSHA256(u.Path)
	}
	rc, err := ro.OpenRaw(ctx, u)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	return fsx.SHA256(rc)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(UnitFile(path))
	if err != nil {
		return "", err
	}
	defer f.Close()
	return fsx.SHA256(f)
}

// historyColumns are the columns a history table adds to the table's.
var historyColumns = []string{"lima_op", "lima_ordering", "lima_valid_from", "lima_load_id", "lima_source"}

// historySpec is the sink spec and the caster specs of a table's history.
func historySpec(p *plan.Plan, name string, rs *resolved) (sink.TableSpec, []clean.ColumnSpec) {
	spec := sink.TableSpec{Name: plan.HistoryTable(name), Namespace: p.Namespace()}
	var specs []clean.ColumnSpec
	for i, c := range rs.cols {
		spec.Columns = append(spec.Columns, plan.Column{Name: c, Type: rs.types[i].String()})
		spec.Types = append(spec.Types, rs.types[i])
		spec.Required = append(spec.Required, false)
		s := rs.specs[i]
		s.Required = false
		specs = append(specs, s)
	}
	str, _ := plan.ParseType("string")
	tstz, _ := plan.ParseType("timestamptz")
	for _, c := range historyColumns {
		typ, formats := str, []string(nil)
		if c == "lima_valid_from" {
			typ, formats = tstz, canonicalFormats(tstz)
		}
		spec.Columns = append(spec.Columns, plan.Column{Name: c, Type: typ.String()})
		spec.Types = append(spec.Types, typ)
		spec.Required = append(spec.Required, false)
		specs = append(specs, clean.ColumnSpec{Name: c, Type: typ, NullTokens: []string{}, Formats: formats, Location: time.UTC, AllowControl: true})
	}
	return spec, specs
}

// opName is the history's word for an operation.
func opName(op byte) string {
	switch op {
	case 'I':
		return "insert"
	case 'U':
		return "update"
	case 'D':
		return "delete"
	}
	return "load"
}

// batchesOf turns rows into record batches through a caster: add casts
// and accepts a row that must cast (it did before).
func batchesOf(c *clean.Caster, batchRows int, n int, row func(i int) ([]string, []bool)) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for i := 0; i < n; i++ {
		vals, nulls := row(i)
		if errs := c.Cast(vals, nulls); errs != nil {
			for _, b := range out {
				b.Release()
			}
			return nil, fmt.Errorf("internal error: a row that cast before does not cast again: %s", errs[0].Reason)
		}
		c.Accept()
		if c.Len() >= batchRows {
			out = append(out, c.NewBatch())
		}
	}
	if c.Len() > 0 {
		out = append(out, c.NewBatch())
	}
	return out, nil
}

func seqOf(bs []arrow.RecordBatch) func(yield func(arrow.RecordBatch, error) bool) {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for i, b := range bs {
			if !yield(b, nil) {
				for _, r := range bs[i+1:] {
					r.Release()
				}
				return
			}
		}
	}
}

func loadCDC(ctx context.Context, o Options, name string, t *plan.Table) *TableResult {
	lc := newLifecycle(name, t.Mode(), o.Progress.table(name))
	return lc.live(ctx, &cdcLoad{lifecycle: lc, pendingLoad: pendingLoad{o: &o, res: lc.tr}, o: o, name: name, t: t})
}

// cdcLoad is the life of a change-capture batch: the change files not
// applied yet, applied in order to the table (appends and deletes by key in
// one snapshot) and to its history.
type cdcLoad struct {
	*lifecycle
	pendingLoad
	o               Options
	name            string
	t               *plan.Table
	src             source.Source
	rs              *resolved
	tbl             sink.Table
	kd              sink.KeyDeleter
	htbl            sink.Table
	hspec           sink.TableSpec
	hcols           []clean.ColumnSpec
	state0          *cdcState
	refresh         bool
	posOrd, posFile string
	files           []ChangeFile
	fresh           []unitInfo
	twice           []ChangeFile
	l               *loader
	// what the commit carries
	keyNames []string
	kb       []arrow.RecordBatch
	extra    map[string]string
}

func (d *cdcLoad) open(ctx context.Context) (bool, error) {
	o, t, tr, prog, name := d.o, d.t, d.tr, d.prog, d.name
	ch := t.Load.Changes
	src, globs, err := o.sourceFor(ctx, t)
	if err != nil {
		return false, err
	}
	d.src = src
	d.onClose(func() { closeSource(src) })
	if _, isDB := src.(*dbSource); isDB {
		return false, errors.New("change capture reads change files; the source is a database")
	}
	prog.Phase.Store("listing")
	units, err := src.List(ctx, globs)
	if err != nil {
		return false, fmt.Errorf("list %s: %w", t.Source.Name, err)
	}
	sort.Slice(units, func(i, j int) bool { return units[i].Name < units[j].Name })
	if len(units) == 0 {
		// No change file yet (a watcher may start before the first one).
		tr.Status = StatusNothingToLoad
		return true, nil
	}

	rs, err := resolveColumns(ctx, o, t, src, units)
	if err != nil {
		return false, err
	}
	// The operation and ordering columns live only in the change files.
	for i := len(rs.cols) - 1; i >= 0; i-- {
		if n := rs.srcNames[i]; strings.EqualFold(n, ch.Operation) || strings.EqualFold(n, ch.Ordering) {
			rs.cols = slices.Delete(rs.cols, i, i+1)
			rs.srcNames = slices.Delete(rs.srcNames, i, i+1)
			rs.types = slices.Delete(rs.types, i, i+1)
			rs.required = slices.Delete(rs.required, i, i+1)
			rs.specs = slices.Delete(rs.specs, i, i+1)
		}
	}
	d.rs = rs
	if d.tbl, err = openTable(ctx, o, name, t, rs, tr, prog); err != nil {
		return false, err
	}
	var ok bool
	if d.kd, ok = d.tbl.(sink.KeyDeleter); !ok {
		return false, errors.New("change capture needs a sink that deletes rows by key (Iceberg)")
	}
	d.hspec, d.hcols = historySpec(o.Plan, name, rs)
	if d.htbl, err = o.Sink.OpenTable(ctx, d.hspec); err != nil {
		return false, fmt.Errorf("open %s: %w", d.hspec.Name, err)
	}
	if d.cur, d.hasCur, err = d.tbl.Current(ctx); err != nil {
		return false, err
	}
	if d.hasCur {
		tr.WatermarkBefore = d.cur.Watermark
	}
	state0, err := readCDCState(ctx, d.tbl, d.htbl)
	if err != nil {
		return false, err
	}
	// A full refresh rebuilds the table from every change file listed now,
	// from an empty table and no position (a refresh the history committed
	// but the table did not is completed as such).
	d.refresh = o.FullRefresh || state0.pendingRefresh
	if d.refresh && !state0.pendingRefresh {
		state0 = &cdcState{byName: map[string]string{}, bySHA: map[string]string{}}
	}
	d.state0 = state0
	d.posOrd, d.posFile = state0.posOrd, state0.posFile
	if d.refresh {
		d.posOrd, d.posFile = "", ""
	}
	if d.posOrd != "" {
		tr.WatermarkBefore = d.posOrd + "@" + d.posFile
	}

	// A micro-batch of the watcher applies only its files — and always the
	// files of a batch the history committed but the table did not.
	if only, ok := o.OnlyFiles[name]; ok {
		keep := func(u source.Unit) bool {
			if slices.Contains(only, u.Name) {
				return true
			}
			return slices.ContainsFunc(state0.pending, func(f ChangeFile) bool { return f.Name == u.Name })
		}
		units = slices.DeleteFunc(units, func(u source.Unit) bool { return !keep(u) })
	}

	// Which files are new; which were seen before.
	batch, err := classifyFiles(ctx, src, units, state0)
	if err != nil {
		return false, err
	}
	d.files, d.fresh, d.twice = batch.files, batch.fresh, batch.twice
	tr.Files = append(tr.Files, batch.already...)
	if len(d.files) == 0 {
		tr.Status = StatusNothingToLoad
		tr.Commit = d.cur
		tr.WatermarkAfter = tr.WatermarkBefore
		return true, nil
	}
	for _, f := range d.fresh {
		tr.InputBytes += f.u.Size
	}
	prog.TotalBytes.Store(tr.InputBytes)
	{
		h := sha256.New()
		fmt.Fprintf(h, "table=%s\nplan=%s\ncdc\n", name, tableHash(o.Plan, name))
		if d.refresh {
			fmt.Fprintf(h, "refresh=%s\n", o.RunID)
		}
		for _, f := range d.files {
			fmt.Fprintf(h, "%s\x00%s\n", f.Name, f.SHA256)
		}
		tr.LoadID = "ld-" + hex.EncodeToString(h.Sum(nil))[:20]
	}
	if len(state0.pending) > 0 {
		// Completing a batch: its own load id, even if the plan changed.
		tr.LoadID = state0.pendingLoadID
	}
	if c, found, err := d.tbl.FindLoad(ctx, tr.LoadID); err != nil {
		return false, err
	} else if found {
		c.AlreadyCommitted = true
		tr.Commit, tr.Status, tr.WatermarkAfter = c, StatusAlreadyLoaded, c.Watermark
		return true, nil
	}
	return false, nil
}

// stage reads the batch's changes, then stages its history (every applied
// change) and the table's new rows and deleted keys.
func (d *cdcLoad) stage(ctx context.Context) error {
	changes, ap, err := d.readChanges(ctx)
	if err != nil {
		return err
	}
	return d.stageChanges(ctx, changes, ap)
}

// readChanges reads every new change file, holds the changes that fail a
// check or do not apply, and applies the others in order (without side
// effect: applyChanges).
func (d *cdcLoad) readChanges(ctx context.Context) ([]*change, appliedBatch, error) {
	o, t, tr, prog, name, rs, tbl, src := d.o, d.t, d.tr, d.prog, d.name, d.rs, d.tbl, d.src
	ch := t.Load.Changes
	ops := ch.Ops.Resolved()
	// raw/: the change files of this batch, unchanged, as for any load.
	if len(d.fresh) > 0 {
		landed := make([]source.Unit, len(d.fresh))
		for i, f := range d.fresh {
			landed[i] = f.u
		}
		if err := d.land(ctx, prog, src, landed); err != nil {
			return nil, appliedBatch{}, err
		}
	}
	l, err := newLoader(ctx, o, tr, t, rs, tbl, prog)
	if err != nil {
		return nil, appliedBatch{}, err
	}
	d.l = l
	d.onClose(func() { l.caster.Release() })
	d.onClose(l.closeKeys)

	// The keys in the table now.
	prog.Phase.Store("reading keys")
	if d.refresh {
		l.tableKeys = keyset.New(keySetOptions(o)) // the refresh starts from an empty table
	} else if err := l.readTableKeys(ctx, tbl); err != nil {
		return nil, appliedBatch{}, fmt.Errorf("read the keys already in the table: %w", err)
	}
	var keyErr error // a spill file's read error, checked after applyChanges
	present := func(key string) bool {
		ok, err := l.tableKeys.Contains(l.hashJoinedKey(key))
		if err != nil && keyErr == nil {
			keyErr = err
		}
		return ok
	}

	// Files seen twice: one file exception each, rows not read.
	for _, f := range d.twice {
		why := strings.TrimPrefix(f.Status, "seen_twice:")
		e := Exception{RunID: o.RunID, LoadID: tr.LoadID, Table: name, Level: "file", Loc: source.Locator{Unit: f.Name},
			Fingerprint: "sha256:" + f.SHA256, // each version of a file seen twice is its own exception
			Errors:      []clean.CellError{{Rule: RuleCDCFileSeenTwice, Reason: "change file seen twice (" + why + "); its rows were not applied again"}}}
		l.route(&e)
		tr.FileExceptions = append(tr.FileExceptions, e)
		tr.QuarantinedBy[RuleCDCFileSeenTwice]++
		tr.Files = append(tr.Files, FileResult{Name: f.Name, Bytes: f.Size, Status: "seen twice"})
		if err := o.Quarantine.Hold(ctx, []Exception{e}); err != nil {
			return nil, appliedBatch{}, err
		}
	}

	// Read every new file's rows.
	prog.Phase.Store("reading changes")
	so := sourceOptions(o.Plan, t, append(slices.Clone(rs.srcNames), ch.Operation, ch.Ordering))
	keyIdx := l.keyCols
	var changes []*change
	hold := func(c *change, rule, reason string, errs []clean.CellError) error {
		values := map[string]string{}
		for i, col := range rs.cols {
			if c.nulls == nil || !c.nulls[i] {
				values[col] = c.vals[i]
			}
		}
		values[ch.Operation] = string(c.op)
		values[ch.Ordering] = c.ord
		if errs == nil {
			errs = []clean.CellError{{Column: rs.cols[keyIdx[0]], Value: c.key, Rule: rule, Reason: reason}}
		}
		return l.hold(ctx, Exception{RunID: o.RunID, LoadID: tr.LoadID, Table: name, Level: "row", Loc: c.loc, Raw: c.raw,
			Errors: errs, Values: values, Key: keyText(t.Load.Keys, values)})
	}
	seq := 0
	for _, f := range d.fresh {
		fr, err := l.readChangeFile(ctx, src, f.u, so, ch, func(row source.Row, opv, ordv string, opNull, ordNull, snap bool) error {
			seq++
			vals, nulls := l.project(row)
			c := &change{ord: ordv, seq: seq, file: f.u.Name, vals: slices.Clone(vals), loc: row.Loc, raw: string(row.Raw)}
			if nulls != nil {
				c.nulls = slices.Clone(nulls)
			}
			switch {
			case opNull:
			case opv == ops.Insert:
				c.op = 'I'
			case opv == ops.Update:
				c.op = 'U'
			case opv == ops.Delete:
				c.op = 'D'
			}
			if c.op == 0 {
				c.op = '?'
				return hold(c, RuleCDCInvalid, "", []clean.CellError{{Column: ch.Operation, Value: opv, Rule: RuleCDCInvalid,
					Reason: fmt.Sprintf("operation %q is none of %s (insert), %s (update), %s (delete)", opv, ops.Insert, ops.Update, ops.Delete)}})
			}
			if !snap && (ordNull || strings.TrimSpace(ordv) == "") {
				return hold(c, RuleCDCInvalid, "", []clean.CellError{{Column: ch.Ordering, Value: ordv, Rule: RuleCDCInvalid, Reason: "the ordering value is missing"}})
			}
			var err error
			c.ordInt, err = strconv.ParseInt(ordv, 10, 64)
			c.isInt = err == nil
			errs := l.caster.Cast(c.vals, c.nulls)
			if c.op == 'D' {
				// A delete needs only its key.
				errs = slices.DeleteFunc(slices.Clone(errs), func(e clean.CellError) bool {
					return !slices.ContainsFunc(keyIdx, func(i int) bool { return rs.cols[i] == e.Column })
				})
			} else if errs == nil {
				errs = clean.Evaluate(l.checks, l.caster.Cells(), c.vals, nil)
			}
			if len(errs) > 0 {
				return hold(c, "", "", slices.Clone(errs))
			}
			cells := l.caster.Cells()
			var parts []string
			for _, i := range keyIdx {
				parts = append(parts, clean.FormatCell(rs.types[i], cells[i]))
			}
			c.key = strings.Join(parts, "\x00")
			changes = append(changes, c)
			return nil
		})
		tr.Files = append(tr.Files, fr)
		if err != nil {
			return nil, appliedBatch{}, err
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].less(changes[j]) })

	// Apply in order.
	ap := applyChanges(changes, present, d.posOrd, d.posFile)
	if keyErr != nil {
		return nil, appliedBatch{}, fmt.Errorf("the keys already in the table: %w", keyErr)
	}
	for _, a := range ap.anomalies {
		if err := hold(changes[a.index], a.rule, a.reason, nil); err != nil {
			return nil, appliedBatch{}, err
		}
	}
	for range ap.superseded {
		l.skip(SkipSuperseded)
	}
	if err := l.flush(ctx); err != nil {
		return nil, appliedBatch{}, err
	}
	return changes, ap, nil
}

func (d *cdcLoad) stageChanges(ctx context.Context, changes []*change, ap appliedBatch) error {
	o, tr, prog, rs, tbl := d.o, d.tr, d.prog, d.rs, d.tbl
	l, keyIdx := d.l, d.l.keyCols
	applied, finals, appends, deletes := ap.applied, ap.finals, ap.appends, ap.deletes
	newOrd, newFile := ap.newOrd, ap.newFile
	d.want = int64(len(appends))

	// Stage the history (every applied change) and the table's new rows.
	prog.Phase.Store("staging")
	validFrom := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	hc, err := clean.NewCaster(d.hcols, d.htbl.Schema(), o.Alloc)
	if err != nil {
		return err
	}
	d.onClose(hc.Release)
	noop := len(applied) == 0
	var names []string
	for _, f := range d.files {
		names = append(names, f.Name)
	}
	histRows := len(applied)
	if noop {
		histRows = 1 // the marker row: files accounted for, nothing applied
	}
	hb, err := batchesOf(hc, o.BatchRows, histRows, func(k int) ([]string, []bool) {
		if noop {
			vals := make([]string, len(rs.cols), len(rs.cols)+len(historyColumns))
			nulls := make([]bool, len(rs.cols)+len(historyColumns))
			for i := range rs.cols {
				nulls[i] = true
			}
			return append(vals, "none", newOrd, validFrom, tr.LoadID, strings.Join(names, ",")), nulls
		}
		c := changes[applied[k]]
		vals := append(slices.Clone(c.vals), opName(c.op), c.ord, validFrom, tr.LoadID, c.loc.String())
		nulls := make([]bool, len(vals))
		if c.nulls != nil {
			copy(nulls, c.nulls)
		}
		if c.op == 'D' {
			for i := range rs.cols {
				if !slices.Contains(keyIdx, i) {
					nulls[i] = true
				}
			}
		}
		return vals, nulls
	})
	if err != nil {
		return err
	}
	hstaged, err := d.htbl.Stage(ctx, seqOf(hb))
	if err != nil {
		return err
	}
	d.history = &stagedHistory{tbl: d.htbl, staged: hstaged}
	ab, err := batchesOf(l.caster, o.BatchRows, len(appends), func(k int) ([]string, []bool) {
		c := changes[appends[k]]
		return c.vals, c.nulls
	})
	if err != nil {
		return err
	}
	if d.staged, err = tbl.Stage(ctx, seqOf(ab)); err != nil {
		return err
	}
	var keySpecs []clean.ColumnSpec
	var keyFields []arrow.Field
	for _, i := range keyIdx {
		keySpecs = append(keySpecs, rs.specs[i])
		keyFields = append(keyFields, tbl.Schema().Field(i))
		d.keyNames = append(d.keyNames, rs.cols[i])
	}
	kc, err := clean.NewCaster(keySpecs, arrow.NewSchema(keyFields, nil), o.Alloc)
	if err != nil {
		return err
	}
	d.onClose(kc.Release)
	d.kb, err = batchesOf(kc, o.BatchRows, len(deletes), func(k int) ([]string, []bool) {
		c := changes[deletes[k]]
		var vals []string
		for _, i := range keyIdx {
			vals = append(vals, c.vals[i])
		}
		return vals, nil
	})
	if err != nil {
		return err
	}
	d.onClose(func() {
		for _, b := range d.kb {
			b.Release()
		}
	})
	staged := d.staged
	// Applied: the rows the sink staged (inserts and updates) and the
	// deletes — counted from what was staged, so that the conservation
	// guard sees a sink that lost or invented a row.
	tr.RowsLoaded = staged.Rows() + int64(len(finals)-len(appends))
	tr.Source = l.stats.finish()
	tr.Source.Rows = staged.Rows()
	tr.Normalizations = l.caster.Normalizations()
	tr.StagedFiles, tr.StagedBytes = staged.Files(), staged.Bytes()
	tr.WatermarkAfter = tr.WatermarkBefore
	if newOrd != "" {
		tr.WatermarkAfter = newOrd + "@" + newFile
	}
	fj, _ := json.Marshal(d.files)
	d.extra = map[string]string{PropCDCFiles: string(fj), PropCDCOrdering: newOrd, PropCDCFile: newFile}
	if d.refresh {
		d.extra[PropCDCRefresh] = "true"
	}
	d.history.props = sink.CommitProps{LoadID: tr.LoadID, RunID: o.RunID, Extra: d.extra, Replace: d.refresh}
	if d.changesNothing(len(appends), len(deletes)) {
		// Nothing changes in the table: the history commit alone records
		// the batch (a snapshot must add something).
		hextra := map[string]string{PropCDCNoop: "true"}
		for k, v := range d.extra {
			hextra[k] = v
		}
		d.history.props.Extra = hextra
	}
	return nil
}

// changesNothing: the batch neither adds nor deletes a row — but a refresh
// of a table that has rows replaces them even when it applies nothing.
func (d *cdcLoad) changesNothing(appends, deletes int) bool {
	return appends == 0 && deletes == 0 && !(d.refresh && d.hasCur)
}

// check: history first — a crash between the two commits leaves the
// history ahead, and the next run completes the same batch under the same
// load id (the history finds it and adds nothing). A batch that changes
// nothing in the table is recorded by the history alone.
func (d *cdcLoad) check(context.Context) (verdict, error) {
	if d.history.props.Extra[PropCDCNoop] != "true" {
		return verdict{}, nil
	}
	status := StatusNothingToLoad
	if d.hasCur {
		status = StatusLoaded
	}
	return verdict{noSnapshot: status, afterHistory: true}, nil
}

func (d *cdcLoad) commit(ctx context.Context) (sink.Commit, error) {
	cp := sink.CommitProps{LoadID: d.tr.LoadID, RunID: d.o.RunID, Watermark: d.tr.WatermarkAfter, Extra: d.extra}
	if d.refresh {
		// Nothing to delete in an empty table: the rows replace the table's
		// data and delete files in one snapshot.
		cp.Replace = true
		return d.tbl.Commit(ctx, d.staged, cp)
	}
	return d.kd.CommitDelta(ctx, d.staged, cp, sink.Keys{Columns: d.keyNames, Batches: d.kb})
}

func (d *cdcLoad) settle(ctx context.Context, committed bool) error {
	if err := d.publish(ctx); err != nil {
		if committed {
			return fmt.Errorf("committed snapshot %d but publishing its exceptions failed: %w", d.tr.Commit.SnapshotID, err)
		}
		return fmt.Errorf("committed the batch to %s but publishing its exceptions failed: %w", d.hspec.Name, err)
	}
	return nil
}

type unitInfo struct {
	u   source.Unit
	sha string
}

// changeBatch is the change files one run accounts for.
type changeBatch struct {
	// files are all of them, as recorded in the commit.
	files []ChangeFile
	// fresh are the files whose rows are read, in name order.
	fresh []unitInfo
	// twice are the files rejected as seen twice (their rows are not read).
	twice []ChangeFile
	// already are the files applied by earlier runs.
	already []FileResult
}

// classifyFiles decides, from the files listed and what the lake says, the
// files of this run's batch: a batch the history committed but the table
// did not is redone exactly as it was; otherwise every file not yet
// accounted for, a file seen before (same bytes under another name, or a
// name applied with other bytes) rejected as seen twice.
func classifyFiles(ctx context.Context, src source.Source, units []source.Unit, st *cdcState) (*changeBatch, error) {
	b := &changeBatch{}
	shas := make(map[string]string, len(units))
	byUnit := make(map[string]source.Unit, len(units))
	for _, u := range units {
		sum, err := unitSHA256(ctx, src, u)
		if err != nil {
			return nil, fmt.Errorf("checksum %s: %w", u.Name, err)
		}
		shas[u.Name], byUnit[u.Name] = sum, u
	}
	if len(st.pending) > 0 {
		for _, f := range st.pending {
			if shas[f.Name] != f.SHA256 {
				return nil, fmt.Errorf("the history table holds load %s, which the table does not; its change file %s is missing or changed: restore it to complete the load",
					st.pendingLoadID, f.Name)
			}
			b.files = append(b.files, f)
			if f.Status == "applied" {
				b.fresh = append(b.fresh, unitInfo{byUnit[f.Name], f.SHA256})
			} else {
				b.twice = append(b.twice, f)
			}
		}
		sort.Slice(b.fresh, func(i, j int) bool { return b.fresh[i].u.Name < b.fresh[j].u.Name })
		return b, nil
	}
	seenNow := map[string]string{}
	for _, u := range units {
		sum := shas[u.Name]
		if prev, ok := st.byName[u.Name]; ok && prev == sum {
			b.already = append(b.already, FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "already applied"})
			continue
		}
		cf := ChangeFile{Name: u.Name, Size: u.Size, SHA256: sum, Status: "applied"}
		if other, ok := st.bySHA[sum]; ok {
			cf.Status = "seen_twice:same content as " + other
		} else if _, ok := st.byName[u.Name]; ok {
			cf.Status = "seen_twice:changed after it was applied"
		} else if other, ok := seenNow[sum]; ok {
			cf.Status = "seen_twice:same content as " + other
		}
		if _, ok := seenNow[sum]; !ok {
			seenNow[sum] = u.Name
		}
		if cf.Status != "applied" {
			b.twice = append(b.twice, cf)
		} else {
			b.fresh = append(b.fresh, unitInfo{u, sum})
		}
		b.files = append(b.files, cf)
	}
	return b, nil
}

// anomaly is a change held back, with its rule and reason.
type anomaly struct {
	index        int
	rule, reason string
}

// applied is the outcome of applying a sorted batch of changes.
type appliedBatch struct {
	anomalies []anomaly
	// applied are the changes that applied, in order; finals the last
	// applied change of each key (in order); superseded the others.
	applied, finals []int
	superseded      int
	// deletes are the finals whose key the table had (its old row goes);
	// appends the finals that insert or update (their row is added).
	deletes, appends []int
	// newOrd and newFile are the position after the batch.
	newOrd, newFile string
}

// applyChanges applies sorted changes one at a time against the keys
// present in the table (present) and the committed position, and collapses
// them to the last change per key. It has no side effect.
func applyChanges(changes []*change, present func(key string) bool, posOrd, posFile string) appliedBatch {
	out := appliedBatch{newOrd: posOrd, newFile: posFile}
	lastIns := map[string]int{}
	for i, c := range changes {
		if c.op == 'I' {
			lastIns[c.key] = i
		}
	}
	state := map[string]bool{}
	exists := func(k string) bool {
		if s, ok := state[k]; ok {
			return s
		}
		return present(k)
	}
	last := map[string]int{}
	keyShown := func(c *change) string { return strings.ReplaceAll(c.key, "\x00", ", ") }
	for i, c := range changes {
		if posOrd != "" {
			if o := CompareOrdering(c.ord, posOrd); o < 0 || (o == 0 && c.file < posFile) {
				out.anomalies = append(out.anomalies, anomaly{i, RuleCDCBackwards,
					fmt.Sprintf("ordering %s in %s is before the committed position %s in %s", c.ord, c.file, posOrd, posFile)})
				continue
			}
		}
		out.newOrd, out.newFile = c.ord, c.file
		var rule, reason string
		switch ex := exists(c.key); {
		case c.op == 'I' && ex:
			rule, reason = RuleCDCInsertExisting, "insert of key "+keyShown(c)+" which the table already has"
		case c.op == 'U' && !ex:
			rule, reason = RuleCDCUpdateUnknown, "update of key "+keyShown(c)+" which the table does not have"
		case c.op == 'D' && !ex && lastIns[c.key] > i:
			rule, reason = RuleCDCDeleteBeforeInsert, "delete of key "+keyShown(c)+" before its insert"
		case c.op == 'D' && !ex:
			rule, reason = RuleCDCDeleteUnknown, "delete of key "+keyShown(c)+" which the table does not have"
		}
		if rule != "" {
			out.anomalies = append(out.anomalies, anomaly{i, rule, reason})
			continue
		}
		state[c.key] = c.op != 'D'
		if _, ok := last[c.key]; ok {
			out.superseded++
		}
		last[c.key] = i
		out.applied = append(out.applied, i)
	}
	for _, i := range last {
		out.finals = append(out.finals, i)
	}
	sort.Ints(out.finals)
	for _, i := range out.finals {
		c := changes[i]
		if present(c.key) {
			out.deletes = append(out.deletes, i)
		}
		if c.op != 'D' {
			out.appends = append(out.appends, i)
		}
	}
	return out
}

// readChangeFile reads one change file, handing each data row with its
// operation and ordering values to fn. Header, blank and malformed rows are
// accounted for here. A file with neither the operation nor the ordering
// column is a snapshot of the table (the base export its change files
// follow): each row is an insert with an empty ordering, which orders
// before every change (snap true).
func (l *loader) readChangeFile(ctx context.Context, src source.Source, u source.Unit, so source.Options, ch *plan.Changes,
	fn func(row source.Row, op, ord string, opNull, ordNull, snap bool) error) (FileResult, error) {
	fr := FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "read"}
	fileErr := func(err error) (FileResult, error) { return l.fileError(ctx, &fr, u, err) }
	rd, err := src.Open(ctx, u, so)
	if err != nil {
		return fileErr(err)
	}
	defer rd.Close()
	if err := l.checkHeader(rd.Columns(), so); err != nil {
		return fileErr(err)
	}
	opIdx, ordIdx := -1, -1
	for j, c := range rd.Columns() {
		k := strings.TrimSpace(c)
		if opIdx < 0 && strings.EqualFold(k, ch.Operation) {
			opIdx = j
		}
		if ordIdx < 0 && strings.EqualFold(k, ch.Ordering) {
			ordIdx = j
		}
	}
	snap := opIdx < 0 && ordIdx < 0
	if !snap && (opIdx < 0 || ordIdx < 0) {
		return fileErr(fmt.Errorf("the change file has no %s or no %s column (found: %s)", ch.Operation, ch.Ordering, strings.Join(rd.Columns(), ", ")))
	}
	field := func(row source.Row, j int) (string, bool) {
		if j >= len(row.Values) {
			return "", true
		}
		return row.Values[j], row.Nulls != nil && row.Nulls[j]
	}
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return fr, ctx.Err()
		}
		row, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fileErr(err)
		}
		fr.RowsRead++
		l.tr.RowsRead++
		l.prog.RowsRead.Add(1)
		l.prog.Bytes.Add(int64(len(row.Raw) + 1))
		if done, err := l.nonData(ctx, row); err != nil {
			return fr, err
		} else if done {
			continue
		}
		if snap {
			if err := fn(row, ch.Ops.Resolved().Insert, "", false, false, true); err != nil {
				return fr, err
			}
			continue
		}
		op, opNull := field(row, opIdx)
		ord, ordNull := field(row, ordIdx)
		if err := fn(row, strings.TrimSpace(op), strings.TrimSpace(ord), opNull, ordNull, false); err != nil {
			return fr, err
		}
	}
	return fr, nil
}

// hashJoinedKey hashes a key text (canonical parts joined by NUL) as
// readTableKeys hashes the table's keys (the same hash as hashKey of the
// parts).
func (l *loader) hashJoinedKey(key string) [2]uint64 {
	var h1, h2 maphash.Hash
	h1.SetSeed(l.seeds[0])
	h2.SetSeed(l.seeds[1])
	h1.WriteString(key)
	h1.WriteByte(0)
	h2.WriteString(key)
	h2.WriteByte(0)
	return [2]uint64{h1.Sum64(), h2.Sum64()}
}

// KindCompaction is the lima.kind of a snapshot that only rewrote files
// (flow.Compact).
const KindCompaction = "compaction"

// ModeMicroBatch is the mode of a full-mode table loaded by the watcher:
// each micro-batch appends its new files.
const ModeMicroBatch = "micro_batch"

// MaxRecordedFiles is the most files an ordinary load records in PropFiles
// (a micro-batch always records its own).
const MaxRecordedFiles = 1000

// PropFiles lists, as JSON, the files (name, size, sha256) a micro-batch
// commit loaded: the watcher's record of what it has seen, committed
// atomically with the rows.
const PropFiles = "lima.files"

func filesProp(units []source.Unit) (map[string]string, error) {
	var fs []ChangeFile
	for _, u := range units {
		if u.ETag != "" { // an S3 object: key, size and ETag (as its load id)
			fs = append(fs, ChangeFile{Name: u.Name, Size: u.Size, ETag: u.ETag, Status: "loaded"})
			continue
		}
		sum, err := fileSHA256(u.Path)
		if err != nil {
			return nil, fmt.Errorf("checksum %s: %w", u.Name, err)
		}
		fs = append(fs, ChangeFile{Name: u.Name, Size: u.Size, SHA256: sum, Status: "loaded"})
	}
	b, err := json.Marshal(fs)
	if err != nil {
		return nil, err
	}
	return map[string]string{PropFiles: string(b)}, nil
}
