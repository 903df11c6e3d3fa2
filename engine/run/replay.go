package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source"
)

// ReplayOptions of `lima-tui exceptions replay`.
type ReplayOptions struct {
	Workspace string
	Plan      *plan.Plan
	Sink      sink.Sink
	Store     ledger.Store
	// Table limits the replay to one table (all when empty).
	Table string
	// IDs, when given, are the fixed exceptions to replay (a selection);
	// the other fixed exceptions stay fixed. An id that is unknown, of
	// another table than Table, or neither fixed nor replayed refuses the
	// whole replay before anything is read; one already replayed is left
	// out (a rerun of the same selection finds nothing to do). Each table
	// of the selection is still one commit, whose load id fingerprints the
	// selected exceptions and their fixes.
	IDs   []int64
	RunID string
	By    string
}

// Replay re-checks every fixed exception and commits the rows that now pass
// to their table in one snapshot per table, with their own load id. Rows
// that still fail are reopened with the new reasons. Replaying again finds
// nothing fixed, and a replay interrupted after its commit is completed
// without a second commit: the load id is derived from the exceptions and
// their fixes, and looked for before committing.
func Replay(ctx context.Context, o ReplayOptions) ([]*TableResult, error) {
	names := o.Plan.TableNames()
	if o.Table != "" {
		if _, ok := o.Plan.Tables[o.Table]; !ok {
			return nil, fmt.Errorf("replay: no table %q in the plan", o.Table)
		}
		names = []string{o.Table}
	}
	var selected map[string][]ledger.Exception
	if len(o.IDs) > 0 {
		var err error
		if selected, err = selectFixed(ctx, o); err != nil {
			return nil, err
		}
	}
	var out []*TableResult
	for _, name := range names {
		t := o.Plan.Tables[name]
		if t.Type != "" && t.Type != "base" {
			continue
		}
		var fixed []ledger.Exception
		var after ledger.Cursor
		for selected == nil {
			page, next, err := o.Store.List(ctx, ledger.Filter{Table: name, Status: ledger.StatusFixed}, ledger.Page{After: after, Limit: ledger.MaxPageSize})
			if err != nil {
				return out, err
			}
			fixed = append(fixed, page...)
			if next == "" || len(page) == 0 {
				break
			}
			after = next
		}
		if selected != nil {
			fixed = selected[name]
		}
		if len(fixed) == 0 {
			continue
		}
		if t.Mode() == plan.ModeCDC {
			// A change row is not a table row: appended as one it would skip
			// the order of changes (a key deleted later would come back)
			// and the history gate 4 recomputes the table from. The fixed
			// exceptions stay fixed; nothing is committed.
			out = append(out, &TableResult{Name: name, Mode: plan.ModeCDC, Status: StatusFailed,
				Err: fmt.Errorf("replay: %s is loaded by change capture, whose corrections are change rows: put the %d fixed row(s) in a new change file with an ordering after the table's position, run, then waive these exceptions as re-sent; nothing was committed", name, len(fixed))})
			continue
		}
		tr := replayTable(ctx, o, name, t, fixed)
		out = append(out, tr)
	}
	return out, nil
}

