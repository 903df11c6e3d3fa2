package clean

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

func TestProfiler(t *testing.T) {
	cols := []string{"material", "amount", "posted", "customer", "qty", "day"}
	p := NewProfiler(cols, nil)
	for _, r := range [][]string{
		{"007", "1.234,50", "03/04/2026", "ACME", "1,234", "31.12.2025"},
		{"008", "150,00-", "05/06/2026", "NULL", "2,500", "01.01.2026"},
		{"009", "12,00", "01/02/2026", "Bolt", "12", "15.06.2025"},
		{"1234", "99,99-", "11/12/2026", "", "3,000", ""},
		{"007", "0,50", "NULL", "NULL", "7", "02.03.2026", "extra ignored"},
	} {
		p.Add(r)
	}
	got := p.Profile()
	if len(got) != len(cols) {
		t.Fatalf("%d profiles", len(got))
	}
	byName := map[string]ColumnProfile{}
	for i, c := range got {
		if c.Name != cols[i] {
			t.Fatalf("profile %d is %q, want %q", i, c.Name, cols[i])
		}
		if c.Count != 5 {
			t.Errorf("%s: Count = %d, want 5", c.Name, c.Count)
		}
		byName[c.Name] = c
	}

	type want struct {
		kind                plan.Kind
		nonNull             int
		distinct            uint64
		leading             int
		min, max            string
		samples             []string
		nulls, formats      map[string]int
		comma, numAmbiguous bool
		dateAmbiguous       bool
		findings            []string
	}
	wants := map[string]want{
		"material": {
			kind: plan.String, nonNull: 5, distinct: 4, leading: 4, min: "007", max: "1234",
			samples: []string{"007", "008", "009", "1234"}, nulls: map[string]int{}, formats: map[string]int{},
			findings: []string{"leading zeros in 4 values: keep as text"},
		},
		"amount": {
			kind: plan.Decimal, nonNull: 5, distinct: 5, min: "150,00-", max: "1.234,50", comma: true,
			samples: []string{"1.234,50", "150,00-", "12,00", "99,99-", "0,50"}, nulls: map[string]int{}, formats: map[string]int{},
			findings: []string{"2 values use SAP trailing minus (150,00-)"},
		},
		"posted": {
			kind: plan.String, nonNull: 4, distinct: 4, min: "01/02/2026", max: "11/12/2026", dateAmbiguous: true,
			samples: []string{"03/04/2026", "05/06/2026", "01/02/2026", "11/12/2026"},
			nulls:   map[string]int{"NULL": 1}, formats: map[string]int{"dd/MM/yyyy or MM/dd/yyyy": 4},
			findings: []string{
				"d/M vs M/d cannot be told apart: 4 values are ≤ 12 in both fields",
				`1 value is a null token: "NULL" ×1`,
			},
		},
		"customer": {
			kind: plan.String, nonNull: 2, distinct: 2, min: "ACME", max: "Bolt",
			samples: []string{"ACME", "Bolt"}, nulls: map[string]int{"NULL": 2, "": 1}, formats: map[string]int{},
			findings: []string{`2 values are null tokens: "NULL" ×2`},
		},
		"qty": {
			kind: plan.Long, nonNull: 5, distinct: 5, min: "7", max: "3,000", numAmbiguous: true,
			samples: []string{"1,234", "2,500", "12", "3,000", "7"}, nulls: map[string]int{}, formats: map[string]int{},
			findings: []string{"column fits both 1,234 = 1234 and 1,234 = 1.234 — choose"},
		},
		"day": {
			kind: plan.Date, nonNull: 4, distinct: 4, min: "15.06.2025", max: "02.03.2026",
			samples: []string{"31.12.2025", "01.01.2026", "15.06.2025", "02.03.2026"},
			nulls:   map[string]int{"": 1}, formats: map[string]int{"dd.MM.yyyy": 4},
		},
	}
	for name, w := range wants {
		c := byName[name]
		if c.Inferred.Type.Kind != w.kind || c.NonNull != w.nonNull || c.Distinct != w.distinct || c.LeadingZeros != w.leading {
			t.Errorf("%s: kind %v nonNull %d distinct %d leading %d; want %v %d %d %d",
				name, c.Inferred.Type.Kind, c.NonNull, c.Distinct, c.LeadingZeros, w.kind, w.nonNull, w.distinct, w.leading)
		}
		if c.Min != w.min || c.Max != w.max {
			t.Errorf("%s: min %q max %q, want %q %q", name, c.Min, c.Max, w.min, w.max)
		}
		if !reflect.DeepEqual(c.Samples, w.samples) {
			t.Errorf("%s: samples %q, want %q", name, c.Samples, w.samples)
		}
		if !reflect.DeepEqual(c.NullTokens, w.nulls) {
			t.Errorf("%s: null tokens %v, want %v", name, c.NullTokens, w.nulls)
		}
		if !reflect.DeepEqual(c.Formats, w.formats) {
			t.Errorf("%s: formats %v, want %v", name, c.Formats, w.formats)
		}
		if c.NumberStyle.Style.DecimalComma != w.comma || c.NumberStyle.Ambiguous != w.numAmbiguous || c.DateOrder.Ambiguous != w.dateAmbiguous {
			t.Errorf("%s: comma %v number-ambiguous %v date-ambiguous %v; want %v %v %v", name,
				c.NumberStyle.Style.DecimalComma, c.NumberStyle.Ambiguous, c.DateOrder.Ambiguous, w.comma, w.numAmbiguous, w.dateAmbiguous)
		}
		var issues []string
		for _, f := range c.Findings() {
			if f.Column != name || f.Impact == "" || f.Fix == "" {
				t.Errorf("%s: finding %+v incomplete", name, f)
			}
			issues = append(issues, f.Issue)
		}
		if !reflect.DeepEqual(issues, w.findings) {
			t.Errorf("%s: findings %q, want %q", name, issues, w.findings)
		}
	}
	if got := byName["amount"].Inferred.Type; got != (plan.Type{Kind: plan.Decimal, Precision: 18, Scale: 2}) {
		t.Errorf("amount: inferred %+v, want decimal(18,2) read with a decimal comma", got)
	}
	if got := byName["day"].DateOrder; got.Order != OrderDayMonth || !reflect.DeepEqual(got.Patterns, []string{"dd.MM.yyyy"}) {
		t.Errorf("day: date order %+v", got)
	}
}

