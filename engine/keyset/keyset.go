// Package keyset is a set of 128-bit key hashes whose memory stays within a
// budget whatever the number of keys: the keys live in a compact
// open-addressing table until it reaches its share of the budget, then the
// table is sorted and spilled to a run in a temporary file, and the table
// starts again empty. Each run keeps in memory a Bloom filter and the first
// key of each of its blocks, so probing a key that is in no run costs no disk
// read in the common case and one block read otherwise; runs of equal size
// are merged so that their number stays small.
//
// Answers are exact: two keys are the same key when their 128 bits are
// equal, and Add tells whether the key was already there (the first
// occurrence wins). A Set is not safe for concurrent use.
//
// Spill files are 0600 files created in Options.Dir (made 0700 when
// missing) and unlinked as soon as they are opened, so the file system
// reclaims them on Close or when the process ends, crash included; a file a
// crash left between its creation and its unlinking is removed by the next
// Set that spills to the same folder (Sweep).
package keyset

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lima-lake/lima/internal/fsx"
)

// Key is a 128-bit key hash.
type Key = [2]uint64

// DefaultBudget is the memory a set may use when Options.Budget is 0:
// 64 MiB.
const DefaultBudget = 64 << 20

// MinBudget is the smallest budget a set accepts (smaller ones are raised
// to it): 1 MiB.
const MinBudget = 1 << 20

// Options configure a set.
type Options struct {
	// Budget bounds the set's memory in bytes (0: DefaultBudget): three
	// eighths for the in-memory table, three eighths at most for the
	// runs' filters, the rest for the table's growth, the runs' block
	// indexes (1/256 of the spilled bytes) and the merge's buffers.
	Budget int64
	// Dir is the folder of the spill files ("": os.TempDir()).
	Dir string
}

// Stats describe a set.
type Stats struct {
	// Keys is the number of distinct keys added.
	Keys int64
	// InMemory is how many of them are in the in-memory table.
	InMemory int64
	// Spills counts the table's spills; Runs is the number of runs now.
	Spills, Runs int
	// DiskReads counts the blocks read to answer probes; FalseReads those
	// reads that did not find the key (filter false positives).
	DiskReads, FalseReads int64
	// SpillBytes is the size of the runs on disk now.
	SpillBytes int64
}

// Set is a spillable set of keys.
type Set struct{ c core[k2] }

// New makes an empty set.
func New(o Options) *Set { return &Set{c: newCore[k2](o)} }

// Add adds k and reports whether it was already in the set.
func (s *Set) Add(k Key) (present bool, err error) {
	_, present, err = s.c.add(k2(k))
	return present, err
}

// Contains reports whether k is in the set.
func (s *Set) Contains(k Key) (bool, error) {
	_, ok, err := s.c.find(k)
	return ok, err
}

// Reserve sizes the in-memory table for n keys (at most the table's share
// of the budget), so that adding them rehashes nothing. It changes no
// answer.
func (s *Set) Reserve(n int64) { s.c.reserve(n) }

// Touch reads the table slot where a probe of k starts, so that an Add or
// Contains of k soon after finds it in the CPU cache: a caller touches
// the keys of a batch first, and those reads, independent of each other,
// overlap. It changes nothing; its result only keeps the read from being
// optimised away.
func (s *Set) Touch(k Key) uint64 { return s.c.touch(k) }

// Len is the number of distinct keys in the set.
func (s *Set) Len() int64 { return s.c.total }

// Stats describe the set.
func (s *Set) Stats() Stats { return s.c.stats() }

// Close releases the set's memory and spill files. The set is empty
// afterwards and may be used again.
func (s *Set) Close() error { return s.c.close() }

// Map is a spillable map from keys to one uint64 value each (3 words per
// key instead of 2).
type Map struct{ c core[k3] }

// NewMap makes an empty map.
func NewMap(o Options) *Map { return &Map{c: newCore[k3](o)} }

// Add maps k to v unless k is already in the map; it returns the value the
// map holds for k afterwards (the first one added wins) and whether k was
// already there.
func (m *Map) Add(k Key, v uint64) (value uint64, present bool, err error) {
	e, present, err := m.c.add(k3{k[0], k[1], v})
	return e[2], present, err
}

