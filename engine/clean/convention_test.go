package clean

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDetectNumberStyle(t *testing.T) {
	tests := []struct {
		name            string
		values          []string
		comma, ambig    bool
		dot, cm, both   int
		numbers         int
		evidence        string
		fixes           map[string]int
		trailingExample string
	}{
		{
			name:   "decimal comma proven",
			values: []string{"1.234,56", "12,5", "7", "n/a"},
			comma:  true, cm: 2, numbers: 3,
			evidence: `decimal comma, proven by 2 values (e.g. "1.234,56")`,
			fixes:    map[string]int{FixThousands: 1, FixDecimalComma: 2},
		},
		{
			name:   "decimal point proven",
			values: []string{"1,234.56", "12.5", "3"},
			dot:    2, numbers: 3,
			evidence: `decimal point, proven by 2 values (e.g. "1,234.56")`,
			fixes:    map[string]int{FixThousands: 1},
		},
		{
			name:   "only values that fit both",
			values: []string{"1.234", "5.000", "12"},
			ambig:  true, both: 2, numbers: 3,
			evidence: `no value tells the convention and 2 values can read either way (e.g. "1.234")`,
			fixes:    map[string]int{},
		},
		{
			name:   "thousands comma fits both",
			values: []string{"1,234"},
			ambig:  true, both: 1, numbers: 1,
			evidence: `no value tells the convention and 1 value can read either way (e.g. "1,234")`,
			fixes:    map[string]int{FixThousands: 1},
		},
		{
			name:   "contradictory: majority wins but ambiguous",
			values: []string{"12.5", "12,5", "3,75"},
			comma:  true, ambig: true, dot: 1, cm: 2, numbers: 3,
			evidence: `contradictory: a decimal point proven by 1 value (e.g. "12.5"), a decimal comma by 2 values (e.g. "12,5")`,
			fixes:    map[string]int{FixDecimalComma: 2},
		},
		{
			name:   "SAP trailing minus under a decimal comma",
			values: []string{"150.000-", "1.500,00-", "20,00"},
			comma:  true, cm: 2, both: 1, numbers: 3,
			evidence:        `decimal comma, proven by 2 values (e.g. "1.500,00-"); 1 value can read either way (e.g. "150.000-")`,
			fixes:           map[string]int{FixTrailingMinus: 2, FixThousands: 2, FixDecimalComma: 2},
			trailingExample: "150.000-",
		},
		{
			name:   "spaces, currency, parentheses",
			values: []string{" €1.234,50 ", "(12,00)", "$3"},
			comma:  true, cm: 2, numbers: 3,
			evidence: `decimal comma, proven by 2 values (e.g. " €1.234,50 ")`,
			fixes:    map[string]int{FixTrim: 1, FixCurrency: 2, FixParentheses: 1, FixThousands: 1, FixDecimalComma: 2},
		},
		{
			name:     "integers tell nothing",
			values:   []string{"1", "-2", "300", "0042"},
			numbers:  4,
			evidence: "4 numbers, none with a separator that tells the convention",
			fixes:    map[string]int{},
		},
		{
			name:     "dates and addresses are no numbers",
			values:   []string{"03.04.2026", "10.0.0.1", "abc", ""},
			evidence: "no numbers",
			fixes:    map[string]int{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := DetectNumberStyle(tc.values)
			if d.Style.DecimalComma != tc.comma || d.Ambiguous != tc.ambig || d.Dot != tc.dot || d.Comma != tc.cm || d.Both != tc.both || d.Numbers != tc.numbers {
				t.Errorf("got comma=%v ambiguous=%v dot=%d comma=%d both=%d numbers=%d; want %v %v %d %d %d %d",
					d.Style.DecimalComma, d.Ambiguous, d.Dot, d.Comma, d.Both, d.Numbers, tc.comma, tc.ambig, tc.dot, tc.cm, tc.both, tc.numbers)
			}
			if d.Evidence != tc.evidence {
				t.Errorf("Evidence = %q\n          want %q", d.Evidence, tc.evidence)
			}
			if !reflect.DeepEqual(d.Fixes, tc.fixes) {
				t.Errorf("Fixes = %v, want %v", d.Fixes, tc.fixes)
			}
			if tc.trailingExample != "" && d.Examples[FixTrailingMinus] != tc.trailingExample {
				t.Errorf("trailing-minus example = %q, want %q", d.Examples[FixTrailingMinus], tc.trailingExample)
			}
		})
	}
}

