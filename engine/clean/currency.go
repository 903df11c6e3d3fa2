package clean

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// RuleCurrency: a number carries a currency symbol or code that its column
// does not declare (plan Column.Currency). The amount may be right, but in
// which currency is a question for the source owner: ₩150,000 and $12.00
// summed as 150012 is what a careful analyst calls wrong.
const RuleCurrency = "currency"

// isRuleError reports whether err names a rule of its own (not "type").
func isRuleError(err error) bool {
	var re ruleError
	return errors.As(err, &re)
}

// currencyPrefix is the currency marker s starts with: a symbol
// (plan.CurrencySymbolList, longest first) or an ISO 4217 code (case
// ignored) followed by a space or a digit — USD-12 is no amount but a
// code; "" for none.
func currencyPrefix(s string) string {
	if s == "" || plainEdge(s[0]) {
		return "" // the common case, without a look at every symbol
	}
	for _, sym := range plan.CurrencySymbolList {
		if strings.HasPrefix(s, sym) {
			return sym
		}
	}
	if len(s) > 3 && isCodeAt(s[:3]) && (s[3] == ' ' || s[3] >= '0' && s[3] <= '9') {
		return s[:3]
	}
	return ""
}

// hasCurrency reports whether s starts or ends with a currency marker.
func hasCurrency(s string) bool { return currencyPrefix(s) != "" || currencySuffix(s) != "" }

// currencySuffix is the currency marker s ends with; "" for none.
func currencySuffix(s string) string {
	if s == "" || plainEdge(s[len(s)-1]) {
		return ""
	}
	for _, sym := range plan.CurrencySymbolList {
		if strings.HasSuffix(s, sym) && len(s) > len(sym) {
			return sym
		}
	}
	if n := len(s); n > 3 && isCodeAt(s[n-3:]) && (s[n-4] == ' ' || s[n-4] >= '0' && s[n-4] <= '9') {
		return s[n-3:]
	}
	return ""
}

// plainEdge reports whether a number's first or last byte is one no
// currency marker has at that end: a digit, a sign, a separator, a
// parenthesis or a space.
func plainEdge(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == ',' || c == '(' || c == ')' || c == ' '
}

// isCodeAt reports whether three bytes are an ISO 4217 code, case ignored.
func isCodeAt(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return plan.IsCurrencyCode(strings.ToUpper(s))
}

// currencyOf reports whether the marker stands for the currency code.
func currencyOf(marker, code string) bool {
	if code == "" {
		return false
	}
	for _, c := range plan.SymbolCurrencies(marker) {
		if c == code {
			return true
		}
	}
	return false
}

// currencyError is the reason a value with a currency marker is held back.
func currencyError(v, marker, declared string) error {
	codes := plan.SymbolCurrencies(marker)
	what := marker
	if len(codes) > 0 && (len(codes) > 1 || codes[0] != strings.ToUpper(marker)) {
		what = fmt.Sprintf("%s (%s)", marker, strings.Join(codes, ", "))
	}
	if declared == "" {
		return ruleError{RuleCurrency, fmt.Sprintf("%q carries the currency %s and the column declares none; if all its amounts are in %s, declare currency: %s on the column",
			v, what, codes[0], codes[0])}
	}
	return ruleError{RuleCurrency, fmt.Sprintf("%q carries the currency %s, not the column's currency %s; convert the amount, or keep the currency in a column of its own",
		v, what, declared)}
}

// Currencies counts the currency markers of a column's values and decides
// its currency, from all of its values together.
type Currencies struct {
	// Markers counts the values by the currency marker they carry (₩, $,
	// KRW); Examples holds the first value of each.
	Markers  map[string]int
	Examples map[string]string
	// Values counts the values that carry a marker.
	Values int
}

func (c *Currencies) add(n numberText, v string) {
	if len(n.currency) == 0 {
		return
	}
	if c.Markers == nil {
		c.Markers, c.Examples = map[string]int{}, map[string]string{}
	}
	c.Values++
	for _, m := range n.currency {
		c.Markers[m]++
		if _, ok := c.Examples[m]; !ok {
			c.Examples[m] = v
		}
	}
}

// Code is the one currency every marker stands for (the proposed reading
// of an ambiguous symbol: $ is USD, ¥ JPY) and whether the markers mix
// currencies; "" and false when no value carries one.
func (c Currencies) Code() (code string, mixed bool) {
	if c.Values == 0 {
		return "", false
	}
	var common []string
	first := true
	for _, m := range c.Sorted() {
		codes := plan.SymbolCurrencies(m)
		if first {
			common, first = append([]string(nil), codes...), false
			continue
		}
		var keep []string
		for _, x := range common {
			for _, y := range codes {
				if x == y {
					keep = append(keep, x)
				}
			}
		}
		common = keep
	}
	if len(common) == 0 {
		return "", true
	}
	return common[0], false
}

// Sorted lists the markers, most frequent first (ties in byte order).
func (c Currencies) Sorted() []string {
	var out []string
	for m := range c.Markers {
		out = append(out, m)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (c.Markers[out[j]] > c.Markers[out[j-1]] || c.Markers[out[j]] == c.Markers[out[j-1]] && out[j] < out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Summary phrases the markers for a person: `₩ ×3 (e.g. "₩150,000"), $
// ×1 (e.g. "$12.00")`, most frequent first. Values are raw.
func (c Currencies) Summary() string {
	var parts []string
	for _, m := range c.Sorted() {
		parts = append(parts, fmt.Sprintf("%s ×%d (e.g. %q)", m, c.Markers[m], c.Examples[m]))
	}
	return strings.Join(parts, ", ")
}

// CountCurrencies counts the currency markers of values.
func CountCurrencies(values []string) Currencies {
	var c Currencies
	for _, v := range values {
		if n, err := splitNumber(v, NumberStyle{AnyCurrency: true}); err == nil {
			c.add(n, v)
		} else if n, err := splitNumber(v, NumberStyle{AnyCurrency: true, DecimalComma: true}); err == nil {
			c.add(n, v)
		}
	}
	return c
}

func (c Currencies) clone() Currencies {
	out := Currencies{Values: c.Values}
	if c.Markers != nil {
		out.Markers, out.Examples = map[string]int{}, map[string]string{}
		for k, v := range c.Markers {
			out.Markers[k] = v
		}
		for k, v := range c.Examples {
			out.Examples[k] = v
		}
	}
	return out
}
