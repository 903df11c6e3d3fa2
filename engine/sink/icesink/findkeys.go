package icesink

// Finding the live rows of a few keys without reading every key of the
// table: a data file is opened only when the lower/upper bounds its
// manifest entry records for the key columns can hold one of the keys, a
// row group of it is read only when its Parquet statistics can, and only
// the key columns (and the columns the caller asks for) are decoded. The
// rows a position delete removed are not returned.

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

var _ sink.KeyFinder = (*Table)(nil)

// keyReads counts what the key look-ups of a table read (tests and the
// report use them to show that only candidate files were opened).
type keyReads struct {
	calls, filesConsidered, filesOpened, rowGroups, rowGroupsRead, rowsRead atomic.Int64
}

// KeyReads returns the totals of every key look-up of this table so far
// (FindKeys and the delta commit's search for the rows to delete).
func (t *Table) KeyReads() sink.FindStats {
	r := &t.reads
	return sink.FindStats{Calls: int(r.calls.Load()), DataFiles: int(r.filesConsidered.Load()), FilesOpened: int(r.filesOpened.Load()),
		RowGroups: int(r.rowGroups.Load()), RowGroupsRead: int(r.rowGroupsRead.Load()), RowsRead: r.rowsRead.Load()}
}

// keyVal is one key component as the bounds compare it: an integer
// (int, long, date, timestamp) or a string; other types are not compared
// (every file is a candidate for them).
type keyVal struct {
	kind byte // 'i', 's', 0: not comparable
	i    int64
	s    string
}

// keyMatcher holds the wanted key tuples: as text for the row test, and
// typed for the bounds test.
type keyMatcher struct {
	cols   []string
	want   map[string]struct{} // rowKey texts
	ints   map[int64]struct{}  // one integer key column: the fast path
	tuples [][]keyVal
	// sorted is the single column's values in order (ints or strings),
	// for a binary search of a [lo, hi] range; nil with several columns.
	sortedI []int64
	sortedS []string
}

func newKeyMatcher(keys sink.Keys) (*keyMatcher, error) {
	m := &keyMatcher{cols: keys.Columns, want: map[string]struct{}{}}
	for _, b := range keys.Batches {
		if int(b.NumCols()) != len(keys.Columns) {
			return nil, fmt.Errorf("icesink: key batch has %d columns, want %d", b.NumCols(), len(keys.Columns))
		}
		cols := make([]arrow.Array, b.NumCols())
		for c := range cols {
			cols[c] = b.Column(c)
		}
		for r := 0; r < int(b.NumRows()); r++ {
			tup := make([]keyVal, len(cols))
			for c, a := range cols {
				if a.IsNull(r) {
					return nil, fmt.Errorf("icesink: key %s: a null key value cannot identify a row", keys.Columns[c])
				}
				tup[c] = keyValAt(a, r)
			}
			m.tuples = append(m.tuples, tup)
			m.want[rowKey(cols, r)] = struct{}{}
		}
	}
	if len(keys.Columns) == 1 && len(m.tuples) > 0 {
		switch m.tuples[0][0].kind {
		case 'i':
			m.ints = map[int64]struct{}{}
			for _, t := range m.tuples {
				m.sortedI = append(m.sortedI, t[0].i)
				m.ints[t[0].i] = struct{}{}
			}
			slices.Sort(m.sortedI)
		case 's':
			for _, t := range m.tuples {
				m.sortedS = append(m.sortedS, t[0].s)
			}
			slices.Sort(m.sortedS)
		}
	}
	return m, nil
}

func keyValAt(a arrow.Array, i int) keyVal {
	switch v := a.(type) {
	case *array.Int32:
		return keyVal{kind: 'i', i: int64(v.Value(i))}
	case *array.Int64:
		return keyVal{kind: 'i', i: v.Value(i)}
	case *array.Date32:
		return keyVal{kind: 'i', i: int64(v.Value(i))}
	case *array.Timestamp:
		return keyVal{kind: 'i', i: int64(v.Value(i))}
	case *array.String:
		return keyVal{kind: 's', s: v.Value(i)}
	case *array.LargeString:
		return keyVal{kind: 's', s: v.Value(i)}
	}
	return keyVal{}
}

