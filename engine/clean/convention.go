package clean

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// StyleDecision is the number convention of one column, decided from all of
// its sampled values together, never row by row.
type StyleDecision struct {
	// Style is the convention to cast with: the one the evidence proves,
	// the majority when it contradicts itself, a decimal point when nothing
	// tells. Check Ambiguous before trusting it.
	Style NumberStyle
	// Ambiguous: the user must choose. Either every informative value fits
	// both conventions with different meanings (1.234, 1,234), or some
	// values prove a decimal point and others a decimal comma.
	Ambiguous bool
	// Evidence says why, with counts and an example of each kind, for a
	// person (raw values quoted with %q).
	Evidence string
	// Dot and Comma count values that fit only one convention: a decimal
	// point (12.5, 1,234.56) or a decimal comma (12,5, 1.234,56).
	Dot, Comma int
	// Both counts values that fit both conventions with different meanings:
	// 1.234 is 1234 with a decimal comma and 1.234 with a decimal point.
	Both int
	// Numbers counts the values that are numbers under either convention
	// (1234 and -5 included, which tell nothing).
	Numbers int
	// Fixes counts the normalizations casting with Style applies (the
	// numbers.go Fix* names: trailing minus, parentheses, currency symbol,
	// thousands separator, decimal comma, trim), over the values it parses.
	Fixes map[string]int
	// Examples holds the first raw value of each kind: "dot", "comma",
	// "both", and each fix name.
	Examples map[string]string
}

// numberStyleAcc accumulates the evidence of DetectNumberStyle one value at
// a time (the profiler streams).
type numberStyleAcc struct {
	dot, comma, both, numbers int
	// fixes under each convention; the decision picks one set.
	fixes    [2]map[string]int
	examples map[string]string
	fixEx    [2]map[string]string
}

func (a *numberStyleAcc) example(kind, v string) {
	if a.examples == nil {
		a.examples = map[string]string{}
	}
	if _, ok := a.examples[kind]; !ok {
		a.examples[kind] = v
	}
}

func (a *numberStyleAcc) add(v string) {
	p, perr := splitNumber(v, NumberStyle{AnyCurrency: true})
	c, cerr := splitNumber(v, NumberStyle{DecimalComma: true, AnyCurrency: true})
	okP, okC := perr == nil, cerr == nil
	if !okP && !okC {
		return
	}
	a.numbers++
	switch {
	case okP && !okC:
		a.dot++
		a.example("dot", v)
	case okC && !okP:
		a.comma++
		a.example("comma", v)
	case p.intPart != c.intPart || p.fracPart != c.fracPart:
		a.both++
		a.example("both", v)
	}
	for i, n := range []numberText{p, c} {
		if (i == 0 && !okP) || (i == 1 && !okC) {
			continue
		}
		if a.fixes[i] == nil {
			a.fixes[i], a.fixEx[i] = map[string]int{}, map[string]string{}
		}
		seen := map[string]bool{}
		for _, f := range n.fixes {
			if seen[f] {
				continue
			}
			seen[f] = true
			a.fixes[i][f]++
			if _, ok := a.fixEx[i][f]; !ok {
				a.fixEx[i][f] = v
			}
		}
	}
}

