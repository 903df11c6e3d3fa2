package clean

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lima-lake/lima/engine/plan"
)

// A number with a currency symbol or code is held back under rule currency
// unless its column declares that currency; then only that currency's
// markers are removed, and counted.
func TestCurrencyInNumbers(t *testing.T) {
	cases := []struct {
		in, currency string
		want         string // decimal(18,2) text; "" when held back
		reason       string // part of the reason when held back
	}{
		// Undeclared: every marker is held back, whatever the currency.
		{"₩150,000", "", "", `"₩150,000" carries the currency ₩ (KRW) and the column declares none`},
		{"150,000원", "", "", "declare currency: KRW"},
		{"$12.00", "", "", "$ (USD, CAD, AUD, NZD, HKD, SGD, MXN, TWD)"},
		{"12.00 EUR", "", "", "currency: EUR"},
		{"-$12.00", "", "", "declare currency: USD"},
		{"¥500", "", "", "¥ (JPY, CNY)"},
		{"150,000", "", "150000.00", ""},
		// Declared: that currency's markers go, with the sign kept.
		{"₩150,000", "KRW", "150000.00", ""},
		{"￦150,000", "KRW", "150000.00", ""},
		{"150,000원", "KRW", "150000.00", ""},
		{"KRW 150,000", "KRW", "150000.00", ""},
		{"150000krw", "KRW", "150000.00", ""},
		{"-₩1,500", "KRW", "-1500.00", ""},
		{"(₩1,500)", "KRW", "-1500.00", ""},
		{"$12.00", "USD", "12.00", ""},
		{"US$12.00", "USD", "12.00", ""},
		{"$12.00", "CAD", "12.00", ""}, // $ is the dollar of a CAD column
		{"¥500", "CNY", "500.00", ""},
		{"150,000", "KRW", "150000.00", ""},
		// Declared, another currency: still held back.
		{"$12.00", "KRW", "", "not the column's currency KRW"},
		{"₩150,000", "USD", "", `"₩150,000" carries the currency ₩ (KRW), not the column's currency USD`},
		{"US$12.00", "CAD", "", "not the column's currency CAD"},
		{"€5 USD", "USD", "", "€ (EUR), not the column's currency USD"},
		// A marker on something that is no number is a type error, and a
		// code glued to a dash is an identifier, not an amount.
		{"₩abc", "", "", "not a decimal"},
		{"USD-12", "USD", "", "not a decimal"},
	}
	for _, c := range cases {
		v, fixes, err := ParseDecimal(c.in, 18, 2, NumberStyle{Currency: c.currency})
		if c.want == "" {
			var re ruleError
			isCur := errors.As(err, &re) && re.rule == RuleCurrency
			if err == nil || !strings.Contains(err.Error(), c.reason) || isCur != !strings.Contains(c.reason, "not a decimal") {
				t.Errorf("ParseDecimal(%q, currency %q): %v (currency rule %v), want held back: %q", c.in, c.currency, err, isCur, c.reason)
			}
			continue
		}
		if err != nil || v.ToString(2) != c.want {
			t.Errorf("ParseDecimal(%q, currency %q) = %s, %v; want %s", c.in, c.currency, v.ToString(2), err, c.want)
			continue
		}
		if hasMarker := c.in != "150,000"; slices.Contains(fixes, FixCurrency) != hasMarker {
			t.Errorf("ParseDecimal(%q, currency %q) fixes %v: currency fix %v", c.in, c.currency, fixes, hasMarker)
		}
	}
	if _, _, err := ParseInt("₩150,000", 0, 1<<40, NumberStyle{}); err == nil || !isRuleError(err) {
		t.Errorf("ParseInt with ₩ undeclared: %v, want a currency failure", err)
	}
	if n, _, err := ParseInt("₩150,000", 0, 1<<40, NumberStyle{Currency: "KRW"}); err != nil || n != 150000 {
		t.Errorf("ParseInt with ₩ in KRW: %d, %v", n, err)
	}
}

// Through the caster: the rule is currency (not type), the fix is counted
// only for rows that load, and an unknown currency code is refused.
func TestCasterCurrency(t *testing.T) {
	dec := plan.Type{Kind: plan.Decimal, Precision: 18, Scale: 2}
	dbl := plan.Type{Kind: plan.Double}
	c, mem := newCaster(t, []ColumnSpec{{Name: "amount", Type: dec}, {Name: "krw", Type: dec, Currency: "KRW"}, {Name: "eur", Type: dbl, Currency: "EUR"}})
	defer mem.AssertSize(t, 0)
	defer c.Release()
	rows := [][]string{
		{"150,000", "₩150,000", "1.5 EUR"}, // loads
		{"₩150,000", "1", "2"},             // amount: currency
		{"1", "$12.00", "2"},               // krw: currency
		{"1", "2", "£3"},                   // eur: currency
		{"1", "150,000원", "€2.50"},         // loads
		{"12x", "₩1", "1e3 EUR"},           // amount: type; eur: type (no exponent with a currency)
		{"2", "₩2", "1.5e3"},               // loads
	}
	want := [][]string{nil, {"amount:currency"}, {"krw:currency"}, {"eur:currency"}, nil, {"amount:type", "eur:type"}, nil}
	for i, r := range rows {
		var got []string
		for _, e := range c.Append(r, nil) {
			got = append(got, e.Column+":"+e.Rule)
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("row %v: %v, want %v", r, got, want[i])
		}
	}
	counts := map[string]int64{}
	for _, n := range c.Normalizations() {
		if n.Fix == FixCurrency {
			counts[n.Column] = n.Count
		}
	}
	// krw: rows 1, 5, 7 loaded with ₩/원; eur: rows 1 and 5.
	if counts["krw"] != 3 || counts["eur"] != 2 || counts["amount"] != 0 {
		t.Errorf("currency fixes %v, want krw 3, eur 2", counts)
	}
	b := c.NewBatch()
	defer b.Release()
	if b.NumRows() != 3 {
		t.Errorf("%d rows loaded, want 3", b.NumRows())
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ArrowType(dec), Nullable: true}}, nil)
	if _, err := NewCaster([]ColumnSpec{{Name: "a", Type: dec, Currency: "WON"}}, sc, mem); err == nil || !strings.Contains(err.Error(), "ISO 4217") {
		t.Errorf("unknown currency: %v", err)
	}
}

// Gate 3's evidence: one currency across the values (ambiguous symbols
// narrowed by the others), or a mix.
func TestCountCurrencies(t *testing.T) {
	cases := []struct {
		values []string
		code   string
		mixed  bool
		n      int
	}{
		{[]string{"₩150,000", "150,000원", "1,000", "KRW 5"}, "KRW", false, 3},
		{[]string{"$1", "$2.50", "3"}, "USD", false, 2},
		{[]string{"$1", "C$2.50"}, "CAD", false, 2},
		{[]string{"€1,5", "2,50 €"}, "EUR", false, 2},
		{[]string{"₩150,000", "150,000", "$12.00"}, "", true, 2},
		{[]string{"1", "2.5", "abc"}, "", false, 0},
	}
	for _, c := range cases {
		cu := CountCurrencies(c.values)
		code, mixed := cu.Code()
		if code != c.code || mixed != c.mixed || cu.Values != c.n {
			t.Errorf("%q: %q mixed %v (%d values), want %q mixed %v (%d)", c.values, code, mixed, cu.Values, c.code, c.mixed, c.n)
		}
	}
}