// bound is a column's [lo, hi] as statistics state it; ok false: unknown
// (the column does not prune).
type bound struct {
	ok     bool
	kind   byte
	lo, hi keyVal
}

func (b bound) holds(v keyVal) bool {
	if !b.ok || v.kind != b.kind {
		return true
	}
	if v.kind == 'i' {
		return b.lo.i <= v.i && v.i <= b.hi.i
	}
	return b.lo.s <= v.s && v.s <= b.hi.s
}

// anyWithin reports whether some wanted tuple lies within the bounds (one
// per key column).
func (m *keyMatcher) anyWithin(bs []bound) bool {
	if len(bs) == 1 && bs[0].ok {
		b := bs[0]
		switch {
		case m.sortedI != nil && b.kind == 'i':
			i, _ := slices.BinarySearch(m.sortedI, b.lo.i)
			return i < len(m.sortedI) && m.sortedI[i] <= b.hi.i
		case m.sortedS != nil && b.kind == 's':
			i, _ := slices.BinarySearch(m.sortedS, b.lo.s)
			return i < len(m.sortedS) && m.sortedS[i] <= b.hi.s
		}
	}
	for _, t := range m.tuples {
		in := true
		for c, v := range t {
			if !bs[c].holds(v) {
				in = false
				break
			}
		}
		if in {
			return true
		}
	}
	return false
}

// manifestBound decodes a data file's bounds of one column (Iceberg's
// single-value serialization). A string's bounds may be truncated; a
// truncated lower bound is still at most every value and iceberg-go
// rounds a truncated upper bound up, so the range still holds them all.
func manifestBound(df iceberg.DataFile, id int, typ iceberg.Type) bound {
	lo, okLo := df.LowerBoundValues()[id]
	hi, okHi := df.UpperBoundValues()[id]
	if !okLo || !okHi {
		return bound{}
	}
	switch typ.(type) {
	case iceberg.Int32Type, iceberg.DateType:
		if len(lo) != 4 || len(hi) != 4 {
			return bound{}
		}
		return bound{ok: true, kind: 'i', lo: keyVal{kind: 'i', i: int64(int32(binary.LittleEndian.Uint32(lo)))}, hi: keyVal{kind: 'i', i: int64(int32(binary.LittleEndian.Uint32(hi)))}}
	case iceberg.Int64Type, iceberg.TimestampType, iceberg.TimestampTzType:
		if len(lo) != 8 || len(hi) != 8 {
			return bound{}
		}
		return bound{ok: true, kind: 'i', lo: keyVal{kind: 'i', i: int64(binary.LittleEndian.Uint64(lo))}, hi: keyVal{kind: 'i', i: int64(binary.LittleEndian.Uint64(hi))}}
	case iceberg.StringType:
		return bound{ok: true, kind: 's', lo: keyVal{kind: 's', s: string(lo)}, hi: keyVal{kind: 's', s: string(hi)}}
	}
	return bound{}
}

// groupBound is a row group's [min, max] of one column from its Parquet
// statistics.
func groupBound(st metadata.TypedStatistics) bound {
	if st == nil || !st.HasMinMax() {
		return bound{}
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		return bound{ok: true, kind: 'i', lo: keyVal{kind: 'i', i: int64(s.Min())}, hi: keyVal{kind: 'i', i: int64(s.Max())}}
	case *metadata.Int64Statistics:
		return bound{ok: true, kind: 'i', lo: keyVal{kind: 'i', i: s.Min()}, hi: keyVal{kind: 'i', i: s.Max()}}
	case *metadata.ByteArrayStatistics:
		return bound{ok: true, kind: 's', lo: keyVal{kind: 's', s: string(s.Min())}, hi: keyVal{kind: 's', s: string(s.Max())}}
	}
	return bound{}
}