func TestProfilerFindings(t *testing.T) {
	p := NewProfiler([]string{"empty", "mixed", "money", "dates"}, []string{"", "-"})
	rows := [][]string{
		{"", "12.5", "(€12.00)", "2026-01-05"},
		{"-", "12,5", "$3", "31.01.2026"},
		{"", "13,75", "4.00", "2026-01-06"},
		{"", "abc", "5", "2026-01-07"},
	}
	for _, r := range rows {
		p.Add(r)
	}
	issues := map[string][]string{}
	for _, c := range p.Profile() {
		for _, f := range c.Findings() {
			issues[c.Name] = append(issues[c.Name], f.Issue)
		}
	}
	want := map[string][]string{
		"empty": {"column is empty: all 4 values are null", `1 value is a null token: "-" ×1`},
		"mixed": {"decimal point in 1 value (12.5), decimal comma in 2 values (12,5)"},
		"money": {"1 value is negative in (parentheses) ((€12.00))", `2 values with a currency mix currencies: $ ×1 (e.g. "$3"), € ×1 (e.g. "(€12.00)")`},
		"dates": {"dates in 2 formats: yyyy-MM-dd ×3, dd.MM.yyyy ×1"},
	}
	if !reflect.DeepEqual(issues, want) {
		t.Errorf("findings:\n got %q\nwant %q", issues, want)
	}

	// One currency: a decimal column, its currency named with the way to
	// declare it.
	p = NewProfiler([]string{"amount"}, nil)
	for _, v := range []string{"₩150,000", "1,500.50", "12,500원", "₩3,000"} {
		p.Add([]string{v})
	}
	won := p.Profile()[0]
	if won.Inferred.Type.Kind != plan.Decimal && won.Inferred.Type.Kind != plan.Long {
		t.Errorf("₩ amounts inferred as %s, want a number", won.Inferred.Type)
	}
	var wonIssues []string
	for _, f := range won.Findings() {
		wonIssues = append(wonIssues, f.Issue+" | "+f.Fix)
	}
	if want := []string{`3 values carry their currency in KRW: ₩ ×2 (e.g. "₩150,000"), 원 ×1 (e.g. "12,500원") | declare currency: KRW on the column: the symbol is then removed (counted in the run report) and another currency's symbol is held back`}; !reflect.DeepEqual(wonIssues, want) {
		t.Errorf("₩ findings:\n got %q\nwant %q", wonIssues, want)
	}

	// 19 of 20 values are dates: a date column whose odd value is named.
	p = NewProfiler([]string{"when"}, nil)
	for i := 1; i <= 19; i++ {
		p.Add([]string{fmt.Sprintf("2026-02-%02d", i)})
	}
	p.Add([]string{"soon"})
	c := p.Profile()[0]
	var got []string
	for _, f := range c.Findings() {
		got = append(got, f.Issue)
	}
	if c.Inferred.Type.Kind != plan.Date || !reflect.DeepEqual(got, []string{"1 of 20 sampled values are not date"}) {
		t.Errorf("when: %v %q", c.Inferred.Type, got)
	}
	// An order that contradicts itself.
	p = NewProfiler([]string{"d"}, nil)
	for _, v := range []string{"13/01/2026", "01/13/2026", "02/14/2026"} {
		p.Add([]string{v})
	}
	got = nil
	for _, f := range p.Profile()[0].Findings() {
		got = append(got, f.Issue)
	}
	if want := []string{"dates mix d/M and M/d: 1 value is a date only as d/M, 2 only as M/d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("contradictory order: %q, want %q", got, want)
	}
}