func TestDetectDateOrder(t *testing.T) {
	tests := []struct {
		name                           string
		values                         []string
		order                          string
		ambig                          bool
		patterns, dayFirst, monthFirst []string
		day, month, both, invalid      int
		evidence                       string
	}{
		{
			name:   "first field above 12 proves d/M",
			values: []string{"13/04/2026", "03/04/2026", "3/4/2026", "2026-01-02"},
			order:  OrderDayMonth, patterns: []string{"d/M/yyyy"},
			dayFirst: []string{"d/M/yyyy"}, monthFirst: []string{"M/d/yyyy"},
			day: 1, both: 2,
			evidence: `d/M: 1 value has a first field above 12 (e.g. "13/04/2026")`,
		},
		{
			name:   "second field above 12 proves M/d",
			values: []string{"04/13/2026", "12/31/2025", "01/02/2026"},
			order:  OrderMonthDay, patterns: []string{"MM/dd/yyyy"},
			dayFirst: []string{"dd/MM/yyyy"}, monthFirst: []string{"MM/dd/yyyy"},
			month: 2, both: 1,
			evidence: `M/d: 2 values have a second field above 12 (e.g. "04/13/2026")`,
		},
		{
			name:     "all fields ≤ 12: escalate",
			values:   []string{"03/04/2026", "05/06/2026", "01.02.26"},
			ambig:    true,
			dayFirst: []string{"dd/MM/yyyy", "dd.MM.yy"}, monthFirst: []string{"MM/dd/yyyy", "MM.dd.yy"},
			both:     3,
			evidence: `d/M and M/d cannot be told apart: 3 values are ≤ 12 in both fields (e.g. "03/04/2026")`,
		},
		{
			name:     "contradictory",
			values:   []string{"13/01/2026", "01/13/2026", "02/14/2026"},
			ambig:    true,
			dayFirst: []string{"dd/MM/yyyy"}, monthFirst: []string{"MM/dd/yyyy"},
			day: 1, month: 2,
			evidence: `contradictory: d/M proven by 1 value (e.g. "13/01/2026"), M/d by 2 values (e.g. "01/13/2026")`,
		},
		{
			name:   "impossible dates prove nothing",
			values: []string{"31/02/2026", "13/13/2026", "31/04/2026", "29/02/2024"},
			order:  OrderDayMonth, patterns: []string{"dd/MM/yyyy"},
			dayFirst: []string{"dd/MM/yyyy"}, monthFirst: []string{"MM/dd/yyyy"},
			day: 1, invalid: 3,
			evidence: `d/M: 1 value has a first field above 12 (e.g. "29/02/2024"); 3 values are no real date either way (e.g. "31/02/2026")`,
		},
		{
			name:   "with a time",
			values: []string{"25.12.2026 10:30", "01.02.2026 8:00", "24-12-2026"},
			order:  OrderDayMonth, patterns: []string{"dd.MM.yyyy HH:mm", "dd-MM-yyyy"},
			dayFirst: []string{"dd.MM.yyyy HH:mm", "dd-MM-yyyy"}, monthFirst: []string{"MM.dd.yyyy HH:mm", "MM-dd-yyyy"},
			day: 2, both: 1,
			evidence: `d/M: 2 values have a first field above 12 (e.g. "25.12.2026 10:30")`,
		},
		{
			name:   "year first and text are ignored",
			values: []string{"2026/03/04", "2026-03-04", "3/4", "1/2/3", "12/12/2026x"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := DetectDateOrder(tc.values)
			if d.Order != tc.order || d.Ambiguous != tc.ambig || d.DayProof != tc.day || d.MonthProof != tc.month || d.Both != tc.both || d.Invalid != tc.invalid {
				t.Errorf("got order=%q ambiguous=%v day=%d month=%d both=%d invalid=%d; want %q %v %d %d %d %d",
					d.Order, d.Ambiguous, d.DayProof, d.MonthProof, d.Both, d.Invalid, tc.order, tc.ambig, tc.day, tc.month, tc.both, tc.invalid)
			}
			if !reflect.DeepEqual(d.Patterns, tc.patterns) || !reflect.DeepEqual(d.DayFirst, tc.dayFirst) || !reflect.DeepEqual(d.MonthFirst, tc.monthFirst) {
				t.Errorf("patterns %q day-first %q month-first %q; want %q %q %q", d.Patterns, d.DayFirst, d.MonthFirst, tc.patterns, tc.dayFirst, tc.monthFirst)
			}
			if d.Evidence != tc.evidence {
				t.Errorf("Evidence = %q\n          want %q", d.Evidence, tc.evidence)
			}
			// Every accepted pattern reads the values it was made from.
			for _, v := range tc.values {
				if s, ok := parseDateShape(v); !ok || d.Ambiguous || d.Order == "" || !realDate(s.year, pick(d.Order == OrderDayMonth, s.b, s.a), pick(d.Order == OrderDayMonth, s.a, s.b)) {
					continue
				}
				parsed := false
				for _, p := range d.Patterns {
					l, err := GoLayout(p)
					if err != nil {
						t.Fatalf("GoLayout(%q): %v", p, err)
					}
					if _, err := time.Parse(l, v); err == nil {
						parsed = true
					}
				}
				if !parsed {
					t.Errorf("no pattern of %q reads %q", d.Patterns, v)
				}
			}
		})
	}
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// FuzzDetectNumberStyle checks that the detectors never panic and that
// their counts and decisions agree.
func FuzzDetectNumberStyle(f *testing.F) {
	for _, s := range [][2]string{
		{"1.234,56", "12,5"}, {"1,234.56", "12.5"}, {"1.234", "1,234"}, {"150.000-", "(1,00)"},
		{" €1.234,50 ", "$-3"}, {"", "-"}, {"(-)", "€"}, {"1..2", ",,"}, {"03/04/2026", "13/04/26 10:30"},
		{"\xff\xfe", "٣٫٥"}, {"1 234,5", "1'234.5"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		vals := []string{a, b, a + b, strings.TrimSpace(a)}
		d := DetectNumberStyle(vals)
		if d.Dot+d.Comma+d.Both > d.Numbers || d.Numbers > len(vals) {
			t.Fatalf("counts %+v over %d values", d, len(vals))
		}
		wantAmbig := (d.Dot > 0 && d.Comma > 0) || (d.Dot == 0 && d.Comma == 0 && d.Both > 0)
		if d.Ambiguous != wantAmbig {
			t.Fatalf("Ambiguous = %v with dot=%d comma=%d both=%d", d.Ambiguous, d.Dot, d.Comma, d.Both)
		}
		if !d.Ambiguous && ((d.Comma > 0) != d.Style.DecimalComma) {
			t.Fatalf("style %+v with dot=%d comma=%d", d.Style, d.Dot, d.Comma)
		}
		if d.Evidence == "" {
			t.Fatal("no evidence")
		}
		o := DetectDateOrder(vals)
		if o.DayProof+o.MonthProof+o.Both+o.Invalid != o.Dates {
			t.Fatalf("date counts %+v", o)
		}
		if !o.Ambiguous && o.Order != "" {
			for _, p := range o.Patterns {
				if _, err := GoLayout(p); err != nil {
					t.Fatalf("pattern %q: %v", p, err)
				}
			}
		}
	})
}
