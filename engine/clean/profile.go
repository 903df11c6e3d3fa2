package clean

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// ColumnProfile is what profiling learned of one column. Samples, Min, Max,
// the NullTokens keys, the examples in Evidence and the Findings text hold
// raw source values: untrusted text that the caller must pass through the
// sanitizer before it reaches a terminal.
type ColumnProfile struct {
	Name string
	// Inferred is the type proposed from the sampled non-null values, read
	// with NumberStyle (decimal-comma numbers are numbers).
	Inferred Inference
	// NullTokens counts the values read as null by token; "" also counts
	// values of spaces only.
	NullTokens map[string]int
	// Formats counts the date patterns seen (plan token syntax), over all
	// values: those Infer knows and those of DateOrder (keyed
	// "dd/MM/yyyy or MM/dd/yyyy" while the order is ambiguous).
	Formats map[string]int
	// NumberStyle is the column's number convention, over all values.
	NumberStyle StyleDecision
	// DateOrder is the column's date field order, over all values.
	DateOrder DateDecision
	// Currencies counts the currency markers of its numbers (₩, $, KRW),
	// over all values: one currency is proposed as the column's, mixed
	// currencies are held back (RuleCurrency).
	Currencies Currencies
	// LeadingZeros counts values like 007 (all values).
	LeadingZeros int
	// Distinct is the approximate number of distinct non-null values
	// (HyperLogLog, about 1% standard error).
	Distinct uint64
	// Min and Max are the smallest and largest non-null values, raw, in the
	// order of the inferred type: numeric for numbers (read with
	// NumberStyle), chronological for dates, byte order otherwise.
	Min, Max string
	// Samples are up to 5 distinct non-null values, raw, in order of
	// appearance.
	Samples []string
	// Count is the number of values seen (rows); NonNull those not null.
	Count, NonNull int
}

// Finding is a data-quality issue of a column, phrased for a user; it goes
// to platform.yaml data_quality_issues.
type Finding struct {
	Column string `yaml:"column" json:"column"`
	Issue  string `yaml:"issue" json:"issue"`
	Impact string `yaml:"impact" json:"impact"`
	Fix    string `yaml:"fix" json:"fix"`
}

// Profiler limits.
const (
	// ProfileSampleSize is the number of non-null values per column kept
	// (a uniform reservoir sample) for type inference.
	ProfileSampleSize = 10_000
	// profileSamples is the number of distinct values shown per column.
	profileSamples = 5
)

// Profiler profiles the columns of a stream of rows in bounded memory: per
// column a reservoir of ProfileSampleSize values for inference, a fixed
// HyperLogLog sketch for the distinct count, and counters. Conventions
// (number style, date order), null tokens, leading zeros, formats and
// min/max are computed over every value. It is not safe for concurrent
// use.
type Profiler struct {
	cols  []*colProfile
	nulls map[string]bool
	toks  []string
	rng   *rand.Rand
}

type colProfile struct {
	name       string
	count      int
	nonNull    int
	nullTokens map[string]int
	reservoir  []string
	hll        hll
	samples    []string
	leading    int
	formats    map[string]int
	style      numberStyleAcc
	currency   Currencies
	order      dateOrderAcc
	// orderFmt sees the values no Infer pattern read, for Formats.
	orderFmt dateOrderAcc
	lexMin   string
	lexMax   string
	// numeric extremes under a decimal point [0] and a decimal comma [1]
	num [2]extreme
	// chronological extremes per date pattern
	dates map[string]*extreme
}

// extreme tracks the smallest and largest value by a float key.
type extreme struct {
	set          bool
	lo, hi       float64
	loRaw, hiRaw string
}

func (e *extreme) add(k float64, raw string) {
	if !e.set {
		e.set, e.lo, e.hi, e.loRaw, e.hiRaw = true, k, k, raw, raw
		return
	}
	if k < e.lo {
		e.lo, e.loRaw = k, raw
	}
	if k > e.hi {
		e.hi, e.hiRaw = k, raw
	}
}

// NewProfiler returns a profiler for the columns; nullTokens nil means
// DefaultNullTokens.
func NewProfiler(columns []string, nullTokens []string) *Profiler {
	if nullTokens == nil {
		nullTokens = DefaultNullTokens
	}
	p := &Profiler{nulls: map[string]bool{}, toks: nullTokens, rng: rand.New(rand.NewPCG(1, 2))}
	for _, t := range nullTokens {
		p.nulls[t] = true
	}
	for _, c := range columns {
		p.cols = append(p.cols, &colProfile{name: c, nullTokens: map[string]int{}, formats: map[string]int{}})
	}
	return p
}