// FindKeys reads the snapshot (0: current) for the live rows whose key is
// in keys and calls fn once per batch of them: rec holds the key columns,
// then the extra columns, of the rows at rows (indices into rec), which
// are at positions pos of data file path. rec is released after fn
// returns. Only candidate data files and row groups are read (see the top
// of this file); the returned stats say how many.
func (t *Table) FindKeys(ctx context.Context, snapshotID int64, keys sink.Keys, extra []string, fn func(sink.FoundRows) error) (sink.FindStats, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return sink.FindStats{}, err
	}
	snap := tbl.CurrentSnapshot()
	if snapshotID != 0 {
		if snap = tbl.SnapshotByID(snapshotID); snap == nil {
			return sink.FindStats{}, fmt.Errorf("no snapshot %d in %s", snapshotID, strings.Join(t.ident, "."))
		}
	}
	return t.findKeys(ctx, tbl, snap, keys, extra, func(_ iceberg.DataFile, f sink.FoundRows) error { return fn(f) })
}

func (t *Table) findKeys(ctx context.Context, tbl *table.Table, snap *table.Snapshot, keys sink.Keys, extra []string, fn func(iceberg.DataFile, sink.FoundRows) error) (sink.FindStats, error) {
	var st sink.FindStats
	t.reads.calls.Add(1)
	defer func() {
		r := &t.reads
		r.filesConsidered.Add(int64(st.DataFiles))
		r.filesOpened.Add(int64(st.FilesOpened))
		r.rowGroups.Add(int64(st.RowGroups))
		r.rowGroupsRead.Add(int64(st.RowGroupsRead))
		r.rowsRead.Add(st.RowsRead)
	}()
	st.Calls = 1
	if snap == nil || keys.Len() == 0 {
		return st, nil
	}
	m, err := newKeyMatcher(keys)
	if err != nil {
		return st, err
	}
	sch := tbl.Schema()
	if s := tbl.Metadata().Schemas(); snap.SchemaID != nil {
		for _, x := range s {
			if x.ID == *snap.SchemaID {
				sch = x
			}
		}
	}
	names := append(slices.Clone(keys.Columns), extra...)
	ids := make([]int, len(names))
	types := make([]iceberg.Type, len(names))
	for i, n := range names {
		f, ok := sch.FindFieldByName(n)
		if !ok {
			return st, fmt.Errorf("icesink: no column %s in %s", n, strings.Join(t.ident, "."))
		}
		ids[i], types[i] = f.ID, f.Type
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return st, err
	}
	data, dels, err := liveFiles(fs, snap)
	if err != nil {
		return st, err
	}
	st.DataFiles = len(data)
	var cands []iceberg.DataFile
	for _, df := range data {
		bs := make([]bound, len(keys.Columns))
		for c := range bs {
			bs[c] = manifestBound(df, ids[c], types[c])
		}
		if m.anyWithin(bs) {
			cands = append(cands, df)
		}
	}
	if len(cands) == 0 {
		return st, nil
	}
	gone, err := deletedPositions(ctx, fs, dels, cands)
	if err != nil {
		return st, err
	}
	for _, df := range cands {
		if err := t.findInFile(ctx, fs, df, m, ids, names, gone[df.FilePath()], &st, fn); err != nil {
			return st, err
		}
	}
	return st, nil
}

// deletedPositions reads the position delete files that apply to the
// candidate files: the deleted positions by data file.
func deletedPositions(ctx context.Context, fs icebergio.IO, dels, cands []iceberg.DataFile) (map[string]map[int64]struct{}, error) {
	want := map[string]bool{}
	for _, df := range cands {
		want[df.FilePath()] = true
	}
	out := map[string]map[int64]struct{}{}
	for _, d := range dels {
		if d.ContentType() != iceberg.EntryContentPosDeletes {
			return nil, fmt.Errorf("delete file %s is not a position delete file, which Lima does not write", d.FilePath())
		}
		if ref, ok := fileScopedTarget(d); ok && !want[ref] {
			continue
		}
		byFile, err := readPositionDeletes(ctx, fs, d)
		if err != nil {
			return nil, err
		}
		for p, ps := range byFile {
			if !want[p] {
				continue
			}
			g := out[p]
			if g == nil {
				g = map[int64]struct{}{}
				out[p] = g
			}
			for _, x := range ps {
				g[x] = struct{}{}
			}
		}
	}
	return out, nil
}

