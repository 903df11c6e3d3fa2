package gates

// Gate 4 for change capture (load.mode cdc): the applied state is
// recomputed from the table's history, independently of the loader's
// apply code, and compared with the lake.
//
// Every change-capture batch commits the changes it applied to
// <table>_history (the table's columns and lima_op, lima_ordering,
// lima_valid_from, lima_load_id, lima_source); a full refresh replaces the
// history with the changes it applied again from an empty table. So the
// history's current state (up to the batch the table has committed) folded
// per key — the latest change wins, by ordering (integers as numbers, any
// other value as text), then file name, then position in the file; a
// delete removes the key; a marker row (lima_op "none") is no change — is
// what the table must hold: its row count, the sums of its control
// columns, the range of its range columns and every row value for value.
//
// Memory: one entry per key of the history (its latest change's position,
// a 128-bit fingerprint of the row, the control values and the range
// texts); the changes themselves are streamed.

import (
	"context"
	"fmt"
	"hash/maphash"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lima-lake/lima/engine/keyset"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
)

// ChangeHistory is the history table of a change-capture table as gate 4
// reads it: its snapshots' rows and its lineage.
type ChangeHistory interface {
	sink.Scanner
	sink.Historian
}

// Option gives Reconcile more to read.
type Option func(*options)

type options struct {
	history     ChangeHistory
	historyName string
	historyWhy  string
	keys        keyset.Options
}

// WithKeyMemory bounds the memory of gate 4's duplicate check to budget
// bytes (0: keyset.DefaultBudget, 64 MiB; the plan's etl.key_memory_mb),
// spilling its key hashes to dir beyond it ("": the OS temp folder).
func WithKeyMemory(budget int64, dir string) Option {
	return func(o *options) { o.keys = keyset.Options{Budget: budget, Dir: dir} }
}

// WithChangeHistory gives gate 4 the history table (named name) of a
// change-capture table, from which it recomputes the applied state.
func WithChangeHistory(name string, h ChangeHistory) Option {
	return func(o *options) { o.history, o.historyName = h, name }
}

// WithoutChangeHistory says why the history table of a change-capture
// table could not be opened; gate 4 then names what it did not check.
func WithoutChangeHistory(why string) Option {
	return func(o *options) { o.historyWhy = why }
}

// CDCStateCheck is the name of the finding that compares the lake's rows
// with the applied state recomputed from the history, key by key.
const CDCStateCheck = "rows equal the state recomputed from the history"

// SourceFromHistory is ControlTotal.SourceFrom of a change-capture table.
const SourceFromHistory = "recomputed from history"

// History columns gate 4 reads besides the table's.
const (
	histOp       = "lima_op"
	histOrdering = "lima_ordering"
	histSource   = "lima_source"
)

// cdcFold is the applied state recomputed from the history, and, after the
// lake was read, how the lake's rows compare with it.
type cdcFold struct {
	name     string // the history table
	snapshot int64  // the history snapshot folded
	changes  int64  // change rows folded (markers excluded)
	ahead    int    // history commits the table has not committed (left out)
	twice    int64  // changes of one key at one position, seen twice
	badOps   map[string]int64
	rows     map[string]*foldRow
	live     int64
	files    map[string]string // file names, held once

	sumIdx []int // columns summed (indexes into the expectation's columns)
	rngIdx []int // columns whose range is compared
	keyIdx []int
	seed   [2]maphash.Seed

	// Set while the lake is read.
	matched, differ, extra int64
	examples               []string
}

type foldRow struct {
	ord, file string
	pos       int64
	del       bool
	fp        [2]uint64
	sums      []foldCell
	rng       []string
	seen      bool
}

type foldCell struct {
	null  bool
	exact big.Int
	f     float64
}

