package plan

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Expr is a parsed row expression: Or of And-groups of comparisons. There
// are no function calls, no arithmetic and no access to anything but the
// row, so evaluating one is safe.
type Expr struct {
	Or [][]Cmp
}

// Cmp compares two operands.
type Cmp struct {
	Left, Right Operand
	Op          string // = != < <= > >=
}

// Operand is a column or a literal.
type Operand struct {
	Column string
	// Literal text of a number or a 'string'; IsNull for null.
	Literal  string
	IsNumber bool
	IsNull   bool
}

// ParseExpr parses "a <= b and c = 'X' or d != null".
func ParseExpr(s string) (*Expr, error) {
	toks, err := lexExpr(s)
	if err != nil {
		return nil, err
	}
	e := &Expr{}
	var group []Cmp
	for i := 0; i < len(toks); {
		if i+3 > len(toks) {
			return nil, fmt.Errorf("%q: expected a comparison like a <= b", s)
		}
		l, op, r := toks[i], toks[i+1], toks[i+2]
		if !isCmpOp(op.text) || l.op || r.op {
			return nil, fmt.Errorf("%q: expected a comparison like a <= b near %q", s, l.text)
		}
		group = append(group, Cmp{Left: l.operand(), Op: op.text, Right: r.operand()})
		i += 3
		if i == len(toks) {
			break
		}
		switch strings.ToLower(toks[i].text) {
		case "and":
		case "or":
			e.Or = append(e.Or, group)
			group = nil
		default:
			return nil, fmt.Errorf("%q: expected and / or near %q", s, toks[i].text)
		}
		i++
		if i == len(toks) {
			return nil, fmt.Errorf("%q: ends with and / or", s)
		}
	}
	e.Or = append(e.Or, group)
	return e, nil
}

// Columns are the columns the expression reads.
func (e *Expr) Columns() []string {
	var out []string
	for _, g := range e.Or {
		for _, c := range g {
			for _, o := range []Operand{c.Left, c.Right} {
				if o.Column != "" {
					out = append(out, o.Column)
				}
			}
		}
	}
	return out
}

// CheckExpr parses an expression and checks its columns exist in t (when t
// declares columns).
func CheckExpr(s string, t *Table) error {
	e, err := ParseExpr(s)
	if err != nil {
		return err
	}
	if len(t.Columns) == 0 {
		return nil
	}
	for _, c := range e.Columns() {
		if _, ok := t.Column(c); !ok {
			return fmt.Errorf("%q: no column %q in this table", s, c)
		}
	}
	return nil
}

type exprTok struct {
	text              string
	op, str, num, nul bool
}

func (t exprTok) operand() Operand {
	switch {
	case t.nul:
		return Operand{IsNull: true}
	case t.str:
		return Operand{Literal: t.text}
	case t.num:
		return Operand{Literal: t.text, IsNumber: true}
	}
	return Operand{Column: t.text}
}

func isCmpOp(s string) bool {
	switch s {
	case "=", "!=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

func lexExpr(s string) ([]exprTok, error) {
	var out []exprTok
	r := []rune(s)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for ; j < len(r); j++ {
				if r[j] == '\'' {
					if j+1 < len(r) && r[j+1] == '\'' {
						b.WriteRune('\'')
						j++
						continue
					}
					break
				}
				b.WriteRune(r[j])
			}
			if j >= len(r) {
				return nil, fmt.Errorf("%q: unterminated string", s)
			}
			out = append(out, exprTok{text: b.String(), str: true})
			i = j + 1
		case strings.ContainsRune("=!<>", c):
			j := i + 1
			if j < len(r) && r[j] == '=' {
				j++
			}
			op := string(r[i:j])
			if op == "!" {
				return nil, fmt.Errorf("%q: use != for not equal", s)
			}
			out = append(out, exprTok{text: op, op: true})
			i = j
		case c == '-' || c == '.' || unicode.IsDigit(c):
			j := i + 1
			for j < len(r) && (unicode.IsDigit(r[j]) || r[j] == '.') {
				j++
			}
			txt := string(r[i:j])
			if _, err := strconv.ParseFloat(txt, 64); err != nil {
				return nil, fmt.Errorf("%q: %q is not a number", s, txt)
			}
			out = append(out, exprTok{text: txt, num: true})
			i = j
		case c == '_' || unicode.IsLetter(c):
			j := i + 1
			for j < len(r) && (r[j] == '_' || unicode.IsLetter(r[j]) || unicode.IsDigit(r[j])) {
				j++
			}
			w := string(r[i:j])
			out = append(out, exprTok{text: w, nul: strings.EqualFold(w, "null")})
			i = j
		default:
			return nil, fmt.Errorf("%q: unexpected %q (only comparisons, and, or)", s, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty expression")
	}
	return out, nil
}

// RenameExprColumn rewrites the expression s with column old named new;
// literals, operators and the other columns are kept as written (spacing
// is normalized to one space between tokens). s unchanged when it does
// not read old.
func RenameExprColumn(s, old, new string) (string, error) {
	toks, err := lexExpr(s)
	if err != nil {
		return "", err
	}
	found := false
	parts := make([]string, len(toks))
	for i, t := range toks {
		switch {
		case t.str:
			parts[i] = "'" + strings.ReplaceAll(t.text, "'", "''") + "'"
		case i%4 != 1 && i%4 != 3 && !t.op && !t.num && !t.nul && t.text == old: // an operand, not and / or
			parts[i], found = new, true
		default:
			parts[i] = t.text
		}
	}
	if !found {
		return s, nil
	}
	return strings.Join(parts, " "), nil
}
