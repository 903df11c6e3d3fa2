package gates

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
)

// Types that survive a few bad values: a typed column is checked against
// every value read, cast exactly as the load will cast it (type, formats,
// normalizations). When 99.5% or more of them cast (at least all but one),
// the type stays and the finding names the values that will not, which
// become exceptions at load (rule type). Otherwise the column is text, and
// the finding says which type most values fit and what kept it from it.
// Either way nothing is decided silently.

// typeMinFitShare is the share of values that must cast for a type.
const typeMinFitShare = 0.995

// typeMisfitsAllowed is how many values of n may fail to cast.
func typeMisfitsAllowed(n int) int {
	return max(1, int(math.Floor(float64(n)*(1-typeMinFitShare)+1e-9)))
}

// misfits casts the column's values read with its proposed type and
// returns how many fail and a few of them. Values held back only for their
// currency do not count: the type fits them, and the currency finding
// names them.
func (cm *colModel) misfits() (int, []string, error) {
	spec := clean.ColumnSpec{Name: cm.name, Type: cm.typ, Formats: cm.formats, Normalize: cm.normalize, Currency: cm.currency}
	schema := arrow.NewSchema([]arrow.Field{{Name: cm.name, Type: clean.ArrowType(cm.typ), Nullable: true}}, nil)
	c, err := clean.NewCaster([]clean.ColumnSpec{spec}, schema, memory.NewGoAllocator())
	if err != nil {
		return 0, nil, err
	}
	defer c.Release()
	bad := 0
	var ex []string
	row := make([]string, 1)
	for _, v := range cm.ev.Values {
		row[0] = v
		if errs := c.Cast(row, nil); len(errs) > 0 && !onlyCurrency(errs) {
			bad++
			if len(ex) < 3 {
				ex = append(ex, fmt.Sprintf("%q", v))
			}
		}
	}
	return bad, ex, nil
}

// checkFit judges the proposed type against the values read: it keeps the
// type with a finding naming the values that will not cast, or falls back
// to text with a finding saying why.
func (cm *colModel) checkFit(ref string) (Finding, bool) {
	if cm.typ.Kind == plan.String || len(cm.ev.Values) == 0 {
		return Finding{}, false
	}
	bad, ex, err := cm.misfits()
	if err != nil || bad == 0 {
		return Finding{}, false
	}
	n := len(cm.ev.Values)
	typ := describeType(cm.typ, cm.formats)
	fit := 100 * float64(n-bad) / float64(n)
	if bad <= typeMisfitsAllowed(n) {
		return Finding{Name: ref + ": type", Status: Warn,
			Detail: fmt.Sprintf("%s: %d of %d values read fit it (%.1f%%); %s (%s) %s not: %s held back at load (rule type)",
				typ, n-bad, n, fit, countNoun(bad, "value", "values"), strings.Join(ex, ", "), map[bool]string{true: "does", false: "do"}[bad == 1], map[bool]string{true: "its row is", false: "their rows are"}[bad == 1]),
			Fix: "fix the values at the source and replay them from the exception queue; keep the column as string if they are meant as text"}, true
	}
	old := cm.typ
	cm.typ, cm.formats = plan.Type{Kind: plan.String}, nil
	cm.normalize = slicesDeleteNumeric(cm.normalize)
	cm.currency = ""
	return Finding{Name: ref + ": type", Status: Warn,
		Detail: fmt.Sprintf("string: only %d of %d values read (%.1f%%) fit %s, less than %.1f%%; %s do not (%s)",
			n-bad, n, fit, describeType(old, nil), 100*typeMinFitShare, countNoun(bad, "value", "values"), strings.Join(ex, ", ")),
		Fix: fmt.Sprintf("set type %s by hand if those values are errors (they are then held back at load), or keep the column as text", old)}, true
}

// slicesDeleteNumeric drops the normalizations that only numbers take.
func slicesDeleteNumeric(ns []string) []string {
	var out []string
	for _, n := range ns {
		if n != "decimal_comma" {
			out = append(out, n)
		}
	}
	return out
}

// pinFormats gives a date or timestamp column the formats its values were
// read in, most frequent first, so that the load tries the right layout
// first instead of every default one. A value counts for the first format
// (in the order they were known: the profile's, then clean's defaults)
// that casts it, as the load would cast it. Formats no value needed are
// dropped; nothing changes when no value casts.
func (cm *colModel) pinFormats() {
	var cands []string
	add := func(fs []string) {
		for _, f := range fs {
			if !slices.Contains(cands, f) {
				cands = append(cands, f)
			}
		}
	}
	add(cm.formats)
	switch cm.typ.Kind {
	case plan.Date:
		add(clean.DefaultDateFormats)
	case plan.Timestamp, plan.TimestampTZ:
		add(clean.DefaultTimestampFormats)
	default:
		return
	}
	counts := make([]int, len(cands))
	casters := make([]*clean.Caster, len(cands))
	schema := arrow.NewSchema([]arrow.Field{{Name: cm.name, Type: clean.ArrowType(cm.typ), Nullable: true}}, nil)
	for i, f := range cands {
		c, err := clean.NewCaster([]clean.ColumnSpec{{Name: cm.name, Type: cm.typ, Formats: []string{f}, Normalize: cm.normalize}}, schema, memory.NewGoAllocator())
		if err != nil {
			continue
		}
		defer c.Release()
		casters[i] = c
	}
	row := make([]string, 1)
	any := false
	for _, v := range cm.ev.Values {
		row[0] = v
		for i, c := range casters {
			if c != nil && len(c.Cast(row, nil)) == 0 {
				counts[i]++
				any = true
				break
			}
		}
	}
	if !any {
		return
	}
	idx := make([]int, 0, len(cands))
	for i := range cands {
		if counts[i] > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return counts[idx[a]] > counts[idx[b]] })
	cm.formats = cm.formats[:0:0]
	for _, i := range idx {
		cm.formats = append(cm.formats, cands[i])
	}
}

// onlyCurrency reports whether every failure is the currency rule's.
func onlyCurrency(errs []clean.CellError) bool {
	for _, e := range errs {
		if e.Rule != clean.RuleCurrency {
			return false
		}
	}
	return true
}

// castForms casts a column's values read with its proposed type and
// normalizations and returns each value's loaded text (as a references
// check compares it), "" for a value that does not cast or is null.
func (cm *colModel) castForms() []string {
	spec := clean.ColumnSpec{Name: cm.name, Type: cm.typ, Formats: cm.formats, Normalize: cm.normalize, Currency: cm.currency}
	schema := arrow.NewSchema([]arrow.Field{{Name: cm.name, Type: clean.ArrowType(cm.typ), Nullable: true}}, nil)
	c, err := clean.NewCaster([]clean.ColumnSpec{spec}, schema, memory.NewGoAllocator())
	if err != nil {
		return nil
	}
	defer c.Release()
	out := make([]string, len(cm.ev.Values))
	row := make([]string, 1)
	for i, v := range cm.ev.Values {
		row[0] = v
		if errs := c.Cast(row, nil); len(errs) == 0 && !c.Cells()[0].Null {
			out[i] = clean.FormatCell(cm.typ, c.Cells()[0])
		}
	}
	return out
}
