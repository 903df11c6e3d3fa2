package gates

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
)

// Edits of the data model: what gate 3's findings suggest (a date format,
// a decimal's precision, a currency, a key, a reference, a partition),
// applied to a plan the same way by the wizard's edit screen and by
// `lima-tui propose --set`. An edit that names an unknown table or column,
// or a value the plan cannot take, is refused with ErrEdit and changes
// nothing.

// ErrEdit is the error of an edit that cannot be applied.
var ErrEdit = errors.New("cannot apply the edit")

// Edit is one change: Column "" for a table's own fields (name, key,
// partition), else a column's (name, format, formats, type, currency,
// required, references). Renames are in rename.go.
type Edit struct {
	Table, Column, Field, Value string
}

// EditFields are the fields an edit may set: of a column, of a table.
var (
	ColumnEditFields = []string{"format", "formats", "type", "currency", "required", "references", "name"}
	TableEditFields  = []string{"key", "partition", "name"}
)

func (e Edit) String() string {
	if e.Column == "" {
		return e.Table + "." + e.Field + "=" + e.Value
	}
	return e.Table + "." + e.Column + "." + e.Field + "=" + e.Value
}

// ParseEdit reads "table.column.field=value" or "table.field=value".
func ParseEdit(s string) (Edit, error) {
	left, value, ok := strings.Cut(s, "=")
	if !ok {
		return Edit{}, fmt.Errorf("%w %q: want table.column.field=value or table.name|key|partition=value", ErrEdit, s)
	}
	parts := strings.Split(strings.TrimSpace(left), ".")
	e := Edit{Value: strings.TrimSpace(value)}
	switch len(parts) {
	case 2:
		e.Table, e.Field = parts[0], parts[1]
		if !slices.Contains(TableEditFields, e.Field) {
			return Edit{}, fmt.Errorf("%w %q: a table takes %s (a column's fields need table.column.field)", ErrEdit, s, strings.Join(TableEditFields, ", "))
		}
	case 3:
		e.Table, e.Column, e.Field = parts[0], parts[1], parts[2]
		if !slices.Contains(ColumnEditFields, e.Field) {
			return Edit{}, fmt.Errorf("%w %q: a column takes %s", ErrEdit, s, strings.Join(ColumnEditFields, ", "))
		}
	default:
		return Edit{}, fmt.Errorf("%w %q: want table.column.field=value or table.name|key|partition=value", ErrEdit, s)
	}
	for _, p := range parts {
		if p == "" {
			return Edit{}, fmt.Errorf("%w %q: an empty name", ErrEdit, s)
		}
	}
	return e, nil
}

func isNone(v string) bool { return v == "" || strings.EqualFold(v, "none") }

// ApplyEdit applies one edit to the plan's base table and says what it
// changed. On an error the plan is unchanged.
//
// A rename needs to know which tables are in the lake: ApplyEditIn.
func ApplyEdit(p *plan.Plan, e Edit) (string, error) {
	if e.Field == "name" {
		return "", fmt.Errorf("%w %s: a rename needs the lake's tables (gates.ApplyEditIn)", ErrEdit, e)
	}
	t := p.Tables[e.Table]
	if t == nil || t.IsMart() {
		return "", fmt.Errorf("%w %s: no base table %q (tables: %s)", ErrEdit, e, e.Table, strings.Join(baseTables(p), ", "))
	}
	if e.Column == "" {
		return applyTableEdit(p, t, e)
	}
	c, ok := t.Column(e.Column)
	if !ok {
		var names []string
		for _, c := range t.Columns {
			names = append(names, c.Name)
		}
		return "", fmt.Errorf("%w %s: table %s has no column %q (columns: %s)", ErrEdit, e, e.Table, e.Column, strings.Join(names, ", "))
	}
	ref := e.Table + "." + e.Column
	switch e.Field {
	case "format", "formats":
		var fs []string
		if !isNone(e.Value) {
			for f := range strings.SplitSeq(e.Value, ",") {
				if f = strings.TrimSpace(f); f != "" && !slices.Contains(fs, f) {
					fs = append(fs, f)
				}
			}
		}
		if e.Field == "format" && len(fs) > 1 {
			return "", fmt.Errorf("%w %s: format takes one layout; formats=a,b takes several", ErrEdit, e)
		}
		for _, f := range fs {
			if f == clean.ExcelSerial {
				continue
			}
			if _, err := clean.GoLayout(f); err != nil {
				return "", fmt.Errorf("%w %s: %v", ErrEdit, e, err)
			}
		}
		return setFormats(c, ref, fs), nil
	case "type":
		typ, err := plan.ParseType(e.Value)
		if err != nil {
			return "", fmt.Errorf("%w %s: %v", ErrEdit, e, err)
		}
		old := c.Type
		c.Type = typ.String()
		if !typ.IsTemporal() {
			c.Formats = nil
		}
		if !typ.IsNumeric() {
			c.Currency = ""
		}
		return fmt.Sprintf("%s: type %s → %s", ref, orNoneText(old), c.Type), nil
	case "currency":
		if isNone(e.Value) {
			c.Currency = ""
			return ref + ": no currency", nil
		}
		code := strings.ToUpper(e.Value)
		if !plan.IsCurrencyCode(code) {
			return "", fmt.Errorf("%w %s: %s", ErrEdit, e, plan.CheckCurrency(e.Value))
		}
		if typ, err := c.ParsedType(); err == nil && c.Type != "" && !typ.IsNumeric() {
			return "", fmt.Errorf("%w %s: %s is %s; a currency applies to a number (set .type=decimal(p,s) first)", ErrEdit, e, ref, c.Type)
		}
		c.Currency = code
		return ref + ": currency " + code + " (its symbols are removed at load and counted)", nil
	case "required":
		b, err := strconv.ParseBool(e.Value)
		if err != nil {
			return "", fmt.Errorf("%w %s: required takes true or false", ErrEdit, e)
		}
		c.Required = b
		if b {
			return ref + ": required (a row without it is held back)", nil
		}
		return ref + ": not required", nil
	case "references":
		return setReference(p, t, e)
	}
	return "", fmt.Errorf("%w %s: unknown field %q", ErrEdit, e, e.Field)
}

