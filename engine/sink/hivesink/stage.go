package hivesink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// stagedFile is one closed data file in the staging folder.
type stagedFile struct {
	rel   string // relative to the staging folder
	dir   string // partition folder, relative to the table
	rows  int64
	bytes int64
}

type staged struct {
	t     *Table
	id    string
	date  string
	files []stagedFile
	rows  int64
	bytes int64
	done  bool
}

var _ sink.Staged = (*staged)(nil)

func (s *staged) Rows() int64  { return s.rows }
func (s *staged) Files() int   { return len(s.files) }
func (s *staged) Bytes() int64 { return s.bytes }

// Partitions are the distinct partition folders of the staged files,
// relative to the table, in first-written order.
func (s *staged) Partitions() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range s.files {
		if !seen[f.dir] {
			seen[f.dir] = true
			out = append(out, f.dir)
		}
	}
	return out
}

// Discard removes the staging folder.
func (s *staged) Discard(ctx context.Context) error {
	if s.done {
		return nil
	}
	s.done = true
	defer s.t.s.release(s.id)
	return s.t.removeAll(s.t.root + "/_staging/" + s.id)
}

// countingWriter counts the bytes of a data file.
type countingWriter struct {
	w io.WriteCloser
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Close closes the file: on an object store this is the upload, so a
// writer that is not closed leaves no object behind.
func (c *countingWriter) Close() error { return c.w.Close() }

type openFile struct {
	dir  string
	rel  string
	out  *countingWriter
	fw   *pqarrow.FileWriter
	rows int64
	used int64 // tick of the last write, for closing the least recently used
}

type stager struct {
	t     *Table
	st    *staged
	mem   memory.Allocator
	props *parquet.WriterProperties
	aprop pqarrow.ArrowWriterProperties
	open  map[string]*openFile
	tick  int64
	seq   int
}

// Stage writes the batches into zstd Parquet files in the staging folder,
// one open file per partition (at most MaxOpenFiles at once), each rolled
// over at TargetFileSize.
func (t *Table) Stage(ctx context.Context, batches iter.Seq2[arrow.RecordBatch, error]) (sink.Staged, error) {
	o := t.s.opts
	st := &staged{t: t, id: newID(), date: o.Now().UTC().Format(time.DateOnly)}
	t.s.hold(st.id)
	sg := &stager{t: t, st: st, mem: o.Allocator, open: map[string]*openFile{},
		props: parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(o.RowGroupRows),
			parquet.WithAllocator(o.Allocator), parquet.WithCreatedBy("lima")),
		aprop: pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(o.Allocator))}
	fail := func(err error) (sink.Staged, error) {
		for _, f := range sg.open {
			_ = f.fw.Close()
		}
		_ = st.Discard(context.WithoutCancel(ctx))
		return nil, err
	}
	for rec, err := range batches {
		if err != nil {
			return fail(err)
		}
		// A batch the loop stops at stays the producer's to release (the
		// iterator gets false back); one that was written is released here.
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := sg.write(ctx, rec); err != nil {
			return fail(fmt.Errorf("hivesink: write data files: %w", err))
		}
		rec.Release()
	}
	for _, dir := range sg.openDirs() {
		if err := sg.close(dir); err != nil {
			return fail(err)
		}
	}
	return st, nil
}

func (sg *stager) openDirs() []string {
	out := make([]string, 0, len(sg.open))
	for d := range sg.open {
		out = append(out, d)
	}
	return out
}

