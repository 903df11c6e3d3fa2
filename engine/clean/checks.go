package clean

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/lima-lake/lima/engine/plan"
)

// RowCheck is a compiled per-row check of the plan (not_null, range, regex,
// allowed, max_length). unique is evaluated by the loader across rows.
type RowCheck struct {
	Name   string
	Rule   string
	Column string
	col    int
	typ    plan.Type
	eval   func(c Cell) (bool, string)
	// row evaluates checks that read several columns (expression).
	row func(cells []Cell) (bool, string)
}

// RefSets holds, per "table.column", the canonical values present in that
// lake table: what a references check looks values up in.
type RefSets map[string]map[string]struct{}

// CompileChecks compiles the row-level checks of a table. columns is the
// column order of the Caster; refs must hold the set of every references
// check.
func CompileChecks(checks []plan.Check, columns []string, types []plan.Type, refs RefSets) ([]RowCheck, error) {
	idx := map[string]int{}
	for i, c := range columns {
		idx[c] = i
	}
	var out []RowCheck
	for _, ch := range checks {
		if ch.Rule == "unique" {
			continue
		}
		if ch.Rule == plan.RuleExpression {
			rc, err := compileExpr(ch, idx, types)
			if err != nil {
				return nil, err
			}
			out = append(out, rc)
			continue
		}
		i, ok := idx[ch.Column]
		if !ok {
			return nil, fmt.Errorf("check %s: unknown column %q", ch.Rule, ch.Column)
		}
		rc := RowCheck{Name: ch.Name, Rule: ch.Rule, Column: ch.Column, col: i, typ: types[i]}
		if rc.Name == "" {
			rc.Name = ch.Rule + ":" + ch.Column
		}
		t := types[i]
		switch ch.Rule {
		case "not_null":
			rc.eval = func(c Cell) (bool, string) { return !c.Null, "value is missing" }
		case "range":
			lo, hi := ch.Min, ch.Max
			rc.eval = func(c Cell) (bool, string) {
				if c.Null {
					return true, ""
				}
				var v float64
				switch kindOf(t) {
				case kInt, kLong:
					v = float64(c.I)
				case kDouble:
					v = c.F
				case kDecimal:
					v = c.D.ToFloat64(int32(t.Scale))
				default:
					return true, ""
				}
				if lo != nil && v < *lo {
					return false, fmt.Sprintf("%s is below the minimum %g", FormatCell(t, c), *lo)
				}
				if hi != nil && v > *hi {
					return false, fmt.Sprintf("%s is above the maximum %g", FormatCell(t, c), *hi)
				}
				return true, ""
			}
		case "regex":
			re, err := regexp.Compile(ch.Regex)
			if err != nil {
				return nil, fmt.Errorf("check %s: %w", rc.Name, err)
			}
			rc.eval = func(c Cell) (bool, string) {
				if c.Null || re.MatchString(FormatCell(t, c)) {
					return true, ""
				}
				return false, fmt.Sprintf("does not match %s", ch.Regex)
			}
		case "allowed":
			set := map[string]bool{}
			for _, v := range ch.Values {
				set[v] = true
			}
			rc.eval = func(c Cell) (bool, string) {
				if c.Null || set[FormatCell(t, c)] {
					return true, ""
				}
				return false, fmt.Sprintf("%q is not one of %s", FormatCell(t, c), strings.Join(ch.Values, ", "))
			}
		case plan.RuleReferences:
			set, ok := refs[ch.References]
			if !ok {
				return nil, fmt.Errorf("check %s: the values of %s were not read", rc.Name, ch.References)
			}
			ref := ch.References
			rc.eval = func(c Cell) (bool, string) {
				if c.Null {
					return true, ""
				}
				if _, ok := set[FormatCell(t, c)]; ok {
					return true, ""
				}
				return false, fmt.Sprintf("%q is not in %s", FormatCell(t, c), ref)
			}
		case "max_length":
			n := ch.Length
			rc.eval = func(c Cell) (bool, string) {
				if c.Null || utf8.RuneCountInString(c.S) <= n {
					return true, ""
				}
				return false, fmt.Sprintf("longer than %d characters", n)
			}
		default:
			return nil, fmt.Errorf("check: unknown rule %q", ch.Rule)
		}
		out = append(out, rc)
	}
	return out, nil
}