// setFormats pins a column's date/timestamp layouts, in order; a column
// that is no date or timestamp becomes one (timestamp when a layout has
// a time of day), as the findings' "set type date with that format" says.
func setFormats(c *plan.Column, ref string, fs []string) string {
	c.Formats = fs
	if len(fs) == 0 {
		return ref + ": formats removed (the ISO forms are accepted)"
	}
	what := ref + ": formats " + strings.Join(fs, " | ")
	if typ, err := c.ParsedType(); err != nil || c.Type == "" || !typ.IsTemporal() {
		c.Type = "date"
		for _, f := range fs {
			if strings.ContainsAny(f, "Hhms") {
				c.Type = "timestamp"
			}
		}
		c.Currency = ""
		what += ", type " + c.Type
	}
	return what
}

func setReference(p *plan.Plan, t *plan.Table, e Edit) (string, error) {
	ref := e.Table + "." + e.Column
	drop := func() {
		t.JoinKeys = slices.DeleteFunc(t.JoinKeys, func(j plan.JoinKey) bool { return j.Column == e.Column })
		t.Checks = slices.DeleteFunc(t.Checks, func(c plan.Check) bool { return c.Rule == plan.RuleReferences && c.Column == e.Column })
	}
	if isNone(e.Value) {
		drop()
		return ref + ": references nothing", nil
	}
	tn, cn, ok := strings.Cut(e.Value, ".")
	other := p.Tables[tn]
	if !ok || other == nil || other.IsMart() {
		return "", fmt.Errorf("%w %s: references takes table.column of another base table (tables: %s)", ErrEdit, e, strings.Join(baseTables(p), ", "))
	}
	if tn == e.Table {
		return "", fmt.Errorf("%w %s: a column cannot reference its own table", ErrEdit, e)
	}
	if _, ok := other.Column(cn); !ok {
		return "", fmt.Errorf("%w %s: table %s has no column %q", ErrEdit, e, tn, cn)
	}
	drop()
	t.JoinKeys = append(t.JoinKeys, plan.JoinKey{Column: e.Column, References: e.Value})
	t.Checks = append(t.Checks, plan.Check{Rule: plan.RuleReferences, Column: e.Column, References: e.Value})
	return fmt.Sprintf("%s → %s (join; a row whose value is not in %s is held back)", ref, e.Value, e.Value), nil
}