// Get returns k's value and whether k is in the map.
func (m *Map) Get(k Key) (uint64, bool, error) {
	e, ok, err := m.c.find(k)
	return e[2], ok, err
}

// Len is the number of distinct keys in the map.
func (m *Map) Len() int64 { return m.c.total }

// Stats describe the map.
func (m *Map) Stats() Stats { return m.c.stats() }

// Close releases the map's memory and spill files.
func (m *Map) Close() error { return m.c.close() }

// Budget is the budget a set uses for b (0: DefaultBudget; at least
// MinBudget).
func Budget(b int64) int64 {
	if b <= 0 {
		return DefaultBudget
	}
	return max(b, MinBudget)
}

// InMemoryKeys is how many keys a set of budget b holds before it spills
// (its table's share of the budget at three quarters full).
func InMemoryKeys(b int64) int64 {
	return int64(maxSlots(Budget(b), 16)) / 4 * 3
}

// maxSlots is how many entries of size bytes the table's share of the
// budget (three eighths) holds.
func maxSlots(budget int64, size int) int {
	return int(budget * 3 / 8 / int64(size))
}

// entry is a table slot: a key, and for a Map its value.
type entry interface {
	k2 | k3
	key() Key
}

type k2 [2]uint64

func (e k2) key() Key { return Key(e) }

type k3 [3]uint64

func (e k3) key() Key { return Key{e[0], e[1]} }

// words is the number of uint64 of an entry type.
func words[E entry]() int {
	var e E
	switch any(e).(type) {
	case k3:
		return 3
	}
	return 2
}

func putEntry[E entry](b []byte, e E) {
	switch v := any(e).(type) {
	case k2:
		binary.LittleEndian.PutUint64(b, v[0])
		binary.LittleEndian.PutUint64(b[8:], v[1])
	case k3:
		binary.LittleEndian.PutUint64(b, v[0])
		binary.LittleEndian.PutUint64(b[8:], v[1])
		binary.LittleEndian.PutUint64(b[16:], v[2])
	}
}

func getEntry[E entry](b []byte) E {
	var e E
	switch p := any(&e).(type) {
	case *k2:
		p[0], p[1] = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	case *k3:
		p[0], p[1], p[2] = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
	}
	return e
}

func cmpKey(a, b Key) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return cmp.Compare(a[1], b[1])
}

// mix spreads a key's bits for the table's slot (a key hash is uniform
// already, but a caller's keys need not be).
func mix(k Key) uint64 {
	h := (k[0] ^ bits.RotateLeft64(k[1], 29)) * 0x9E3779B97F4A7C15
	return h ^ h>>31
}

const (
	// blockEntries is the number of entries of a run's block: one block
	// read answers a probe the filter let through.
	blockEntries = 256
	// fanIn runs of one level are merged into one run of the next.
	fanIn = 4
	// maxBitsPerKey caps a filter's size; minBitsPerKey is its floor when
	// the budget is spread over very many keys.
	maxBitsPerKey = 12
	minBitsPerKey = 1
	// initialSlots is the table's first size.
	initialSlots = 1 << 10
)

type core[E entry] struct {
	budget   int64
	dir      string
	size     int // bytes of an entry
	maxSlots int

	slots []E
	n     int // entries in slots
	// zero: the all-zero key (the empty slot's marker) is in the set,
	// kept aside with its entry.
	zero   bool
	zeroE  E
	runs   []*run
	total  int64
	spills int
	reads  int64
	falses int64
	buf    []byte
}

func newCore[E entry](o Options) core[E] {
	b := Budget(o.Budget)
	size := 8 * words[E]()
	return core[E]{budget: b, dir: o.Dir, size: size, maxSlots: max(maxSlots(b, size), initialSlots)}
}

func (c *core[E]) stats() Stats {
	s := Stats{Keys: c.total, InMemory: int64(c.n), Spills: c.spills, Runs: len(c.runs), DiskReads: c.reads, FalseReads: c.falses}
	if c.zero {
		s.InMemory++
	}
	for _, r := range c.runs {
		s.SpillBytes += r.n * int64(c.size)
	}
	return s
}

