package clean

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Number fixes, named as they appear in the report.
const (
	FixTrim          = "trim"
	FixTrailingMinus = "trailing-minus → negative"
	FixParentheses   = "(parentheses) → negative"
	FixThousands     = "thousands separator removed"
	FixDecimalComma  = "decimal comma → point"
	FixCurrency      = "currency symbol removed"
	FixNullToken     = "null token → null"
	FixZeroPad       = "zero-padded"
	FixUpper         = "upper-cased"
	FixLower         = "lower-cased"
	FixNFC           = "Unicode NFD → NFC"
)

// NumberStyle is the convention of a numeric column, chosen once per column,
// never guessed row by row.
type NumberStyle struct {
	// DecimalComma: ',' is the decimal separator and '.' groups thousands.
	DecimalComma bool
	// Currency is the column's declared currency (an ISO 4217 code): its
	// code and symbols are removed (FixCurrency). Any other currency
	// marker — every one when Currency is "" — fails the value under
	// RuleCurrency.
	Currency string
	// AnyCurrency reads the number behind any currency marker, for
	// profiling and inference; casting never sets it.
	AnyCurrency bool
}

// numberText is a number reduced to sign, integer digits and fraction digits.
type numberText struct {
	neg      bool
	intPart  string
	fracPart string
	fixes    []string
	// currency holds the currency markers found (₩, $, KRW), in order.
	currency []string
}

var errNotNumber = errors.New("not a number")

// splitNumber applies the unambiguous fixes (spaces, trailing minus,
// parentheses, currency symbols, grouped thousands) and returns the parts.
func splitNumber(s string, st NumberStyle) (numberText, error) {
	var n numberText
	t := strings.TrimSpace(s)
	if t != s {
		n.fixes = append(n.fixes, FixTrim)
	}
	if t == "" {
		return n, errNotNumber
	}
	if len(t) >= 2 && t[0] == '(' && t[len(t)-1] == ')' {
		n.neg = true
		t = strings.TrimSpace(t[1 : len(t)-1])
		n.fixes = append(n.fixes, FixParentheses)
	}
	// A currency marker at either end (a sign may precede it: -$12.00).
	var sign string
	if len(t) > 1 && (t[0] == '-' || t[0] == '+') && currencyPrefix(t[1:]) != "" {
		sign, t = t[:1], t[1:]
	}
	if m := currencyPrefix(t); m != "" {
		n.currency = append(n.currency, m)
		t = strings.TrimSpace(t[len(m):])
	}
	if m := currencySuffix(t); m != "" {
		n.currency = append(n.currency, m)
		t = strings.TrimSpace(t[:len(t)-len(m)])
	}
	t = sign + t
	if t == "" {
		return n, errNotNumber
	}
	if len(n.currency) > 0 {
		n, err := splitPlain(n, t, st)
		if err != nil {
			return n, err
		}
		for _, m := range n.currency {
			if !st.AnyCurrency && !currencyOf(m, st.Currency) {
				return n, currencyError(s, m, st.Currency)
			}
		}
		n.fixes = append(n.fixes, FixCurrency)
		return n, nil
	}
	return splitPlain(n, t, st)
}

// splitPlain splits t, a number without currency markers.
func splitPlain(n numberText, t string, st NumberStyle) (numberText, error) {
	switch t[0] {
	case '-':
		if n.neg {
			return n, errNotNumber
		}
		n.neg = true
		t = t[1:]
	case '+':
		t = t[1:]
	}
	if strings.HasSuffix(t, "-") {
		if n.neg {
			return n, errNotNumber
		}
		n.neg = true
		t = t[:len(t)-1]
		n.fixes = append(n.fixes, FixTrailingMinus)
	}
	dec, grp := byte('.'), byte(',')
	if st.DecimalComma {
		dec, grp = ',', '.'
	}
	intPart, fracPart := t, ""
	if i := strings.IndexByte(t, dec); i >= 0 {
		intPart, fracPart = t[:i], t[i+1:]
		if st.DecimalComma {
			n.fixes = append(n.fixes, FixDecimalComma)
		}
	}
	if strings.IndexByte(intPart, grp) >= 0 {
		// Grouping is accepted only when strictly in threes: 1,234,567.
		groups := strings.Split(intPart, string(grp))
		if len(groups[0]) < 1 || len(groups[0]) > 3 {
			return n, errNotNumber
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return n, errNotNumber
			}
		}
		intPart = strings.Join(groups, "")
		n.fixes = append(n.fixes, FixThousands)
	}
	if intPart == "" && fracPart == "" {
		return n, errNotNumber
	}
	if !allDigits(intPart) || !allDigits(fracPart) {
		return n, errNotNumber
	}
	n.intPart, n.fracPart = intPart, fracPart
	return n, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseDecimal parses s exactly into a decimal of the given precision and
// scale. Extra fraction digits are accepted only when they are zeros: a value
// is never rounded silently.
func ParseDecimal(s string, prec, scale int, st NumberStyle) (decimal128.Num, []string, error) {
	n, err := splitNumber(s, st)
	if err != nil {
		if isRuleError(err) {
			return decimal128.Num{}, n.fixes, err
		}
		return decimal128.Num{}, n.fixes, fmt.Errorf("%q is not a decimal number", s)
	}
	frac := n.fracPart
	if len(frac) > scale {
		if strings.Trim(frac[scale:], "0") != "" {
			return decimal128.Num{}, n.fixes, fmt.Errorf("%q has more than %d decimal places", s, scale)
		}
		frac = frac[:scale]
	}
	frac += strings.Repeat("0", scale-len(frac))
	digits := strings.TrimLeft(n.intPart+frac, "0")
	if len(digits) > prec {
		return decimal128.Num{}, n.fixes, fmt.Errorf("%q does not fit decimal(%d,%d)", s, prec, scale)
	}
	var v decimal128.Num
	ten := decimal128.FromU64(10)
	for i := 0; i < len(digits); i++ {
		v = v.Mul(ten).Add(decimal128.FromU64(uint64(digits[i] - '0')))
	}
	if n.neg {
		v = v.Negate()
	}
	return v, n.fixes, nil
}

// ParseInt parses s as an integer within [min, max].
func ParseInt(s string, min, max int64, st NumberStyle) (int64, []string, error) {
	n, err := splitNumber(s, st)
	if err != nil && isRuleError(err) {
		return 0, n.fixes, err
	}
	if err != nil || n.intPart == "" {
		return 0, n.fixes, fmt.Errorf("%q is not an integer", s)
	}
	if strings.Trim(n.fracPart, "0") != "" {
		return 0, n.fixes, fmt.Errorf("%q is not an integer (has a fraction)", s)
	}
	digits := strings.TrimLeft(n.intPart, "0")
	if len(digits) > 19 {
		return 0, n.fixes, fmt.Errorf("%q is out of range", s)
	}
	var u uint64
	for i := 0; i < len(digits); i++ {
		u = u*10 + uint64(digits[i]-'0')
	}
	if u > 1<<63 || (u == 1<<63 && !n.neg) {
		return 0, n.fixes, fmt.Errorf("%q is out of range", s)
	}
	v := int64(u)
	if n.neg {
		v = -v
	}
	if v < min || v > max {
		return 0, n.fixes, fmt.Errorf("%q is out of range [%d, %d]", s, min, max)
	}
	return v, n.fixes, nil
}