func (a *numberStyleAcc) decision() StyleDecision {
	d := StyleDecision{Dot: a.dot, Comma: a.comma, Both: a.both, Numbers: a.numbers}
	ex := func(kind string) string { return fmt.Sprintf("%q", a.examples[kind]) }
	switch {
	case a.dot > 0 && a.comma > 0:
		d.Ambiguous = true
		d.Style.DecimalComma = a.comma > a.dot
		d.Evidence = fmt.Sprintf("contradictory: a decimal point proven by %s (e.g. %s), a decimal comma by %s (e.g. %s)",
			nValues(a.dot), ex("dot"), nValues(a.comma), ex("comma"))
	case a.dot > 0:
		d.Evidence = fmt.Sprintf("decimal point, proven by %s (e.g. %s)", nValues(a.dot), ex("dot"))
		if a.both > 0 {
			d.Evidence += fmt.Sprintf("; %s read either way (e.g. %s)", nValuesCan(a.both), ex("both"))
		}
	case a.comma > 0:
		d.Style.DecimalComma = true
		d.Evidence = fmt.Sprintf("decimal comma, proven by %s (e.g. %s)", nValues(a.comma), ex("comma"))
		if a.both > 0 {
			d.Evidence += fmt.Sprintf("; %s read either way (e.g. %s)", nValuesCan(a.both), ex("both"))
		}
	case a.both > 0:
		d.Ambiguous = true
		d.Evidence = fmt.Sprintf("no value tells the convention and %s read either way (e.g. %s)", nValuesCan(a.both), ex("both"))
	case a.numbers > 0:
		d.Evidence = fmt.Sprintf("%d numbers, none with a separator that tells the convention", a.numbers)
	default:
		d.Evidence = "no numbers"
	}
	i := 0
	if d.Style.DecimalComma {
		i = 1
	}
	d.Fixes = map[string]int{}
	d.Examples = map[string]string{}
	for k, v := range a.fixes[i] {
		d.Fixes[k] = v
		d.Examples[k] = a.fixEx[i][k]
	}
	for k, v := range a.examples {
		d.Examples[k] = v
	}
	return d
}

// nValues and the like phrase a count: "1 value", "2 values are".
func nValues(n int) string {
	if n == 1 {
		return "1 value"
	}
	return fmt.Sprintf("%d values", n)
}

func nValuesCan(n int) string { return nValues(n) + " can" }

func valuesAre(n int) string {
	if n == 1 {
		return "1 value is"
	}
	return nValues(n) + " are"
}

func valuesHave(n int) string {
	if n == 1 {
		return "1 value has"
	}
	return nValues(n) + " have"
}

// DetectNumberStyle decides the number convention of a column from all of
// its sampled values. Values like 1.234,56 or 12,5 prove a decimal comma;
// 1,234.56 or 12.5 a decimal point; 1.234 or 1,234 fit both (thousands or
// decimals). Only values fitting both: Ambiguous, for the user to choose;
// values proving each: Ambiguous, with both counts in Evidence. Values are
// read as clean casts them (splitNumber): surrounding spaces, currency
// symbols (of any currency: whether they load is RuleCurrency's concern,
// see Currencies), parentheses and a trailing minus (SAP's 150.000-) are accepted,
// thousands only in groups of three. Values that are no number under either
// convention are ignored.
func DetectNumberStyle(values []string) StyleDecision {
	var a numberStyleAcc
	for _, v := range values {
		a.add(v)
	}
	return a.decision()
}

// Date orders.
const (
	OrderDayMonth = "d/M"
	OrderMonthDay = "M/d"
)

// DateDecision is the field order of a column's numeric dates with the year
// last (03/04/2026, 3.4.26, 03-04-2026), decided from all of its sampled
// values together.
type DateDecision struct {
	// Order is OrderDayMonth or OrderMonthDay when the values prove it, ""
	// when they do not (Ambiguous) or there are no such dates.
	Order string
	// Patterns are the accepted date patterns in the plan's token syntax
	// (dd/MM/yyyy, M/d/yy, dd.MM.yyyy HH:mm), most frequent first; nil when
	// Ambiguous: never guessed.
	Patterns []string
	// DayFirst and MonthFirst are the patterns for each order, for the
	// user to choose from when Ambiguous.
	DayFirst, MonthFirst []string
	// Ambiguous: every such date has both fields ≤ 12, or some values prove
	// d/M and others M/d.
	Ambiguous bool
	// Evidence says why, with counts and examples, for a person.
	Evidence string
	// DayProof counts values that are real dates only as d/M (first field
	// > 12), MonthProof only as M/d (second field > 12), Both values with
	// both fields ≤ 12, Invalid values of the shape that are no real date
	// either way (31/31/2026, 30/02/2026).
	DayProof, MonthProof, Both, Invalid int
	// Dates counts the values of the shape.
	Dates int
}

// dateShape is a numeric date with the year last, split.
type dateShape struct {
	a, b     string // first and second field
	sep      byte
	year     string
	timePart string // "", "HH:mm" or "HH:mm:ss", with its leading separator
}

