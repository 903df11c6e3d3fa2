package run

import (
	"hash/maphash"
	"math/big"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
)

// Stats are computed from the rows accepted for loading, on the read path.
// Gate 4 recomputes the same figures from the committed snapshot and
// compares.
type Stats struct {
	Rows int64
	// Sums of the control columns.
	Sums map[string]*Sum
	// Min and Max of the partition source columns, canonical text.
	Min, Max map[string]string
	// Samples are up to five accepted rows, chosen by reservoir sampling.
	Samples []Sample
	// DuplicateRows, for a table without a key, counts the accepted rows
	// that repeat an earlier accepted row value for value (nil with a
	// key): gate 4 compares it with the lake's whole-row duplicates.
	DuplicateRows *int64
}

// Sum is an exact sum for integer and decimal columns, a float sum for
// floating-point ones.
type Sum struct {
	Type    plan.Type
	IsFloat bool
	Float   float64
	exact   big.Int // unscaled
	acc     decimal128.Num
}

func (s *Sum) addInt(v int64) { s.addDec(decimal128.FromI64(v)) }

func (s *Sum) addDec(v decimal128.Num) {
	// The 128-bit accumulator is flushed into the big integer long before it
	// could overflow; values too large for that path go straight to it.
	const limit = int64(1) << 60
	if h := v.HighBits(); h > limit || h < -limit {
		s.exact.Add(&s.exact, v.BigInt())
		return
	}
	if h := s.acc.HighBits(); h > limit || h < -limit {
		s.exact.Add(&s.exact, s.acc.BigInt())
		s.acc = decimal128.Num{}
	}
	s.acc = s.acc.Add(v)
}

// Unscaled returns the exact sum as an unscaled integer (value × 10^scale).
func (s *Sum) Unscaled() *big.Int {
	out := new(big.Int).Set(&s.exact)
	return out.Add(out, s.acc.BigInt())
}

// String is the sum as decimal text with the column's scale.
func (s *Sum) String() string {
	if s.IsFloat {
		return big.NewFloat(s.Float).Text('g', 17)
	}
	return FormatUnscaled(s.Unscaled(), s.Type.Scale)
}