// selectFixed reads the selected exceptions (o.IDs) and returns the fixed
// ones by table, in id order. It refuses the selection, naming every id
// at fault, when an id is unknown (or not yet committed), of a table the
// replay does not cover, or open, waived or superseded; ids already
// replayed are left out.
func selectFixed(ctx context.Context, o ReplayOptions) (map[string][]ledger.Exception, error) {
	ids := slices.Clone(o.IDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := map[string][]ledger.Exception{}
	var bad []string
	for _, id := range ids {
		e, err := o.Store.Get(ctx, id)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			bad = append(bad, fmt.Sprintf("%d: no such exception", id))
			continue
		case err != nil:
			return nil, err
		}
		t, inPlan := o.Plan.Tables[e.Table]
		switch {
		case e.State != ledger.StateCommitted:
			bad = append(bad, fmt.Sprintf("%d: its load is not committed", id))
		case !inPlan:
			bad = append(bad, fmt.Sprintf("%d: of table %q, which is not in the plan", id, e.Table))
		case o.Table != "" && e.Table != o.Table:
			bad = append(bad, fmt.Sprintf("%d: of table %q, not %q", id, e.Table, o.Table))
		case t.Type != "" && t.Type != "base":
			bad = append(bad, fmt.Sprintf("%d: of %q, a %s table, which is not loaded from rows", id, e.Table, t.Type))
		case e.Status == ledger.StatusReplayed:
			// Already in the lake (an earlier run of this selection).
		case e.Status != ledger.StatusFixed:
			bad = append(bad, fmt.Sprintf("%d: %s, not fixed (resolve it first)", id, e.Status))
		default:
			out[e.Table] = append(out[e.Table], e)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("replay: %d of the %d selected exception(s) cannot be replayed, so nothing was: %s", len(bad), len(ids), strings.Join(bad, "; "))
	}
	return out, nil
}

// ReplayLoadID fingerprints a replay: the exceptions and their fixes.
func ReplayLoadID(table string, ex []ledger.Exception) string {
	h := sha256.New()
	fmt.Fprintf(h, "replay\x00%s\n", table)
	ids := make([]ledger.Exception, len(ex))
	copy(ids, ex)
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	for _, e := range ids {
		keys := make([]string, 0, len(e.Fixed))
		for k := range e.Fixed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(h, "%d", e.ID)
		for _, k := range keys {
			fmt.Fprintf(h, "\x00%s=%s", k, e.Fixed[k])
		}
		h.Write([]byte{'\n'})
	}
	return "rp-" + hex.EncodeToString(h.Sum(nil))[:20]
}

func replayTable(ctx context.Context, o ReplayOptions, name string, t *plan.Table, fixed []ledger.Exception) *TableResult {
	lc := newLifecycle(name, "replay", (*Progress)(nil).table(name))
	lc.fault = "replay-"
	by := o.By
	if by == "" {
		by = "lima replay"
	}
	return lc.live(ctx, &replayLoad{lifecycle: lc, o: o, name: name, t: t, fixed: fixed, by: by})
}

// replayLoad is the life of a replay: the fixed exceptions of a table,
// checked again, the rows that pass appended in one snapshot that lists
// the exceptions it carries; the ledger marks them replayed and reopens
// the rows that still fail.
type replayLoad struct {
	*lifecycle
	o     ReplayOptions
	lo    Options
	name  string
	t     *plan.Table
	fixed []ledger.Exception
	by    string
	rs    *resolved
	tbl   sink.Table
	// passed are the exceptions whose rows are staged; failed those
	// reopened with their new reasons.
	passed []int64
	failed []reopen
}

type reopen struct {
	id      int64
	reasons []ledger.Failure
}

func (r *replayLoad) open(ctx context.Context) (bool, error) {
	o, t, tr, name := r.o, r.t, r.tr, r.name
	r.lo = Options{Workspace: o.Workspace, Plan: o.Plan, Sink: o.Sink, Alloc: memory.DefaultAllocator, SampleRows: 10000}
	src, globs, err := r.lo.sourceFor(ctx, t)
	if err != nil {
		return false, err
	}
	r.onClose(func() { closeSource(src) })
	units, err := src.List(ctx, globs)
	if err != nil {
		return false, err
	}
	rs, err := resolveColumns(ctx, r.lo, t, src, units)
	if err != nil {
		return false, err
	}
	r.rs = rs
	tr.Columns, tr.Types, tr.Required, tr.Keys = rs.cols, rs.types, rs.required, t.Load.Keys
	spec := sink.TableSpec{Name: name, Namespace: o.Plan.Namespace(), Types: rs.types, Required: rs.required}
	for i, c := range rs.cols {
		pc := plan.Column{Name: c, Type: rs.types[i].String()}
		spec.Columns = append(spec.Columns, pc)
	}
	for _, p := range t.Partition {
		pf, err := plan.ParsePartition(p)
		if err != nil {
			return false, err
		}
		spec.Partition = append(spec.Partition, pf)
	}
	if r.tbl, err = o.Sink.OpenTable(ctx, spec); err != nil {
		return false, err
	}
	tr.Table = r.tbl
	if r.cur, r.hasCur, err = r.tbl.Current(ctx); err != nil {
		return false, err
	}
	// Recovery first: exceptions an earlier replay already committed (it
	// stopped before the ledger marked them) are marked replayed with that
	// replay's load id and left out of this one — before any key check,
	// which would otherwise find their rows in the table and refuse them.
	if r.hasCur {
		var recovered int64
		if r.fixed, recovered, err = recoverReplays(ctx, o.Store, r.tbl, name, r.fixed, r.by); err != nil {
			return false, err
		}
		tr.ReplaysRecovered = recovered
		tr.WatermarkBefore, tr.WatermarkAfter = r.cur.Watermark, r.cur.Watermark
	}
	if len(r.fixed) == 0 {
		tr.Status = StatusNothingToLoad
		tr.Commit = r.cur
		return true, nil
	}
	tr.LoadID = ReplayLoadID(name, r.fixed)
	return false, nil
}

func (r *replayLoad) stage(ctx context.Context) error {
	t, tr, rs, tbl := r.t, r.tr, r.rs, r.tbl
	caster, err := clean.NewCaster(rs.specs, tbl.Schema(), memory.DefaultAllocator)
	if err != nil {
		return err
	}
	r.onClose(caster.Release)
	refs, err := referenceSets(ctx, r.lo, t)
	if err != nil {
		return err
	}
	checks, err := clean.CompileChecks(t.Checks, rs.cols, rs.types, refs)
	if err != nil {
		return err
	}
	// Keys already in the table: a replayed row must not duplicate one.
	idx := map[string]int{}
	for i, c := range rs.cols {
		idx[c] = i
	}
	var keyCols []int
	for _, k := range t.Load.Keys {
		keyCols = append(keyCols, idx[k])
	}
	seed := maphash.MakeSeed()
	keyOf := func(vals []string) uint64 {
		var h maphash.Hash
		h.SetSeed(seed)
		for _, v := range vals {
			h.WriteString(v)
			h.WriteByte(0)
		}
		return h.Sum64()
	}
	existing := map[uint64]bool{}
	if len(keyCols) > 0 && r.hasCur {
		if sc, ok := tbl.(sink.Scanner); ok {
			it, err := sc.Scan(ctx, 0, t.Load.Keys)
			if err != nil {
				return err
			}
			for rec, err := range it {
				if err != nil {
					return err
				}
				for row := 0; row < int(rec.NumRows()); row++ {
					vals := make([]string, len(t.Load.Keys))
					for j, k := range t.Load.Keys {
						for ci, f := range rec.Schema().Fields() {
							if f.Name == k {
								vals[j] = formatArrow(rec.Column(ci), row)
							}
						}
					}
					existing[keyOf(vals)] = true
				}
				rec.Release()
			}
		}
	}
	sb := newStatsBuilder(rs.cols, rs.types, controlColumns(t, rs, idx), nil, keyCols, 1)
	// A held row's values are recorded under the plan's column names of
	// that time and the file's other header columns: after a rename the
	// value is found under its source name or its previous name, after a
	// column was added under its header.
	asRecorded := make([][]string, len(rs.cols))
	for i, c := range rs.cols {
		asRecorded[i] = []string{c}
		if i < len(rs.srcNames) && rs.srcNames[i] != c {
			asRecorded[i] = append(asRecorded[i], rs.srcNames[i])
		}
		for _, pc := range t.Columns {
			if pc.Name == c && pc.RenamedFrom != "" {
				asRecorded[i] = append(asRecorded[i], pc.RenamedFrom)
			}
		}
	}
	for _, e := range r.fixed {
		tr.RowsRead++
		// A row that could not be split (bad quoting, bad bytes) has no
		// values as read: it replays when the fix sets every column.
		var missing []string
		if e.Values == nil {
			for _, c := range rs.cols {
				if _, ok := e.Fixed[c]; !ok {
					missing = append(missing, c)
				}
			}
		}
		if e.Level == ledger.LevelFile || len(missing) > 0 {
			tr.RowsQuarantined++
			tr.QuarantinedBy["not_replayable"]++
			why := "a whole file cannot be replayed from the ledger; deliver a corrected file"
			if e.Level != ledger.LevelFile {
				why = "this row could not be split into columns, so the fix must set every column; missing: " + strings.Join(missing, ", ")
			}
			r.failed = append(r.failed, reopen{e.ID, []ledger.Failure{{Rule: "not_replayable", Reason: why}}})
			continue
		}
		vals := make([]string, len(rs.cols))
		var nulls []bool
		for i, c := range rs.cols {
			v, ok := e.Fixed[c]
			for _, name := range asRecorded[i] { // the column's names when the row was held
				if ok {
					break
				}
				v, ok = e.Values[name]
			}
			if !ok {
				if nulls == nil {
					nulls = make([]bool, len(rs.cols))
				}
				nulls[i] = true
			}
			vals[i] = v
		}
		errs := caster.Cast(vals, nulls)
		var all []clean.CellError
		if errs != nil {
			all = append(all, errs...)
		} else {
			all = clean.Evaluate(checks, caster.Cells(), vals, all)
		}
		var k uint64
		if len(all) == 0 && len(keyCols) > 0 {
			kv := make([]string, len(keyCols))
			for j, i := range keyCols {
				kv[j] = clean.FormatCell(rs.types[i], caster.Cells()[i])
			}
			k = keyOf(kv)
			if existing[k] {
				all = append(all, clean.CellError{Column: rs.cols[keyCols[0]], Value: strings.Join(kv, ","), Rule: RuleUnique, Reason: "the table already has key " + strings.Join(kv, ", ")})
			}
		}
		if len(all) > 0 {
			tr.RowsQuarantined++
			var fs []ledger.Failure
			for _, c := range all {
				tr.QuarantinedBy[c.Rule]++
				fs = append(fs, ledger.Failure{Column: c.Column, Value: c.Value, Rule: c.Rule, Reason: c.Reason})
			}
			r.failed = append(r.failed, reopen{e.ID, fs})
			continue
		}
		if len(keyCols) > 0 {
			existing[k] = true
		}
		sb.add(caster.Cells(), sourceLoc(e), nil)
		caster.Accept()
		r.passed = append(r.passed, e.ID)
	}
	tr.Source = sb.finish()
	tr.Normalizations = caster.Normalizations()
	if len(r.passed) == 0 {
		return nil
	}
	batch := caster.NewBatch()
	seq := func(yield func(arrow.RecordBatch, error) bool) { yield(batch, nil) }
	if r.staged, err = tbl.Stage(ctx, seq); err != nil {
		return err
	}
	tr.RowsLoaded = r.staged.Rows()
	r.want = int64(len(r.passed))
	return nil
}

// check: a replay whose rows all still fail makes no snapshot; the ledger
// reopens them.
func (r *replayLoad) check(context.Context) (verdict, error) {
	if len(r.passed) == 0 {
		return verdict{noSnapshot: StatusNothingToLoad}, nil
	}
	return verdict{}, nil
}

func (r *replayLoad) commit(ctx context.Context) (sink.Commit, error) {
	// The commit says which exceptions it carries: recovery after a crash
	// between the commit and the ledger reads them back.
	extra := map[string]string{PropReplayExceptions: FormatIDs(r.passed)}
	for col, sum := range r.tr.Source.Sums {
		extra[sink.PropSumPrefix+col] = sum.String()
	}
	return r.tbl.Commit(ctx, r.staged, sink.CommitProps{LoadID: r.tr.LoadID, RunID: r.o.RunID, Watermark: r.tr.WatermarkBefore, Kind: sink.KindReplay, Extra: extra})
}

// settle marks the committed exceptions replayed and reopens the rows that
// still fail.
func (r *replayLoad) settle(ctx context.Context, committed bool) error {
	if committed {
		if err := r.o.Store.MarkReplayed(ctx, r.passed, r.tr.LoadID, r.by); err != nil {
			return fmt.Errorf("replayed rows are committed in snapshot %d but marking them failed (rerun replay to finish): %w", r.tr.Commit.SnapshotID, err)
		}
	}
	for _, f := range r.failed {
		if err := r.o.Store.Reopen(ctx, f.id, f.reasons, r.by); err != nil && !errors.Is(err, ledger.ErrBadTransition) {
			return err
		}
	}
	return nil
}

// dropPending: a replay holds nothing in the ledger before its commit (its
// exceptions stay fixed until the commit is made).
func (r *replayLoad) dropPending(context.Context) {}

func sourceLoc(e ledger.Exception) source.Locator {
	return source.Locator{Unit: e.File, Line: e.Line, Row: e.Row}
}

// formatArrow is the canonical text (clean.FormatCell's form) of an Arrow
// value, for comparing keys read back from the table. gates.FormatValue
// does the same for gate 4 and is kept separate on purpose: the proof must
// not share code with the write path it checks.
func formatArrow(a arrow.Array, r int) string {
	if a.IsNull(r) {
		return "NULL"
	}
	switch v := a.(type) {
	case *array.String:
		return v.Value(r)
	case *array.Int32:
		return strconv.FormatInt(int64(v.Value(r)), 10)
	case *array.Int64:
		return strconv.FormatInt(v.Value(r), 10)
	case *array.Decimal128:
		return v.Value(r).ToString(v.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return time.Unix(int64(v.Value(r))*86400, 0).UTC().Format("2006-01-02")
	case *array.Timestamp:
		t := time.UnixMicro(int64(v.Value(r))).UTC()
		if v.DataType().(*arrow.TimestampType).TimeZone != "" {
			return t.Format("2006-01-02T15:04:05.000000Z")
		}
		return t.Format("2006-01-02T15:04:05.000000")
	case *array.Boolean:
		return strconv.FormatBool(v.Value(r))
	}
	return a.ValueStr(r)
}

// PropReplayExceptions is the snapshot summary property of a replay commit
// that lists the exceptions it carries (ids as ranges, "3-7,12").
const PropReplayExceptions = "lima.replay.exceptions"

// FormatIDs writes ids as sorted, distinct ranges: "3-7,12".
func FormatIDs(ids []int64) string {
	s := append([]int64(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && (s[j+1] == s[j] || s[j+1] == s[j]+1) {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(s[i], 10))
		if s[j] != s[i] {
			b.WriteByte('-')
			b.WriteString(strconv.FormatInt(s[j], 10))
		}
		i = j + 1
	}
	return b.String()
}

// ParseIDs reads what FormatIDs wrote.
func ParseIDs(s string) ([]int64, error) {
	var out []int64
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("exception ids %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("exception ids %q: bad range %q", s, part)
			}
		}
		for id := a; id <= b; id++ {
			out = append(out, id)
		}
	}
	return out, nil
}

// recoverReplays finds the fixed exceptions that a replay already committed
// to the table — the replay stopped (crash, state-store error) before the
// ledger marked them — marks them replayed with that replay's load id, and
// returns the others. The table is the truth: every replay commit lists
// the exceptions it carries (PropReplayExceptions); a replay committed by
// an earlier Lima, without the list, is found by its load id, which
// fingerprints the exceptions it carried.
func recoverReplays(ctx context.Context, st ledger.Store, tbl sink.Table, name string, fixed []ledger.Exception, by string) ([]ledger.Exception, int64, error) {
	carried := map[int64]string{}
	if h, ok := tbl.(sink.Historian); ok {
		hist, err := h.History(ctx)
		if err != nil {
			return nil, 0, err
		}
		// Newest first: an id carried twice (which this guards against)
		// is credited to the oldest replay.
		for _, c := range hist {
			if c.Kind != sink.KindReplay || c.Props[PropReplayExceptions] == "" {
				continue
			}
			ids, err := ParseIDs(c.Props[PropReplayExceptions])
			if err != nil {
				return nil, 0, fmt.Errorf("replay snapshot %d: %w", c.SnapshotID, err)
			}
			for _, id := range ids {
				carried[id] = c.LoadID
			}
		}
	}
	if c, found, err := tbl.FindLoad(ctx, ReplayLoadID(name, fixed)); err != nil {
		return nil, 0, err
	} else if found && c.Props[PropReplayExceptions] == "" {
		for _, e := range fixed {
			carried[e.ID] = c.LoadID
		}
	}
	byLoad := map[string][]int64{}
	var rest []ledger.Exception
	for _, e := range fixed {
		if l, ok := carried[e.ID]; ok {
			byLoad[l] = append(byLoad[l], e.ID)
			continue
		}
		rest = append(rest, e)
	}
	var n int64
	loads := make([]string, 0, len(byLoad))
	for l := range byLoad {
		loads = append(loads, l)
	}
	sort.Strings(loads)
	for _, l := range loads {
		if err := st.MarkReplayed(ctx, byLoad[l], l, by); err != nil {
			return nil, n, fmt.Errorf("replay %s committed exceptions %s but marking them replayed failed (rerun replay to finish): %w", l, FormatIDs(byLoad[l]), err)
		}
		n += int64(len(byLoad[l]))
	}
	return rest, n, nil
}
