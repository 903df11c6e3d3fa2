package gates

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lima-lake/lima/engine/mart"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// ReconcileMart is gate 4 for a mart Lima built: it re-reads the committed
// mart and checks that its grain is unique, then recomputes its sums and
// counts of the fact table's columns (and its row count) group by group
// from a scan of the base tables — the snapshots the build recorded — and
// compares them exactly (floats within FloatTolerance). The recomputation
// is written here, apart from the engine's, so that gate 4 does not trust
// the write path. Averages, minimums, maximums and measures of joined
// tables are not recomputed; the findings say which were.
func ReconcileMart(ctx context.Context, p *plan.Plan, name string, martTable sink.Table, bases map[string]sink.Table) (*Reconciliation, error) {
	t := p.Tables[name]
	if t == nil || !t.Built() {
		return nil, fmt.Errorf("gate 4: %s is not a mart Lima builds", name)
	}
	r := &Reconciliation{Table: mart.TableName(name), ControlTotals: map[string]ControlTotal{}}
	cur, ok, err := martTable.Current(ctx)
	if err != nil {
		return nil, fmt.Errorf("gate 4: read %s: %w", r.Table, err)
	}
	if !ok {
		return nil, fmt.Errorf("gate 4: %s has not been built", r.Table)
	}
	r.SnapshotID = cur.SnapshotID
	snaps := map[string]int64{}
	for _, part := range strings.Split(cur.Props[mart.PropInputs], ",") {
		tn, rest, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			if id, err := strconv.ParseInt(rest[i+1:], 10, 64); err == nil {
				snaps[tn] = id
			}
		}
	}
	add := func(name string, ok bool, detail, fix string) {
		st := Pass
		if !ok {
			st = Fail
		}
		r.Checks = append(r.Checks, Finding{Name: name, Status: st, Detail: detail, Fix: fix})
	}

	// The measures recomputed: count(*), and sums and counts of the fact's
	// columns.
	fact := t.From[0]
	var checked, skipped []plan.Measure
	for _, m := range t.Measures {
		if m.Column == "" {
			checked = append(checked, m)
			continue
		}
		ref, err := t.Ref(m.Column)
		if err == nil && ref.Table == fact && (m.Agg == plan.AggSum || m.Agg == plan.AggCount) {
			checked = append(checked, m)
		} else {
			skipped = append(skipped, m)
		}
	}

	// 1. The mart as committed.
	lake := map[string][]string{} // group → checked measure texts
	dupEx := ""
	it, err := martTable.(sink.Scanner).Scan(ctx, 0, nil)
	if err != nil {
		return nil, fmt.Errorf("gate 4: read %s: %w", r.Table, err)
	}
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("gate 4: read %s: %w", r.Table, err)
		}
		col := func(n string) arrow.Array {
			if idx := rec.Schema().FieldIndices(n); len(idx) > 0 {
				return rec.Column(idx[0])
			}
			return nil
		}
		var grain, meas []arrow.Array
		for _, g := range t.Grain {
			grain = append(grain, col(g))
		}
		for _, m := range checked {
			meas = append(meas, col(m.Name))
		}
		if slices.Contains(grain, nil) || slices.Contains(meas, nil) {
			rec.Release()
			return nil, fmt.Errorf("gate 4: %s lacks a column of its definition", r.Table)
		}
		for row := 0; row < int(rec.NumRows()); row++ {
			r.LakeRows++
			var parts []string
			for _, a := range grain {
				parts = append(parts, FormatValue(a, row))
			}
			k := strings.Join(parts, "\x00")
			if _, dup := lake[k]; dup {
				if dupEx == "" {
					dupEx = "(" + strings.Join(parts, ", ") + ")"
				}
				continue
			}
			vals := make([]string, len(meas))
			for i, a := range meas {
				vals[i] = FormatValue(a, row)
			}
			lake[k] = vals
		}
		rec.Release()
	}
	grainText := "(" + strings.Join(t.Grain, ", ") + ")"
	dups := r.LakeRows - int64(len(lake))
	add("grain "+grainText+" unique", dups == 0, fmt.Sprintf("%d rows, %d distinct grain values%s", r.LakeRows, len(lake), ifText(dupEx != "", "; repeated: "+dupEx)),
		"the mart holds a group twice: it was written outside Lima or built from a table that changed; rebuild it")

	// 2. The same groups recomputed from the base tables.
	rc, err := recompute(ctx, t, checked, bases, snaps)
	if err != nil {
		return nil, err
	}
	var missing, extra, differ []string
	mismatch := 0
	for k, want := range rc.groups {
		got, ok := lake[k]
		if !ok {
			missing = append(missing, groupText(k))
			continue
		}
		for i, m := range checked {
			w := want[i].text(rc.types[i])
			if !sameValue(rc.types[i], w, got[i]) {
				mismatch++
				if len(differ) < 3 {
					differ = append(differ, fmt.Sprintf("%s %s: mart %s, base tables %s", groupText(k), m.Name, got[i], w))
				}
			}
		}
	}
	for k := range lake {
		if _, ok := rc.groups[k]; !ok {
			extra = append(extra, groupText(k))
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	slices.Sort(differ)
	var names []string
	for _, m := range checked {
		if m.Column == "" {
			names = append(names, "count(*)")
		} else {
			names = append(names, m.Agg+"("+m.Column+")")
		}
	}
	detail := fmt.Sprintf("%s recomputed for %d groups from %d rows of %s", strings.Join(names, ", "), len(rc.groups), rc.rows, fact)
	ok = len(missing) == 0 && len(extra) == 0 && mismatch == 0
	if !ok {
		detail += fmt.Sprintf("; %d value(s) differ, %d group(s) missing from the mart, %d group(s) not in the base tables", mismatch, len(missing), len(extra))
		for _, d := range differ {
			detail += "; " + d
		}
		if len(missing) > 0 {
			detail += "; missing: " + listFirst(missing, 3)
		}
		if len(extra) > 0 {
			detail += "; not in the base tables: " + listFirst(extra, 3)
		}
	}
	if len(skipped) > 0 {
		var s []string
		for _, m := range skipped {
			s = append(s, m.Name)
		}
		detail += "; not recomputed: " + strings.Join(s, ", ")
	}
	add("ground truth from "+fact, ok, detail, "the mart does not hold what its base tables give: rebuild it, and check whether it was changed outside Lima")
	// Totals over all groups, as control totals.
	for i, m := range checked {
		var src, tgt lakeSum
		for _, want := range rc.groups {
			if want[i].set {
				src.exact.Add(&src.exact, &want[i].sum)
				src.f += want[i].f
			}
		}
		for _, got := range lake {
			if got[i] != "NULL" {
				addText(&tgt, rc.types[i], got[i])
			}
		}
		ct, _ := compareSum(rc.types[i], formatTotal(rc.types[i], src), tgt)
		r.ControlTotals[m.Name] = ct
	}
	if len(snaps) == 0 {
		r.Checks = append(r.Checks, Finding{Name: "inputs of the build", Status: Warn,
			Detail: fmt.Sprintf("the mart's snapshot %d records no inputs (%s): it was not written by Lima's build; the base tables were read at their current snapshots", cur.SnapshotID, mart.PropInputs),
			Fix:    "rebuild the mart with lima-tui run"})
	}
	r.Status = Pass
	for _, f := range r.Checks {
		if f.Status == Fail {
			r.Status = Fail
		}
	}
	return r, nil
}

func ifText(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

func groupText(k string) string { return "(" + strings.ReplaceAll(k, "\x00", ", ") + ")" }

// recomputed is one aggregate recomputed by gate 4.
type recomputed struct {
	set bool
	sum big.Int // unscaled; counts
	f   float64
}

func (v recomputed) text(t plan.Type) string {
	if !v.set {
		return "NULL"
	}
	switch t.Kind {
	case plan.Double:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case plan.Decimal:
		return formatScaled(&v.sum, t.Scale)
	}
	return v.sum.String()
}

func formatTotal(t plan.Type, s lakeSum) string {
	if t.Kind == plan.Double {
		return strconv.FormatFloat(s.f, 'g', 17, 64)
	}
	return formatScaled(&s.exact, scaleOfType(t))
}

func scaleOfType(t plan.Type) int {
	if t.Kind == plan.Decimal {
		return t.Scale
	}
	return 0
}

func addText(s *lakeSum, t plan.Type, txt string) {
	if t.Kind == plan.Double {
		f, _ := strconv.ParseFloat(txt, 64)
		s.f += f
		return
	}
	if v, ok := parseScaled(txt, scaleOfType(t)); ok {
		s.exact.Add(&s.exact, v)
	}
}

func sameValue(t plan.Type, want, got string) bool {
	if t.Kind != plan.Double || want == "NULL" || got == "NULL" {
		return want == got
	}
	a, err1 := strconv.ParseFloat(want, 64)
	b, err2 := strconv.ParseFloat(got, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	den := math.Max(math.Abs(a), math.Abs(b))
	return a == b || (den > 0 && math.Abs(a-b)/den <= FloatTolerance)
}

type recomputation struct {
	groups map[string][]recomputed
	types  []plan.Type // of the checked measures' mart columns
	rows   int64
}

// recompute groups the fact rows by the grain, joining the tables the
// dimensions need, and aggregates the checked measures.
func recompute(ctx context.Context, t *plan.Table, checked []plan.Measure, bases map[string]sink.Table, snaps map[string]int64) (*recomputation, error) {
	fact := t.From[0]
	scanner := func(tn string) (sink.Scanner, error) {
		bt, ok := bases[tn]
		if !ok {
			return nil, fmt.Errorf("gate 4: base table %s of the mart was not given", tn)
		}
		sc, ok := bt.(sink.Scanner)
		if !ok {
			return nil, fmt.Errorf("gate 4: the sink cannot read %s back", tn)
		}
		return sc, nil
	}
	// Columns needed per table.
	need := map[string][]string{}
	want := func(tn, c string) {
		if !slices.Contains(need[tn], c) {
			need[tn] = append(need[tn], c)
		}
	}
	type joinSpec struct{ left, right plan.ColumnRef }
	var joins []joinSpec
	for _, j := range t.Joins {
		l, err1 := t.Ref(j.Column)
		rr, err2 := t.Ref(j.References)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("gate 4: join %s → %s cannot be resolved", j.Column, j.References)
		}
		joins = append(joins, joinSpec{l, rr})
		want(l.Table, l.Column)
		want(rr.Table, rr.Column)
	}
	var dims []plan.ColumnRef
	for _, g := range t.Grain {
		i := slices.IndexFunc(t.Dimensions, func(d plan.Dimension) bool { return d.Name == g })
		if i < 0 {
			return nil, fmt.Errorf("gate 4: grain column %s is not a dimension", g)
		}
		ref, err := t.Ref(t.Dimensions[i].Column)
		if err != nil {
			return nil, err
		}
		dims = append(dims, ref)
		want(ref.Table, ref.Column)
	}
	rc := &recomputation{groups: map[string][]recomputed{}}
	for _, m := range checked {
		if m.Column != "" {
			ref, _ := t.Ref(m.Column)
			want(ref.Table, ref.Column)
		}
	}
	// Lookups of the joined tables: join key text → the row's texts.
	type lookup struct {
		cols []string
		rows map[string][]string
	}
	lookups := map[string]*lookup{}
	for _, j := range joins {
		sc, err := scanner(j.right.Table)
		if err != nil {
			return nil, err
		}
		lk := &lookup{cols: need[j.right.Table], rows: map[string][]string{}}
		it, err := sc.Scan(ctx, snaps[j.right.Table], lk.cols)
		if err != nil {
			return nil, fmt.Errorf("gate 4: read %s: %w", j.right.Table, err)
		}
		ki := slices.Index(lk.cols, j.right.Column)
		for rec, err := range it {
			if err != nil {
				return nil, fmt.Errorf("gate 4: read %s: %w", j.right.Table, err)
			}
			for row := 0; row < int(rec.NumRows()); row++ {
				vals := make([]string, len(lk.cols))
				for i, c := range lk.cols {
					vals[i] = FormatValue(rec.Column(rec.Schema().FieldIndices(c)[0]), row)
				}
				if vals[ki] != "NULL" {
					lk.rows[vals[ki]] = vals
				}
			}
			rec.Release()
		}
		lookups[j.right.Table] = lk
	}
	// The fact table, row by row.
	sc, err := scanner(fact)
	if err != nil {
		return nil, err
	}
	fcols := need[fact]
	it, err := sc.Scan(ctx, snaps[fact], fcols)
	if err != nil {
		return nil, fmt.Errorf("gate 4: read %s: %w", fact, err)
	}
	measureIdx := make([]int, len(checked))
	for i, m := range checked {
		measureIdx[i] = -1
		if m.Column != "" {
			ref, _ := t.Ref(m.Column)
			measureIdx[i] = slices.Index(fcols, ref.Column)
		}
	}
	rc.types = make([]plan.Type, len(checked))
	typed := false
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("gate 4: read %s: %w", fact, err)
		}
		arrs := make([]arrow.Array, len(fcols))
		for i, c := range fcols {
			idx := rec.Schema().FieldIndices(c)
			if len(idx) == 0 {
				rec.Release()
				return nil, fmt.Errorf("gate 4: %s has no column %s", fact, c)
			}
			arrs[i] = rec.Column(idx[0])
		}
		if !typed {
			typed = true
			for i, m := range checked {
				rc.types[i] = plan.Type{Kind: plan.Long}
				if m.Agg == plan.AggSum {
					rc.types[i] = sumType(arrs[measureIdx[i]].DataType())
				}
			}
		}
		for row := 0; row < int(rec.NumRows()); row++ {
			if row&1023 == 0 && ctx.Err() != nil {
				rec.Release()
				return nil, ctx.Err()
			}
			rc.rows++
			texts := map[string]map[string]string{fact: {}}
			for i, c := range fcols {
				texts[fact][c] = FormatValue(arrs[i], row)
			}
			for _, j := range joins {
				lt := texts[j.left.Table]
				got := map[string]string{}
				if lt != nil {
					if vals, ok := lookups[j.right.Table].rows[lt[j.left.Column]]; ok && lt[j.left.Column] != "NULL" {
						for i, c := range lookups[j.right.Table].cols {
							got[c] = vals[i]
						}
					}
				}
				texts[j.right.Table] = got
			}
			var parts []string
			for gi, ref := range dims {
				v, ok := texts[ref.Table][ref.Column]
				if !ok {
					v = "NULL"
				}
				d := t.Dimensions[slices.IndexFunc(t.Dimensions, func(d plan.Dimension) bool { return d.Name == t.Grain[gi] })]
				if d.Transform != "" && v != "NULL" {
					v = periodStart(d.Transform, v)
				}
				parts = append(parts, v)
			}
			k := strings.Join(parts, "\x00")
			g := rc.groups[k]
			if g == nil {
				g = make([]recomputed, len(checked))
				for i, m := range checked {
					g[i].set = m.Agg == plan.AggCount
				}
				rc.groups[k] = g
			}
			for i, m := range checked {
				if measureIdx[i] < 0 {
					g[i].sum.Add(&g[i].sum, big.NewInt(1))
					continue
				}
				a := arrs[measureIdx[i]]
				if a.IsNull(row) {
					continue
				}
				if m.Agg == plan.AggCount {
					g[i].sum.Add(&g[i].sum, big.NewInt(1))
					continue
				}
				g[i].set = true
				switch v := a.(type) {
				case *array.Int32:
					g[i].sum.Add(&g[i].sum, big.NewInt(int64(v.Value(row))))
				case *array.Int64:
					g[i].sum.Add(&g[i].sum, big.NewInt(v.Value(row)))
				case *array.Decimal128:
					g[i].sum.Add(&g[i].sum, v.Value(row).BigInt())
				case *array.Float64:
					g[i].f += v.Value(row)
				default:
					rec.Release()
					return nil, fmt.Errorf("gate 4: %s.%s of type %s cannot be summed", fact, m.Column, a.DataType())
				}
			}
		}
		rec.Release()
	}
	return rc, nil
}

// sumType is the type of the sum of a column, read from its Arrow type.
func sumType(dt arrow.DataType) plan.Type {
	switch t := dt.(type) {
	case *arrow.Decimal128Type:
		return plan.Type{Kind: plan.Decimal, Precision: plan.MaxDecimalPrecision, Scale: int(t.Scale)}
	case *arrow.Float64Type:
		return plan.Type{Kind: plan.Double}
	}
	return plan.Type{Kind: plan.Long}
}

// periodStart is the first day of the year, month or day of a canonical
// date (2006-01-02) or timestamp text, in UTC.
func periodStart(tr, v string) string {
	var tm time.Time
	var err error
	for _, l := range []string{"2006-01-02T15:04:05.000000Z", "2006-01-02T15:04:05.000000", "2006-01-02"} {
		if tm, err = time.Parse(l, v); err == nil {
			break
		}
	}
	if err != nil {
		return "?" + v
	}
	switch tr {
	case plan.TransformYear:
		tm = time.Date(tm.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case plan.TransformMonth:
		tm = time.Date(tm.Year(), tm.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return tm.Format("2006-01-02")
}