// compareOrdering orders two ordering values as the documented semantics
// say (written here, not taken from the loader): as integers when both
// are, else as text.
func compareOrdering(a, b string) int {
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

// splitSource reads a change's source locator ("file:line" or "file#row")
// into its file and position (0 when it has none).
func splitSource(s string) (string, int64) {
	i := strings.LastIndexAny(s, ":#")
	if i < 0 {
		return s, 0
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return s, 0
	}
	return s[:i], n
}

// later reports whether a change at (ord, file, pos) comes after r's.
func (r *foldRow) later(ord, file string, pos int64) int {
	if c := compareOrdering(ord, r.ord); c != 0 {
		return c
	}
	if c := strings.Compare(file, r.file); c != 0 {
		return c
	}
	switch {
	case pos > r.pos:
		return 1
	case pos < r.pos:
		return -1
	}
	return 0
}

// foldHistory recomputes the applied state of a change-capture table from
// its history. A nil fold comes with the reason it could not be computed.
func foldHistory(ctx context.Context, sc sink.Scanner, o options, e Expectation, types []plan.Type) (*cdcFold, string) {
	if o.history == nil {
		why := o.historyWhy
		if why == "" {
			why = "the history table was not given to gate 4"
		}
		return nil, why
	}
	if len(e.Keys) == 0 {
		return nil, "the table has no key to fold its changes by"
	}
	th, ok := sc.(sink.Historian)
	if !ok {
		return nil, "the sink does not list the table's commits"
	}
	tl, err := th.History(ctx)
	if err != nil {
		return nil, "the table's commits could not be listed: " + err.Error()
	}
	// The table's state since its last replacing commit must be the
	// history's work: a replay of fixed exceptions, or a load under
	// another mode, added rows the history does not record. A commit
	// without a load id is not Lima's: it is compared, not excused.
	loads := map[string]bool{}
	for _, c := range tl {
		loads[c.LoadID] = true
	}
	for _, c := range tl {
		switch {
		case c.LoadID == "" || c.Kind == run.KindCompaction:
		case c.Kind == sink.KindReplay:
			return nil, fmt.Sprintf("snapshot %d replayed fixed exceptions into the table; the history does not record those rows", c.SnapshotID)
		case c.Props[run.PropCDCFiles] == "":
			return nil, fmt.Sprintf("snapshot %d (load %s) was not written by change capture; the history does not cover its rows", c.SnapshotID, c.LoadID)
		}
		if c.Props[sink.PropReplace] == "true" {
			break
		}
	}
	hl, err := o.history.History(ctx)
	if err != nil {
		return nil, fmt.Sprintf("the commits of %s could not be listed: %v", o.historyName, err)
	}
	f := &cdcFold{name: o.historyName, rows: map[string]*foldRow{}, badOps: map[string]int64{}, files: map[string]string{},
		seed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	// The history as of the table's commit: a batch the history committed
	// and the table did not (a crash between the two commits; the next
	// run completes it) is left out. A batch that changed no row commits
	// only to the history (a marker).
	found := false
	for _, c := range hl {
		if c.Kind == run.KindCompaction {
			continue
		}
		if c.LoadID != "" && c.Props[run.PropCDCNoop] != "true" && !loads[c.LoadID] {
			f.ahead++
			continue
		}
		f.snapshot, found = c.SnapshotID, true
		break
	}
	for c := range e.Sums {
		if i := slices.Index(e.Columns, c); i >= 0 {
			f.sumIdx = append(f.sumIdx, i)
		}
	}
	slices.Sort(f.sumIdx)
	for c := range e.Min {
		if i := slices.Index(e.Columns, c); i >= 0 {
			f.rngIdx = append(f.rngIdx, i)
		}
	}
	slices.Sort(f.rngIdx)
	for _, k := range e.Keys {
		i := slices.Index(e.Columns, k)
		if i < 0 {
			return nil, "the key column " + k + " is not a column of the table"
		}
		f.keyIdx = append(f.keyIdx, i)
	}
	if !found {
		return f, "" // no batch of the table's: an empty state
	}
	it, err := o.history.Scan(ctx, f.snapshot, nil)
	if err != nil {
		return nil, fmt.Sprintf("%s could not be read at snapshot %d: %v", o.historyName, f.snapshot, err)
	}
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Sprintf("%s could not be read at snapshot %d: %v", o.historyName, f.snapshot, err)
		}
		why := f.add(rec, e, types)
		rec.Release()
		if why != "" {
			return nil, why
		}
	}
	for _, r := range f.rows {
		if !r.del {
			f.live++
		}
	}
	return f, ""
}

