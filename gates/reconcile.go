// Package gates holds the rules of Lima's five gates, with no UI: each gate
// returns findings with evidence, shared by the wizard and the headless
// commands.
package gates

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lima-lake/lima/engine/keyset"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
)

// Finding statuses.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
	// Warn is a finding a person should read; it does not fail the gate.
	Warn = "warn"
)

// Finding is one check of a gate with its evidence.
type Finding struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Fix says what to do when the check failed.
	Fix string `json:"fix,omitempty"`
}

// FloatTolerance is the relative tolerance for floating-point sums.
const FloatTolerance = 1e-9

// Expectation is what the read path saw, to be proved against the lake. It
// is saved with the run so gate 4 can be re-run later.
type Expectation struct {
	Table      string   `json:"table"`
	LoadID     string   `json:"load_id"`
	SnapshotID int64    `json:"snapshot_id"`
	Rows       int64    `json:"rows"`
	Columns    []string `json:"columns"`
	Types      []string `json:"types"`
	Required   []bool   `json:"required"`
	Keys       []string `json:"keys,omitempty"`
	// Sums are exact decimal text for integers and decimals, %g text for floats.
	Sums      map[string]string `json:"sums"`
	Min       map[string]string `json:"min,omitempty"`
	Max       map[string]string `json:"max,omitempty"`
	Samples   []run.Sample      `json:"samples,omitempty"`
	Mode      string            `json:"mode"`
	Watermark string            `json:"watermark,omitempty"`
	// SourceTotals are a database source's own count and sums in the read
	// snapshot (see SourceTotals); nil for files.
	SourceTotals *run.SourceTotals `json:"source_totals,omitempty"`
	// DuplicateRows (a table without a key) counts the accepted rows that
	// repeat another accepted row whole; nil with a key, or in an
	// expectation saved before it was recorded.
	DuplicateRows *int64 `json:"duplicate_rows,omitempty"`
	// Delta (mode upsert) is what the load's delta commit should have
	// removed; gate 4 then proves the change instead of re-reading the
	// table (reconcile_delta.go). Nil otherwise, and in expectations saved
	// before it was recorded.
	Delta *DeltaExpect `json:"delta,omitempty"`
}

// NoKeyCheck is the name of gate 4's duplicate check of a table without a
// key: its rows can only be compared whole.
const NoKeyCheck = "no key: duplicates compared by whole row"

// NotChecked prefixes the name of a finding that says what gate 4 did not
// check for a table (status Skip); the headline of a run with such a
// finding never says that every table reconciles.
const NotChecked = "not checked: "

// Expect builds the expectation of a loaded table.
func Expect(tr *run.TableResult) Expectation {
	e := Expectation{Table: tr.Name, LoadID: tr.LoadID, SnapshotID: tr.Commit.SnapshotID, Rows: tr.Source.Rows,
		Columns: tr.Columns, Required: tr.Required, Keys: tr.Keys, Sums: map[string]string{},
		Min: tr.Source.Min, Max: tr.Source.Max, Samples: tr.Source.Samples, Mode: tr.Mode, Watermark: tr.WatermarkAfter,
		SourceTotals: tr.SourceTotals, DuplicateRows: tr.Source.DuplicateRows}
	for _, t := range tr.Types {
		e.Types = append(e.Types, t.String())
	}
	for c, s := range tr.Source.Sums {
		e.Sums[c] = s.String()
	}
	if u := tr.Upsert; u != nil && tr.Mode == plan.ModeUpsert {
		e.Delta = &DeltaExpect{Updated: u.Updated, Deleted: u.Deleted + u.SoftDeleted}
	}
	return e
}

// ControlTotal compares one column's sum on both sides.
type ControlTotal struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	Variance string `json:"variance"`
	Exact    bool   `json:"exact"`
	// SourceFrom says where the source side comes from when it is not
	// the rows read: "recomputed from history" for change capture.
	SourceFrom string `json:"source_from,omitempty"`
}

