package reports

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// CTASOptions say where the Athena table goes.
type CTASOptions struct {
	// Database is the Glue database of the tables; default: the plan's
	// namespace.
	Database string
	// Location is the S3 folder of the mart's Iceberg table, e.g.
	// s3://bucket/lake/erp_quality/mart_sales/. Required.
	Location string
}

// QuoteIdent quotes an SQL identifier for Athena (Trino): in double quotes,
// a double quote inside written twice.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// QuoteString quotes an SQL string literal: in single quotes, a single
// quote inside written twice.
func QuoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// AthenaType is the Athena (Trino) type of a plan type.
func AthenaType(t plan.Type) string {
	switch t.Kind {
	case plan.Int:
		return "integer"
	case plan.Long:
		return "bigint"
	case plan.Double:
		return "double"
	case plan.Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case plan.Date:
		return "date"
	case plan.Timestamp:
		return "timestamp(6)"
	case plan.TimestampTZ:
		return "timestamp(6) with time zone"
	case plan.Boolean:
		return "boolean"
	case plan.Binary:
		return "varbinary"
	}
	return "varchar"
}

// CTAS renders the mart name of the plan, as Lima builds it, as an Athena
// CREATE TABLE … AS SELECT that writes an Iceberg table mart_<name>: the
// rows of the fact table left-joined to the other tables, grouped by the
// dimensions (year, month and day of a timestamp taken in UTC, as Lima
// does), each measure cast to the mart column's type. A pre-aggregated
// measure is aggregated over the distinct rows of its table in each group,
// then joined to the groups. Every identifier is quoted and escaped; the
// location is a quoted literal.
func CTAS(p *plan.Plan, name string, o CTASOptions) (string, error) {
	t := p.Tables[name]
	if t == nil || !t.Built() {
		return "", fmt.Errorf("ctas: %s is not a mart Lima builds (type: mart with from, dimensions and measures)", name)
	}
	if strings.TrimSpace(o.Location) == "" {
		return "", errors.New("ctas: the table's S3 location is required")
	}
	db := o.Database
	if db == "" {
		db = p.Namespace()
	}
	q := QuoteIdent
	alias := map[string]string{t.From[0]: "t0"}
	var from strings.Builder
	fmt.Fprintf(&from, "  FROM %s.%s AS %s", q(db), q(t.From[0]), q("t0"))
	colType := func(r plan.ColumnRef) plan.Type {
		if bt := p.Tables[r.Table]; bt != nil {
			if c, ok := bt.Column(r.Column); ok {
				typ, _ := c.ParsedType()
				return typ
			}
		}
		return plan.Type{}
	}
	ref := func(s string) (string, plan.ColumnRef, error) {
		r, err := t.Ref(s)
		if err != nil {
			return "", r, fmt.Errorf("ctas: %w", err)
		}
		a, ok := alias[r.Table]
		if !ok {
			return "", r, fmt.Errorf("ctas: %s is not joined", r.Table)
		}
		return q(a) + "." + q(r.Column), r, nil
	}
	for i, j := range t.Joins {
		left, _, err := ref(j.Column)
		if err != nil {
			return "", err
		}
		r, err := t.Ref(j.References)
		if err != nil {
			return "", fmt.Errorf("ctas: %w", err)
		}
		a := fmt.Sprintf("t%d", i+1)
		alias[r.Table] = a
		fmt.Fprintf(&from, "\n  LEFT JOIN %s.%s AS %s ON %s.%s = %s", q(db), q(r.Table), q(a), q(a), q(r.Column), left)
	}
	for _, f := range t.From {
		if _, ok := alias[f]; !ok {
			return "", fmt.Errorf("ctas: %s is in from but not joined", f)
		}
	}

	// The rows CTE: dimensions, measure inputs, keys of pre-aggregated
	// measures' tables.
	var rowsSel, dims []string
	for _, d := range t.Dimensions {
		expr, r, err := ref(d.Column)
		if err != nil {
			return "", err
		}
		switch d.Transform {
		case "":
		case plan.TransformYear, plan.TransformMonth, plan.TransformDay:
			switch colType(r).Kind {
			case plan.Date:
				expr = fmt.Sprintf("date_trunc(%s, %s)", QuoteString(d.Transform), expr)
			case plan.TimestampTZ:
				expr = fmt.Sprintf("CAST(date_trunc(%s, %s AT TIME ZONE 'UTC') AS date)", QuoteString(d.Transform), expr)
			default:
				expr = fmt.Sprintf("CAST(date_trunc(%s, %s) AS date)", QuoteString(d.Transform), expr)
			}
		default:
			return "", fmt.Errorf("ctas: dimension %s: transform %q is not year, month or day", d.Name, d.Transform)
		}
		rowsSel = append(rowsSel, expr+" AS "+q(d.Name))
		dims = append(dims, q(d.Name))
	}
	type measure struct {
		m      plan.Measure
		input  string // column of the rows CTE, "" for count(*)
		key    string // column of the rows CTE holding the pre-aggregated table's key
		in     plan.Type
		out    plan.Type
		hasOut bool
	}
	var ms []measure
	declared := map[string]plan.Type{}
	for _, c := range t.Columns {
		if typ, err := c.ParsedType(); err == nil && typ.Kind != plan.Unknown {
			declared[c.Name] = typ
		}
	}
	for i, m := range t.Measures {
		me := measure{m: m}
		if m.Column != "" {
			expr, r, err := ref(m.Column)
			if err != nil {
				return "", err
			}
			me.input = fmt.Sprintf("m%d", i+1)
			me.in = colType(r)
			rowsSel = append(rowsSel, expr+" AS "+q(me.input))
			if m.PreAggregated {
				bt := p.Tables[r.Table]
				var via string
				for _, j := range t.Joins {
					if jr, err := t.Ref(j.References); err == nil && jr.Table == r.Table {
						via = jr.Column
					}
				}
				if bt == nil || via == "" {
					return "", fmt.Errorf("ctas: measure %s: pre_aggregated needs %s joined on its key", m.Name, r.Table)
				}
				me.key = fmt.Sprintf("k%d", i+1)
				rowsSel = append(rowsSel, q(alias[r.Table])+"."+q(via)+" AS "+q(me.key))
			}
		}
		if typ, ok := declared[m.Name]; ok {
			me.out, me.hasOut = typ, true
		} else if typ, err := plan.MeasureType(m.Agg, me.in); err == nil && (me.in.Kind != plan.Unknown || m.Agg == plan.AggCount) {
			me.out, me.hasOut = typ, true
		}
		ms = append(ms, me)
	}
	aggExpr := func(me measure, arg string) string {
		var e string
		switch me.m.Agg {
		case plan.AggCount:
			if arg == "" {
				return "count(*)"
			}
			return "count(" + arg + ")"
		case plan.AggAvg:
			if me.in.IsIntegral() && me.hasOut {
				arg = fmt.Sprintf("CAST(%s AS %s)", arg, AthenaType(me.out))
			}
			e = "avg(" + arg + ")"
		default:
			e = me.m.Agg + "(" + arg + ")"
		}
		if me.hasOut {
			e = fmt.Sprintf("CAST(%s AS %s)", e, AthenaType(me.out))
		}
		return e
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s.%s\nWITH (\n  table_type = 'ICEBERG',\n  location = %s,\n  is_external = false\n) AS\n", q(db), q("mart_"+name), QuoteString(o.Location))
	fmt.Fprintf(&b, "WITH %s AS (\n  SELECT\n    %s\n%s\n)", q("rows"), strings.Join(rowsSel, ",\n    "), from.String())
	out := map[string]string{} // mart column → its expression in the final SELECT
	hasPre := false
	for _, me := range ms {
		if me.key != "" {
			hasPre = true
		}
	}
	groupBy := strings.Join(dims, ", ")
	if !hasPre {
		for _, d := range t.Dimensions {
			out[d.Name] = q(d.Name)
		}
		for _, me := range ms {
			arg := ""
			if me.input != "" {
				arg = q(me.input)
			}
			out[me.m.Name] = aggExpr(me, arg)
		}
		writeSelect(&b, t, out, fmt.Sprintf("FROM %s\nGROUP BY %s", q("rows"), groupBy))
		return b.String(), nil
	}
	// With pre-aggregated measures: the plain aggregates per group, then
	// each pre-aggregated one over the distinct rows of its table.
	var aggSel []string
	aggSel = append(aggSel, dims...)
	for _, d := range t.Dimensions {
		out[d.Name] = q("agg") + "." + q(d.Name)
	}
	var joins []string
	for i, me := range ms {
		if me.key != "" {
			continue
		}
		arg := ""
		if me.input != "" {
			arg = q(me.input)
		}
		col := fmt.Sprintf("a%d", i+1)
		aggSel = append(aggSel, aggExpr(me, arg)+" AS "+q(col))
		out[me.m.Name] = q("agg") + "." + q(col)
	}
	fmt.Fprintf(&b, ", %s AS (\n  SELECT %s\n  FROM %s\n  GROUP BY %s\n)", q("agg"), strings.Join(aggSel, ", "), q("rows"), groupBy)
	for i, me := range ms {
		if me.key == "" {
			continue
		}
		cte := fmt.Sprintf("pre%d", i+1)
		fmt.Fprintf(&b, ", %s AS (\n  SELECT %s, %s AS %s\n  FROM (SELECT DISTINCT %s, %s, %s FROM %s WHERE %s IS NOT NULL)\n  GROUP BY %s\n)",
			q(cte), groupBy, aggExpr(me, q(me.input)), q("v"), groupBy, q(me.key), q(me.input), q("rows"), q(me.key), groupBy)
		var on []string
		for _, d := range dims {
			on = append(on, fmt.Sprintf("%s.%s IS NOT DISTINCT FROM %s.%s", q("agg"), d, q(cte), d))
		}
		joins = append(joins, fmt.Sprintf("LEFT JOIN %s ON %s", q(cte), strings.Join(on, " AND ")))
		out[me.m.Name] = q(cte) + "." + q("v")
		if me.m.Agg == plan.AggCount {
			out[me.m.Name] = fmt.Sprintf("coalesce(%s.%s, 0)", q(cte), q("v"))
		}
	}
	writeSelect(&b, t, out, "FROM "+q("agg")+"\n"+strings.Join(joins, "\n"))
	return b.String(), nil
}

// writeSelect writes the final SELECT in the order of the mart's declared
// columns (dimensions, then measures, when none are declared).
func writeSelect(b *strings.Builder, t *plan.Table, out map[string]string, tail string) {
	var order []string
	for _, c := range t.Columns {
		if _, ok := out[c.Name]; ok {
			order = append(order, c.Name)
		}
	}
	if len(order) != len(out) {
		order = order[:0]
		for _, d := range t.Dimensions {
			order = append(order, d.Name)
		}
		for _, m := range t.Measures {
			order = append(order, m.Name)
		}
	}
	var sel []string
	for _, c := range order {
		e := out[c]
		if e == QuoteIdent(c) {
			sel = append(sel, e)
		} else {
			sel = append(sel, e+" AS "+QuoteIdent(c))
		}
	}
	fmt.Fprintf(b, "\nSELECT\n  %s\n%s\n", strings.Join(sel, ",\n  "), tail)
}
