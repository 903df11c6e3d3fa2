package gates

import (
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
)

// Gate 3 proposes the data model from evidence: what was read of each
// candidate table. The evidence holds raw source values (untrusted text):
// so do the findings' details, which the caller sanitizes before a
// terminal shows them.

// TableEvidence is what gate 3 read of one candidate table.
type TableEvidence struct {
	// Name is the table's name as discovery found it (the file's base
	// name, before the naming rules); Base is that name without the sheet.
	Name, Base string
	// Sheet is the workbook sheet the table reads, "" for other files.
	Sheet string
	// Source is the plan source; Globs select the table's files in it.
	Source string
	Globs  []string
	// Units are the files the globs matched; Files what happened to each.
	Units []string
	Files []run.FileResult
	// Rows is the number of data rows read; Sampled is true when the
	// files hold more (reading stopped at the cap). RowBytes is about how
	// many bytes of text the rows read took (values and separators).
	Rows     int64
	RowBytes int64
	Sampled  bool
	// Sampling says how each unit (by Units) was read: whole, spread
	// (first, last and random rows), first rows only, or not at all; nil
	// for evidence read from the first rows (a database table).
	Sampling []Sampling
	// EstRows is the number of data rows of all the units: counted where
	// a unit was read whole (or its metadata says), else estimated from
	// its bytes and the rows per byte sampled; 0 when unknown.
	EstRows int64
	Columns []ColumnEvidence
}

// ColumnEvidence is what gate 3 knows of one column.
type ColumnEvidence struct {
	// Profile is clean's profile of the column over the rows read.
	Profile clean.ColumnProfile
	// Values are the column's first non-null values (up to SampleValues),
	// raw.
	Values []string
	// KeySet holds the key form (KeyForm) of every non-null value read
	// while the column could be a key: nil once many nulls (over 5%) or
	// many repeats (over 2%) were seen.
	KeySet map[string]struct{}
	// Empty counts the null or empty values read.
	Empty int64
	// Rows are the column's values in the first SampleValues rows read,
	// "" for null, aligned across the columns of a table (for composite
	// keys).
	Rows []string
	// Dups counts values whose key form was seen before; DupExample is
	// the first of them.
	Dups       int64
	DupExample string
	// TimeMin and TimeMax are the earliest and latest values read as a
	// date or timestamp; zero when none.
	TimeMin, TimeMax time.Time
}

// Proposal is gate 3's proposed data model.
type Proposal struct {
	// Plan is a fragment: the proposed base tables (columns, types, key,
	// partition, join keys) and marts, in Tables.
	Plan *plan.Plan
	// Findings explain each decision with its evidence; Warn marks what a
	// person should check before approving.
	Findings []Finding
	// Evidence is what the proposal was made from, by proposed table name.
	Evidence map[string]*TableEvidence
	// Issues are the findings to check before approving (warn and fail)
	// that concern a proposed table, as platform.yaml data_quality_issues.
	Issues []plan.QualityIssue
}

// colModel is a column being proposed.
type colModel struct {
	ev        *ColumnEvidence
	header    string
	name      string
	typ       plan.Type
	formats   []string
	normalize []string
	// currency is the ISO 4217 code the column's amounts carry, when they
	// carry one consistently.
	currency string
	// join forms of KeySet, when the column is a key others may refer to.
	jforms map[string]struct{}
}

// tableModel is a table being proposed.
type tableModel struct {
	ev         *TableEvidence
	name       string
	cols       []*colModel
	key        int   // index in cols of a single-column key, -1 for none
	keys       []int // the key's columns (one, or a pair)
	joins      []joinModel
	referenced []string // tables whose join keys reference this table
	partition  string
	// cdc is the change capture proposed for the table: the change files
	// of cdcFrom (a candidate folded into this base table), or, when
	// cdcFrom is nil, the table's own files, whose operation and ordering
	// headers are cdcCols.
	cdc     *changeModel
	cdcFrom *tableModel
	cdcCols [2]string
}

type joinModel struct {
	col    int // index in the table's cols
	to     *tableModel
	byName bool
	found  int // distinct values found in the key
	total  int // distinct values
	// rows with a value read, and those whose value is not in the key
	rows, orphans int
	missing       []string // examples of values not found
	check         bool     // a references check is proposed too
	aligned       string   // what was changed to compare like the key
	unlike        int      // values that match the key only as keys, not as loaded
}