// Add profiles one row; values are in the order of the columns. Missing
// values count as "" and values beyond the columns are ignored.
func (p *Profiler) Add(values []string) {
	for i, c := range p.cols {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		p.add(c, v)
	}
}

func (p *Profiler) add(c *colProfile, v string) {
	c.count++
	if p.nulls[v] {
		c.nullTokens[v]++
		return
	}
	t := strings.TrimSpace(v)
	if t == "" {
		c.nullTokens[""]++
		return
	}
	c.nonNull++
	// Reservoir sampling (algorithm R), deterministic.
	if len(c.reservoir) < ProfileSampleSize {
		c.reservoir = append(c.reservoir, v)
	} else if j := p.rng.IntN(c.nonNull); j < ProfileSampleSize {
		c.reservoir[j] = v
	}
	c.hll.add(v)
	if len(c.samples) < profileSamples {
		dup := false
		for _, s := range c.samples {
			dup = dup || s == v
		}
		if !dup {
			c.samples = append(c.samples, v)
		}
	}
	if c.nonNull == 1 || v < c.lexMin {
		c.lexMin = v
	}
	if c.nonNull == 1 || v > c.lexMax {
		c.lexMax = v
	}
	c.style.add(v)
	c.order.add(v)
	counted := false
	for i, st := range []NumberStyle{{AnyCurrency: true}, {DecimalComma: true, AnyCurrency: true}} {
		n, err := splitNumber(t, st)
		if err != nil {
			continue
		}
		if !counted {
			c.currency.add(n, v)
			counted = true
		}
		if i == 0 && len(n.intPart) > 1 && n.intPart[0] == '0' && n.fracPart == "" {
			c.leading++
		}
		if f, ok := numberFloat(n); ok {
			c.num[i].add(f, v)
		}
	}
	matched := false
	if looksDateLike(t) {
		for _, pat := range inferDatePatterns {
			l, _ := GoLayout(pat)
			if tm, err := time.Parse(l, t); err == nil {
				c.formats[pat]++
				if c.dates == nil {
					c.dates = map[string]*extreme{}
				}
				e := c.dates[pat]
				if e == nil {
					e = &extreme{}
					c.dates[pat] = e
				}
				e.add(float64(tm.Unix()), v)
				matched = true
				break
			}
		}
	}
	if !matched {
		c.orderFmt.add(v)
	}
}

// looksDateLike is a cheap filter before trying date layouts: 8 to 10
// bytes of digits and separators.
func looksDateLike(s string) bool {
	if len(s) < 8 || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && c != '-' && c != '/' && c != '.' {
			return false
		}
	}
	return true
}

