package run

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sqldb"
)

// SkipUnchanged is the skip reason of a row re-read inside the lookback
// window (watermark at or above the read's lower bound) that equals the
// lake's version of it: it is neither rewritten nor counted as updated.
const SkipUnchanged = "unchanged_in_lookback"

// lookbackWindow holds the lake rows whose watermark is at or above the
// read's lower bound — the only lake rows a re-read row can equal — as the
// hash of their content: by key when the table has keys, else as a
// multiset of whole-row hashes. It is filled by a filtered scan
// (sink.RangeScanner prunes data files by the watermark column's
// statistics), never by reading every row of the lake.
type lookbackWindow struct {
	byKey map[[2]uint64][2]uint64
	rows  map[[2]uint64]int
	// Rows is how many lake rows the window held; From is the lower bound
	// of the read (canonical text).
	Rows int64
	From string
	// unchanged counts the re-read rows found unchanged; sums adds up
	// their control columns (by column index) for gate 4.
	unchanged int64
	sums      map[int]*Sum
}

// matched records a re-read row found unchanged.
func (l *loader) matched(cells []clean.Cell) {
	w := l.window
	w.unchanged++
	if w.sums == nil {
		w.sums = map[int]*Sum{}
	}
	for _, i := range l.stats.sumCols {
		c := cells[i]
		if c.Null {
			continue
		}
		s := w.sums[i]
		if s == nil {
			s = &Sum{Type: l.rs.types[i], IsFloat: l.rs.types[i].Kind == plan.Double}
			w.sums[i] = s
		}
		switch l.rs.types[i].Kind {
		case plan.Double:
			s.Float += c.F
		case plan.Decimal:
			s.addDec(c.D)
		default:
			s.addInt(c.I)
		}
	}
}

// prepareIncrementalDB sets up an incremental read of a database table:
// the read starts at the previous watermark minus the lookback (>=, pushed
// into the SQL), and the rows re-read at or above that bound are compared
// with the lake's instead of being skipped by the engine.
func (l *loader) prepareIncrementalDB(ctx context.Context, src source.Source, tbl sink.Table) error {
	d, ok := src.(*dbSource)
	if !ok || l.tr.Mode != plan.ModeIncremental || l.o.FullRefresh || l.wmCol < 0 || l.tr.WatermarkBefore == "" {
		return nil
	}
	t := l.rs.types[l.wmCol]
	prev, err := parseCanonical(t, l.tr.WatermarkBefore)
	if err != nil {
		return fmt.Errorf("previous watermark %q: %w", l.tr.WatermarkBefore, err)
	}
	from, text, err := lowerBound(t, prev, l.tr.WatermarkBefore, l.t.Load.Lookback)
	if err != nil {
		return err
	}
	// The database filters; the engine no longer skips at the watermark.
	// The new watermark never falls below the previous one.
	l.hasPrev = false
	l.wm, l.wmSet = prev, true
	if err := d.SetRange(d.unit, sqldb.ReadRange{Column: l.rs.srcNames[l.wmCol], From: from}); err != nil {
		return err
	}
	return l.readLookbackWindow(ctx, tbl, from, text)
}

// readLookbackWindow reads the lake rows whose watermark is at or above
// from (text: its canonical text) and keeps their content hashes.
func (l *loader) readLookbackWindow(ctx context.Context, tbl sink.Table, from any, text string) error {
	wt := l.rs.types[l.wmCol]
	lb, err := parseCanonical(wt, text)
	if err != nil {
		return fmt.Errorf("lower bound %q: %w", text, err)
	}
	w := &lookbackWindow{From: text}
	if len(l.t.Load.Keys) > 0 {
		w.byKey = map[[2]uint64][2]uint64{}
	} else {
		w.rows = map[[2]uint64]int{}
	}
	l.window = w
	if _, ok, err := tbl.Current(ctx); err != nil || !ok {
		return err
	}
	names := make([]string, 0, len(l.rs.cols))
	for _, f := range tbl.Schema().Fields() {
		if slices.Contains(l.rs.cols, f.Name) {
			names = append(names, f.Name)
		}
	}
	if len(names) != len(l.rs.cols) {
		return errors.New("compare the lookback window with the lake: the table's columns are not the plan's")
	}
	wmName := l.rs.cols[l.wmCol]
	var it func(yield func(arrow.RecordBatch, error) bool)
	if rs, ok := tbl.(sink.RangeScanner); ok {
		it, err = rs.ScanFrom(ctx, names, wmName, from)
	} else if sc, ok := tbl.(sink.Scanner); ok {
		it, err = sc.Scan(ctx, 0, names)
	} else {
		return errors.New("the sink cannot read the table back, which a lookback read needs")
	}
	if err != nil {
		return fmt.Errorf("read the lake rows in the lookback window: %w", err)
	}
	cells := make([]clean.Cell, len(l.rs.cols))
	cols := make([]arrow.Array, len(l.rs.cols))
	for rec, err := range it {
		if err != nil {
			return fmt.Errorf("read the lake rows in the lookback window: %w", err)
		}
		for ci, f := range rec.Schema().Fields() {
			if i := slices.Index(l.rs.cols, f.Name); i >= 0 {
				cols[i] = rec.Column(ci)
			}
		}
		for _, a := range cols {
			if a == nil {
				rec.Release()
				return errors.New("read the lake rows in the lookback window: a column is missing from the scan")
			}
		}
	rows:
		for r := 0; r < int(rec.NumRows()); r++ {
			for i, a := range cols {
				var ok bool
				if cells[i], ok = arrowCell(a, r); !ok {
					continue rows // equals no re-read row: the row is read as changed
				}
			}
			// The scan may return rows of a file whose statistics overlap
			// the bound: keep only the rows in the window.
			if cells[l.wmCol].Null || compareCells(wt, cells[l.wmCol], lb) < 0 {
				continue
			}
			w.Rows++
			h := l.contentHash(cells)
			if w.byKey != nil {
				w.byKey[l.hashKey(l.keyTexts(cells))] = h
			} else {
				w.rows[h]++
			}
		}
		rec.Release()
		clear(cols)
	}
	return nil
}

