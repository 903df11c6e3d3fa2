package clean

import (
	"fmt"
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
}

// CompileChecks compiles the row-level checks of a table. columns is the
// column order of the Caster.
func CompileChecks(checks []plan.Check, columns []string, types []plan.Type) ([]RowCheck, error) {
	idx := map[string]int{}
	for i, c := range columns {
		idx[c] = i
	}
	var out []RowCheck
	for _, ch := range checks {
		if ch.Rule == "unique" {
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
		if ok, why := ch.eval(cells[ch.col]); !ok {
			errs = append(errs, CellError{Column: ch.Column, Value: values[ch.col], Rule: ch.Rule, Reason: why})
		}
	}
	return errs
}
