package clean

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
)

func newCaster(t *testing.T, specs []ColumnSpec) (*Caster, *memory.CheckedAllocator) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	var fields []arrow.Field
	for _, s := range specs {
		fields = append(fields, arrow.Field{Name: s.Name, Type: ArrowType(s.Type), Nullable: !s.Required})
	}
	c, err := NewCaster(specs, arrow.NewSchema(fields, nil), mem)
	if err != nil {
		t.Fatal(err)
	}
	return c, mem
}

func TestCasterAcceptsOrReportsEveryFailingCell(t *testing.T) {
	specs := []ColumnSpec{
		{Name: "id", Type: plan.Type{Kind: plan.Long}, Required: true},
		{Name: "supplier", Type: plan.Type{Kind: plan.String}, Required: true, Normalize: []string{"trim", "zero_pad:10"}},
		{Name: "on", Type: plan.Type{Kind: plan.Date}, Formats: []string{"yyyy-MM-dd", "yyyy/M/d"}},
		{Name: "cost", Type: plan.Type{Kind: plan.Decimal, Precision: 18, Scale: 3}},
	}
	c, mem := newCaster(t, specs)
	defer mem.AssertSize(t, 0)
	defer c.Release()
	if errs := c.Append([]string{"1", " 10010017", "2026/1/7", "150.000-"}, nil); errs != nil {
		t.Fatalf("valid row: %v", errs)
	}
	// Two bad cells and a missing required value: three errors, nothing appended.
	errs := c.Append([]string{"", "x", "2026-02-30", "12x.50"}, nil)
	if len(errs) != 3 {
		t.Fatalf("errors %+v, want 3 (id missing, bad date, bad cost)", errs)
	}
	wantRules := map[string]string{"id": RuleNotNull, "on": RuleType, "cost": RuleType}
	for _, e := range errs {
		if wantRules[e.Column] != e.Rule {
			t.Errorf("error %+v: want rule %s", e, wantRules[e.Column])
		}
	}
	if errs := c.Append([]string{"2", "0010010015", "NULL", "1,250.500"}, nil); errs != nil {
		t.Fatalf("valid row 2: %v", errs)
	}
	if c.Len() != 2 {
		t.Fatalf("%d rows appended, want 2", c.Len())
	}
	rec := c.NewBatch()
	defer rec.Release()
	if got := rec.Column(1).(*array.String).Value(0); got != "0010010017" {
		t.Errorf("supplier = %q, want 0010010017", got)
	}
	if !rec.Column(2).IsNull(1) {
		t.Error("NULL token did not become null")
	}
	if got := rec.Column(3).(*array.Decimal128).Value(0).ToString(3); got != "-150.000" {
		t.Errorf("cost = %s, want -150.000", got)
	}
	fixes := map[string]int64{}
	for _, n := range c.Normalizations() {
		fixes[n.Column+"/"+n.Fix] = n.Count
	}
	want := map[string]int64{
		"supplier/trim":                     1,
		"supplier/zero-padded to 10 digits": 1,
		"on/date format yyyy/M/d → ISO":     1,
		"on/null token → null (NULL)":       1,
		"cost/trailing-minus → negative":    1,
		"cost/thousands separator removed":  1,
	}
	if len(fixes) != len(want) {
		t.Errorf("fixes %v, want %v", fixes, want)
	}
	for k, v := range want {
		if fixes[k] != v {
			t.Errorf("fix %s = %d, want %d (fixes of the rejected row must not count)", k, fixes[k], v)
		}
	}
}

func TestInferNeverFromOneRow(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   string
	}{
		{"zero-padded ids stay strings", []string{"0010010015", "10010016", "0010010018"}, "string"},
		{"money is decimal, not float", []string{"150.000-", "1,250.500", "980.25", "0.000"}, "decimal(18,3)"},
		{"integers", []string{"1", "2", "1,200", "NULL"}, "long"},
		{"mixed date formats", []string{"2026-01-05", "2026/1/7", "2026-01-12", "NULL"}, "date"},
		{"one odd value among twenty keeps the type", append(repeat("7", 19), "x"), "long"},
		{"two odd values in twenty do not", append(repeat("7", 18), "x", "y"), "string"},
		{"booleans", []string{"true", "false", "yes"}, "boolean"},
		{"zoned timestamps", []string{"2026-01-04T08:30:00+09:00", "2026-01-06T14:00:00Z"}, "timestamptz"},
		{"all null", []string{"", "NULL"}, "string"},
	}
	for _, c := range cases {
		got := Infer(c.values, nil)
		if got.Type.String() != c.want {
			t.Errorf("%s: %s (confidence %.2f), want %s", c.name, got.Type, got.Confidence, c.want)
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// A double written by FormatCell (which uses exponents for large values)
// casts back to the same value.
func TestDoubleRoundTripsThroughItsCanonicalText(t *testing.T) {
	specs := []ColumnSpec{{Name: "x", Type: plan.Type{Kind: plan.Double}}}
	c, mem := newCaster(t, specs)
	defer mem.AssertSize(t, 0)
	defer c.Release()
	for _, f := range []float64{-1.5e+300, 2.5e-10, 0.1, 12345.678} {
		txt := FormatCell(plan.Type{Kind: plan.Double}, Cell{F: f})
		if errs := c.Cast([]string{txt}, nil); errs != nil || c.Cells()[0].F != f {
			t.Errorf("%v → %q → %v %v", f, txt, c.Cells()[0].F, errs)
		}
	}
	for _, bad := range []string{"1e", "e5", "1e400", "NaN"} {
		if errs := c.Cast([]string{bad}, nil); errs == nil {
			t.Errorf("%q cast", bad)
		}
	}
}
