package clean

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
)

// genNumber makes number-like text: plain forms the fast paths read and
// every kind of dirt they must decline.
func genNumber(rng *rand.Rand) string {
	var b strings.Builder
	pieces := []string{"", "", "", "-", "+", " ", "(", "€", "--"}
	b.WriteString(pieces[rng.IntN(len(pieces))])
	for n := rng.IntN(21); n > 0; n-- {
		b.WriteByte(byte('0' + rng.IntN(10)))
		if rng.IntN(40) == 0 {
			b.WriteByte(",.x "[rng.IntN(4)])
		}
	}
	if rng.IntN(3) == 0 {
		b.WriteByte(".,"[rng.IntN(2)])
		for n := rng.IntN(6); n > 0; n-- {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	tails := []string{"", "", "", "", "-", " ", ")", "e5", "x"}
	b.WriteString(tails[rng.IntN(len(tails))])
	return b.String()
}

// What the fast paths accept, ParseInt/ParseDecimal read to the same value
// with no fix; and a column casts every input (fast or not) as the slow
// path alone does.
func TestFastNumbersMatchSlowPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := []string{"0", "-0", "+0", "007", "9223372036854775807", "-9223372036854775808", "999999999999999999", "-999999999999999999",
		"1000000000000000000", "2147483647", "2147483648", "-2147483648", "-2147483649", "1.5", "1.", ".5", "-.5", "1.000", "1.0000",
		"1.2345", "123456789012345.678", "1234567890123456.78", "99999999999999.999", "100000000000000.000", "", "-", "+", "1,234", "150.000-"}
	for i := 0; i < 200000; i++ {
		inputs = append(inputs, genNumber(rng))
	}
	decs := [][2]int{{18, 3}, {10, 2}, {38, 0}, {5, 5}, {18, 0}, {17, 17}, {38, 18}, {3, 1}}
	fast := 0
	for _, s := range inputs {
		for _, r := range [][2]int64{{math.MinInt32, math.MaxInt32}, {math.MinInt64, math.MaxInt64}} {
			want, fx, err := ParseInt(s, r[0], r[1], NumberStyle{})
			if n, ok := fastInt(s); ok && n >= r[0] && n <= r[1] {
				fast++
				if err != nil || len(fx) > 0 || n != want {
					t.Fatalf("fastInt(%q) = %d; ParseInt: %d %v %v", s, n, want, fx, err)
				}
			}
		}
		for _, ps := range decs {
			want, fx, err := ParseDecimal(s, ps[0], ps[1], NumberStyle{})
			if d, ok := fastDecimal(s, ps[0], ps[1]); ok {
				fast++
				if err != nil || len(fx) > 0 || d != want {
					t.Fatalf("fastDecimal(%q, %d, %d) = %v; ParseDecimal: %v %v %v", s, ps[0], ps[1], d, want, fx, err)
				}
			}
		}
	}
	if fast < 100000 {
		t.Fatalf("only %d fast reads: the generator hardly exercises the fast paths", fast)
	}
	// Whole columns: the cast (fast path first) agrees with the slow
	// parsers on value, fixes and error, for long, int and decimal columns
	// in both number styles.
	for _, ty := range []plan.Type{{Kind: plan.Long}, {Kind: plan.Int}, {Kind: plan.Decimal, Precision: 18, Scale: 3}, {Kind: plan.Decimal, Precision: 6, Scale: 2}} {
		for _, st := range []NumberStyle{{}, {DecimalComma: true}} {
			col := &column{kind: kindOf(ty), prec: ty.Precision, sc: ty.Scale, style: st}
			for _, s := range inputs[:50000] {
				var c Cell
				fx, err := col.cast(s, &c)
				var want Cell
				var wfx []string
				var werr error
				switch ty.Kind {
				case plan.Long:
					want.I, wfx, werr = ParseInt(s, math.MinInt64, math.MaxInt64, st)
				case plan.Int:
					want.I, wfx, werr = ParseInt(s, math.MinInt32, math.MaxInt32, st)
				default:
					want.D, wfx, werr = ParseDecimal(s, ty.Precision, ty.Scale, st)
				}
				if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) || strings.Join(fx, ",") != strings.Join(wfx, ",") ||
					(err == nil && c != want) {
					t.Fatalf("%v %+v cast(%q) = %+v %v %v; slow: %+v %v %v", ty, st, s, c, fx, err, want, wfx, werr)
				}
			}
		}
	}
}

// The null-token list reads a value as null exactly when the token map
// does.
func TestIsNullMatchesTokens(t *testing.T) {
	for _, tokens := range [][]string{nil, {"n/a", "-", ""}, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}} {
		c, err := NewCaster([]ColumnSpec{{Name: "x", Type: plan.Type{Kind: plan.String}, NullTokens: tokens}}, arrowSchema1(), memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		col := c.cols[0]
		for _, v := range []string{"", "NULL", "null", `\N`, "n/a", "-", "a", "j", "k", "Null", " ", "NULL "} {
			if got, want := col.isNull(v), col.nulls[v]; got != want {
				t.Errorf("tokens %q: isNull(%q) = %v, map says %v", tokens, v, got, want)
			}
		}
		c.Release()
	}
}

func arrowSchema1() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
}

// The fixes named once per column (zero padding, a non-ISO date format)
// read as they did when built per value, and padding pads as
// strings.Repeat does.
func TestFixNamesMadeOnce(t *testing.T) {
	specs := []ColumnSpec{{Name: "s", Type: plan.Type{Kind: plan.String}, Normalize: []string{"zero_pad:10"}},
		{Name: "d", Type: plan.Type{Kind: plan.Date}, Formats: []string{"yyyy-MM-dd", "yyyy/M/d"}}}
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true}}, nil)
	c, err := NewCaster(specs, schema, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	for _, v := range []string{"1", "123456789", "42", "0000000001"} {
		for _, d := range []string{"2026-01-02", "2026/1/2"} {
			if errs := c.Append([]string{v, d}, nil); errs != nil {
				t.Fatal(errs)
			}
			want := v
			if len(v) < 10 {
				want = strings.Repeat("0", 10-len(v)) + v
			}
			if got := c.Cells()[0].S; got != want {
				t.Fatalf("zero_pad:10 of %q = %q, want %q", v, got, want)
			}
		}
	}
	got := map[string]int64{}
	for _, n := range c.Normalizations() {
		got[n.Column+": "+n.Fix] = n.Count
	}
	pad := "s: " + fmt.Sprintf("%s to %d digits", FixZeroPad, 10)
	date := "d: date format yyyy/M/d → ISO"
	if got[pad] != 6 || got[date] != 4 || len(got) != 2 {
		t.Fatalf("normalizations %v, want %q 6 and %q 4", got, pad, date)
	}
}
