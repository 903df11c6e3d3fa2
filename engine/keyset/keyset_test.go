package keyset

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// drawKey returns a key from a pool of pool keys (so keys repeat), the
// pool's keys derived from the index by a generator independent of the set.
func drawKey(rng *rand.Rand, pool uint64) Key {
	i := rng.Uint64N(pool)
	r := rand.New(rand.NewPCG(i, 0x5eed))
	return Key{r.Uint64(), r.Uint64()}
}

// The set answers exactly as a Go map does — Add's "already there", Contains
// of present and absent keys, Len — across many spills and merges, the
// all-zero key included.
func TestSetMatchesMap(t *testing.T) {
	s := New(Options{Budget: MinBudget, Dir: t.TempDir()})
	defer s.Close()
	ref := map[Key]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	const ops = 400_000
	const pool = 300_000 // about a quarter of the adds repeat a key
	for i := 0; i < ops; i++ {
		k := drawKey(rng, pool)
		if i == 1000 || i == 300_000 {
			k = Key{} // the empty slot's marker is a key too
		}
		got, err := s.Add(k)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref[k]; got != want {
			t.Fatalf("add %d (%x): present=%v, the map says %v", i, k, got, want)
		}
		ref[k] = true
		if i%97 == 0 { // a key maybe absent, maybe spilled long ago
			q := drawKey(rng, 2*pool)
			ok, err := s.Contains(q)
			if err != nil {
				t.Fatal(err)
			}
			if ok != ref[q] {
				t.Fatalf("contains %x: %v, the map says %v", q, ok, ref[q])
			}
		}
	}
	if s.Len() != int64(len(ref)) {
		t.Fatalf("len %d, the map has %d", s.Len(), len(ref))
	}
	st := s.Stats()
	t.Logf("%+v", st)
	if st.Spills < 8 || st.Runs < 2 {
		t.Fatalf("the test did not cross enough spill boundaries: %+v", st)
	}
	if st.Runs >= st.Spills {
		t.Fatalf("runs were not merged: %+v", st)
	}
	// Every key of the reference is found, wherever it went.
	for k := range ref {
		ok, err := s.Contains(k)
		if err != nil || !ok {
			t.Fatalf("contains %x: %v %v after all adds", k, ok, err)
		}
	}
}

// A map keeps the first value added under a key, as the load's "first
// occurrence wins".
func TestMapFirstValueWins(t *testing.T) {
	m := NewMap(Options{Budget: MinBudget, Dir: t.TempDir()})
	defer m.Close()
	ref := map[Key]uint64{}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 250_000; i++ {
		k, v := drawKey(rng, 180_000), rng.Uint64()
		got, present, err := m.Add(k, v)
		if err != nil {
			t.Fatal(err)
		}
		want, had := ref[k]
		if !had {
			want = v
			ref[k] = v
		}
		if present != had || got != want {
			t.Fatalf("add %d: (%d, %v), the map says (%d, %v)", i, got, present, want, had)
		}
	}
	if m.Stats().Spills < 4 {
		t.Fatalf("no spill: %+v", m.Stats())
	}
	for k, want := range ref {
		if got, ok, err := m.Get(k); err != nil || !ok || got != want {
			t.Fatalf("get %x: %d %v %v, want %d", k, got, ok, err, want)
		}
	}
	if _, ok, _ := m.Get(Key{1, 1}); ok {
		t.Fatal("a key never added was found")
	}
}

// Probing keys that are in no run reads the disk rarely: the filters
// answer.
func TestAbsentKeysCostNoReadMostly(t *testing.T) {
	s := New(Options{Budget: 16 << 20, Dir: t.TempDir()})
	defer s.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 1_000_000; i++ {
		if _, err := s.Add(Key{rng.Uint64(), rng.Uint64()}); err != nil {
			t.Fatal(err)
		}
	}
	before := s.Stats()
	const probes = 200_000
	for i := 0; i < probes; i++ {
		if ok, err := s.Contains(Key{rng.Uint64(), rng.Uint64()}); err != nil || ok {
			t.Fatalf("a random key found: %v %v", ok, err)
		}
	}
	after := s.Stats()
	reads := after.DiskReads - before.DiskReads
	t.Logf("%d runs, %d block reads for %d absent probes", after.Runs, reads, probes)
	if reads > probes/20 {
		t.Fatalf("%d block reads for %d absent keys: the filters do not filter", reads, probes)
	}
}

// spillFDs counts this process's open, unlinked spill files in dir.
func spillFDs(t *testing.T, dir string) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		to, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(to, filepath.Join(dir, spillPrefix)) && strings.HasSuffix(to, "(deleted)") {
			n++
		}
	}
	return n
}

// Spill files are 0600 in a 0700 folder, never visible by name, and Close
// releases them; a file a crash left is swept by the next set that spills
// there.
func TestSpillFilesArePrivateAndGoOnClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".lima", "tmp")
	s := New(Options{Budget: MinBudget, Dir: dir})
	rng := rand.New(rand.NewPCG(7, 8))
	for s.Stats().Spills < 3 {
		if _, err := s.Add(Key{rng.Uint64(), rng.Uint64()}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("spill folder mode %v, want 0700", fi.Mode().Perm())
	}
	for _, r := range s.c.runs {
		fi, err := r.f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("spill file mode %v, want 0600", fi.Mode().Perm())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("spill files visible by name: %v", ents)
	}
	if n := spillFDs(t, dir); n != s.Stats().Runs || n == 0 {
		t.Fatalf("%d open spill files, %d runs", n, s.Stats().Runs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := spillFDs(t, dir); n != 0 {
		t.Fatalf("%d spill files still open after Close", n)
	}
	if s.Len() != 0 {
		t.Fatalf("len %d after Close", s.Len())
	}

	// What a crash leaves: a named file, old; a fresh one may be another
	// set's, between its creation and its unlinking.
	old := filepath.Join(dir, spillPrefix+"123.run")
	fresh := filepath.Join(dir, spillPrefix+"456.run")
	other := filepath.Join(dir, "notes.txt")
	for _, p := range []string{old, fresh, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, long, long); err != nil {
		t.Fatal(err)
	}
	if n := Sweep(dir, time.Now().Add(-sweepAge)); n != 1 {
		t.Fatalf("swept %d files, want 1", n)
	}
	for p, want := range map[string]bool{old: false, fresh: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Fatalf("%s exists=%v, want %v", p, err == nil, want)
		}
	}
}

// The set's heap stays within its budget whatever the number of keys; a
// map of the same keys needs many times more.
func TestHeapStaysWithinBudget(t *testing.T) {
	const budget = 8 << 20
	const keys = 2_000_000
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := live()
	s := New(Options{Budget: budget, Dir: t.TempDir()})
	defer s.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	var peak uint64
	for i := 0; i < keys; i++ {
		if _, err := s.Add(Key{rng.Uint64(), rng.Uint64()}); err != nil {
			t.Fatal(err)
		}
		if i%250_000 == 0 || i == keys-1 {
			peak = max(peak, live()-min(base, live()))
		}
	}
	// 2M keys × 16 B is 32 MiB of bare keys; a map of them ~80 MiB.
	t.Logf("peak live heap of the set %.1f MiB (budget %d MiB), %+v", float64(peak)/(1<<20), budget>>20, s.Stats())
	if peak > budget*5/4 {
		t.Fatalf("peak live heap %d B over the budget %d B", peak, budget)
	}
}
