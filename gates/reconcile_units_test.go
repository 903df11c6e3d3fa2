package gates

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lima-lake/lima/engine/plan"
)

// Gate 4's own decimal reading and writing, against values worked out by
// hand (mutation survivors of parseScaled and formatScaled).
func TestGate4ScaledDecimals(t *testing.T) {
	for _, c := range []struct {
		in    string
		scale int
		want  int64
		ok    bool
	}{
		{"12.5", 2, 1250, true}, {"12.50", 2, 1250, true}, {"7", 2, 700, true}, {"-0.05", 2, -5, true},
		{"-3", 0, -3, true}, {"0", 3, 0, true}, {"1.234", 2, 0, false}, {"1.5", 0, 0, false}, {"x", 2, 0, false},
	} {
		v, ok := parseScaled(c.in, c.scale)
		if ok != c.ok || (ok && v.Int64() != c.want) {
			t.Errorf("parseScaled(%q, %d) = %v %v, want %d %v", c.in, c.scale, v, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		v     int64
		scale int
		want  string
	}{
		{0, 2, "0.00"}, {5, 2, "0.05"}, {50, 2, "0.50"}, {100, 2, "1.00"}, {-5, 2, "-0.05"}, {-1234, 2, "-12.34"},
		{5, 0, "5"}, {-5, 0, "-5"}, {0, 0, "0"}, {123456, 3, "123.456"},
	} {
		if got := formatScaled(big.NewInt(c.v), c.scale); got != c.want {
			t.Errorf("formatScaled(%d, %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
}

// The control sum comparison: exact for integers and decimals, within
// FloatTolerance relative for doubles on either side of it, and two zero
// double sums equal (mutation survivors of compareSum).
func TestGate4CompareSum(t *testing.T) {
	dbl, _ := plan.ParseType("double")
	dec, _ := plan.ParseType("decimal(10,2)")
	lng, _ := plan.ParseType("long")
	fl := func(f float64) lakeSum { return lakeSum{f: f} }
	ex := func(v int64) lakeSum {
		var s lakeSum
		s.exact.SetInt64(v)
		return s
	}
	for _, c := range []struct {
		name string
		t    plan.Type
		src  string
		lake lakeSum
		ok   bool
	}{
		{"zero doubles", dbl, "0", fl(0), true},
		{"equal doubles", dbl, "2.5", fl(2.5), true},
		{"double within 1e-9 relative (1e-10)", dbl, "1000", fl(1000 * (1 + 1e-10)), true},
		{"double beyond 1e-9 relative (1e-8)", dbl, "1000", fl(1000 * (1 + 1e-8)), false},
		{"double below by 1e-8", dbl, "1000", fl(1000 * (1 - 1e-8)), false},
		{"double zero source, lake not", dbl, "0", fl(1e-300), false},
		{"decimal exact", dec, "12.5", ex(1250), true},
		{"decimal one cent off", dec, "12.50", ex(1251), false},
		{"decimal unreadable", dec, "12.505", ex(1250), false},
		{"long exact", lng, "-7", ex(-7), true},
		{"long off", lng, "7", ex(-7), false},
	} {
		ct, ok := compareSum(c.t, c.src, c.lake)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v (%+v)", c.name, ok, c.ok, ct)
		}
	}
	ct, _ := compareSum(dec, "12.50", ex(1251))
	if ct.Variance != "0.01" || ct.Target != "12.51" || !ct.Exact {
		t.Errorf("decimal variance %+v, want target 12.51, variance 0.01, exact", ct)
	}
	ct, _ = compareSum(dbl, "1", fl(1.5))
	if ct.Variance != "0.5" || ct.Exact {
		t.Errorf("double variance %+v, want 0.5, not exact", ct)
	}
}

// fits64: exactly the int64 range (mutation survivors at its boundaries).
func TestGate4Fits64(t *testing.T) {
	big63 := new(big.Int).Lsh(big.NewInt(1), 63)
	for _, c := range []struct {
		v    *big.Int
		want bool
	}{
		{big.NewInt(math.MaxInt64), true}, {big.NewInt(math.MinInt64), true}, {big.NewInt(0), true}, {big.NewInt(-1), true},
		{big63, false}, {new(big.Int).Sub(new(big.Int).Neg(big63), big.NewInt(1)), false},
	} {
		if got := fits64(decimal128.FromBigInt(c.v)); got != c.want {
			t.Errorf("fits64(%s) = %v, want %v", c.v, got, c.want)
		}
	}
}

// Numbers order as numbers, other texts as text.
func TestGate4CompareTextOf(t *testing.T) {
	for _, c := range []struct {
		id   arrow.Type
		x, y string
		want int
	}{
		{arrow.INT64, "10", "9", 1}, {arrow.INT32, "-10", "-9", -1}, {arrow.DECIMAL128, "2.50", "2.5", 0},
		{arrow.FLOAT64, "1e3", "999", 1}, {arrow.STRING, "10", "9", -1}, {arrow.DATE32, "2024-01-02", "2024-01-10", -1},
		{arrow.INT64, "x", "9", 1},
	} {
		if got := compareTextOf(c.id, c.x, c.y); got != c.want {
			t.Errorf("compareTextOf(%s, %q, %q) = %d, want %d", c.id, c.x, c.y, got, c.want)
		}
	}
}

// notChecked's reason says which mode left what out.
func TestGate4NotCheckedWhy(t *testing.T) {
	e := Expectation{Mode: "incremental", Sums: map[string]string{"b": "1", "a": "2"}, Min: map[string]string{"d": "x"}}
	what, why := notChecked(e, false, "")
	if what != "the lake's control sums (a, b) and the range of d" ||
		why != "mode incremental: the table also holds the rows of earlier loads, so only this load's rows (count, samples) and the whole table's keys and nulls were compared" {
		t.Errorf("incremental: %q / %q", what, why)
	}
	e.Mode = plan.ModeCDC
	_, why = notChecked(e, false, "no history kept")
	if !strings.HasPrefix(why, "mode "+plan.ModeCDC+": change capture applies") || !strings.Contains(why, "(no history kept)") {
		t.Errorf("cdc: %q", why)
	}
	if what, why := notChecked(e, true, ""); what != "" || why != "" {
		t.Errorf("checked in full: %q / %q", what, why)
	}
}

// noKeyFinding's verdicts, by hand.
func TestGate4NoKeyFinding(t *testing.T) {
	two := int64(2)
	for _, c := range []struct {
		name     string
		full     bool
		dups     *int64
		lakeDups int64
		want     string
	}{
		{"full, same repeats", true, &two, 2, Pass},
		{"full, one more", true, &two, 3, Fail},
		{"full, one fewer", true, &two, 1, Fail},
		{"full, not recorded, none", true, nil, 0, Pass},
		{"full, not recorded, some", true, nil, 1, Warn},
		{"incremental, recorded, none", false, &two, 0, Pass},
		{"incremental, some", false, &two, 2, Warn},
	} {
		f := noKeyFinding(Expectation{DuplicateRows: c.dups}, c.full, c.lakeDups, 10)
		if f.Status != c.want || f.Name != NoKeyCheck {
			t.Errorf("%s: %s %q, want %s", c.name, f.Status, f.Detail, c.want)
		}
	}
}
