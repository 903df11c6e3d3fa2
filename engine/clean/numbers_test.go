package clean

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	cases := []struct {
		in        string
		prec, sc  int
		style     NumberStyle
		want      string // canonical text with scale
		fixes     []string
		wantError string
	}{
		{"150.000-", 18, 3, NumberStyle{}, "-150.000", []string{FixTrailingMinus}, ""},
		{"1,250.500", 18, 3, NumberStyle{}, "1250.500", []string{FixThousands}, ""},
		{"1,000.000-", 18, 3, NumberStyle{}, "-1000.000", []string{FixTrailingMinus, FixThousands}, ""},
		{"(75.5)", 18, 3, NumberStyle{}, "-75.500", []string{FixParentheses}, ""},
		{" 42 ", 18, 2, NumberStyle{}, "42.00", []string{FixTrim}, ""},
		{"€12.30", 18, 2, NumberStyle{Currency: "EUR"}, "12.30", []string{FixCurrency}, ""},
		{"€12.30", 18, 2, NumberStyle{}, "", nil, "declare currency: EUR"},
		{"1.234,56", 18, 2, NumberStyle{DecimalComma: true}, "1234.56", []string{FixDecimalComma, FixThousands}, ""},
		{"0.1", 38, 37, NumberStyle{}, "0.1000000000000000000000000000000000000", nil, ""},
		{"99999999999999999999999999999999999999", 38, 0, NumberStyle{}, "99999999999999999999999999999999999999", nil, ""},
		{"-.5", 5, 2, NumberStyle{}, "-0.50", nil, ""},
		{"12.3400", 5, 2, NumberStyle{}, "12.34", nil, ""}, // trailing zeros beyond the scale lose nothing
		{"12.345", 5, 2, NumberStyle{}, "", nil, "more than 2 decimal places"},
		{"1234.5", 5, 2, NumberStyle{}, "", nil, "does not fit decimal(5,2)"},
		{"12x.50", 18, 3, NumberStyle{}, "", nil, "not a decimal"},
		{"1,23.5", 18, 3, NumberStyle{}, "", nil, "not a decimal"}, // bad grouping is not a thousands separator
		{"--5", 18, 3, NumberStyle{}, "", nil, "not a decimal"},
		{"5--", 18, 3, NumberStyle{}, "", nil, "not a decimal"},
		{"-5-", 18, 3, NumberStyle{}, "", nil, "not a decimal"},
		{"", 18, 3, NumberStyle{}, "", nil, "not a decimal"},
		{".", 18, 3, NumberStyle{}, "", nil, "not a decimal"},
		{"1e5", 18, 3, NumberStyle{}, "", nil, "not a decimal"},
	}
	for _, c := range cases {
		v, fixes, err := ParseDecimal(c.in, c.prec, c.sc, c.style)
		if c.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantError) {
				t.Errorf("ParseDecimal(%q): err %v, want %q", c.in, err, c.wantError)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDecimal(%q): %v", c.in, err)
			continue
		}
		if got := v.ToString(int32(c.sc)); got != c.want {
			t.Errorf("ParseDecimal(%q) = %s, want %s", c.in, got, c.want)
		}
		slices.Sort(fixes)
		want := slices.Clone(c.fixes)
		slices.Sort(want)
		if !slices.Equal(fixes, want) {
			t.Errorf("ParseDecimal(%q) fixes %v, want %v", c.in, fixes, want)
		}
	}
}

func TestParseInt(t *testing.T) {
	cases := []struct {
		in       string
		min, max int64
		want     int64
		ok       bool
	}{
		{"1,200", math.MinInt64, math.MaxInt64, 1200, true},
		{"007", math.MinInt64, math.MaxInt64, 7, true},
		{"12-", math.MinInt64, math.MaxInt64, -12, true},
		{"3.00", math.MinInt64, math.MaxInt64, 3, true},
		{"3.5", math.MinInt64, math.MaxInt64, 0, false},
		{"9223372036854775807", math.MinInt64, math.MaxInt64, math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, math.MaxInt64, math.MinInt64, true},
		{"9223372036854775808", math.MinInt64, math.MaxInt64, 0, false},
		{"2147483648", math.MinInt32, math.MaxInt32, 0, false},
		{"abc", math.MinInt64, math.MaxInt64, 0, false},
	}
	for _, c := range cases {
		got, _, err := ParseInt(c.in, c.min, c.max, NumberStyle{})
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseInt(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"150.000-", "1,250.500", "(1)", "€5", "1.234,56", "-0", "", "9999999999999999999999999999999999999999"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, comma bool) {
		v, _, err := ParseDecimal(s, 38, 6, NumberStyle{DecimalComma: comma})
		if err != nil {
			return
		}
		// A parsed value re-parses to itself from its canonical text.
		txt := v.ToString(6)
		v2, _, err := ParseDecimal(txt, 38, 6, NumberStyle{})
		if err != nil || v2 != v {
			t.Fatalf("%q → %s did not round-trip: %v", s, txt, err)
		}
	})
}