// Evaluate runs the checks on a cast row and appends failures to errs.
func Evaluate(checks []RowCheck, cells []Cell, values []string, errs []CellError) []CellError {
	for _, ch := range checks {
		if ch.row != nil {
			if ok, why := ch.row(cells); !ok {
				v := ""
				if ch.col >= 0 {
					v = values[ch.col]
				}
				errs = append(errs, CellError{Column: ch.Column, Value: v, Rule: ch.Rule, Reason: why})
			}
			continue
		}
		if ok, why := ch.eval(cells[ch.col]); !ok {
			errs = append(errs, CellError{Column: ch.Column, Value: values[ch.col], Rule: ch.Rule, Reason: why})
		}
	}
	return errs
}

// compileExpr compiles a row expression. Numbers compare exactly (as
// rationals), everything else by canonical text (dates and timestamps sort
// correctly that way). A comparison with a null is not a failure.
func compileExpr(ch plan.Check, idx map[string]int, types []plan.Type) (RowCheck, error) {
	e, err := plan.ParseExpr(ch.Expr)
	if err != nil {
		return RowCheck{}, err
	}
	rc := RowCheck{Name: ch.Name, Rule: ch.Rule, Column: ch.Column, col: -1}
	if rc.Name == "" {
		rc.Name = "expression: " + ch.Expr
	}
	if ch.Column != "" {
		rc.col = idx[ch.Column]
	}
	for _, c := range e.Columns() {
		if _, ok := idx[c]; !ok {
			return RowCheck{}, fmt.Errorf("check %s: unknown column %q", rc.Name, c)
		}
	}
	type val struct {
		null bool
		num  *big.Rat
		text string
	}
	get := func(o plan.Operand, cells []Cell) val {
		switch {
		case o.IsNull:
			return val{null: true}
		case o.Column == "":
			if o.IsNumber {
				r, _ := new(big.Rat).SetString(o.Literal)
				return val{num: r, text: o.Literal}
			}
			return val{text: o.Literal}
		}
		i := idx[o.Column]
		c, t := cells[i], types[i]
		if c.Null {
			return val{null: true}
		}
		switch t.Kind {
		case plan.Int, plan.Long:
			return val{num: new(big.Rat).SetInt64(c.I), text: FormatCell(t, c)}
		case plan.Double:
			r := new(big.Rat)
			if r.SetFloat64(c.F) == nil {
				return val{text: FormatCell(t, c)}
			}
			return val{num: r, text: FormatCell(t, c)}
		case plan.Decimal:
			r := new(big.Rat).SetFrac(c.D.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil))
			return val{num: r, text: FormatCell(t, c)}
		}
		return val{text: FormatCell(t, c)}
	}
	holds := func(cmp int, op string) bool {
		switch op {
		case "=":
			return cmp == 0
		case "!=":
			return cmp != 0
		case "<":
			return cmp < 0
		case "<=":
			return cmp <= 0
		case ">":
			return cmp > 0
		}
		return cmp >= 0
	}
	expr := ch.Expr
	rc.row = func(cells []Cell) (bool, string) {
		for _, group := range e.Or {
			all := true
			for _, c := range group {
				l, r := get(c.Left, cells), get(c.Right, cells)
				if l.null || r.null {
					continue // unknown is not a failure, as in SQL CHECK
				}
				var cmp int
				if l.num != nil && r.num != nil {
					cmp = l.num.Cmp(r.num)
				} else {
					cmp = strings.Compare(l.text, r.text)
				}
				if !holds(cmp, c.Op) {
					all = false
					break
				}
			}
			if all {
				return true, ""
			}
		}
		return false, "the row does not satisfy " + expr
	}
	return rc, nil
}