// unchangedInLookback reports whether an accepted row equals the lake's
// version of it (the lake row of its key, or for a keyless table one lake
// row of the same content) among the lake rows in the lookback window.
// Each lake row matches one re-read row at most.
func (l *loader) unchangedInLookback(cells []clean.Cell) bool {
	w := l.window
	if w == nil || w.Rows == 0 {
		return false
	}
	h := l.contentHash(cells)
	if w.byKey != nil {
		k := l.hashKey(l.keyTexts(cells))
		if v, ok := w.byKey[k]; ok && v == h {
			delete(w.byKey, k)
			l.matched(cells)
			return true
		}
		return false
	}
	if w.rows[h] > 0 {
		w.rows[h]--
		l.matched(cells)
		return true
	}
	return false
}

// contentHash hashes a row's typed values (every column of the plan), so a
// row cast from the source and the same row read back from the lake hash
// alike.
func (l *loader) contentHash(cells []clean.Cell) [2]uint64 {
	var h [2]maphash.Hash
	h[0].SetSeed(l.seeds[0])
	h[1].SetSeed(l.seeds[1])
	var b [17]byte
	for i, c := range cells {
		n := 1
		switch {
		case c.Null:
			b[0] = 0
		default:
			b[0] = 1
			switch l.rs.types[i].Kind {
			case plan.Double:
				putU64(b[1:], math.Float64bits(c.F))
				n = 9
			case plan.Decimal:
				putU64(b[1:], uint64(c.D.HighBits()))
				putU64(b[9:], c.D.LowBits())
				n = 17
			case plan.String, plan.Binary:
				b[0] = 2
			default:
				putU64(b[1:], uint64(c.I))
				n = 9
			}
		}
		for j := range h {
			h[j].Write(b[:n])
			if b[0] == 2 {
				putU64(b[1:], uint64(len(c.S)))
				h[j].Write(b[1:9])
				h[j].WriteString(c.S)
			}
		}
	}
	return [2]uint64{h[0].Sum64(), h[1].Sum64()}
}

func putU64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

// arrowCell reads one value of a lake column as the caster holds it; false
// for a representation the caster never produces.
func arrowCell(a arrow.Array, r int) (clean.Cell, bool) {
	if a.IsNull(r) {
		return clean.Cell{Null: true}, true
	}
	switch v := a.(type) {
	case *array.String:
		return clean.Cell{S: v.Value(r)}, true
	case *array.LargeString:
		return clean.Cell{S: v.Value(r)}, true
	case *array.Binary:
		return clean.Cell{S: string(v.Value(r))}, true
	case *array.LargeBinary:
		return clean.Cell{S: string(v.Value(r))}, true
	case *array.Int32:
		return clean.Cell{I: int64(v.Value(r))}, true
	case *array.Int64:
		return clean.Cell{I: v.Value(r)}, true
	case *array.Float64:
		return clean.Cell{F: v.Value(r)}, true
	case *array.Decimal128:
		return clean.Cell{D: v.Value(r)}, true
	case *array.Date32:
		return clean.Cell{I: int64(v.Value(r))}, true
	case *array.Timestamp:
		unit := v.DataType().(*arrow.TimestampType).Unit
		return clean.Cell{I: int64(v.Value(r)) * int64(unit.Multiplier()) / int64(time.Microsecond)}, true
	case *array.Boolean:
		if v.Value(r) {
			return clean.Cell{I: 1}, true
		}
		return clean.Cell{I: 0}, true
	}
	return clean.Cell{}, false
}