// Propose turns the evidence of candidate tables into a data model:
//
//   - one table per candidate (a group of files with the same name and a
//     period suffix, a single file, or a workbook sheet); sheets of a single
//     column are notes and left out;
//   - names in snake_case valid for the plan, the file's header kept in
//     source_name when it differs;
//   - types from the profile's inference with the formats seen and
//     decimal_comma when proven; a column the profile left as text because
//     one value of a small sample is not a number or date gets that type,
//     the value becoming an exception at load (the finding names it);
//   - trim and zero_pad for identifiers padded with spaces or zeros;
//   - the key: a column named like an identifier (id, *_id, *_no, *_code,
//     …) whose values are all present and distinct (or, failing that, with
//     at most 1% repeated: the repeats are held back at load);
//   - join keys: a column with the name of another table's key, or whose
//     values are found in it (95% or more), with the overlap as evidence;
//   - the partition: the date column most likely queried (named *_on, *_at,
//     *date*, … then the widest span) by month() over a span above three
//     months, else by day(); else a text dimension of 2 to 50 values by
//     identity; none for a table other tables join to (a dimension, read
//     whole) and when nothing fits;
//   - marts answering the questions, or else one per fact table (one with
//     join keys that no table joins to) with a date column: grain month of
//     that date × its first join key, measures the sums of its numeric
//     columns that are neither keys nor identifiers (averages for rates,
//     scores and prices, which are not additive) and a row count.
//
// Every decision comes with a finding. The marts are checked by
// ValidateGrain.
func Propose(evs []*TableEvidence, o ProposeOptions) *Proposal {
	pr := &Proposal{Plan: &plan.Plan{Tables: map[string]*plan.Table{}}, Evidence: map[string]*TableEvidence{}}
	add := func(name, status, detail, fix string) {
		pr.Findings = append(pr.Findings, Finding{Name: name, Status: status, Detail: detail, Fix: fix})
	}
	// Candidates that are not tables.
	var kept []*TableEvidence
	sheets := map[string]int{} // source + base + globs → data sheets
	for _, ev := range evs {
		what := strings.Join(ev.Globs, ", ")
		switch {
		case len(ev.Columns) == 0:
			add("files "+what, Warn, "not proposed: no file could be read"+unreadableList(ev.Files), "fix or remove the files, then propose again")
			continue
		case ev.Sheet != "" && len(ev.Columns) <= 1:
			add("files "+what, Skip, fmt.Sprintf("not proposed: sheet %q has a single column (%s): notes, not a table", ev.Sheet, countNoun(int(ev.Rows), "row", "rows")),
				"if it is data, add a table for it by hand")
			continue
		}
		kept = append(kept, ev)
		if ev.Sheet != "" {
			sheets[ev.Source+"\x00"+sheetless(ev.Globs)]++
		}
	}
	// Names.
	taken := map[string]bool{}
	var tables []*tableModel
	for _, ev := range kept {
		base := ev.Base
		if ev.Sheet != "" && sheets[ev.Source+"\x00"+sheetless(ev.Globs)] > 1 {
			base += "_" + ev.Sheet
		}
		name := SnakeName(base, "t")
		if name == "" {
			name = "table"
		}
		for _, alt := range []string{name, SnakeName(ev.Source+"_"+name, "t")} {
			if !taken[alt] {
				name = alt
				break
			}
		}
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", strings.TrimRight(name, "_0123456789"), i)
		}
		taken[name] = true
		tm := &tableModel{ev: ev, name: name, key: -1}
		tables = append(tables, tm)
		pr.Evidence[name] = ev
	}
	changes := map[*tableModel]*changeModel{}
	for _, tm := range tables {
		pr.Findings = append(pr.Findings, tm.proposeColumns()...)
		if ch, f := findChange(tm); ch != nil {
			changes[tm] = ch // its key is decided with its base table
			continue
		} else if f != nil {
			pr.Findings = append(pr.Findings, *f)
		}
		pr.Findings = append(pr.Findings, tm.proposeKey()...)
	}
	tables, fs := applyChanges(tables, changes, pr)
	pr.Findings = append(pr.Findings, fs...)
	pr.Findings = append(pr.Findings, proposeJoins(tables)...)
	for _, tm := range tables {
		pr.Findings = append(pr.Findings, tm.proposePartition(o))
	}
	for _, tm := range tables {
		pr.Plan.Tables[tm.name] = tm.table(o.Sensitive)
	}
	marts, fs := proposeMarts(tables, o.Questions, taken)
	pr.Findings = append(pr.Findings, fs...)
	for name, t := range marts {
		pr.Plan.Tables[name] = t
	}
	for _, f := range ValidateGrain(pr.Plan) {
		if f.Status != Pass {
			pr.Findings = append(pr.Findings, f)
		}
	}
	for _, f := range pr.Findings {
		if q, ok := issueOf(pr.Plan, f); ok {
			pr.Issues = append(pr.Issues, q)
		}
	}
	return pr
}

// issueImpact says, per aspect of a finding, what happens if nobody acts.
var issueImpact = map[string]string{
	"type":  "values that do not fit the type are held back at load",
	"key":   "rows that repeat a key are held back at load; without a key duplicates go unnoticed",
	"files": "unreadable files are held back as file exceptions",
}

// issueOf turns a warn or fail finding named "table[.column]: aspect" (or
// "table.column → other.key: join") into a data-quality issue of a
// proposed table.
func issueOf(p *plan.Plan, f Finding) (plan.QualityIssue, bool) {
	if f.Status != Warn && f.Status != Fail {
		return plan.QualityIssue{}, false
	}
	head, aspect, ok := strings.Cut(f.Name, ": ")
	if !ok || aspect == "date order" || aspect == "currency" { // the column's profile records them
		return plan.QualityIssue{}, false
	}
	head, _, _ = strings.Cut(head, " → ")
	head = strings.TrimPrefix(head, "mart ")
	table, column, _ := strings.Cut(head, ".")
	t := p.Tables[table]
	if t == nil {
		return plan.QualityIssue{}, false
	}
	if _, ok := t.Column(column); !ok {
		column = ""
	}
	impact := issueImpact[aspect]
	if aspect == "join" {
		impact = "rows without a match find nothing when joined"
	}
	return plan.QualityIssue{Table: table, Column: column, Issue: f.Detail, Impact: impact, Fix: f.Fix}, true
}