// findInFile reads the candidate row groups of one data file.
func (t *Table) findInFile(ctx context.Context, fs icebergio.IO, df iceberg.DataFile, m *keyMatcher, ids []int, names []string,
	gone map[int64]struct{}, st *sink.FindStats, fn func(iceberg.DataFile, sink.FoundRows) error) error {
	path := df.FilePath()
	f, err := fs.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st.FilesOpened++
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer pr.Close()
	md := pr.MetaData()
	if md.NumRows != df.Count() {
		return fmt.Errorf("read %s: %d rows, its metadata says %d", path, md.NumRows, df.Count())
	}
	// Leaf columns by field id (a renamed column keeps its id).
	leaf := make([]int, len(ids))
	for i, id := range ids {
		leaf[i] = -1
		for c := 0; c < md.Schema.NumColumns(); c++ {
			if md.Schema.Column(c).SchemaNode().FieldID() == int32(id) {
				leaf[i] = c
			}
		}
		if leaf[i] < 0 {
			leaf[i] = md.Schema.ColumnIndexByName(names[i])
		}
		if leaf[i] < 0 {
			return fmt.Errorf("read %s: no column %s", path, names[i])
		}
	}
	nk := len(m.cols)
	var groups []int
	var starts []int64
	var start int64
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		st.RowGroups++
		bs := make([]bound, nk)
		for c := range bs {
			if cc, err := rg.ColumnChunk(leaf[c]); err == nil {
				if s, err := cc.Statistics(); err == nil {
					bs[c] = groupBound(s)
				}
			}
		}
		if m.anyWithin(bs) {
			groups = append(groups, g)
			starts = append(starts, start)
		}
		start += rg.NumRows()
	}
	if len(groups) == 0 {
		return nil
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for gi, g := range groups {
		st.RowGroupsRead++
		rr, err := fr.GetRecordReader(ctx, leaf, []int{g})
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		pos := starts[gi]
		for rr.Next() {
			rec := rr.RecordBatch()
			n := int(rec.NumRows())
			st.RowsRead += int64(n)
			cols := make([]arrow.Array, nk)
			for c := range cols {
				cols[c] = rec.Column(c)
			}
			var rows []int
			var ps []int64
			for r := 0; r < n; r++ {
				if !m.match(cols, r) {
					continue
				}
				if _, dead := gone[pos+int64(r)]; dead {
					continue
				}
				rows = append(rows, r)
				ps = append(ps, pos+int64(r))
			}
			pos += int64(n)
			if len(rows) > 0 {
				if err := fn(df, sink.FoundRows{File: path, Rec: rec, Rows: rows, Pos: ps}); err != nil {
					rr.Release()
					return err
				}
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	return nil
}

// match reports whether row r of the key columns is a wanted key.
func (m *keyMatcher) match(cols []arrow.Array, r int) bool {
	if m.ints != nil {
		if cols[0].IsNull(r) {
			return false
		}
		switch v := cols[0].(type) {
		case *array.Int64:
			_, ok := m.ints[v.Value(r)]
			return ok
		case *array.Int32:
			_, ok := m.ints[int64(v.Value(r))]
			return ok
		case *array.Date32:
			_, ok := m.ints[int64(v.Value(r))]
			return ok
		case *array.Timestamp:
			_, ok := m.ints[int64(v.Value(r))]
			return ok
		}
	}
	_, ok := m.want[rowKey(cols, r)]
	return ok
}