func applyTableEdit(p *plan.Plan, t *plan.Table, e Edit) (string, error) {
	switch e.Field {
	case "key":
		var keys []string
		if !isNone(e.Value) {
			for k := range strings.SplitSeq(e.Value, ",") {
				k = strings.TrimSpace(k)
				if _, ok := t.Column(k); !ok {
					return "", fmt.Errorf("%w %s: table %s has no column %q", ErrEdit, e, e.Table, k)
				}
				if slices.Contains(keys, k) {
					return "", fmt.Errorf("%w %s: %s named twice", ErrEdit, e, k)
				}
				keys = append(keys, k)
			}
		}
		t.Load.Keys = keys
		return fmt.Sprintf("%s: key (%s)", e.Table, orNoneText(strings.Join(keys, ", "))), nil
	case "partition":
		if isNone(e.Value) {
			t.Partition = nil
			return e.Table + ": no partition", nil
		}
		var parts []string
		for v := range strings.SplitSeq(e.Value, ";") {
			f, err := plan.ParsePartition(strings.TrimSpace(v))
			if err != nil {
				return "", fmt.Errorf("%w %s: %v", ErrEdit, e, err)
			}
			c, ok := t.Column(f.Column)
			if !ok {
				return "", fmt.Errorf("%w %s: table %s has no column %q", ErrEdit, e, e.Table, f.Column)
			}
			if typ, err := c.ParsedType(); err == nil && c.Type != "" && !f.AcceptsType(typ) {
				return "", fmt.Errorf("%w %s: %s cannot partition %s column %s", ErrEdit, e, f, c.Type, c.Name)
			}
			parts = append(parts, f.String())
		}
		t.Partition = parts
		return e.Table + ": partition " + strings.Join(parts, ", "), nil
	}
	return "", fmt.Errorf("%w %s: unknown field %q", ErrEdit, e, e.Field)
}

// ApplyEdits parses and applies "--set" edits in order to a copy-free
// plan; the first that fails stops them and is returned (edits before it
// stay applied: callers apply to a plan they may throw away).
func ApplyEdits(p *plan.Plan, sets []string) ([]string, error) {
	var done []string
	for _, s := range sets {
		e, err := ParseEdit(s)
		if err != nil {
			return done, err
		}
		what, err := ApplyEdit(p, e)
		if err != nil {
			return done, err
		}
		done = append(done, what)
	}
	return done, nil
}

func baseTables(p *plan.Plan) []string {
	var out []string
	for _, n := range p.TableNames() {
		if !p.Tables[n].IsMart() {
			out = append(out, n)
		}
	}
	return out
}