func sheetless(globs []string) string {
	var out []string
	for _, g := range globs {
		if i := strings.LastIndex(g, "#"); i >= 0 {
			g = g[:i]
		}
		out = append(out, g)
	}
	return strings.Join(out, "\x00")
}

func unreadableList(frs []run.FileResult) string {
	var bad []string
	for _, f := range frs {
		if f.Status != "read" {
			bad = append(bad, f.Name+" ("+f.Error+")")
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "; unreadable: " + strings.Join(bad, "; ")
}

// proposeColumns names and types the columns.
func (tm *tableModel) proposeColumns() []Finding {
	ev := tm.ev
	var fs []Finding
	status := Pass
	if ev.Sampled {
		status = Warn
	}
	unread := unreadableList(ev.Files)
	if unread != "" {
		status = Warn
	}
	sheet := ""
	if ev.Sheet != "" {
		sheet = fmt.Sprintf(", sheet %q", ev.Sheet)
	}
	detail := fmt.Sprintf("%s matched %s%s; %d data rows read", strings.Join(ev.Globs, ", "), countNoun(len(ev.Units), "file", "files"), sheet, ev.Rows)
	if ev.Sampled && ev.Sampling != nil {
		detail = fmt.Sprintf("%s matched %s%s; %s: %d data rows read of about %d (the files hold more: what follows was observed on these rows)",
			strings.Join(ev.Globs, ", "), countNoun(len(ev.Units), "file", "files"), sheet, sampledText(ev), ev.Rows, ev.EstRows)
	} else if ev.Sampled {
		read := 0
		for _, f := range ev.Files {
			if f.RowsRead > 0 {
				read++
			}
		}
		detail += fmt.Sprintf(" (sampled %d of %d files, the first rows of each; the files hold more: what follows was observed on these rows)", read, len(ev.Units))
	}
	fix := ""
	if unread != "" {
		fix = "unreadable files become file exceptions at load; fix or remove them"
	}
	fs = append(fs, Finding{Name: tm.name + ": files", Status: status, Detail: detail + unread, Fix: fix})
	used := map[string]bool{}
	for i := range ev.Columns {
		ce := &ev.Columns[i]
		cm := &colModel{ev: ce, header: ce.Profile.Name}
		cm.name = SnakeName(cm.header, "c")
		if cm.name == "" {
			cm.name = fmt.Sprintf("column_%d", i+1)
		}
		for n := 2; used[cm.name]; n++ {
			cm.name = fmt.Sprintf("%s_%d", strings.TrimRight(SnakeName(cm.header, "c"), "_0123456789"), n)
		}
		used[cm.name] = true
		fs = append(fs, cm.decideType(tm.name)...)
		tm.cols = append(tm.cols, cm)
	}
	return fs
}

// decideType sets the column's type, formats and normalizations.
func (cm *colModel) decideType(table string) []Finding {
	p := cm.ev.Profile
	ref := table + "." + cm.name
	var fs []Finding
	cm.typ = plan.Type{Kind: plan.String}
	comma := p.NumberStyle.Style.DecimalComma && !p.NumberStyle.Ambiguous
	switch {
	case p.NonNull == 0:
		fs = append(fs, Finding{Name: ref + ": type", Status: Warn, Detail: fmt.Sprintf("all %d values are null: proposed as string", p.Count),
			Fix: "drop the column, or give its type by hand"})
	case p.Inferred.Type.Kind != plan.String:
		cm.typ = p.Inferred.Type
		if cm.typ.Kind == plan.Date {
			cm.formats = slices.Clone(p.Inferred.Formats)
		}
	case p.LeadingZeros > 0:
		// Zero-padded identifiers stay text.
	default:
		if r, ok := refineType(cm.ev.Values, p); ok {
			cm.typ, cm.formats = r.typ, r.formats // checkFit names the values that do not fit
		} else if r.typ.Kind != plan.Unknown && r.typ.Kind != plan.String && 5*r.misfits <= len(cm.ev.Values) {
			// Most values fit a type: say why the column stays text.
			n := len(cm.ev.Values)
			fs = append(fs, Finding{Name: ref + ": type", Status: Warn,
				Detail: fmt.Sprintf("string: only %d of %d values read (%.1f%%) fit %s, less than %.1f%%; %s do not (e.g. %s)",
					n-r.misfits, n, 100*float64(n-r.misfits)/float64(n), describeType(r.typ, r.formats), 100*typeMinFitShare, countNoun(r.misfits, "value", "values"), r.example),
				Fix: fmt.Sprintf("set type %s by hand if those values are errors (they are then held back at load), or keep the column as text", r.typ)})
		}
	}
	if cm.typ.Kind == plan.Date && p.DateOrder.Order != "" && !p.DateOrder.Ambiguous {
		for _, f := range p.DateOrder.Patterns {
			if !slices.Contains(cm.formats, f) {
				cm.formats = append(cm.formats, f)
			}
		}
	}
	if p.DateOrder.Ambiguous && p.DateOrder.Dates > 0 && cm.typ.Kind == plan.String {
		fs = append(fs, Finding{Name: ref + ": date order", Status: Warn, Detail: "dates whose day and month order cannot be told: " + p.DateOrder.Evidence,
			Fix: "choose the order (" + strings.Join(p.DateOrder.DayFirst, ", ") + " or " + strings.Join(p.DateOrder.MonthFirst, ", ") + ") and set type date with that format"})
	}
	if comma && cm.typ.IsNumeric() {
		cm.normalize = append(cm.normalize, "decimal_comma")
	}
	cf, hasCurrency := cm.decideCurrency(ref)
	cm.pinFormats()
	if f, ok := cm.checkFit(ref); ok {
		fs = append(fs, f)
	}
	if cm.typ.IsNumeric() && hasCurrency {
		fs = append(fs, cf)
	}
	if cm.typ.Kind == plan.String {
		if f, ok := cm.padding(ref); ok {
			fs = append(fs, f)
		}
	}
	return fs
}

// decideCurrency proposes the currency of a numeric column whose values
// carry one currency consistently (₩150,000, 12,500원 and plain numbers:
// KRW); a column whose values mix currencies gets none, and the finding
// says that its values with a currency symbol are held back at load. So
// does a column of 20 or more values of which under 5% carry a symbol:
// those few are strays, not the column's currency.
func (cm *colModel) decideCurrency(ref string) (Finding, bool) {
	cu := cm.ev.Profile.Currencies
	if !cm.typ.IsNumeric() || cu.Values == 0 {
		return Finding{}, false
	}
	code, mixed := cu.Code()
	if nn := cm.ev.Profile.NonNull; !mixed && nn >= 20 && cu.Values*20 < nn {
		// A symbol on a few amounts of a column of plain numbers is a
		// stray, not the column's currency: what the source owner would
		// call wrong is held back, not stripped on a guess.
		return Finding{Name: ref + ": currency", Status: Warn,
			Detail: fmt.Sprintf("%s of %d carry a currency (%s), the rest are plain numbers; no currency proposed on so few, so %s held back at load (rule currency)",
				countNoun(cu.Values, "value", "values"), nn, cu.Summary(), map[bool]string{true: "it is", false: "they are"}[cu.Values == 1]),
			Fix: fmt.Sprintf("if every amount of the column is in %s, set currency: %s and the symbols are removed at load (counted)", code, code)}, true
	}
	if mixed {
		return Finding{Name: ref + ": currency", Status: Warn,
			Detail: fmt.Sprintf("the values mix currencies: %s; no currency proposed, so the %s with a currency symbol %s held back at load (rule currency)",
				cu.Summary(), countNoun(cu.Values, "value", "values"), map[bool]string{true: "is", false: "are"}[cu.Values == 1]),
			Fix: "keep the currency in a column of its own at the source (amount, currency) or convert the amounts; a column in one currency takes currency: CODE"}, true
	}
	cm.currency = code
	f := Finding{Name: ref + ": currency", Status: Pass,
		Detail: fmt.Sprintf("%s %s in one currency, %s: %s; proposed currency: %s, the symbols removed at load (counted), another currency's symbol held back",
			countNoun(cu.Values, "value", "values"), map[bool]string{true: "carries its amount", false: "carry their amounts"}[cu.Values == 1], code, cu.Summary(), code),
		Fix: fmt.Sprintf("keep currency: %s if every amount of the column is in %s", code, code)}
	for _, m := range cu.Sorted() {
		if codes := plan.SymbolCurrencies(m); len(codes) > 1 {
			others := codes[1:]
			f.Status = Warn
			f.Detail += fmt.Sprintf("; %s is also written for %s", m, strings.Join(others, ", "))
			f.Fix = fmt.Sprintf("check the currency: set currency to the right code (e.g. %s) if the amounts are not in %s", others[0], code)
			break
		}
	}
	return f, true
}

// padding proposes trim and zero_pad for text padded with spaces or zeros.
func (cm *colModel) padding(ref string) (Finding, bool) {
	spaced, widths := 0, map[int]int{}
	digits := len(cm.ev.Values) > 0
	var ex []string
	for _, v := range cm.ev.Values {
		t := strings.TrimSpace(v)
		if t != v {
			spaced++
			if len(ex) < 2 {
				ex = append(ex, fmt.Sprintf("%q", v))
			}
		}
		for i := 0; i < len(t) && digits; i++ {
			digits = t[i] >= '0' && t[i] <= '9'
		}
		widths[len(t)]++
	}
	lo, hi := math.MaxInt, 0
	for w := range widths {
		lo, hi = min(lo, w), max(hi, w)
	}
	pad := digits && cm.ev.Profile.LeadingZeros > 0 && lo < hi
	if spaced == 0 && !pad {
		return Finding{}, false
	}
	var parts []string
	if spaced > 0 {
		cm.normalize = append(cm.normalize, "trim")
		parts = append(parts, fmt.Sprintf("%s padded with spaces (%s)", countNoun(spaced, "value", "values"), strings.Join(ex, ", ")))
	}
	if pad {
		cm.normalize = append(cm.normalize, fmt.Sprintf("zero_pad:%d", hi))
		var ex []string
		for _, v := range cm.ev.Profile.Samples[:min(3, len(cm.ev.Profile.Samples))] {
			ex = append(ex, fmt.Sprintf("%q", v))
		}
		parts = append(parts, fmt.Sprintf("digits from %d to %d wide with leading zeros (%s)", lo, hi, strings.Join(ex, ", ")))
	}
	fix := "trim"
	if pad {
		fix = fmt.Sprintf("trim and zero-pad to %d digits", hi)
		if spaced == 0 {
			fix = fmt.Sprintf("zero-pad to %d digits", hi)
		}
	}
	return Finding{Name: ref + ": normalize", Status: Pass, Detail: strings.Join(parts, "; "),
		Fix: fix + ", so that the same identifier is one value (counted in the run report)"}, true
}

type refined struct {
	typ     plan.Type
	formats []string
	misfits int
	example string
}

// refineType finds the type that all values but a few fit, when the
// profile kept a column as text: in a small sample a single bad value
// (2026-02-30, 12x.50) is more than the 5% the inference tolerates. It
// accepts the type when every value fits, or at least 5 values were read
// and at most one value in twenty (at least one) does not. Dates of the
// d/M or M/d shape count when the profile decided their order.
func refineType(values []string, p clean.ColumnProfile) (refined, bool) {
	n := len(values)
	if n == 0 {
		return refined{}, false
	}
	comma := p.NumberStyle.Style.DecimalComma && !p.NumberStyle.Ambiguous
	var orderPats []string
	if p.DateOrder.Order != "" && !p.DateOrder.Ambiguous {
		orderPats = p.DateOrder.Patterns
	}
	families := []string{"number", "date", "timestamp", "boolean"}
	fit := map[string][]string{}
	pats := map[string]int{}
	example := ""
	for _, v := range values {
		t := strings.TrimSpace(v)
		fam, conv, pat := valueFamily(t, comma, orderPats)
		if fam == "" {
			if example == "" {
				example = fmt.Sprintf("%q", v)
			}
			continue
		}
		fit[fam] = append(fit[fam], conv)
		if fam == "date" {
			pats[pat]++
		}
	}
	best := ""
	for _, f := range families {
		if len(fit[f]) > len(fit[best]) {
			best = f
		}
	}
	if best == "" {
		return refined{}, false
	}
	misfits := n - len(fit[best])
	r := refined{misfits: misfits, example: example}
	tooMany := misfits > 0 && (n < 5 || misfits > max(1, n/20))
	switch best {
	case "date":
		r.typ = plan.Type{Kind: plan.Date}
		for f := range pats {
			r.formats = append(r.formats, f)
		}
		sort.Slice(r.formats, func(i, j int) bool {
			a, b := r.formats[i], r.formats[j]
			if pats[a] != pats[b] {
				return pats[a] > pats[b]
			}
			return a < b
		})
	case "boolean":
		r.typ = plan.Type{Kind: plan.Boolean}
	default:
		inf := clean.Infer(fit[best], []string{})
		if inf.Type.Kind == plan.String {
			return refined{}, false
		}
		r.typ = inf.Type
	}
	if tooMany {
		return r, false // r says which type most values fit
	}
	return r, true
}

// classify says which family one value belongs to: number, date, timestamp
// or boolean ("" for none), the value as clean.Infer reads it, and for a
// date its pattern.
func valueFamily(t string, comma bool, orderPats []string) (family, conv, pattern string) {
	if t == "" {
		return "", "", ""
	}
	if comma {
		if n, _, err := clean.ParseDecimal(t, 38, 18, clean.NumberStyle{DecimalComma: true, AnyCurrency: true}); err == nil {
			scale := 0
			if i := strings.LastIndexByte(t, ','); i >= 0 {
				for _, c := range t[i+1:] {
					if c >= '0' && c <= '9' {
						scale++
					}
				}
			}
			if m, _, err := clean.ParseDecimal(t, 38, scale, clean.NumberStyle{DecimalComma: true, AnyCurrency: true}); err == nil {
				return "number", m.ToString(int32(scale)), ""
			}
			return "number", n.ToString(18), ""
		}
	}
	inf := clean.Infer([]string{t}, []string{})
	switch inf.Type.Kind {
	case plan.Int, plan.Long, plan.Decimal, plan.Double:
		if !comma {
			return "number", t, ""
		}
	case plan.Date:
		return "date", t, inf.Formats[0]
	case plan.Timestamp, plan.TimestampTZ:
		return "timestamp", t, ""
	case plan.Boolean:
		return "boolean", t, ""
	}
	for _, pat := range orderPats {
		if l, err := clean.GoLayout(pat); err == nil {
			if _, err := time.Parse(l, t); err == nil {
				return "date", t, pat
			}
		}
	}
	return "", "", ""
}

func describeType(t plan.Type, formats []string) string {
	if len(formats) > 0 {
		return fmt.Sprintf("%s (%s)", t, strings.Join(formats, ", "))
	}
	return t.String()
}

// idRank says how much a name looks like an identifier: 0 for id and
// *_id, 1 for numbers, codes and keys (*_no, *_code, *_key, …, and their
// romanized Korean forms 코드 kodeu, 번호 beonho), 2 for anything else.
func idRank(name string) int {
	switch {
	case name == "id" || strings.HasSuffix(name, "_id"):
		return 0
	case slices.Contains([]string{"no", "nr", "num", "number", "code", "key", "uuid", "guid"}, name):
		return 1
	}
	for _, s := range []string{"_no", "_nr", "_num", "_number", "_code", "_key", "_uuid", "_guid", "kodeu", "beonho"} {
		if strings.HasSuffix(name, s) {
			return 1
		}
	}
	if len(name) > 4 && strings.HasSuffix(name, "id") {
		return 1
	}
	return 2
}

// keyable reports whether a column's type can hold a key.
func keyable(t plan.Type) bool {
	return t.Kind == plan.String || t.IsIntegral()
}

// dateColumn returns the date column most likely queried, or -1.
func (tm *tableModel) dateColumn() int {
	best := -1
	for i, c := range tm.cols {
		if !c.typ.IsTemporal() || c.ev.TimeMin.IsZero() {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := tm.cols[best]
		if r, rb := dateRank(c.name), dateRank(b.name); r != rb {
			if r < rb {
				best = i
			}
			continue
		}
		if c.ev.TimeMax.Sub(c.ev.TimeMin) > b.ev.TimeMax.Sub(b.ev.TimeMin) {
			best = i
		}
	}
	return best
}

// table renders the proposed base table.
func (tm *tableModel) table(sensitive []string) *plan.Table {
	t := &plan.Table{Type: plan.TableBase, WrittenBy: "lima",
		Source: &plan.TableSource{Name: tm.ev.Source, Files: tm.ev.Globs}}
	desc := fmt.Sprintf("Proposed by gate 3 from %s", countNoun(len(tm.ev.Units), "file", "files"))
	if tm.ev.Sheet != "" {
		desc += fmt.Sprintf(" (sheet %s)", tm.ev.Sheet)
	}
	t.Description = desc
	for _, c := range tm.cols {
		pc := plan.Column{Name: c.name, Type: c.typ.String(), Formats: c.formats, Normalize: c.normalize, Currency: c.currency}
		if c.header != c.name {
			pc.SourceName = c.header
		}
		pc.Sensitive = matchesAny(sensitive, c.name) || matchesAny(sensitive, c.header)
		t.Columns = append(t.Columns, pc)
	}
	for _, i := range tm.keys {
		t.Load.Keys = append(t.Load.Keys, tm.cols[i].name)
	}
	if tm.partition != "" {
		t.Partition = []string{tm.partition}
	}
	for _, j := range tm.joins {
		ref := j.to.name + "." + j.to.cols[j.to.key].name
		t.JoinKeys = append(t.JoinKeys, plan.JoinKey{Column: tm.cols[j.col].name, References: ref})
		if j.check {
			t.Checks = append(t.Checks, plan.Check{Rule: plan.RuleReferences, Column: tm.cols[j.col].name, References: ref})
		}
	}
	tm.cdcLoad(t)
	return t
}

// nonAdditive lists name words of measures that are not summed: rates,
// scores, prices, averages (and 점수 jeomsu, 단가 danga, 율 yul/ryul).
var nonAdditive = []string{"rating", "score", "rate", "ratio", "pct", "percent", "percentage", "price", "avg", "average", "mean",
	"deviation", "temperature", "temp", "grade", "level", "jeomsu", "danga", "yul", "ryul"}

func isNonAdditive(name string) bool {
	for _, w := range strings.Split(name, "_") {
		if slices.Contains(nonAdditive, w) {
			return true
		}
	}
	for _, s := range []string{"jeomsu", "danga", "ryul"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// stem drops a name's identifier or date suffix: supplier_id → supplier,
// inspected_on → inspected.
func nameStem(name string, suffixes ...string) string {
	for _, s := range suffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return strings.TrimRight(strings.TrimSuffix(name, s), "_")
		}
	}
	return name
}

var (
	keySuffixes  = []string{"_id", "_no", "_nr", "_num", "_number", "_code", "_key", "kodeu", "beonho"}
	dateSuffixes = []string{"_on", "_at", "_date", "_dt", "_ts", "_time"}
)

// martFor builds the mart of a fact table at grain (month of date, dim).
func martFor(tm *tableModel, date int, dim int, measures []int, why string) (string, *plan.Table) {
	dc, fc := tm.cols[date], tm.cols[dim]
	name := fmt.Sprintf("%s_by_%s_month", tm.name, nameStem(fc.name, keySuffixes...))
	monthCol := nameStem(dc.name, dateSuffixes...) + "_month"
	if monthCol == fc.name {
		monthCol = dc.name + "_month"
	}
	t := &plan.Table{Type: plan.TableMart, WrittenBy: "lima", From: []string{tm.name},
		Description: fmt.Sprintf("%s per month of %s and %s; %s", tm.name, dc.name, fc.name, why)}
	t.Dimensions = []plan.Dimension{{Name: monthCol, Column: dc.name, Transform: plan.TransformMonth}, {Name: fc.name, Column: fc.name}}
	t.Grain = []string{monthCol, fc.name}
	t.Columns = []plan.Column{{Name: monthCol, Type: plan.DimensionType(plan.TransformMonth, dc.typ).String()}, {Name: fc.name, Type: fc.typ.String()}}
	used := map[string]bool{monthCol: true, fc.name: true}
	for _, i := range measures {
		c := tm.cols[i]
		m := plan.Measure{Name: "total_" + c.name, Agg: plan.AggSum, Column: c.name}
		if isNonAdditive(c.name) {
			m = plan.Measure{Name: "avg_" + c.name, Agg: plan.AggAvg, Column: c.name}
		}
		if used[m.Name] {
			continue
		}
		used[m.Name] = true
		typ, err := plan.MeasureType(m.Agg, c.typ)
		if err != nil {
			continue
		}
		t.Measures = append(t.Measures, m)
		t.Columns = append(t.Columns, plan.Column{Name: m.Name, Type: typ.String()})
		if m.Agg == plan.AggSum {
			t.SumSafeColumns = append(t.SumSafeColumns, m.Name)
		}
	}
	if !used["row_count"] {
		t.Measures = append(t.Measures, plan.Measure{Name: "row_count", Agg: plan.AggCount})
		t.Columns = append(t.Columns, plan.Column{Name: "row_count", Type: "long"})
		t.SumSafeColumns = append(t.SumSafeColumns, "row_count")
	}
	return name, t
}

// measureColumns are a table's numeric columns that are neither its key,
// a join key nor named like an identifier.
func (tm *tableModel) measureColumns() []int {
	var out []int
	for i, c := range tm.cols {
		if !c.typ.IsNumeric() || i == tm.key || idRank(c.name) <= 1 || slices.ContainsFunc(tm.joins, func(j joinModel) bool { return j.col == i }) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// proposeMarts proposes the marts: for the business questions when there
// are any, else one per fact table with a date column.
func proposeMarts(tables []*tableModel, questions []string, taken map[string]bool) (map[string]*plan.Table, []Finding) {
	out := map[string]*plan.Table{}
	var fs []Finding
	put := func(name string, t *plan.Table) string {
		for i := 2; taken[name] || out[name] != nil; i++ {
			name = fmt.Sprintf("%s_%d", strings.TrimRight(name, "_0123456789"), i)
		}
		out[name] = t
		return name
	}
	if len(questions) > 0 {
		answered := 0
		for _, q := range questions {
			name, t, f := martForQuestion(tables, q)
			if t != nil {
				name = put(name, t)
				answered++
				f.Name = "mart " + name
			}
			fs = append(fs, f)
		}
		if answered > 0 {
			return out, fs
		}
	}
	why := "proposed by gate 3: no business questions were recorded in gate 1"
	if len(questions) > 0 {
		why = "proposed by gate 3: none of the business questions could be mapped to the data"
	}
	for _, tm := range tables {
		if len(tm.joins) == 0 || len(tm.referenced) > 0 {
			continue
		}
		date := tm.dateColumn()
		if date < 0 {
			fs = append(fs, Finding{Name: tm.name + ": mart", Status: Skip, Detail: fmt.Sprintf("%s is a fact table but has no date column to group by month", tm.name)})
			continue
		}
		name, t := martFor(tm, date, tm.joins[0].col, tm.measureColumns(), why)
		name = put(name, t)
		var ms []string
		for _, m := range t.Measures {
			if m.Column == "" {
				ms = append(ms, m.Agg+"(*)")
			} else {
				ms = append(ms, m.Agg+"("+m.Column+")")
			}
		}
		fs = append(fs, Finding{Name: "mart " + name, Status: Pass,
			Detail: fmt.Sprintf("%s is a fact table (join keys to %s, no table joins to it); grain (%s); measures %s; SUM-safe across the grain: %s",
				tm.name, tm.joins[0].to.name, strings.Join(t.Grain, ", "), strings.Join(ms, ", "), strings.Join(t.SumSafeColumns, ", "))})
	}
	return out, fs
}

// martForQuestion maps one business question to a mart by its words: a
// fact table named in it (or whose measures it names), the period (day,
// week → day, month, quarter/year → year), the dimensions it names (a join
// key's name, or a text column's), and the numeric columns it names.
func martForQuestion(tables []*tableModel, q string) (string, *plan.Table, Finding) {
	words := questionWords(q)
	has := func(w string) bool { return words[w] || words[w+"s"] || words[strings.TrimSuffix(w, "s")] }
	mentions := func(name string) bool {
		parts := strings.Split(name, "_")
		for _, p := range parts {
			if len(p) > 2 && !has(p) && !slices.Contains([]string{"id", "no", "code", "qty", "on", "at"}, p) {
				return false
			}
		}
		return len(parts) > 0
	}
	var fact *tableModel
	score := 0
	for _, tm := range tables {
		s := 0
		if has(tm.name) || mentions(tm.name) {
			s += 3
		}
		for _, i := range tm.measureColumns() {
			if mentions(tm.cols[i].name) {
				s++
			}
		}
		if s > score && tm.dateColumn() >= 0 {
			fact, score = tm, s
		}
	}
	fail := Finding{Name: "question", Status: Warn, Detail: fmt.Sprintf("%q: no table with a date column is named in it, nor any of its measures", q),
		Fix: "add the mart by hand (type: mart with from, dimensions and measures), or reword the question with the names of the data"}
	if fact == nil {
		return "", nil, fail
	}
	date := fact.dateColumn()
	dim := -1
	for _, j := range fact.joins {
		if mentions(nameStem(fact.cols[j.col].name, keySuffixes...)) || has(j.to.name) {
			dim = j.col
			break
		}
	}
	if dim < 0 {
		for i, c := range fact.cols {
			if c.typ.Kind == plan.String && i != fact.key && mentions(c.name) {
				dim = i
				break
			}
		}
	}
	if dim < 0 && len(fact.joins) > 0 {
		dim = fact.joins[0].col
	}
	if dim < 0 {
		fail.Detail = fmt.Sprintf("%q: %s has no join key or dimension named in the question to group by", q, fact.name)
		return "", nil, fail
	}
	var measures []int
	for _, i := range fact.measureColumns() {
		if mentions(fact.cols[i].name) {
			measures = append(measures, i)
		}
	}
	if len(measures) == 0 {
		measures = fact.measureColumns()
	}
	name, t := martFor(fact, date, dim, measures, fmt.Sprintf("answers %q", q))
	if tr := questionPeriod(words); tr != plan.TransformMonth {
		d := &t.Dimensions[0]
		old := d.Name
		d.Transform = tr
		d.Name = strings.TrimSuffix(old, "_month") + "_" + tr
		t.Grain[0], t.Columns[0].Name = d.Name, d.Name
		name = strings.TrimSuffix(name, "_month") + "_" + tr
	}
	return name, t, Finding{Status: Pass, Detail: fmt.Sprintf("%q → %s grouped by (%s), measures %d", q, fact.name, strings.Join(t.Grain, ", "), len(t.Measures))}
}

func questionWords(q string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) {
		out[w] = true
		for _, p := range strings.Split(w, "_") {
			out[p] = true
		}
	}
	return out
}

func questionPeriod(words map[string]bool) string {
	switch {
	case words["day"] || words["daily"] || words["days"] || words["week"] || words["weekly"] || words["weeks"]:
		return plan.TransformDay
	case words["year"] || words["yearly"] || words["annual"] || words["annually"] || words["years"]:
		return plan.TransformYear
	}
	return plan.TransformMonth
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// matchesAny reports whether name matches one of the patterns (names or
// globs such as *_email), ignoring case.
func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(name)); ok {
			return true
		}
	}
	return false
}

// Apply writes the proposal into a plan that has no tables yet (gate 1
// done, gate 3 not) and reports whether it did. A plan with tables is left
// alone: what an analyst wrote is never replaced.
func (pr *Proposal) Apply(p *plan.Plan) bool {
	if len(p.Tables) > 0 || pr == nil || pr.Plan == nil {
		return false
	}
	p.Tables = map[string]*plan.Table{}
	for n, t := range pr.Plan.Tables {
		p.Tables[n] = t
	}
	return true
}

// TableEvolution is what separates one existing lake table from the plan
// (see icesink.Diff): Changes apply to the rows in the table as they are;
// Rewrite lists the changes only replacing every row can apply.
type TableEvolution struct {
	Table   string
	Mode    string // the table's load mode
	Changes []string
	Rewrite []string
	// RewriteApproved: the approver named the table for a rewrite
	// (approve --rewrite TABLE).
	RewriteApproved bool
}

// EvolutionFindings judges plan changes to existing tables at approval.
// Compatible changes pass (the next commit applies them with the data).
// An incompatible change passes only when the table's rows are replaced
// anyway (mode full) or the approver asked for a rewrite; otherwise it
// fails, naming the fixes.
func EvolutionFindings(evs []TableEvolution) []Finding {
	var out []Finding
	for _, e := range evs {
		name := "schema evolution of " + e.Table
		if len(e.Changes) > 0 {
			out = append(out, Finding{Name: name, Status: Pass,
				Detail: "the next load's commit applies, in the same Iceberg transaction: " + strings.Join(e.Changes, "; ")})
		}
		if len(e.Rewrite) == 0 {
			continue
		}
		what := strings.Join(e.Rewrite, "; ")
		switch {
		case e.Mode == plan.ModeFull:
			out = append(out, Finding{Name: name, Status: Pass,
				Detail: what + ": mode full replaces every row at each run, so the next run rewrites the table under the new schema (the column gets a new field id; older snapshots keep the old type)"})
		case e.RewriteApproved:
			out = append(out, Finding{Name: name, Status: Pass,
				Detail: what + ": rewrite approved; only a run with --full-refresh applies it (every row is read again from the source), other runs of the table are refused until then"})
		default:
			out = append(out, Finding{Name: name, Status: Fail,
				Detail: what + ": the rows already in the table cannot be converted (narrowing or another type)",
				Fix:    fmt.Sprintf("load the new schema into a new table (give %s another name in the plan), or approve with --rewrite %s and then run `lima-tui run --full-refresh --table %s`, which replaces every row under the new schema; or keep the lake's type in the plan", e.Table, e.Table, e.Table)})
		}
	}
	return out
}
