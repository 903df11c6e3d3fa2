package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Aggregates a mart measure can apply.
const (
	AggSum   = "sum"
	AggCount = "count"
	AggMin   = "min"
	AggMax   = "max"
	AggAvg   = "avg"
)

// Aggs lists the aggregates in the order they are documented.
var Aggs = []string{AggSum, AggCount, AggMin, AggMax, AggAvg}

// Dimension is one grain column of a mart that Lima builds: a column of one
// of the mart's tables, or the year, month or day of a date or timestamp
// column (the first day of that period, as a date; timestamps in UTC).
type Dimension struct {
	// Name is the mart column.
	Name string `yaml:"name"`
	// Column is "col" (a column of From[0]) or "table.col".
	Column string `yaml:"column"`
	// Transform is year, month or day; empty: the value itself.
	Transform string `yaml:"transform,omitempty"`
}

// Measure is one aggregate column of a mart that Lima builds.
type Measure struct {
	// Name is the mart column.
	Name string `yaml:"name"`
	// Agg is sum, count, min, max or avg.
	Agg string `yaml:"agg"`
	// Column is "col" (a column of From[0]) or "table.col"; empty for
	// count: the number of rows of From[0] in the group.
	Column string `yaml:"column,omitempty"`
	// PreAggregated makes a measure of a joined table count each row of
	// that table once per group, however many rows of From[0] it joins:
	// the value is aggregated at its own table's grain first. Without it a
	// sum or count of a joined (coarser) table's column adds the value once
	// per joined row — the classic overcount gate 3 rejects.
	PreAggregated bool `yaml:"pre_aggregated,omitempty"`
}

// ColumnRef is a column of one of a mart's tables.
type ColumnRef struct {
	Table  string
	Column string
}

func (r ColumnRef) String() string { return r.Table + "." + r.Column }

// Built reports whether the table is a mart that Lima builds itself (it
// declares From), rather than one written outside Lima.
func (t *Table) Built() bool { return t.IsMart() && len(t.From) > 0 }

// Ref resolves a column reference of a mart: "col" is a column of From[0],
// "table.col" a column of that table, which must be one of From.
func (t *Table) Ref(s string) (ColumnRef, error) {
	if len(t.From) == 0 {
		return ColumnRef{}, fmt.Errorf("%q: the mart has no from tables", s)
	}
	tbl, col, ok := strings.Cut(s, ".")
	if !ok {
		tbl, col = t.From[0], s
	}
	if tbl == "" || col == "" || strings.Contains(col, ".") {
		return ColumnRef{}, fmt.Errorf("%q: write col (a column of %s) or table.col", s, t.From[0])
	}
	if !slices.Contains(t.From, tbl) {
		return ColumnRef{}, fmt.Errorf("%q: table %s is not in from (%s)", s, tbl, strings.Join(t.From, ", "))
	}
	return ColumnRef{Table: tbl, Column: col}, nil
}