func numberFloat(n numberText) (float64, bool) {
	s := n.intPart
	if s == "" {
		s = "0"
	}
	if n.fracPart != "" {
		s += "." + n.fracPart
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if n.neg {
		f = -f
	}
	return f, true
}

// Profile returns the profiles of the columns so far, in column order.
func (p *Profiler) Profile() []ColumnProfile {
	out := make([]ColumnProfile, len(p.cols))
	for i, c := range p.cols {
		cp := ColumnProfile{
			Name:         c.name,
			NullTokens:   map[string]int{},
			Formats:      map[string]int{},
			NumberStyle:  c.style.decision(),
			Currencies:   c.currency.clone(),
			DateOrder:    c.order.decision(),
			LeadingZeros: c.leading,
			Distinct:     c.hll.estimate(),
			Samples:      append([]string(nil), c.samples...),
			Count:        c.count,
			NonNull:      c.nonNull,
		}
		cp.Inferred = inferWithStyle(c.reservoir, p.toks, cp.NumberStyle.Style)
		for k, v := range c.nullTokens {
			cp.NullTokens[k] = v
		}
		for k, v := range c.formats {
			cp.Formats[k] = v
		}
		for k, v := range c.orderFmt.counts(cp.DateOrder) {
			cp.Formats[k] += v
		}
		if cp.Distinct > uint64(c.nonNull) {
			cp.Distinct = uint64(c.nonNull)
		}
		cp.Min, cp.Max = c.lexMin, c.lexMax
		switch cp.Inferred.Type.Kind {
		case plan.Long, plan.Int, plan.Decimal, plan.Double:
			st := 0
			if cp.NumberStyle.Style.DecimalComma {
				st = 1
			}
			if e := c.num[st]; e.set {
				cp.Min, cp.Max = e.loRaw, e.hiRaw
			}
		case plan.Date:
			var lo, hi *extreme
			for _, pat := range cp.Inferred.Formats {
				e := c.dates[pat]
				if e == nil {
					continue
				}
				if lo == nil || e.lo < lo.lo {
					lo = e
				}
				if hi == nil || e.hi > hi.hi {
					hi = e
				}
			}
			if lo != nil {
				cp.Min, cp.Max = lo.loRaw, hi.hiRaw
			}
		}
		out[i] = cp
	}
	return out
}

// Findings phrases the column's data-quality issues for a user: number
// conventions and their fixes, date order, leading zeros, null tokens,
// mixed date formats, values that do not fit the proposed type. Values
// quoted in the text are raw (see ColumnProfile).
func (p ColumnProfile) Findings() []Finding {
	var fs []Finding
	add := func(issue, impact, fix string) {
		fs = append(fs, Finding{Column: p.Name, Issue: issue, Impact: impact, Fix: fix})
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	if p.Count > 0 && p.NonNull == 0 {
		add(fmt.Sprintf("column is empty: all %d values are null", p.Count),
			"nothing to load; its type cannot be inferred", "drop the column or keep it as string")
	}
	ns := p.NumberStyle
	numeric := p.Inferred.Type.Kind != plan.String || ns.Numbers*2 > p.NonNull
	if ns.Ambiguous && numeric {
		if ns.Dot > 0 && ns.Comma > 0 {
			add(fmt.Sprintf("decimal point in %s (%s), decimal comma in %s (%s)",
				plural(ns.Dot, "value", "values"), ns.Examples["dot"], plural(ns.Comma, "value", "values"), ns.Examples["comma"]),
				"one convention misreads the other's values by a factor of 1000 or fails them",
				"choose the column's convention; the other values become exceptions to fix at the source")
		} else {
			ex := ns.Examples["both"]
			a, b := readAs(ex, NumberStyle{}), readAs(ex, NumberStyle{DecimalComma: true})
			if strings.Contains(a, ".") {
				a, b = b, a // the thousands reading first
			}
			add(fmt.Sprintf("column fits both %s = %s and %s = %s — choose", ex, a, ex, b),
				fmt.Sprintf("%s would be off by a factor of 1000 under the wrong convention", plural(ns.Both, "value", "values")),
				"choose decimal point or decimal comma for the column")
		}
	}
	if numeric {
		fixes := []struct{ name, one, many, impact, fix string }{
			{FixTrailingMinus, "value uses SAP trailing minus", "values use SAP trailing minus",
				"a plain number parser rejects them or drops the sign", "normalize: trailing minus → negative (counted in the run report)"},
			{FixParentheses, "value is negative in (parentheses)", "values are negative in (parentheses)",
				"a plain number parser rejects them", "normalize: (parentheses) → negative (counted in the run report)"},
		}
		for _, f := range fixes {
			if n := ns.Fixes[f.name]; n > 0 {
				add(fmt.Sprintf("%s (%s)", plural(n, f.one, f.many), ns.Examples[f.name]), f.impact, f.fix)
			}
		}
		if cu := p.Currencies; cu.Values > 0 {
			code, mixed := cu.Code()
			if mixed {
				add(fmt.Sprintf("%s mix currencies: %s", plural(cu.Values, "value with a currency", "values with a currency"), cu.Summary()),
					"amounts in different currencies cannot be summed; every value with a currency symbol is held back at load (rule currency)",
					"keep the currency in a column of its own (amount, currency) or convert the amounts at the source; then declare the column's currency")
			} else {
				also := ""
				for _, m := range cu.Sorted() {
					if codes := plan.SymbolCurrencies(m); len(codes) > 1 {
						also = fmt.Sprintf(" (%s is also written for %s: check)", m, strings.Join(codes[1:], ", "))
						break
					}
				}
				add(fmt.Sprintf("%s in %s%s: %s", plural(cu.Values, "value carries its currency", "values carry their currency"), code, also, cu.Summary()),
					"without a declared currency they are held back at load (rule currency)",
					fmt.Sprintf("declare currency: %s on the column: the symbol is then removed (counted in the run report) and another currency's symbol is held back", code))
			}
		}
	}
	if d := p.DateOrder; d.Ambiguous {
		if d.DayProof > 0 && d.MonthProof > 0 {
			add(fmt.Sprintf("dates mix d/M and M/d: %s only as d/M, %d only as M/d", plural(d.DayProof, "value is a date", "values are dates"), d.MonthProof),
				"one order misreads or fails the other's values",
				"choose the order ("+strings.Join(d.DayFirst, ", ")+" or "+strings.Join(d.MonthFirst, ", ")+"); the other values become exceptions")
		} else {
			add(fmt.Sprintf("d/M vs M/d cannot be told apart: %s ≤ 12 in both fields", valuesAre(d.Both)),
				"a wrong guess swaps day and month in every value without an error",
				"choose the order: "+strings.Join(d.DayFirst, ", ")+" (day first) or "+strings.Join(d.MonthFirst, ", ")+" (month first)")
		}
	}
	if p.LeadingZeros > 0 {
		add(fmt.Sprintf("leading zeros in %d values: keep as text", p.LeadingZeros),
			"as a number 007 becomes 7 and joins on the key break",
			"keep the column as string")
	}
	var toks []string
	nullCount := 0
	for t, n := range p.NullTokens {
		if t == "" {
			continue
		}
		toks = append(toks, t)
		nullCount += n
	}
	if len(toks) > 0 {
		sort.Slice(toks, func(i, j int) bool {
			if p.NullTokens[toks[i]] != p.NullTokens[toks[j]] {
				return p.NullTokens[toks[i]] > p.NullTokens[toks[j]]
			}
			return toks[i] < toks[j]
		})
		parts := make([]string, len(toks))
		for i, t := range toks {
			parts[i] = fmt.Sprintf("%q ×%d", t, p.NullTokens[t])
		}
		add(fmt.Sprintf("%s: %s", plural(nullCount, "value is a null token", "values are null tokens"), strings.Join(parts, ", ")),
			"loaded as text they would count as values", "read them as null (counted in the run report)")
	}
	if len(p.Inferred.Formats) > 1 {
		parts := make([]string, len(p.Inferred.Formats))
		for i, f := range p.Inferred.Formats {
			parts[i] = fmt.Sprintf("%s ×%d", f, p.Formats[f])
		}
		add(fmt.Sprintf("dates in %d formats: %s", len(parts), strings.Join(parts, ", ")),
			"a single format would fail the others",
			"accept all of them, in this order")
	}
	if inf := p.Inferred; inf.Type.Kind != plan.String && inf.Confidence < 1 && inf.NonNull > 0 {
		bad := inf.NonNull - int(math.Round(inf.Confidence*float64(inf.NonNull)))
		if bad > 0 {
			add(fmt.Sprintf("%d of %d sampled values are not %s", bad, inf.NonNull, inf.Type.Kind),
				"they become exceptions at load", "fix them at the source, or keep the column as string")
		}
	}
	return fs
}

// inferWithStyle is Infer with the column's number convention: under a
// decimal comma, the values that are numbers are rewritten with a decimal
// point first (Infer reads a decimal point only).
func inferWithStyle(values, nullTokens []string, st NumberStyle) Inference {
	st.AnyCurrency = true
	if !st.DecimalComma {
		return Infer(values, nullTokens)
	}
	conv := make([]string, len(values))
	for i, v := range values {
		conv[i] = v
		n, err := splitNumber(v, st)
		if err != nil {
			continue
		}
		s := n.intPart
		if n.fracPart != "" {
			s += "." + n.fracPart
		}
		if n.neg {
			s = "-" + s
		}
		conv[i] = s
	}
	return Infer(conv, nullTokens)
}

// readAs renders a value as the number it is under a style ("1234",
// "1.234"), or "?" when it is none.
func readAs(v string, st NumberStyle) string {
	st.AnyCurrency = true
	n, err := splitNumber(v, st)
	if err != nil {
		return "?"
	}
	s := strings.TrimLeft(n.intPart, "0")
	if s == "" {
		s = "0"
	}
	if n.fracPart != "" {
		s += "." + n.fracPart
	}
	if n.neg {
		s = "-" + s
	}
	return s
}

// hll is a HyperLogLog sketch with 2^14 one-byte registers (16 KiB, about
// 0.8% standard error), estimated with Ertl's improved raw estimator
// ("New cardinality estimation algorithms for HyperLogLog sketches",
// 2017), which needs neither bias tables nor a switch to linear counting.
type hll struct {
	reg []uint8
}

const (
	hllP = 14
	hllM = 1 << hllP
	hllQ = 64 - hllP
)

func (h *hll) add(s string) {
	if h.reg == nil {
		h.reg = make([]uint8, hllM)
	}
	x := hash64(s)
	idx := x >> hllQ
	rank := uint8(bits.LeadingZeros64(x<<hllP|1<<(hllP-1)) + 1)
	if rank > h.reg[idx] {
		h.reg[idx] = rank
	}
}

func (h *hll) estimate() uint64 {
	if h.reg == nil {
		return 0
	}
	var c [hllQ + 2]float64
	for _, r := range h.reg {
		c[r]++
	}
	m := float64(hllM)
	z := m * hllTau(1-c[hllQ+1]/m)
	for k := hllQ; k >= 1; k-- {
		z = 0.5 * (z + c[k])
	}
	z += m * hllSigma(c[0]/m)
	return uint64(math.Round(0.5 / math.Ln2 * m * m / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if z == prev {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if z == prev {
			return z / 3
		}
	}
}

// hash64 is FNV-1a with a murmur3 finalizer, so that every bit of the hash
// depends on every byte (FNV alone clusters in the high bits). It is
// deterministic: profiles do not change between runs.
func hash64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