// add folds one batch of history rows.
func (f *cdcFold) add(rec arrow.RecordBatch, e Expectation, types []plan.Type) string {
	sc := rec.Schema()
	idx := func(name string) int {
		if is := sc.FieldIndices(name); len(is) > 0 {
			return is[0]
		}
		return -1
	}
	cols := make([]arrow.Array, len(e.Columns))
	var missing []string
	for i, c := range e.Columns {
		j := idx(c)
		if j < 0 {
			missing = append(missing, c)
			continue
		}
		cols[i] = rec.Column(j)
	}
	opI, ordI, srcI := idx(histOp), idx(histOrdering), idx(histSource)
	for n, j := range map[string]int{histOp: opI, histOrdering: ordI, histSource: srcI} {
		if j < 0 {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Sprintf("%s has no column %s (written before it was added, or by an older version)", f.name, strings.Join(missing, ", "))
	}
	ops, ords, srcs := rec.Column(opI), rec.Column(ordI), rec.Column(srcI)
	for r := 0; r < int(rec.NumRows()); r++ {
		op := FormatValue(ops, r)
		switch op {
		case "none":
			continue // a batch that applied nothing
		case "insert", "update", "delete":
		default:
			f.badOps[op]++
			continue
		}
		f.changes++
		ord := FormatValue(ords, r)
		file, pos := splitSource(FormatValue(srcs, r))
		if held, ok := f.files[file]; ok {
			file = held
		} else {
			f.files[file] = file
		}
		key := f.keyText(cols, r)
		st, ok := f.rows[key]
		if ok {
			switch c := st.later(ord, file, pos); {
			case c == 0:
				f.twice++
				continue
			case c < 0:
				continue
			}
		} else {
			st = &foldRow{}
			f.rows[key] = st
		}
		st.ord, st.file, st.pos, st.del = ord, file, pos, op == "delete"
		st.sums, st.rng = nil, nil
		if st.del {
			st.fp = [2]uint64{}
			continue
		}
		st.fp = f.rowHash(cols, r)
		for _, i := range f.sumIdx {
			var c foldCell
			c.null = !addCell(&c, cols[i], r)
			st.sums = append(st.sums, c)
		}
		for _, i := range f.rngIdx {
			st.rng = append(st.rng, FormatValue(cols[i], r))
		}
	}
	return ""
}

// addCell sets c to the numeric value a[r]; false when it is NULL.
func addCell(c *foldCell, a arrow.Array, r int) bool {
	if a == nil || a.IsNull(r) {
		return false
	}
	switch v := a.(type) {
	case *array.Int32:
		c.exact.SetInt64(int64(v.Value(r)))
	case *array.Int64:
		c.exact.SetInt64(v.Value(r))
	case *array.Decimal128:
		c.exact.Set(v.Value(r).BigInt())
	case *array.Float64:
		c.f = v.Value(r)
	default:
		return false
	}
	return true
}

func (f *cdcFold) keyText(cols []arrow.Array, r int) string {
	var parts []string
	for _, i := range f.keyIdx {
		parts = append(parts, FormatValue(cols[i], r))
	}
	return strings.Join(parts, "\x00")
}

// rowHash is the 128-bit fingerprint of a row's values, column by column.
func (f *cdcFold) rowHash(cols []arrow.Array, r int) [2]uint64 {
	var h1, h2 maphash.Hash
	h1.SetSeed(f.seed[0])
	h2.SetSeed(f.seed[1])
	for _, a := range cols {
		s := "\x01NULL"
		if a != nil && !a.IsNull(r) {
			s = FormatValue(a, r)
		}
		h1.WriteString(s)
		h1.WriteByte(0)
		h2.WriteString(s)
		h2.WriteByte(0)
	}
	return [2]uint64{h1.Sum64(), h2.Sum64()}
}

// compareLake compares n lake rows with the recomputed state (col returns
// the lake's column of the expectation's column i, nil when absent).
func (f *cdcFold) compareLake(col func(int) arrow.Array, ncols, n int) {
	cols := make([]arrow.Array, ncols)
	for i := range cols {
		cols[i] = col(i)
	}
	for r := 0; r < n; r++ {
		key := f.keyText(cols, r)
		st, ok := f.rows[key]
		switch {
		case !ok || st.del:
			f.extra++
			f.example("key %s is in the lake, not in the recomputed state", key)
		case st.seen:
			f.extra++
			f.example("key %s is in the lake twice", key)
		default:
			st.seen = true
			if f.rowHash(cols, r) == st.fp {
				f.matched++
			} else {
				f.differ++
				f.example("key %s differs from its latest change (%s in %s at %d)", key, st.ord, st.file, st.pos)
			}
		}
	}
}

func (f *cdcFold) example(format, key string, a ...any) {
	if len(f.examples) < 3 {
		f.examples = append(f.examples, fmt.Sprintf(format, append([]any{strings.ReplaceAll(key, "\x00", ", ")}, a...)...))
	}
}

// sum is the recomputed state's sum of column i as text: exact decimal
// text for integers and decimals, %g text (17 digits) for floats.
func (f *cdcFold) sum(i int, t plan.Type) string {
	k := slices.Index(f.sumIdx, i)
	var exact big.Int
	var fl float64
	for _, r := range f.rows {
		if r.del || r.sums[k].null {
			continue
		}
		exact.Add(&exact, &r.sums[k].exact)
		fl += r.sums[k].f
	}
	if t.Kind == plan.Double {
		return strconv.FormatFloat(fl, 'g', 17, 64)
	}
	scale := 0
	if t.Kind == plan.Decimal {
		scale = t.Scale
	}
	return formatScaled(&exact, scale)
}

// rangeOf is the recomputed state's lowest and highest value of column i
// (canonical text, compared as the column's type), "" when it has none.
func (f *cdcFold) rangeOf(i int, id arrow.Type) (lo, hi string) {
	k := slices.Index(f.rngIdx, i)
	first := true
	for _, r := range f.rows {
		if r.del || r.rng[k] == "NULL" {
			continue
		}
		v := r.rng[k]
		if first {
			lo, hi, first = v, v, false
			continue
		}
		if compareTextOf(id, v, lo) < 0 {
			lo = v
		}
		if compareTextOf(id, v, hi) > 0 {
			hi = v
		}
	}
	return lo, hi
}

// missing counts the recomputed rows the lake does not hold (after the
// lake was compared), with an example.
func (f *cdcFold) missing() int64 {
	var n int64
	for k, r := range f.rows {
		if !r.del && !r.seen {
			n++
			f.example("key %s is missing from the lake", k)
		}
	}
	return n
}

// cdcFindings are gate 4's checks of a change-capture table against the
// recomputed state, after the lake was read.
func (r *Reconciliation) addCDCFindings(f *cdcFold, e Expectation, types []plan.Type, lk *lakeStats) {
	add := func(name string, ok bool, detail, fix string) {
		fd := Finding{Name: name, Status: Pass, Detail: detail}
		if !ok {
			fd.Status, fd.Fix = Fail, fix
		}
		r.Checks = append(r.Checks, fd)
	}
	from := fmt.Sprintf("%d change(s) of %s (snapshot %d) folded per key", f.changes, f.name, f.snapshot)
	if f.ahead > 0 {
		from += fmt.Sprintf(", %d batch(es) the table has not committed left out", f.ahead)
	}
	fix := "the table changed outside Lima or a batch was applied wrongly: inspect the table history, then rebuild it from the change files with run --full-refresh"
	add("row count", lk.rows == f.live, fmt.Sprintf("%s leave %d row(s); the lake holds %d (this batch appended %d)", from, f.live, lk.rows, e.Rows), fix)
	for _, i := range f.sumIdx {
		c := e.Columns[i]
		ct, ok := compareSum(types[i], f.sum(i, types[i]), lk.sum(i))
		ct.SourceFrom = SourceFromHistory
		r.ControlTotals[c] = ct
		kind := "exact"
		if !ct.Exact {
			kind = fmt.Sprintf("within %g relative", FloatTolerance)
		}
		add("sum("+c+")", ok, fmt.Sprintf("recomputed from the history %s, lake %s, variance %s (%s)", ct.Source, ct.Target, ct.Variance, kind), fix)
	}
	for _, i := range f.rngIdx {
		c := e.Columns[i]
		id := arrow.STRING
		if types[i].IsNumeric() {
			id = arrow.INT64 // compared as numbers
		}
		lo, hi := f.rangeOf(i, id)
		lmin, lmax := lk.minText(i), lk.maxText(i)
		add("range of "+c, lo == lmin && hi == lmax, fmt.Sprintf("recomputed from the history %s … %s; lake %s … %s", lo, hi, lmin, lmax), fix)
	}
	missing := f.missing()
	var bad []string
	for op, n := range f.badOps {
		bad = append(bad, fmt.Sprintf("%d with operation %q", n, op))
	}
	slices.Sort(bad)
	ok := f.differ == 0 && f.extra == 0 && missing == 0 && f.twice == 0 && len(bad) == 0
	detail := fmt.Sprintf("%d of the lake's %d row(s) equal the latest change of their key value for value; %d differ, %d not in the recomputed state, %d missing from the lake",
		f.matched, lk.rows, f.differ, f.extra, missing)
	if f.twice > 0 {
		detail += fmt.Sprintf("; the history holds %d change(s) twice (same key, ordering and source position)", f.twice)
	}
	if len(bad) > 0 {
		detail += "; history rows of no known operation: " + strings.Join(bad, ", ")
	}
	if len(f.examples) > 0 {
		detail += " (" + strings.Join(f.examples, "; ") + ")"
	}
	add(CDCStateCheck, ok, detail, fix)
}