// SamplePair shows one source row next to the lake row with the same key.
type SamplePair struct {
	Locator string            `json:"locator"`
	Source  map[string]string `json:"source"`
	// Raw is the source's text as read where cleaning changed it (see
	// run.Sample.Raw); Source is that text cleaned and typed.
	Raw   map[string]string `json:"raw,omitempty"`
	Lake  map[string]string `json:"lake,omitempty"`
	Match bool              `json:"match"`
}

// Reconciliation is gate 4's verdict on one table.
type Reconciliation struct {
	Table         string                  `json:"table"`
	SnapshotID    int64                   `json:"snapshot_id"`
	Status        string                  `json:"status"`
	LakeRows      int64                   `json:"lake_rows"`
	Checks        []Finding               `json:"checks"`
	ControlTotals map[string]ControlTotal `json:"control_totals"`
	Samples       []SamplePair            `json:"samples,omitempty"`
}

// Reconcile re-reads the table's current snapshot (not the writer's
// counters) and compares it with what the read path saw. For a full load
// the whole table must equal the load; for an incremental load the
// snapshot's own rows are compared through the sample and the totals of the
// load are not comparable to the whole table, so only the full-table checks
// (nulls, duplicate keys) apply beyond counts of the load's files.
//
// A change-capture table (mode cdc) is compared with its applied state
// recomputed from its history table (WithChangeHistory; reconcile_cdc.go):
// row count, control sums, ranges and every row by key.
func Reconcile(ctx context.Context, sc sink.Scanner, e Expectation, opts ...Option) (*Reconciliation, error) {
	r := &Reconciliation{Table: e.Table, ControlTotals: map[string]ControlTotal{}}
	types := make([]plan.Type, len(e.Types))
	for i, s := range e.Types {
		t, err := plan.ParseType(s)
		if err != nil {
			return nil, fmt.Errorf("gate 4: column %s: %w", e.Columns[i], err)
		}
		types[i] = t
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var fold *cdcFold
	foldWhy := ""
	if e.Mode == plan.ModeCDC {
		fold, foldWhy = foldHistory(ctx, sc, o, e, types)
	}
	// Pin the snapshot read: every check below is about this one, and the
	// verdict names it.
	if cur, ok := sc.(interface {
		Current(context.Context) (sink.Commit, bool, error)
	}); ok {
		c, found, err := cur.Current(ctx)
		if err != nil {
			return nil, fmt.Errorf("gate 4: the table's current snapshot: %w", err)
		}
		if found {
			r.SnapshotID = c.SnapshotID
		}
	}
	// A delta commit is proved from what it changed (reconcile_delta.go).
	if ch, ok := deltaCheckable(ctx, sc, e, r.SnapshotID); ok && fold == nil {
		if err := reconcileDelta(ctx, sc, e, types, o, r, ch); err != nil {
			return nil, err
		}
		r.Status = Pass
		for _, f := range r.Checks {
			if f.Status == Fail {
				r.Status = Fail
			}
		}
		return r, nil
	}
	it, err := sc.Scan(ctx, r.SnapshotID, nil)
	if err != nil {
		return nil, fmt.Errorf("gate 4: read the lake table: %w", err)
	}
	lk := newLakeStats(e, types, o.keys)
	defer lk.keys.Close()
	lk.fold = fold
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("gate 4: read the lake table: %w", err)
		}
		err := lk.add(rec)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("gate 4: the duplicate check: %w", err)
		}
	}
	r.LakeRows = lk.rows
	full := e.Mode == "" || e.Mode == "full"
	add := func(name string, ok bool, detail, fix string) {
		st := Pass
		if !ok {
			st = Fail
		}
		r.Checks = append(r.Checks, Finding{Name: name, Status: st, Detail: detail, Fix: fix})
	}
	switch {
	case fold != nil:
		r.addCDCFindings(fold, e, types, lk) // row count, sums, ranges, rows by key
	case full:
		add("row count", lk.rows == e.Rows,
			fmt.Sprintf("source accepted %d rows; the lake snapshot holds %d", e.Rows, lk.rows),
			"the table changed outside Lima or the load lost rows: rerun with --full-refresh and inspect the table history")
	default:
		add("row count", lk.rows >= e.Rows,
			fmt.Sprintf("this load accepted %d rows; the lake table holds %d in all", e.Rows, lk.rows), "rows of this load are missing from the table")
	}
	cols := make([]string, 0, len(e.Sums))
	for c := range e.Sums {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	for _, c := range cols {
		if !full {
			break
		}
		i := slices.Index(e.Columns, c)
		if i < 0 {
			continue
		}
		ct, ok := compareSum(types[i], e.Sums[c], lk.sum(i))
		r.ControlTotals[c] = ct
		kind := "exact"
		if !ct.Exact {
			kind = fmt.Sprintf("within %g relative", FloatTolerance)
		}
		add("sum("+c+")", ok, fmt.Sprintf("source %s, lake %s, variance %s (%s)", ct.Source, ct.Target, ct.Variance, kind),
			"a value changed between source and lake: compare the sample rows and the table history")
	}
	if e.SourceTotals != nil {
		// Beside the lake's sums (full load) or, for an incremental load,
		// the sums of the rows this load accepted.
		accepted := map[string]string{}
		for c := range e.SourceTotals.Sums {
			if ct, ok := r.ControlTotals[c]; ok && full {
				accepted[c] = ct.Target
			} else {
				accepted[c] = e.Sums[c]
			}
		}
		r.Checks = append(r.Checks, SourceTotals(e.SourceTotals, e.Columns, types, accepted, full)...)
	}
	for i, c := range e.Columns {
		if e.Required[i] {
			n := lk.nulls[i]
			add("no nulls in "+c, n == 0, fmt.Sprintf("%d null(s) in required column %s", n, c), "required values are missing in the lake: the table was written outside Lima")
		}
	}
	if len(e.Keys) > 0 {
		add("unique key ("+strings.Join(e.Keys, ", ")+")", lk.dups == 0, fmt.Sprintf("%d duplicate key(s) in %d rows", lk.dups, lk.rows),
			"the same key was loaded twice: check for a load applied twice or rows appended outside Lima")
	} else {
		r.Checks = append(r.Checks, noKeyFinding(e, full, lk.rowDups, lk.rows))
	}
	if full && fold == nil {
		for _, c := range sortedKeys(e.Min) {
			i := slices.Index(e.Columns, c)
			if i < 0 {
				continue
			}
			lmin, lmax := lk.minText(i), lk.maxText(i)
			add("range of "+c, lmin == e.Min[c] && lmax == e.Max[c],
				fmt.Sprintf("source %s … %s; lake %s … %s", e.Min[c], e.Max[c], lmin, lmax), "dates outside the loaded range are in the table")
		}
	}
	matched := lk.pairSamples(e, r)
	if len(e.Samples) > 0 {
		add("sample rows side by side", matched == len(e.Samples), fmt.Sprintf("%d of %d sampled source rows found identical in the lake", matched, len(e.Samples)),
			"open the sample pairs to see which value differs")
	}
	if f, ok := MetaCount(ctx, sc, r.SnapshotID, lk.rows); ok { // metacount.go (engineer refresh)
		r.Checks = append(r.Checks, f)
	}
	if what, why := notChecked(e, full || fold != nil, foldWhy); what != "" {
		r.Checks = append(r.Checks, Finding{Name: NotChecked + what, Status: Skip, Detail: why})
	}
	r.Status = Pass
	for _, f := range r.Checks {
		if f.Status == Fail {
			r.Status = Fail
		}
	}
	return r, nil
}

