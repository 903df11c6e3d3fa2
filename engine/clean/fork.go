package clean

// Casting on several goroutines: the columns of a Caster are read-only
// while casting (their fix counts change only in Accept), so forks of one
// Caster cast rows on workers, and the Caster that owns the builder takes
// each row's outcome back (Restore) and accepts it or not, in input order.

// PendingFix is a fix of a cast row, counted when the row is accepted.
type PendingFix = fixRef

// Fork returns a caster that casts like c on another goroutine: it shares
// c's columns and has its own cells, errors and pending fixes. It has no
// builder: only Cast, Cells and AppendPending may be called on it.
func (c *Caster) Fork() *Caster {
	return &Caster{cols: c.cols, schema: c.schema, cells: make([]Cell, len(c.cols))}
}

// AppendPending appends the fixes of the row last cast to dst.
func (c *Caster) AppendPending(dst []PendingFix) []PendingFix { return append(dst, c.pending...) }

// Restore makes a row cast by a fork the current row of c, as if c had
// cast it: its cells and pending fixes are copied, so Cells, Accept and a
// later Cast behave as after c.Cast.
func (c *Caster) Restore(cells []Cell, fixes []PendingFix) {
	copy(c.cells, cells)
	c.pending = append(c.pending[:0], fixes...)
}