// parseDateShape recognizes d{1,2} sep d{1,2} sep (d{2}|d{4}) with sep one
// of / . -, optionally followed by a space or T and H:mm or H:mm:ss.
func parseDateShape(v string) (dateShape, bool) {
	var s dateShape
	v = strings.TrimSpace(v)
	digits := func(i int) int {
		j := i
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		return j
	}
	i := digits(0)
	if i == 0 || i > 2 || i >= len(v) {
		return s, false
	}
	s.a, s.sep = v[:i], v[i]
	if s.sep != '/' && s.sep != '.' && s.sep != '-' {
		return s, false
	}
	j := digits(i + 1)
	if j == i+1 || j-i-1 > 2 || j >= len(v) || v[j] != s.sep {
		return s, false
	}
	s.b = v[i+1 : j]
	k := digits(j + 1)
	if n := k - j - 1; n != 2 && n != 4 {
		return s, false
	}
	s.year = v[j+1 : k]
	rest := v[k:]
	if rest == "" {
		return s, true
	}
	if rest[0] != ' ' && rest[0] != 'T' {
		return s, false
	}
	clock := rest[1:]
	h, m, ok := strings.Cut(clock, ":")
	if !ok || len(h) < 1 || len(h) > 2 || !allDigits(h) {
		return s, false
	}
	if m2, sec, ok := strings.Cut(m, ":"); ok {
		if len(m2) != 2 || len(sec) != 2 || !allDigits(m2) || !allDigits(sec) {
			return s, false
		}
		s.timePart = rest[:1] + "HH:mm:ss"
	} else {
		if len(m) != 2 || !allDigits(m) {
			return s, false
		}
		s.timePart = rest[:1] + "HH:mm"
	}
	return s, true
}

// shapeKey groups values that share a pattern but for the field widths.
type shapeKey struct {
	sep      byte
	yearLen  int
	timePart string
}

type shapeStat struct {
	count int
	// oneDigit[0] is set when some first field has one digit, [1] for the
	// second field.
	oneDigit [2]bool
	// order of first appearance, for stable ties
	first int
}

// dateOrderAcc accumulates the evidence of DetectDateOrder.
type dateOrderAcc struct {
	day, month, both, invalid, dates int
	shapes                           map[shapeKey]*shapeStat
	examples                         map[string]string
}

func (a *dateOrderAcc) add(v string) {
	s, ok := parseDateShape(v)
	if !ok {
		return
	}
	a.dates++
	if a.shapes == nil {
		a.shapes, a.examples = map[shapeKey]*shapeStat{}, map[string]string{}
	}
	k := shapeKey{sep: s.sep, yearLen: len(s.year), timePart: s.timePart}
	st := a.shapes[k]
	if st == nil {
		st = &shapeStat{first: len(a.shapes)}
		a.shapes[k] = st
	}
	st.count++
	st.oneDigit[0] = st.oneDigit[0] || len(s.a) == 1
	st.oneDigit[1] = st.oneDigit[1] || len(s.b) == 1
	dm := realDate(s.year, s.b, s.a)
	md := realDate(s.year, s.a, s.b)
	kind := ""
	switch {
	case dm && md:
		a.both++
		kind = "both"
	case dm:
		a.day++
		kind = "day"
	case md:
		a.month++
		kind = "month"
	default:
		a.invalid++
		kind = "invalid"
	}
	if _, ok := a.examples[kind]; !ok {
		a.examples[kind] = v
	}
}

// realDate reports whether year, month and day make a real date.
func realDate(year, month, day string) bool {
	y, m, d := atoi(year), atoi(month), atoi(day)
	if len(year) == 2 {
		y += 2000 // the leap-year rule is the same a century apart but 1900/2100
	}
	if m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

type shapeEntry struct {
	k shapeKey
	s *shapeStat
}

// sortedShapes returns the shapes seen, most frequent first.
func (a *dateOrderAcc) sortedShapes() []shapeEntry {
	var all []shapeEntry
	for k, s := range a.shapes {
		all = append(all, shapeEntry{k, s})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].s.count != all[j].s.count {
			return all[i].s.count > all[j].s.count
		}
		return all[i].s.first < all[j].s.first
	})
	return all
}

