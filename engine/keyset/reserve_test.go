package keyset

import (
	"math/rand/v2"
	"testing"
)

// Reserve and Touch change no answer: a set reserved for n keys and
// touched before every probe answers Add and Contains as a Go map does,
// and it holds its n keys without rehashing (the table is the size it was
// given); a reservation beyond the budget stops at the table's share.
func TestReserveTouch(t *testing.T) {
	for _, n := range []int64{0, 1, 3, 1000, 3001, 100_000} {
		s := New(Options{Dir: t.TempDir()})
		s.Reserve(n)
		size := len(s.c.slots)
		if n > 0 && int64(size)*3/4 <= n {
			t.Fatalf("n %d: table of %d slots", n, size)
		}
		r := rand.New(rand.NewPCG(uint64(n), 1))
		seen := map[Key]bool{}
		var sink uint64
		for range n {
			k := Key{r.Uint64N(uint64(n) + 1), 7} // a third repeats
			sink ^= s.Touch(k)
			got, err := s.Add(k)
			if err != nil || got != seen[k] {
				t.Fatalf("n %d: Add(%v) = %v, %v; want %v", n, k, got, err, seen[k])
			}
			seen[k] = true
		}
		if s.Len() != int64(len(seen)) {
			t.Fatalf("n %d: Len %d, want %d", n, s.Len(), len(seen))
		}
		if len(s.c.slots) != size && size > 0 {
			t.Errorf("n %d: the table was resized from %d to %d slots", n, size, len(s.c.slots))
		}
		for k := range seen {
			if ok, err := s.Contains(k); !ok || err != nil {
				t.Fatalf("n %d: Contains(%v) = %v, %v", n, k, ok, err)
			}
		}
		if ok, _ := s.Contains(Key{uint64(n) + 5, 7}); ok {
			t.Fatalf("n %d: a key never added is in the set", n)
		}
		_ = sink
		s.Close()
	}
	s := New(Options{Budget: MinBudget})
	s.Reserve(1 << 40)
	if len(s.c.slots) != s.c.maxSlots {
		t.Errorf("a reservation beyond the budget: %d slots, the budget's share is %d", len(s.c.slots), s.c.maxSlots)
	}
	s.Close()
}