// martDefinition checks the definition of a mart Lima builds: its from
// tables, joins, dimensions and measures, and that its columns and grain
// say the same. Whether a measure may be summed across the grain is gate
// 3's question (gates.ValidateGrain), not a rule of the file layout.
func (v *validator) martDefinition(tp, name string, ti *tableInfo) {
	t := ti.t
	if !t.IsMart() {
		for _, f := range []struct {
			field string
			set   bool
		}{{"from", len(t.From) > 0}, {"joins", len(t.Joins) > 0}, {"dimensions", len(t.Dimensions) > 0}, {"measures", len(t.Measures) > 0}} {
			if f.set {
				v.add(tp+"."+f.field, "applies only to a mart (type: mart)")
			}
		}
		return
	}
	if len(t.From) == 0 {
		if len(t.Joins) > 0 || len(t.Dimensions) > 0 || len(t.Measures) > 0 {
			v.add(tp+".from", "required with dimensions, measures or joins: the tables the mart is built from, the one whose rows it groups first")
		}
		return
	}
	seen := map[string]bool{}
	for i, f := range t.From {
		fp := joinIndex(tp+".from", i)
		other, ok := v.p.Tables[f]
		switch {
		case f == name:
			v.add(fp, "a mart cannot be built from itself")
		case !ok || other == nil:
			v.add(fp, "no table %q in tables%s", f, hint(f, v.p.TableNames(), "tables"))
		case other.IsMart():
			v.add(fp, "%s is a mart; Lima builds marts from base tables", f)
		case seen[f]:
			v.add(fp, "%q is listed twice", f)
		}
		seen[f] = true
	}
	// column checks a reference against the declared columns of its table.
	column := func(p, s string, ok func(Type) bool, why string) (ColumnRef, Type, bool) {
		r, err := t.Ref(s)
		if err != nil {
			v.add(p, "%v", err)
			return r, Type{}, false
		}
		ti := v.tables[r.Table]
		if ti == nil || !ti.declared {
			return r, Type{}, true
		}
		if _, found := ti.byName[r.Column]; !found {
			v.add(p, "no column %q in table %s%s", r.Column, r.Table, hint(r.Column, ti.names, "columns"))
			return r, Type{}, false
		}
		typ := ti.types[r.Column]
		if ok != nil && typ.Kind != Unknown && !ok(typ) {
			v.add(p, "%s is %s; %s", r, typ, why)
		}
		return r, typ, true
	}
	joined := map[string]bool{t.From[0]: true}
	for i, j := range t.Joins {
		jp := joinIndex(tp+".joins", i)
		if _, _, ok := column(jp+".column", j.Column, nil, ""); !ok {
			continue
		}
		r, _, ok := column(jp+".references", j.References, nil, "")
		if !ok {
			continue
		}
		switch {
		case !strings.Contains(j.References, "."):
			v.add(jp+".references", "write table.column of the table joined in, e.g. suppliers.supplier_id")
		case r.Table == t.From[0]:
			v.add(jp+".references", "%s is the table whose rows the mart groups; join the other from tables to it", r.Table)
		case joined[r.Table]:
			v.add(jp+".references", "%s is joined twice; join each from table once", r.Table)
		}
		joined[r.Table] = true
	}
	for _, f := range t.From[1:] {
		if !joined[f] {
			v.add(tp+".joins", "%s is in from but not joined; add {column: <column of %s>, references: %s.<its key>}", f, t.From[0], f)
		}
	}
	outputs := map[string]string{} // mart column → what defines it
	define := func(p, col, what string) {
		switch {
		case !nameRE.MatchString(col) || len(col) > maxNameLen:
			v.add(p, "%q is not allowed; %s (at most %d)", col, nameHelp, maxNameLen)
		case outputs[col] != "":
			v.add(p, "%q is already the name of %s", col, outputs[col])
		case ti.declared:
			if _, ok := ti.byName[col]; !ok {
				v.add(p, "%q is not one of the mart's columns; declare it under columns", col)
			}
		}
		outputs[col] = what
	}
	var dims []string
	for i, d := range t.Dimensions {
		dp := joinIndex(tp+".dimensions", i)
		define(dp+".name", d.Name, "a dimension")
		dims = append(dims, d.Name)
		switch d.Transform {
		case "":
			column(dp+".column", d.Column, nil, "")
		case TransformYear, TransformMonth, TransformDay:
			column(dp+".column", d.Column, Type.IsTemporal, d.Transform+" needs a date, timestamp or timestamptz column")
		default:
			v.add(dp+".transform", "%q is not a transform; use year, month or day, or leave it empty for the value itself", d.Transform)
		}
	}
	if len(t.Dimensions) > 0 && len(t.Grain) > 0 {
		g, d := slices.Clone(t.Grain), slices.Clone(dims)
		slices.Sort(g)
		slices.Sort(d)
		if !slices.Equal(g, d) {
			v.add(tp+".grain", "the grain of a mart Lima builds is its dimensions (%s)", strings.Join(dims, ", "))
		}
	}
	for i, m := range t.Measures {
		mp := joinIndex(tp+".measures", i)
		define(mp+".name", m.Name, "a measure")
		switch m.Agg {
		case AggSum, AggAvg:
			if m.Column == "" {
				v.add(mp+".column", "required for %s: the column to aggregate", m.Agg)
			} else {
				column(mp+".column", m.Column, Type.IsNumeric, m.Agg+" needs a numeric column (int, long, decimal or double)")
			}
		case AggCount, AggMin, AggMax:
			if m.Column != "" {
				column(mp+".column", m.Column, func(t Type) bool { return m.Agg == AggCount || t.Kind != Binary }, m.Agg+" cannot order binary values")
			} else if m.Agg != AggCount {
				v.add(mp+".column", "required for %s: the column to aggregate", m.Agg)
			}
		case "":
			v.add(mp+".agg", "required; use %s", oneOf(Aggs...))
		default:
			sug := ""
			if s, ok := suggest(m.Agg, Aggs); ok {
				sug = fmt.Sprintf("did you mean %q? ", s)
			}
			v.add(mp+".agg", "%q is not an aggregate; %suse %s", m.Agg, sug, oneOf(Aggs...))
		}
		if m.PreAggregated && m.Column != "" {
			if r, err := t.Ref(m.Column); err == nil && r.Table == t.From[0] {
				v.add(mp+".pre_aggregated", "%s is a column of %s, whose rows the mart groups: it is aggregated once per row already", r, r.Table)
			}
		}
	}
	for i, c := range t.Columns {
		if c.Name != "" && outputs[c.Name] == "" && (len(t.Dimensions) > 0 || len(t.Measures) > 0) {
			v.add(joinIndex(tp+".columns", i)+".name", "%q is neither a dimension nor a measure of the mart", c.Name)
		}
	}
}

// AvgScale is the scale of the average of an integer column.
const AvgScale = 6

// MeasureType is the type of a measure's mart column, given the type of
// the column it aggregates (ignored for a count): count is long; sum of
// int or long is long, of decimal(p,s) decimal(38,s), of double double;
// min and max keep the type; avg of int or long is decimal(38,6), of
// decimal(p,s) decimal(38,s) (rounded half away from zero), of double
// double. Decimal results are exact: never a float.
func MeasureType(agg string, in Type) (Type, error) {
	switch agg {
	case AggCount:
		return Type{Kind: Long}, nil
	case AggMin, AggMax:
		if in.Kind == Unknown || in.Kind == Binary {
			return Type{}, fmt.Errorf("%s needs a column of known type, not %s", agg, in)
		}
		return in, nil
	case AggSum, AggAvg:
		switch in.Kind {
		case Int, Long:
			if agg == AggAvg {
				return Type{Kind: Decimal, Precision: MaxDecimalPrecision, Scale: AvgScale}, nil
			}
			return Type{Kind: Long}, nil
		case Decimal:
			return Type{Kind: Decimal, Precision: MaxDecimalPrecision, Scale: in.Scale}, nil
		case Double:
			return in, nil
		}
		return Type{}, fmt.Errorf("%s needs a numeric column (int, long, decimal or double), not %s", agg, in)
	}
	return Type{}, fmt.Errorf("%q is not an aggregate; use %s", agg, oneOf(Aggs...))
}

// DimensionType is the type of a dimension's mart column: a date for year,
// month and day, else the type of the column.
func DimensionType(transform string, in Type) Type {
	if transform != "" {
		return Type{Kind: Date}
	}
	return in
}