// slot finds k in the table: its index and whether it is there (else the
// index is the empty slot where it goes). Linear probing from the key's
// mixed hash scaled to the table's size (any size, not only powers of two).
func (c *core[E]) slot(k Key) (int, bool) {
	hi, _ := bits.Mul64(mix(k), uint64(len(c.slots)))
	i := int(hi)
	for {
		ek := c.slots[i].key()
		if ek == k {
			return i, true
		}
		if ek == (Key{}) {
			return i, false
		}
		if i++; i == len(c.slots) {
			i = 0
		}
	}
}

// find looks k up in the table, then in the runs.
func (c *core[E]) find(k Key) (E, bool, error) {
	if k == (Key{}) {
		return c.zeroE, c.zero, nil
	}
	if c.slots != nil {
		if i, ok := c.slot(k); ok {
			return c.slots[i], true, nil
		}
	}
	return c.findRuns(k)
}

func (c *core[E]) findRuns(k Key) (E, bool, error) {
	var none E
	for _, r := range c.runs {
		if !r.mayHave(k) {
			continue
		}
		e, ok, err := findInRun[E](r, k, c.size, &c.buf)
		c.reads++
		if err != nil {
			return none, false, err
		}
		if ok {
			return e, true, nil
		}
		c.falses++
	}
	return none, false, nil
}

func (c *core[E]) add(e E) (E, bool, error) {
	k := e.key()
	if k == (Key{}) {
		if c.zero {
			return c.zeroE, true, nil
		}
		c.zero, c.zeroE = true, e
		c.total++
		return e, false, nil
	}
	if c.slots == nil {
		c.slots = make([]E, min(initialSlots, c.maxSlots))
	}
	i, ok := c.slot(k)
	if ok {
		return c.slots[i], true, nil
	}
	if len(c.runs) > 0 {
		old, ok, err := c.findRuns(k)
		if err != nil || ok {
			return old, ok, err
		}
	}
	c.slots[i] = e
	c.n++
	c.total++
	if c.n >= len(c.slots)/4*3 {
		if len(c.slots) < c.maxSlots {
			c.grow()
		} else if err := c.spill(); err != nil {
			return e, false, err
		}
	}
	return e, false, nil
}

func (c *core[E]) grow() { c.resize(min(2*len(c.slots), c.maxSlots)) }

func (c *core[E]) reserve(n int64) {
	// n keys stay below three quarters of the table (add grows at it).
	n = max(0, min(n, int64(c.maxSlots)))
	want := max(min(int(n*4/3+8), c.maxSlots), initialSlots)
	if want > len(c.slots) {
		c.resize(want)
	}
}

func (c *core[E]) touch(k Key) uint64 {
	if len(c.slots) == 0 {
		return 0
	}
	hi, _ := bits.Mul64(mix(k), uint64(len(c.slots)))
	return c.slots[hi].key()[0]
}

// resize moves the table's entries to a table of size slots (more than
// it holds).
func (c *core[E]) resize(size int) {
	old := c.slots
	c.slots = make([]E, size)
	for _, e := range old {
		if e.key() != (Key{}) {
			i, _ := c.slot(e.key())
			c.slots[i] = e
		}
	}
}

// spill sorts the table's entries into a new run and empties the table.
func (c *core[E]) spill() error {
	live := c.slots[:0]
	for _, e := range c.slots {
		if e.key() != (Key{}) {
			live = append(live, e)
		}
	}
	slices.SortFunc(live, func(a, b E) int { return cmpKey(a.key(), b.key()) })
	r, err := c.writeRun(int64(len(live)), 0, nil, func(yield func(E) bool) error {
		for _, e := range live {
			if !yield(e) {
				break
			}
		}
		return nil
	})
	clear(c.slots)
	c.n = 0
	if err != nil {
		return err
	}
	c.spills++
	c.runs = append(c.runs, r)
	return c.compact()
}