// noKeyFinding compares the whole-row duplicates of a keyless table: in a
// full load the lake must repeat exactly as many rows as the load accepted
// repeated; in a load that adds to the table, repeats across loads cannot
// be told from a load applied twice, so any is a warning.
func noKeyFinding(e Expectation, full bool, lakeDups, lakeRows int64) Finding {
	f := Finding{Name: NoKeyCheck, Status: Pass}
	switch {
	case full && e.DuplicateRows != nil:
		f.Detail = fmt.Sprintf("the load accepted %d row(s) repeating another row whole; the lake holds %d in %d rows", *e.DuplicateRows, lakeDups, lakeRows)
		if lakeDups != *e.DuplicateRows {
			f.Status = Fail
			f.Fix = "rows were loaded twice or appended outside Lima: inspect the table history, then reload with --full-refresh; declare load.keys so duplicates are refused by key"
		}
	case lakeDups == 0:
		f.Detail = fmt.Sprintf("no row of the lake's %d repeats another whole", lakeRows)
	default:
		f.Status = Warn
		src := "not recorded"
		if e.DuplicateRows != nil {
			src = fmt.Sprintf("%d", *e.DuplicateRows)
		}
		f.Detail = fmt.Sprintf("%d of the lake's %d rows repeat another row whole (this load's repeats: %s); without a key, repeats across loads cannot be told from a load applied twice: not decided", lakeDups, lakeRows, src)
		f.Fix = "declare load.keys for this table so each row has one copy, or reload with --full-refresh"
	}
	return f
}

