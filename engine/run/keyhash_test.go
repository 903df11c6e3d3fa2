package run

import (
	"hash/maphash"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
)

// keyHash (the load's key set, from typed cells) hashes exactly what
// hashKey hashes from the keys' canonical texts — the hash readTableKeys,
// the upsert and change capture compute from the lake's and the source's
// texts — so a key is the same key on every side.
func TestKeyHashIsHashKeyOfTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	types := []plan.Type{{Kind: plan.Long}, {Kind: plan.Int}, {Kind: plan.String}, {Kind: plan.Date},
		{Kind: plan.Decimal, Precision: 18, Scale: 2}, {Kind: plan.Timestamp}, {Kind: plan.TimestampTZ}, {Kind: plan.Boolean}, {Kind: plan.Double}}
	l := &loader{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, rs: &resolved{types: types}}
	for k := 1; k <= 3; k++ {
		for trial := 0; trial < 3000; trial++ {
			l.keyCols = l.keyCols[:0]
			for j := 0; j < k; j++ {
				l.keyCols = append(l.keyCols, rng.IntN(len(types)))
			}
			cells := make([]clean.Cell, len(types))
			for i := range cells {
				n := rng.Int64N(1<<40) - 1<<39
				cells[i] = clean.Cell{Null: rng.IntN(10) == 0, I: n, F: float64(n) / 7, D: decimal128.FromI64(n),
					S: string([]byte{byte(rng.IntN(256)), 'x', 0})}
				if types[i].Kind == plan.Boolean {
					cells[i].I = n & 1
				}
			}
			var texts []string
			for _, i := range l.keyCols {
				texts = append(texts, clean.FormatCell(types[i], cells[i]))
			}
			if got, want := l.keyHash(cells), l.hashKey(texts); got != want {
				t.Fatalf("keys %v %q: keyHash %x, hashKey %x", l.keyCols, texts, got, want)
			}
		}
	}
	// Equal values, equal keys — an int key and the same value widened to
	// long hash alike; different values differ.
	l.keyCols = []int{1}
	a := l.keyHash([]clean.Cell{{}, {I: 42}})
	l.keyCols = []int{0}
	if b := l.keyHash([]clean.Cell{{I: 42}}); a != b {
		t.Fatalf("int 42 and long 42 hash differently")
	}
	if c := l.keyHash([]clean.Cell{{I: 43}}); a == c {
		t.Fatalf("42 and 43 hash alike")
	}
}
