package gates

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/keyset"
)

// appendValue writes FormatValue's text, and minMaxInts finds the range
// that formatting every value and ordering the texts with compareText
// finds (the way gate 4 did it before), on generated columns with nulls.
func TestGate4FastPathsMatchFormatValue(t *testing.T) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(11, 12))
	i32 := array.NewInt32Builder(mem)
	i64 := array.NewInt64Builder(mem)
	d32 := array.NewDate32Builder(mem)
	str := array.NewStringBuilder(mem)
	for r := 0; r < 50000; r++ {
		if rng.IntN(20) == 0 {
			i32.AppendNull()
			i64.AppendNull()
			d32.AppendNull()
			str.AppendNull()
			continue
		}
		n := rng.Int64() >> rng.IntN(64)
		if rng.IntN(2) == 0 {
			n = -n
		}
		i32.Append(int32(n))
		i64.Append(n)
		d32.Append(arrow.Date32(int32(n % 3000000)))
		str.Append(string([]byte{byte(rng.IntN(256)), 'k'}))
	}
	i64.Append(math.MinInt64)
	i64.Append(math.MaxInt64)
	arrays := []arrow.Array{i32.NewArray(), i64.NewArray(), d32.NewArray(), str.NewArray()}
	var buf []byte
	for _, a := range arrays {
		defer a.Release()
		for r := 0; r < a.Len(); r++ {
			buf = appendValue(buf[:0], a, r)
			if want := FormatValue(a, r); string(buf) != want {
				t.Fatalf("%s row %d: appendValue %q, FormatValue %q", a.DataType(), r, buf, want)
			}
		}
	}
	for ai, a := range arrays[:2] {
		// Several batches, as gate 4 reads them.
		l := &lakeStats{minmax: map[int]*[2]string{}}
		var want *[2]string
		for off := 0; off < a.Len(); off += 7000 {
			sl := array.NewSlice(a, int64(off), int64(min(off+7000, a.Len())))
			if !l.minMaxInts(ai, sl) {
				t.Fatalf("%s: not an integer column", a.DataType())
			}
			for r := 0; r < sl.Len(); r++ {
				if sl.IsNull(r) {
					continue
				}
				txt := FormatValue(sl, r)
				if want == nil {
					want = &[2]string{txt, txt}
					continue
				}
				if compareText(sl, txt, want[0]) < 0 {
					want[0] = txt
				}
				if compareText(sl, txt, want[1]) > 0 {
					want[1] = txt
				}
			}
			sl.Release()
		}
		if got := l.minmax[ai]; got == nil || *got != *want {
			t.Fatalf("%s: range %v, formatting every value gives %v", a.DataType(), got, want)
		}
	}
}

// The control sums gate 4 adds up per batch in 128 bits equal big.Int sums
// of every value, also when a decimal is far beyond 64 bits (a lake written
// by something else) and batches overflow int64 many times over.
func TestGate4SumsExact(t *testing.T) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(13, 14))
	e := Expectation{Columns: []string{"i", "l", "d"}, Sums: map[string]string{"i": "0", "l": "0", "d": "0"}}
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 18, Scale: 3}, Nullable: true}}, nil)
	l := newLakeStats(e, nil, keyset.Options{})
	var want [3]big.Int
	for batch := 0; batch < 5; batch++ {
		b := array.NewRecordBuilder(mem, schema)
		for r := 0; r < 10000; r++ {
			if rng.IntN(15) == 0 {
				b.Field(0).AppendNull()
				b.Field(1).AppendNull()
				b.Field(2).AppendNull()
				continue
			}
			i, n := int32(rng.Uint32()), int64(rng.Uint64())
			if rng.IntN(3) == 0 {
				n = []int64{math.MaxInt64, math.MinInt64}[rng.IntN(2)]
			}
			d := decimal128.FromI64(int64(rng.Uint64()))
			if rng.IntN(10) == 0 { // beyond 64 bits, whatever the type says
				d = decimal128.New(int64(rng.Uint64()>>2)-(1<<61), rng.Uint64())
			}
			b.Field(0).(*array.Int32Builder).Append(i)
			b.Field(1).(*array.Int64Builder).Append(n)
			b.Field(2).(*array.Decimal128Builder).Append(d)
			want[0].Add(&want[0], big.NewInt(int64(i)))
			want[1].Add(&want[1], big.NewInt(n))
			want[2].Add(&want[2], d.BigInt())
		}
		rec := b.NewRecordBatch()
		l.add(rec)
		rec.Release()
		b.Release()
	}
	for i := range want {
		if got := &l.sums[i].exact; got.Cmp(&want[i]) != 0 {
			t.Fatalf("column %s: sum %s, big.Int says %s", e.Columns[i], got, &want[i])
		}
	}
}

// A key the expectation's columns do not list reads as absent: gate 4 goes
// on (every row then has the same, empty key: duplicates) instead of
// panicking with an index of -1.
func TestGate4KeyNotAmongTheColumns(t *testing.T) {
	mem := memory.NewGoAllocator()
	e := Expectation{Columns: []string{"id"}, Keys: []string{"code"}}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	l := newLakeStats(e, nil, keyset.Options{})
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := l.add(rec); err != nil {
		t.Fatal(err)
	}
	if l.rows != 3 || l.dups != 2 {
		t.Fatalf("rows %d dups %d, want 3 and 2", l.rows, l.dups)
	}
}