// FormatUnscaled writes an unscaled integer with scale digits after the point.
// gates has its own (formatScaled) on purpose: gate 4 does not reuse the
// read path's arithmetic.
func FormatUnscaled(v *big.Int, scale int) string {
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	if scale > 0 {
		for len(digits) <= scale {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// Sample is one accepted row as the source gave it (after cleaning).
type Sample struct {
	Loc    source.Locator    `json:"locator"`
	Key    map[string]string `json:"key,omitempty"`
	Values map[string]string `json:"values"`
	// Raw is the text as read of each column whose value cleaning
	// changed (a date format, a decimal comma, padding): what the source
	// owner would recognise, shown beside the lake's value.
	Raw map[string]string `json:"raw,omitempty"`
}

type statsBuilder struct {
	st        Stats
	cols      []string
	types     []plan.Type
	sumCols   []int
	minmax    []int
	keyCols   []int
	rng       *rand.Rand
	minCells  map[int]clean.Cell
	maxCells  map[int]clean.Cell
	seenRows  int64
	sampleCap int
	// rows holds the hash of every accepted row of a keyless table.
	rows map[[2]uint64]struct{}
	seed [2]maphash.Seed
}

func newStatsBuilder(cols []string, types []plan.Type, sumCols, minmax, keyCols []int, seed uint64) *statsBuilder {
	b := &statsBuilder{cols: cols, types: types, sumCols: sumCols, minmax: minmax, keyCols: keyCols,
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), minCells: map[int]clean.Cell{}, maxCells: map[int]clean.Cell{}, sampleCap: 5}
	b.st.Sums = map[string]*Sum{}
	b.st.Min, b.st.Max = map[string]string{}, map[string]string{}
	for _, i := range sumCols {
		b.st.Sums[cols[i]] = &Sum{Type: types[i], IsFloat: types[i].Kind == plan.Double}
	}
	if len(keyCols) == 0 {
		b.rows = map[[2]uint64]struct{}{}
		b.seed = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
		b.st.DuplicateRows = new(int64)
	}
	return b
}

// addRow counts a keyless table's row that repeats an earlier one (two
// independent 64-bit hashes of the canonical texts).
func (b *statsBuilder) addRow(cells []clean.Cell) {
	var h1, h2 maphash.Hash
	h1.SetSeed(b.seed[0])
	h2.SetSeed(b.seed[1])
	for i, c := range cells {
		s := "\x01NULL"
		if !c.Null {
			s = clean.FormatCell(b.types[i], c)
		}
		h1.WriteString(s)
		h1.WriteByte(0)
		h2.WriteString(s)
		h2.WriteByte(0)
	}
	k := [2]uint64{h1.Sum64(), h2.Sum64()}
	if _, dup := b.rows[k]; dup {
		*b.st.DuplicateRows++
		return
	}
	b.rows[k] = struct{}{}
}

// add counts one accepted row; raw is its text as read, per column (nil
// when there is none, as for a replayed exception).
func (b *statsBuilder) add(cells []clean.Cell, loc source.Locator, raw []string) {
	b.st.Rows++
	if b.rows != nil {
		b.addRow(cells)
	}
	for _, i := range b.sumCols {
		c := cells[i]
		if c.Null {
			continue
		}
		s := b.st.Sums[b.cols[i]]
		switch b.types[i].Kind {
		case plan.Double:
			s.Float += c.F
		case plan.Decimal:
			s.addDec(c.D)
		default:
			s.addInt(c.I)
		}
	}
	for _, i := range b.minmax {
		c := cells[i]
		if c.Null {
			continue
		}
		if m, ok := b.minCells[i]; !ok || compareCells(b.types[i], c, m) < 0 {
			b.minCells[i] = c
		}
		if m, ok := b.maxCells[i]; !ok || compareCells(b.types[i], c, m) > 0 {
			b.maxCells[i] = c
		}
	}
	// Reservoir sampling (Algorithm R), deterministic per load.
	b.seenRows++
	if len(b.st.Samples) < b.sampleCap {
		b.st.Samples = append(b.st.Samples, b.sample(cells, loc, raw))
	} else if j := b.rng.Int64N(b.seenRows); j < int64(b.sampleCap) {
		b.st.Samples[j] = b.sample(cells, loc, raw)
	}
}

func (b *statsBuilder) sample(cells []clean.Cell, loc source.Locator, raw []string) Sample {
	s := Sample{Loc: loc, Values: make(map[string]string, len(cells))}
	for i, c := range cells {
		v := clean.FormatCell(b.types[i], c)
		s.Values[b.cols[i]] = v
		if i < len(raw) && raw[i] != v && !c.Null {
			if s.Raw == nil {
				s.Raw = map[string]string{}
			}
			s.Raw[b.cols[i]] = raw[i]
		}
	}
	if len(b.keyCols) > 0 {
		s.Key = map[string]string{}
		for _, i := range b.keyCols {
			s.Key[b.cols[i]] = s.Values[b.cols[i]]
		}
	}
	return s
}

func (b *statsBuilder) finish() Stats {
	for i, c := range b.minCells {
		b.st.Min[b.cols[i]] = clean.FormatCell(b.types[i], c)
	}
	for i, c := range b.maxCells {
		b.st.Max[b.cols[i]] = clean.FormatCell(b.types[i], c)
	}
	return b.st
}

// compareCells orders two non-null values of the same type.
func compareCells(t plan.Type, a, b clean.Cell) int {
	switch t.Kind {
	case plan.Double:
		switch {
		case a.F < b.F:
			return -1
		case a.F > b.F:
			return 1
		}
		return 0
	case plan.Decimal:
		return a.D.Cmp(b.D)
	case plan.String, plan.Binary:
		switch {
		case a.S < b.S:
			return -1
		case a.S > b.S:
			return 1
		}
		return 0
	}
	switch {
	case a.I < b.I:
		return -1
	case a.I > b.I:
		return 1
	}
	return 0
}