// notChecked says what gate 4 could not check for a table of this mode,
// and why ("" when the table was checked in full).
// foldWhy is why the applied state of a change-capture table was not
// recomputed from its history.
func notChecked(e Expectation, full bool, foldWhy string) (what, why string) {
	if full {
		return "", ""
	}
	var parts []string
	if len(e.Sums) > 0 {
		parts = append(parts, "the lake's control sums ("+strings.Join(sortedKeys(e.Sums), ", ")+")")
	}
	if len(e.Min) > 0 {
		parts = append(parts, "the range of "+strings.Join(sortedKeys(e.Min), ", "))
	}
	if len(parts) == 0 {
		return "", ""
	}
	why = "the table also holds the rows of earlier loads, so only this load's rows (count, samples) and the whole table's keys and nulls were compared"
	if e.Mode == plan.ModeCDC {
		why = "change capture applies inserts, updates and deletes, and the applied state was not recomputed from the history (" + foldWhy + "), so only the change rows' count, samples and the whole table's keys and nulls were compared"
	}
	return strings.Join(parts, " and "), fmt.Sprintf("mode %s: %s", e.Mode, why)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sampleKey(e Expectation, s run.Sample) string {
	var parts []string
	if len(e.Keys) > 0 {
		for _, k := range e.Keys {
			parts = append(parts, s.Values[k])
		}
	} else {
		for _, c := range e.Columns {
			parts = append(parts, s.Values[c])
		}
	}
	return strings.Join(parts, "\x00")
}

func compareSum(t plan.Type, src string, lake lakeSum) (ControlTotal, bool) {
	if t.Kind == plan.Double {
		sv, _ := strconv.ParseFloat(src, 64)
		diff := lake.f - sv
		den := math.Max(math.Abs(sv), math.Abs(lake.f))
		ok := diff == 0 || (den > 0 && math.Abs(diff)/den <= FloatTolerance)
		return ControlTotal{Source: src, Target: strconv.FormatFloat(lake.f, 'g', 17, 64), Variance: strconv.FormatFloat(diff, 'g', 6, 64)}, ok
	}
	scale := 0
	if t.Kind == plan.Decimal {
		scale = t.Scale
	}
	sv, ok := parseScaled(src, scale)
	target := formatScaled(&lake.exact, scale)
	if !ok {
		return ControlTotal{Source: src, Target: target, Variance: "?", Exact: true}, false
	}
	diff := new(big.Int).Sub(&lake.exact, sv)
	return ControlTotal{Source: src, Target: target, Variance: formatScaled(diff, scale), Exact: true}, diff.Sign() == 0
}

// parseScaled reads decimal text into an unscaled integer, independently of
// the engine's parser.
func parseScaled(s string, scale int) (*big.Int, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) > scale {
		return nil, false
	}
	fp += strings.Repeat("0", scale-len(fp))
	v, ok := new(big.Int).SetString(ip+fp, 10)
	if !ok {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

func formatScaled(v *big.Int, scale int) string {
	neg := v.Sign() < 0
	d := new(big.Int).Abs(v).String()
	if scale > 0 {
		for len(d) <= scale {
			d = "0" + d
		}
		d = d[:len(d)-scale] + "." + d[len(d)-scale:]
	}
	if neg {
		return "-" + d
	}
	return d
}

type lakeSum struct {
	exact big.Int
	f     float64
}

// pairSamples sets each sampled source row beside the lake row found for
// it in r.Samples (the text as read kept beside) and counts the identical
// ones.
func (lk *lakeStats) pairSamples(e Expectation, r *Reconciliation) int {
	matched := 0
	for _, s := range e.Samples {
		p := SamplePair{Locator: s.Loc.String(), Source: s.Values, Raw: s.Raw}
		if lv, ok := lk.found[sampleKey(e, s)]; ok {
			p.Lake = lv
			p.Match = mapsEqual(s.Values, lv)
		}
		if p.Match {
			matched++
		}
		r.Samples = append(r.Samples, p)
	}
	return matched
}

type lakeStats struct {
	e      Expectation
	types  []plan.Type
	rows   int64
	sums   map[int]*lakeSum
	nulls  []int64
	keyIdx []int
	// keys are the key hashes seen (or, without a key, the whole rows'),
	// within the key memory budget (WithKeyMemory).
	keys    *keyset.Set
	seed    [2]maphash.Seed
	dups    int64
	rowDups int64
	minmax  map[int]*[2]string
	// mmInts: the integer columns' range by value (minMaxInts).
	mmInts map[int]*[2]int64
	// kbuf is the key hash's buffer.
	kbuf    []byte
	mmIdx   []int
	want    map[string]bool
	found   map[string]map[string]string
	colIdx  []int
	started bool
	// fold, for a change-capture table, is the applied state recomputed
	// from the history: every lake row is compared with it by key.
	fold *cdcFold
}

func newLakeStats(e Expectation, types []plan.Type, ko keyset.Options) *lakeStats {
	l := &lakeStats{e: e, types: types, sums: map[int]*lakeSum{}, nulls: make([]int64, len(e.Columns)),
		keys: keyset.New(ko), seed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		minmax: map[int]*[2]string{}, want: map[string]bool{}, found: map[string]map[string]string{}}
	for c := range e.Sums {
		if i := slices.Index(e.Columns, c); i >= 0 {
			l.sums[i] = &lakeSum{}
		}
	}
	for _, k := range e.Keys {
		l.keyIdx = append(l.keyIdx, slices.Index(e.Columns, k))
	}
	for c := range e.Min {
		if i := slices.Index(e.Columns, c); i >= 0 {
			l.mmIdx = append(l.mmIdx, i)
		}
	}
	for _, s := range e.Samples {
		l.want[sampleKey(e, s)] = true
	}
	return l
}

func (l *lakeStats) sum(i int) lakeSum {
	if s, ok := l.sums[i]; ok {
		return *s
	}
	return lakeSum{}
}

func (l *lakeStats) minText(i int) string {
	if m, ok := l.minmax[i]; ok {
		return m[0]
	}
	return ""
}

func (l *lakeStats) maxText(i int) string {
	if m, ok := l.minmax[i]; ok {
		return m[1]
	}
	return ""
}

func (l *lakeStats) add(rec arrow.RecordBatch) error {
	if !l.started {
		l.started = true
		l.colIdx = make([]int, len(l.e.Columns))
		for i, c := range l.e.Columns {
			l.colIdx[i] = -1
			for j, f := range rec.Schema().Fields() {
				if f.Name == c {
					l.colIdx[i] = j
				}
			}
		}
	}
	n := int(rec.NumRows())
	l.rows += int64(n)
	col := func(i int) arrow.Array {
		// i < 0: a key column the expectation does not list (not a plan
		// Lima validated); it reads as absent, never as a panic.
		if i < 0 || l.colIdx[i] < 0 {
			return nil
		}
		return rec.Column(l.colIdx[i])
	}
	for i := range l.e.Columns {
		if a := col(i); a != nil {
			l.nulls[i] += int64(a.NullN())
		} else {
			l.nulls[i] += int64(n)
		}
	}
	for i, s := range l.sums {
		a := col(i)
		if a == nil {
			continue
		}
		// Values that fit in 64 bits (every integer, most decimals) are
		// summed per batch in 128 bits — exact: fewer than 2^63 values
		// below 2^63 cannot overflow it — and added to the exact sum once.
		var acc decimal128.Num
		for r := 0; r < n; r++ {
			if a.IsNull(r) {
				continue
			}
			switch v := a.(type) {
			case *array.Int32:
				acc = acc.Add(decimal128.FromI64(int64(v.Value(r))))
			case *array.Int64:
				acc = acc.Add(decimal128.FromI64(v.Value(r)))
			case *array.Decimal128:
				// Whatever the declared precision says, only a value
				// that fits in 64 bits joins the 128-bit sum.
				if d := v.Value(r); fits64(d) {
					acc = acc.Add(d)
				} else {
					s.exact.Add(&s.exact, d.BigInt())
				}
			case *array.Float64:
				s.f += v.Value(r)
			}
		}
		if acc != (decimal128.Num{}) {
			s.exact.Add(&s.exact, acc.BigInt())
		}
	}
	for _, i := range l.mmIdx {
		a := col(i)
		if a == nil {
			continue
		}
		if l.minMaxInts(i, a) {
			continue
		}
		for r := 0; r < n; r++ {
			if a.IsNull(r) {
				continue
			}
			txt := FormatValue(a, r)
			m, ok := l.minmax[i]
			if !ok {
				l.minmax[i] = &[2]string{txt, txt}
				continue
			}
			// Formatted once, compared twice.
			if compareText(a, txt, m[0]) < 0 {
				m[0] = txt
			}
			if compareText(a, txt, m[1]) > 0 {
				m[1] = txt
			}
		}
	}
	if len(l.keyIdx) == 0 {
		if err := l.addRows(col, n); err != nil {
			return err
		}
	}
	if l.fold != nil {
		l.fold.compareLake(col, len(l.e.Columns), n)
	}
	if len(l.keyIdx) > 0 || len(l.want) > 0 {
		for r := 0; r < n; r++ {
			if len(l.keyIdx) > 0 {
				// Each key value's canonical text and a NUL, hashed
				// from one reused buffer; one probe of the set.
				b := l.kbuf[:0]
				for _, i := range l.keyIdx {
					if a := col(i); a != nil {
						b = appendValue(b, a, r)
					}
					b = append(b, 0)
				}
				l.kbuf = b
				k := [2]uint64{maphash.Bytes(l.seed[0], b), maphash.Bytes(l.seed[1], b)}
				dup, err := l.keys.Add(k)
				if err != nil {
					return err
				}
				if dup {
					l.dups++
				}
			}
			if len(l.want) > 0 {
				var parts []string
				idx := l.keyIdx
				if len(idx) == 0 {
					idx = make([]int, len(l.e.Columns))
					for i := range idx {
						idx[i] = i
					}
				}
				for _, i := range idx {
					if a := col(i); a != nil {
						parts = append(parts, FormatValue(a, r))
					} else {
						parts = append(parts, "NULL")
					}
				}
				key := strings.Join(parts, "\x00")
				if l.want[key] {
					vals := map[string]string{}
					for i, c := range l.e.Columns {
						if a := col(i); a != nil {
							vals[c] = FormatValue(a, r)
						}
					}
					l.found[key] = vals
				}
			}
		}
	}
	return nil
}

// fits64 reports whether a decimal's unscaled value fits in an int64.
func fits64(d decimal128.Num) bool {
	hi, lo := d.HighBits(), d.LowBits()
	return (hi == 0 && lo < 1<<63) || (hi == -1 && lo >= 1<<63)
}

// minMaxInts keeps the range of an integer column by value, formatting a
// value only when it becomes the new minimum or maximum; false for other
// columns. The order is compareText's: integers order as numbers.
func (l *lakeStats) minMaxInts(i int, a arrow.Array) bool {
	var at func(int) int64
	switch v := a.(type) {
	case *array.Int32:
		at = func(r int) int64 { return int64(v.Value(r)) }
	case *array.Int64:
		at = v.Value
	default:
		return false
	}
	if l.mmInts == nil {
		l.mmInts = map[int]*[2]int64{}
	}
	m, mi := l.minmax[i], l.mmInts[i]
	for r := 0; r < a.Len(); r++ {
		if a.IsNull(r) {
			continue
		}
		x := at(r)
		if m == nil || mi == nil {
			txt := strconv.FormatInt(x, 10)
			m, mi = &[2]string{txt, txt}, &[2]int64{x, x}
			l.minmax[i], l.mmInts[i] = m, mi
			continue
		}
		if x < mi[0] {
			mi[0], m[0] = x, strconv.FormatInt(x, 10)
		}
		if x > mi[1] {
			mi[1], m[1] = x, strconv.FormatInt(x, 10)
		}
	}
	return true
}

// appendValue appends FormatValue(a, r) to b; the common types without
// making a string.
func appendValue(b []byte, a arrow.Array, r int) []byte {
	if a.IsNull(r) {
		return append(b, "NULL"...)
	}
	switch v := a.(type) {
	case *array.String:
		return append(b, v.Value(r)...)
	case *array.Int32:
		return strconv.AppendInt(b, int64(v.Value(r)), 10)
	case *array.Int64:
		return strconv.AppendInt(b, v.Value(r), 10)
	case *array.Date32:
		return time.Unix(int64(v.Value(r))*86400, 0).UTC().AppendFormat(b, "2006-01-02")
	}
	return append(b, FormatValue(a, r)...)
}

// addRows counts, for a table without a key, the rows that repeat an
// earlier row value for value (the same two-hash scheme as keys).
func (l *lakeStats) addRows(col func(int) arrow.Array, n int) error {
	for r := 0; r < n; r++ {
		var h1, h2 maphash.Hash
		h1.SetSeed(l.seed[0])
		h2.SetSeed(l.seed[1])
		for i := range l.e.Columns {
			s := "\x01NULL"
			if a := col(i); a != nil && !a.IsNull(r) {
				s = FormatValue(a, r)
			}
			h1.WriteString(s)
			h1.WriteByte(0)
			h2.WriteString(s)
			h2.WriteByte(0)
		}
		dup, err := l.keys.Add([2]uint64{h1.Sum64(), h2.Sum64()})
		if err != nil {
			return err
		}
		if dup {
			l.rowDups++
		}
	}
	return nil
}

// compareText orders canonical texts of a column's type. Dates and
// timestamps in canonical form order as text; numbers are compared as
// numbers.
func compareText(a arrow.Array, x, y string) int {
	return compareTextOf(a.DataType().ID(), x, y)
}

// compareTextOf is compareText for a column of Arrow type id.
func compareTextOf(id arrow.Type, x, y string) int {
	switch id {
	case arrow.INT32, arrow.INT64, arrow.DECIMAL128, arrow.FLOAT64:
		fx, _ := new(big.Float).SetString(x)
		fy, _ := new(big.Float).SetString(y)
		if fx == nil || fy == nil {
			return strings.Compare(x, y)
		}
		return fx.Cmp(fy)
	}
	return strings.Compare(x, y)
}

// FormatValue is the canonical text of an Arrow value, written here
// independently of the engine's formatter so that gate 4 does not trust the
// write path.
func FormatValue(a arrow.Array, r int) string {
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
	case *array.Float64:
		return strconv.FormatFloat(v.Value(r), 'g', -1, 64)
	case *array.Decimal128:
		scale := v.DataType().(*arrow.Decimal128Type).Scale
		return formatScaled(v.Value(r).BigInt(), int(scale))
	case *array.Date32:
		return time.Unix(int64(v.Value(r))*86400, 0).UTC().Format("2006-01-02")
	case *array.Timestamp:
		tt := v.DataType().(*arrow.TimestampType)
		var t time.Time
		switch tt.Unit {
		case arrow.Nanosecond:
			t = time.Unix(0, int64(v.Value(r)))
		default:
			t = time.UnixMicro(int64(v.Value(r)))
		}
		if tt.TimeZone != "" {
			return t.UTC().Format("2006-01-02T15:04:05.000000Z")
		}
		return t.UTC().Format("2006-01-02T15:04:05.000000")
	case *array.Boolean:
		return strconv.FormatBool(v.Value(r))
	case *array.Binary:
		// As clean.FormatCell writes binary: the bytes, quoted when they
		// are not UTF-8 text.
		b := v.Value(r)
		if utf8.Valid(b) {
			return string(b)
		}
		return strconv.Quote(string(b))
	}
	return a.ValueStr(r)
}

var _ = decimal128.Num{}

// ErrReconciliation marks a gate 4 failure (exit code 3).
var ErrReconciliation = errors.New("reconciliation failed")

// AdjustForReplays accounts for rows that replays of fixed exceptions
// appended after a full load: history is the table's lineage, newest first.
// Each replay snapshot records its row count and control sums; they are
// added to the expectation, so the whole table is still proved exactly.
// The range check is dropped (a replayed row may widen it). It returns the
// number of replays accounted for.
func AdjustForReplays(e Expectation, history []sink.Commit) (Expectation, int, error) {
	if e.Mode != "" && e.Mode != "full" {
		return e, 0, nil
	}
	var replays []sink.Commit
	found := false
	for _, c := range history {
		if c.LoadID == e.LoadID {
			found = true
			break
		}
		if c.Kind == sink.KindReplay {
			replays = append(replays, c)
		}
	}
	if !found || len(replays) == 0 {
		return e, 0, nil
	}
	out := e
	out.Sums = map[string]string{}
	for k, v := range e.Sums {
		out.Sums[k] = v
	}
	out.Min, out.Max = nil, nil
	for _, c := range replays {
		n, err := strconv.ParseInt(c.Props[sink.PropRows], 10, 64)
		if err != nil {
			return e, 0, fmt.Errorf("replay snapshot %d has no row count", c.SnapshotID)
		}
		out.Rows += n
		for col, cur := range out.Sums {
			i := slices.Index(e.Columns, col)
			t, err := plan.ParseType(e.Types[i])
			if err != nil {
				return e, 0, err
			}
			add, ok := c.Props[sink.PropSumPrefix+col]
			if !ok {
				continue
			}
			if t.Kind == plan.Double {
				a, _ := strconv.ParseFloat(cur, 64)
				b, _ := strconv.ParseFloat(add, 64)
				out.Sums[col] = strconv.FormatFloat(a+b, 'g', 17, 64)
				continue
			}
			scale := 0
			if t.Kind == plan.Decimal {
				scale = t.Scale
			}
			a, ok1 := parseScaled(cur, scale)
			b, ok2 := parseScaled(add, scale)
			if !ok1 || !ok2 {
				return e, 0, fmt.Errorf("replay snapshot %d: sum of %s is not a number", c.SnapshotID, col)
			}
			out.Sums[col] = formatScaled(new(big.Int).Add(a, b), scale)
		}
	}
	return out, len(replays), nil
}