func orNoneText(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Previews: the sampled values gate 3 read, cast as the load casts them
// (clean's caster, with the column's type, formats, normalizations and
// currency), so what the edit screen shows is what the run will do.

// ColumnPreview is how a column's sampled values fare under its spec.
type ColumnPreview struct {
	// Values are the non-null values tried; Parsed those that cast.
	Values, Parsed int
	// Failed are a few values that do not, with the reason of the first.
	Failed []string
	Reason string
}

// columnSpec is the clean spec of a plan column as the load builds it:
// key columns are required and, as text, NFC-normalized.
func columnSpec(t *plan.Table, c *plan.Column) (clean.ColumnSpec, error) {
	typ := plan.Type{Kind: plan.String}
	if c.Type != "" {
		var err error
		if typ, err = plan.ParseType(c.Type); err != nil {
			return clean.ColumnSpec{}, err
		}
	}
	norm := slices.Clone(c.Normalize)
	if t.IsKey(c.Name) && typ.Kind == plan.String && !slices.Contains(norm, "nfc") {
		norm = append([]string{"nfc"}, norm...)
	}
	var nulls []string
	if t.Source != nil && t.Source.NullTokens != nil {
		nulls = t.Source.NullTokens
	}
	return clean.ColumnSpec{Name: c.Name, Type: typ, Required: t.IsRequired(c.Name) || c.Required, Formats: c.Formats,
		Normalize: norm, NullTokens: nulls, AllowControl: c.AllowControlChars, Currency: c.Currency}, nil
}

func newCaster(specs []clean.ColumnSpec) (*clean.Caster, error) {
	fields := make([]arrow.Field, len(specs))
	for i, s := range specs {
		fields[i] = arrow.Field{Name: s.Name, Type: clean.ArrowType(s.Type), Nullable: true}
	}
	return clean.NewCaster(specs, arrow.NewSchema(fields, nil), memory.NewGoAllocator())
}

// PreviewColumn casts a column's sampled values (raw, non-null) under
// the column as the plan now has it.
func PreviewColumn(t *plan.Table, c *plan.Column, values []string) (ColumnPreview, error) {
	spec, err := columnSpec(t, c)
	if err != nil {
		return ColumnPreview{}, err
	}
	spec.Required = false
	cs, err := newCaster([]clean.ColumnSpec{spec})
	if err != nil {
		return ColumnPreview{}, err
	}
	defer cs.Release()
	var pv ColumnPreview
	row := make([]string, 1)
	for _, v := range values {
		row[0] = v
		pv.Values++
		errs := cs.Cast(row, nil)
		if len(errs) == 0 {
			pv.Parsed++
			continue
		}
		if len(pv.Failed) < 3 {
			pv.Failed = append(pv.Failed, v)
		}
		if pv.Reason == "" {
			pv.Reason = errs[0].Reason
		}
	}
	return pv, nil
}

// SampleColumn finds a plan column's sampled values in the evidence (by
// its header in the file); nil when the evidence has none.
func SampleColumn(ev *TableEvidence, c *plan.Column) *ColumnEvidence {
	if ev == nil {
		return nil
	}
	for i := range ev.Columns {
		if n := ev.Columns[i].Profile.Name; n == c.Header() || n == c.Name {
			return &ev.Columns[i]
		}
	}
	return nil
}

// PreviewTable casts the sampled rows of a table (the first rows read,
// aligned across its columns) under the plan's columns and counts the
// rows that at least one value would hold back (type, format, currency,
// control characters, a required value missing). Checks that compare
// rows (unique, references) are not counted: the load and gate 4 decide
// them. sampled is 0 when the evidence has no rows.
func PreviewTable(t *plan.Table, ev *TableEvidence) (held, sampled int, err error) {
	if ev == nil || len(t.Columns) == 0 {
		return 0, 0, nil
	}
	var specs []clean.ColumnSpec
	var cols [][]string
	for i := range t.Columns {
		c := &t.Columns[i]
		ce := SampleColumn(ev, c)
		if ce == nil {
			continue
		}
		spec, err := columnSpec(t, c)
		if err != nil {
			return 0, 0, err
		}
		specs = append(specs, spec)
		cols = append(cols, ce.Rows)
		sampled = max(sampled, len(ce.Rows))
	}
	if len(specs) == 0 || sampled == 0 {
		return 0, 0, nil
	}
	cs, err := newCaster(specs)
	if err != nil {
		return 0, 0, err
	}
	defer cs.Release()
	row := make([]string, len(specs))
	for r := range sampled {
		for i, col := range cols {
			row[i] = ""
			if r < len(col) {
				row[i] = col[r]
			}
		}
		if len(cs.Cast(row, nil)) > 0 {
			held++
		}
	}
	return held, sampled, nil
}

// HoldsBackMost is the headline's threshold: a table that would hold back
// (or held back) more than half of its rows.
func HoldsBackMost(held, rows int64) bool { return rows > 0 && 2*held > rows }

// HoldBackHeadline is the warning gate 3 shows before approval for a
// table whose sampled rows would mostly be held back ("" when not).
func HoldBackHeadline(table string, held, sampled int) string {
	if !HoldsBackMost(int64(held), int64(sampled)) {
		return ""
	}
	return fmt.Sprintf("%s: %d of %d sampled rows would be held back", table, held, sampled)
}

// FormatCandidates are the layouts to offer for a date or timestamp
// column: its own formats, then those the profile matched (most values
// first), then both orders of an ambiguous d/M date, then clean's
// defaults for the type.
func FormatCandidates(c *plan.Column, ce *ColumnEvidence) []string {
	var out []string
	add := func(fs ...string) {
		for _, f := range fs {
			if f == "" || slices.Contains(out, f) {
				continue
			}
			if _, err := clean.GoLayout(f); err != nil && f != clean.ExcelSerial {
				continue // a note of the profile ("a or b"), not a layout
			}
			out = append(out, f)
		}
	}
	add(c.Formats...)
	if ce != nil {
		p := ce.Profile
		type fc struct {
			f string
			n int
		}
		var seen []fc
		for f, n := range p.Formats {
			seen = append(seen, fc{f, n})
		}
		slices.SortFunc(seen, func(a, b fc) int {
			if a.n != b.n {
				return b.n - a.n
			}
			return strings.Compare(a.f, b.f)
		})
		for _, s := range seen {
			add(s.f)
		}
		add(p.Inferred.Formats...)
		add(p.DateOrder.Patterns...)
		add(p.DateOrder.DayFirst...)
		add(p.DateOrder.MonthFirst...)
	}
	typ, _ := c.ParsedType()
	if typ.Kind == plan.Timestamp || typ.Kind == plan.TimestampTZ {
		add(clean.DefaultTimestampFormats...)
	} else {
		add(clean.DefaultDateFormats...)
	}
	return out
}
