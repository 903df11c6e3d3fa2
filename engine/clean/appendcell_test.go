package clean

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lima-lake/lima/engine/plan"
)

// AppendCell writes exactly FormatCell's text, for every type, over many
// generated values including the extremes.
func TestAppendCellIsFormatCell(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := []plan.Type{{Kind: plan.Int}, {Kind: plan.Long}, {Kind: plan.Double}, {Kind: plan.Decimal, Precision: 18, Scale: 3},
		{Kind: plan.Decimal, Precision: 38, Scale: 0}, {Kind: plan.Date}, {Kind: plan.Timestamp}, {Kind: plan.TimestampTZ},
		{Kind: plan.Boolean}, {Kind: plan.Binary}, {Kind: plan.String}}
	ints := []int64{0, 1, -1, 9, 10, 99, 100, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32,
		-719468, -719469, -719162, 2932896, 2932897, -1000000, 1000000, 11016, 10957, 59, 60, -25567}
	var buf []byte
	for _, ty := range types {
		cells := []Cell{{Null: true}}
		for _, n := range ints {
			cells = append(cells, Cell{I: n, F: float64(n), D: decimal128.FromI64(n), S: string(rune(n & 0x7f))})
		}
		for i := 0; i < 20000; i++ {
			n := rng.Int64() >> rng.IntN(64)
			if rng.IntN(2) == 0 {
				n = -n
			}
			if ty.Kind == plan.Date && i%2 == 0 {
				n = rng.Int64N(2*3000000) - 3000000 // days around years -6000..10000
			}
			if ty.Kind == plan.Boolean {
				n = rng.Int64N(3)
			}
			s := string([]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), 'a'})
			cells = append(cells, Cell{I: n, F: math.Float64frombits(rng.Uint64()), D: decimal128.New(rng.Int64(), rng.Uint64()), S: s})
		}
		for _, c := range cells {
			if ty.Kind == plan.Timestamp || ty.Kind == plan.TimestampTZ {
				c.I %= 1 << 55 // time.UnixMicro's range
			}
			want := FormatCell(ty, c)
			buf = AppendCell(buf[:0], ty, c)
			if string(buf) != want {
				t.Fatalf("%v %+v: AppendCell %q, FormatCell %q", ty, c, buf, want)
			}
		}
	}
}

// daysFromCivil inverts civil, and both agree with the time package.
func TestCivilDays(t *testing.T) {
	for days := int64(-800000); days <= 3000000; days += 7 {
		y, m, d := civil(days)
		tm := time.Unix(days*86400, 0).UTC()
		if int(y) != tm.Year() || time.Month(m) != tm.Month() || int(d) != tm.Day() {
			t.Fatalf("civil(%d) = %d-%d-%d, time says %v", days, y, m, d, tm)
		}
		if back := daysFromCivil(y, m, d); back != days {
			t.Fatalf("daysFromCivil(civil(%d)) = %d", days, back)
		}
	}
}