// patterns renders the shapes seen for one order, most frequent first.
func (a *dateOrderAcc) patterns(dayFirst bool) []string {
	all := a.sortedShapes()
	out := make([]string, 0, len(all))
	for _, e := range all {
		first, second := "dd", "MM"
		if !dayFirst {
			first, second = "MM", "dd"
		}
		// One digit anywhere: the single-letter token, which also reads
		// two digits.
		if e.s.oneDigit[0] {
			first = first[:1]
		}
		if e.s.oneDigit[1] {
			second = second[:1]
		}
		year := "yyyy"
		if e.k.yearLen == 2 {
			year = "yy"
		}
		sep := string(e.k.sep)
		out = append(out, first+sep+second+sep+year+e.k.timePart)
	}
	return out
}

// counts returns the values of each shape seen, keyed by its pattern in the
// order d decided, or "day-first or month-first" while it has not.
func (a *dateOrderAcc) counts(d DateDecision) map[string]int {
	if a.dates == 0 {
		return nil
	}
	out := map[string]int{}
	day, month := a.patterns(true), a.patterns(false)
	for i, e := range a.sortedShapes() {
		var key string
		switch {
		case d.Ambiguous || d.Order == "":
			key = day[i] + " or " + month[i]
		case d.Order == OrderDayMonth:
			key = day[i]
		default:
			key = month[i]
		}
		out[key] += e.s.count
	}
	return out
}

func (a *dateOrderAcc) decision() DateDecision {
	d := DateDecision{DayProof: a.day, MonthProof: a.month, Both: a.both, Invalid: a.invalid, Dates: a.dates}
	if a.dates == 0 {
		return d
	}
	d.DayFirst, d.MonthFirst = a.patterns(true), a.patterns(false)
	ex := func(kind string) string { return fmt.Sprintf("%q", a.examples[kind]) }
	switch {
	case a.day > 0 && a.month > 0:
		d.Ambiguous = true
		d.Evidence = fmt.Sprintf("contradictory: d/M proven by %s (e.g. %s), M/d by %s (e.g. %s)",
			nValues(a.day), ex("day"), nValues(a.month), ex("month"))
	case a.day > 0:
		d.Order, d.Patterns = OrderDayMonth, d.DayFirst
		d.Evidence = fmt.Sprintf("d/M: %s a first field above 12 (e.g. %s)", valuesHave(a.day), ex("day"))
	case a.month > 0:
		d.Order, d.Patterns = OrderMonthDay, d.MonthFirst
		d.Evidence = fmt.Sprintf("M/d: %s a second field above 12 (e.g. %s)", valuesHave(a.month), ex("month"))
	case a.both > 0:
		d.Ambiguous = true
		d.Evidence = fmt.Sprintf("d/M and M/d cannot be told apart: %s ≤ 12 in both fields (e.g. %s)", valuesAre(a.both), ex("both"))
	default:
		d.Evidence = fmt.Sprintf("%s no real date either way (e.g. %s)", valuesAre(a.invalid), ex("invalid"))
	}
	if a.invalid > 0 && (a.day > 0 || a.month > 0 || a.both > 0) {
		d.Evidence += fmt.Sprintf("; %s no real date either way (e.g. %s)", valuesAre(a.invalid), ex("invalid"))
	}
	return d
}

// DetectDateOrder decides whether a column's numeric dates with the year
// last are day-first or month-first, from all of its sampled values: a
// first field above 12 proves d/M, a second field above 12 proves M/d.
// With every value ≤ 12 in both fields, or values proving each order, the
// decision is Ambiguous: it is escalated to the user, never guessed. Only
// real dates count as proof (30/02 proves nothing). Values of other shapes
// (2026-03-04, text) are ignored.
func DetectDateOrder(values []string) DateDecision {
	var a dateOrderAcc
	for _, v := range values {
		a.add(v)
	}
	return a.decision()
}