// compact merges fanIn runs of one level into one of the next until no
// level has fanIn runs.
func (c *core[E]) compact() error {
	for {
		byLevel := map[int][]*run{}
		for _, r := range c.runs {
			byLevel[r.level] = append(byLevel[r.level], r)
		}
		lvl := -1
		for l, rs := range byLevel {
			if len(rs) >= fanIn && (lvl < 0 || l < lvl) {
				lvl = l
			}
		}
		if lvl < 0 {
			return nil
		}
		if err := c.merge(byLevel[lvl], lvl+1); err != nil {
			return err
		}
	}
}

// merge replaces runs by one run of level: a k-way merge of their sorted
// entries (the runs are disjoint: a key is added once).
func (c *core[E]) merge(runs []*run, level int) error {
	type cursor struct {
		rd   *bufio.Reader
		left int64
		cur  E
	}
	var n int64
	cs := make([]*cursor, 0, len(runs))
	rec := make([]byte, c.size)
	next := func(cu *cursor) (bool, error) {
		if cu.left == 0 {
			return false, nil
		}
		if _, err := io.ReadFull(cu.rd, rec); err != nil {
			return false, fmt.Errorf("keyset: read a run: %w", err)
		}
		cu.cur, cu.left = getEntry[E](rec), cu.left-1
		return true, nil
	}
	for _, r := range runs {
		n += r.n
		cu := &cursor{rd: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, r.n*int64(c.size)), 64<<10), left: r.n}
		if ok, err := next(cu); err != nil {
			return err
		} else if ok {
			cs = append(cs, cu)
		}
	}
	out, err := c.writeRun(n, level, runs, func(yield func(E) bool) error {
		for len(cs) > 0 {
			m := 0
			for i := 1; i < len(cs); i++ {
				if cmpKey(cs[i].cur.key(), cs[m].cur.key()) < 0 {
					m = i
				}
			}
			if !yield(cs[m].cur) {
				return nil
			}
			ok, err := next(cs[m])
			if err != nil {
				return err
			}
			if !ok {
				cs = slices.Delete(cs, m, m+1)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	kept := c.runs[:0]
	for _, r := range c.runs {
		if slices.Contains(runs, r) {
			r.f.Close()
			continue
		}
		kept = append(kept, r)
	}
	c.runs = append(kept, out)
	return nil
}

// bitsPerKey is the filter size of a new run of n keys replacing runs:
// the filters' share of the budget spread over twice the keys spilled (the
// filters of older runs were sized when fewer keys were spilled; merges
// resize them), and never more than what the other runs' filters leave.
func (c *core[E]) bitsPerKey(n int64, replacing []*run) int {
	budget := c.budget * 3 / 8 * 8
	spilled, used := n, int64(0)
	for _, r := range c.runs {
		if !slices.Contains(replacing, r) {
			spilled += r.n
			used += int64(r.nbits)
		}
	}
	bpk := min(int64(maxBitsPerKey), budget/max(2*spilled, 1), max(budget-used, 0)/max(n, 1))
	return int(max(bpk, minBitsPerKey))
}

// writeRun writes n sorted entries to a new run file.
func (c *core[E]) writeRun(n int64, level int, replacing []*run, entries func(yield func(E) bool) error) (*run, error) {
	f, err := c.create()
	if err != nil {
		return nil, err
	}
	r := &run{f: f, level: level}
	r.initBloom(n, c.bitsPerKey(n, replacing))
	r.first = make([]Key, 0, (n+blockEntries-1)/blockEntries)
	w := bufio.NewWriterSize(f, 64<<10)
	rec := make([]byte, c.size)
	var prev Key
	var werr error
	err = entries(func(e E) bool {
		k := e.key()
		if r.n > 0 && cmpKey(prev, k) >= 0 {
			werr = fmt.Errorf("keyset: internal error: run not strictly sorted")
			return false
		}
		prev = k
		if r.n%blockEntries == 0 {
			r.first = append(r.first, k)
		}
		r.addBloom(k)
		putEntry(rec, e)
		if _, werr = w.Write(rec); werr != nil {
			return false
		}
		r.n++
		return true
	})
	err = errors.Join(err, werr)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && r.n != n {
		err = fmt.Errorf("keyset: internal error: run of %d entries, %d expected", r.n, n)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("keyset: write a spill file: %w", err)
	}
	return r, nil
}

// spillPrefix names the spill files.
const spillPrefix = "lima-keyset-"

// create makes a spill file in the set's folder and unlinks it at once.
func (c *core[E]) create() (*os.File, error) {
	dir := c.dir
	if dir == "" {
		dir = os.TempDir()
	} else if err := fsx.MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("keyset: spill folder: %w", err)
	}
	sweepOnce(dir)
	f, err := os.CreateTemp(dir, spillPrefix+"*.run") // 0600
	if err != nil {
		return nil, fmt.Errorf("keyset: spill file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("keyset: unlink the spill file: %w", err)
	}
	return f, nil
}

func (c *core[E]) close() error {
	var errs []error
	for _, r := range c.runs {
		errs = append(errs, r.f.Close())
	}
	c.runs, c.slots, c.n, c.total, c.zero, c.buf = nil, nil, 0, 0, false, nil
	var zero E
	c.zeroE = zero
	return errors.Join(errs...)
}

// run is one sorted spill file.
type run struct {
	f     *os.File
	n     int64
	level int
	// first is the first key of each block.
	first []Key
	bloom []uint64
	nbits uint64
	k     int
}

func (r *run) initBloom(n int64, bitsPerKey int) {
	m := uint64(max(n, 1)) * uint64(bitsPerKey)
	m = (m + 63) / 64 * 64
	r.bloom, r.nbits = make([]uint64, m/64), m
	r.k = max(1, int(math.Round(float64(bitsPerKey)*math.Ln2)))
}

// bit is the filter's i-th bit position of k (double hashing on the key's
// own bits, mixed).
func (r *run) bit(k Key, i int) uint64 {
	h1 := mix(k)
	h2 := (k[1] ^ bits.RotateLeft64(k[0], 17)) * 0xC2B2AE3D27D4EB4F
	hi, _ := bits.Mul64(h1+uint64(i)*(h2|1), r.nbits) // in [0, nbits) without a division
	return hi
}

func (r *run) addBloom(k Key) {
	for i := 0; i < r.k; i++ {
		b := r.bit(k, i)
		r.bloom[b/64] |= 1 << (b % 64)
	}
}

func (r *run) mayHave(k Key) bool {
	if r.n == 0 || cmpKey(k, r.first[0]) < 0 {
		return false
	}
	for i := 0; i < r.k; i++ {
		b := r.bit(k, i)
		if r.bloom[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// findInRun reads the one block that may hold k.
func findInRun[E entry](r *run, k Key, size int, buf *[]byte) (E, bool, error) {
	var none E
	// The last block whose first key is <= k.
	b := sortSearch(len(r.first), func(i int) bool { return cmpKey(r.first[i], k) > 0 }) - 1
	if b < 0 {
		return none, false, nil
	}
	start := int64(b) * blockEntries
	cnt := min(int64(blockEntries), r.n-start)
	need := int(cnt) * size
	if cap(*buf) < need {
		*buf = make([]byte, blockEntries*size)
	}
	blk := (*buf)[:need]
	if _, err := r.f.ReadAt(blk, start*int64(size)); err != nil {
		return none, false, fmt.Errorf("keyset: read a spill file: %w", err)
	}
	i := sortSearch(int(cnt), func(i int) bool {
		return cmpKey(getEntry[E](blk[i*size:]).key(), k) >= 0
	})
	if i < int(cnt) {
		if e := getEntry[E](blk[i*size:]); e.key() == k {
			return e, true, nil
		}
	}
	return none, false, nil
}

func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if !f(h) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// sweepAge: a spill file older than this in a set's folder was left by a
// crash between its creation and its unlinking (microseconds apart).
const sweepAge = 10 * time.Minute

var swept sync.Map

func sweepOnce(dir string) {
	if _, done := swept.LoadOrStore(dir, true); !done {
		Sweep(dir, time.Now().Add(-sweepAge))
	}
}

// Sweep removes the spill files in dir last modified before cutoff (files
// a crash left behind) and returns how many it removed.
func Sweep(dir string, cutoff time.Time) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), spillPrefix) || !strings.HasSuffix(e.Name(), ".run") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			if os.Remove(filepath.Join(dir, e.Name())) == nil {
				n++
			}
		}
	}
	return n
}