func TestProfilerBoundedSample(t *testing.T) {
	p := NewProfiler([]string{"n"}, nil)
	const rows = 3*ProfileSampleSize + 17
	for i := 0; i < rows; i++ {
		p.Add([]string{fmt.Sprint(i)})
	}
	if got := len(p.cols[0].reservoir); got != ProfileSampleSize {
		t.Fatalf("reservoir holds %d values, want %d", got, ProfileSampleSize)
	}
	c := p.Profile()[0]
	if c.Count != rows || c.NonNull != rows || c.Inferred.NonNull != ProfileSampleSize || c.Inferred.Type.Kind != plan.Long {
		t.Errorf("count %d nonNull %d sampled %d type %v", c.Count, c.NonNull, c.Inferred.NonNull, c.Inferred.Type)
	}
	if c.Min != "0" || c.Max != fmt.Sprint(rows-1) {
		t.Errorf("min %q max %q, want numeric order", c.Min, c.Max)
	}
	// The reservoir is uniform: its mean is near the mean of all rows.
	sum := 0.0
	for _, v := range p.cols[0].reservoir {
		var n float64
		fmt.Sscan(v, &n)
		sum += n
	}
	if mean, want := sum/ProfileSampleSize, float64(rows-1)/2; math.Abs(mean-want)/want > 0.05 {
		t.Errorf("reservoir mean %.0f, want about %.0f", mean, want)
	}
}

func TestHyperLogLog(t *testing.T) {
	for _, tc := range []struct {
		distinct, repeat int
		tolerance        float64
	}{
		{0, 1, 0},
		{1, 5, 0},
		{10, 3, 0},
		{1000, 2, 0.02},
		{20_000, 1, 0.03},
		{100_000, 1, 0.03},
		{100_000, 3, 0.03},
		{1_000_000, 1, 0.03},
	} {
		var h hll
		for r := 0; r < tc.repeat; r++ {
			for i := 0; i < tc.distinct; i++ {
				h.add(fmt.Sprintf("value-%d", i))
			}
		}
		got := h.estimate()
		if err := math.Abs(float64(got)-float64(tc.distinct)) / math.Max(1, float64(tc.distinct)); err > tc.tolerance {
			t.Errorf("%d distinct (each ×%d): estimate %d, error %.2f%% > %.0f%%", tc.distinct, tc.repeat, got, 100*err, 100*tc.tolerance)
		}
	}
	// Distinct never exceeds the non-null count.
	p := NewProfiler([]string{"c"}, nil)
	for i := 0; i < 3; i++ {
		p.Add([]string{fmt.Sprint(i)})
	}
	if d := p.Profile()[0].Distinct; d != 3 {
		t.Errorf("Distinct of 3 values = %d", d)
	}
}