// write splits a batch by partition folder and appends each part to its
// folder's open file.
func (sg *stager) write(ctx context.Context, rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(sg.t.schema) {
		return fmt.Errorf("batch schema %s differs from the table's %s", rec.Schema(), sg.t.schema)
	}
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	dirs := make([]string, n)
	groups := map[string][]int32{}
	var order []string
	for i := range n {
		d, err := sg.t.partitionDir(sg.st.date, rec, i)
		if err != nil {
			return err
		}
		dirs[i] = d
		if _, ok := groups[d]; !ok {
			order = append(order, d)
		}
		groups[d] = append(groups[d], int32(i))
	}
	if len(order) == 1 {
		return sg.append(order[0], rec)
	}
	for _, d := range order {
		part, err := take(ctx, sg.mem, rec, groups[d])
		if err != nil {
			return err
		}
		err = sg.append(d, part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func take(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	b := array.NewInt32Builder(mem)
	b.AppendValues(idx, nil)
	ia := b.NewArray()
	b.Release()
	defer ia.Release()
	out, err := compute.Take(compute.WithAllocator(ctx, mem), *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(rec), compute.NewDatumWithoutOwning(ia))
	if err != nil {
		return nil, err
	}
	rd, ok := out.(*compute.RecordDatum)
	if !ok {
		out.Release()
		return nil, fmt.Errorf("take returned %s", out.Kind())
	}
	return rd.Value, nil
}

func (sg *stager) append(dir string, rec arrow.RecordBatch) error {
	f := sg.open[dir]
	if f == nil {
		if len(sg.open) >= sg.t.s.opts.MaxOpenFiles {
			var lru string
			for d, o := range sg.open {
				if lru == "" || o.used < sg.open[lru].used {
					lru = d
				}
			}
			if err := sg.close(lru); err != nil {
				return err
			}
		}
		sg.seq++
		rel := fmt.Sprintf("%s/part-%05d.parquet", dir, sg.seq)
		w, err := sg.t.s.fs.(icebergio.WriteFileIO).Create(sg.t.root + "/_staging/" + sg.st.id + "/" + rel)
		if err != nil {
			return err
		}
		cw := &countingWriter{w: w}
		fw, err := pqarrow.NewFileWriter(sg.t.schema, cw, sg.props, sg.aprop)
		if err != nil {
			w.Close()
			return err
		}
		f = &openFile{dir: dir, rel: rel, out: cw, fw: fw}
		sg.open[dir] = f
	}
	sg.tick++
	f.used = sg.tick
	if err := f.fw.WriteBuffered(rec); err != nil {
		return err
	}
	f.rows += rec.NumRows()
	// Roll over once the file (closed row groups plus the buffered one)
	// reaches the target size.
	if f.fw.TotalCompressedBytes()+f.fw.RowGroupTotalCompressedBytes() >= sg.t.s.opts.TargetFileSize {
		return sg.close(dir)
	}
	return nil
}

func (sg *stager) close(dir string) error {
	f := sg.open[dir]
	delete(sg.open, dir)
	if err := f.fw.Close(); err != nil { // closes the underlying writer too
		return err
	}
	sg.st.files = append(sg.st.files, stagedFile{rel: f.rel, dir: f.dir, rows: f.rows, bytes: f.out.n})
	sg.st.rows += f.rows
	sg.st.bytes += f.out.n
	return nil
}

// partitionDir is the folder of row i: load_date=D/key=value/….
func (t *Table) partitionDir(date string, rec arrow.RecordBatch, i int) (string, error) {
	var sb strings.Builder
	sb.WriteString(t.loadKey + "=" + date)
	for _, p := range t.parts {
		col := rec.Column(p.col)
		sb.WriteByte('/')
		if col.IsNull(i) {
			sb.WriteString(Segment(p.key, "", true))
			continue
		}
		v, err := partValue(p, col, i)
		if err != nil {
			return "", err
		}
		sb.WriteString(Segment(p.key, v, false))
	}
	return sb.String(), nil
}

// partValue is the text of the partition value of row i.
func partValue(p partField, col arrow.Array, i int) (string, error) {
	var tm time.Time
	temporal := false
	switch a := col.(type) {
	case *array.Date32:
		tm, temporal = a.Value(i).ToTime(), true
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		tm, temporal = a.Value(i).ToTime(unit).UTC(), true
	}
	if temporal {
		switch p.transform {
		case plan.TransformYear:
			return tm.Format("2006"), nil
		case plan.TransformMonth:
			return tm.Format("2006-01"), nil
		case plan.TransformDay:
			return tm.Format(time.DateOnly), nil
		case plan.TransformHour:
			return tm.Format("2006-01-02-15"), nil
		}
		if _, ok := col.(*array.Date32); ok {
			return tm.Format(time.DateOnly), nil
		}
		return tm.Format("2006-01-02 15:04:05.999999"), nil
	}
	switch a := col.(type) {
	case *array.Int32:
		return strconv.FormatInt(truncInt(p, int64(a.Value(i))), 10), nil
	case *array.Int64:
		return strconv.FormatInt(truncInt(p, a.Value(i)), 10), nil
	case *array.String:
		v := a.Value(i)
		if p.transform == plan.TransformTruncate {
			v = truncString(v, p.param)
		}
		return v, nil
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), nil
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale), nil
	}
	return "", errors.New("hivesink: cannot partition by a column of type " + col.DataType().String())
}

func truncInt(p partField, v int64) int64 {
	if p.transform != plan.TransformTruncate || p.param <= 0 {
		return v
	}
	w := int64(p.param)
	return v - (((v % w) + w) % w)
}

func truncString(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
