package files

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lima-lake/lima/engine/source"
)

// parquetBatchSize is the number of rows decoded at a time.
const parquetBatchSize = 8192

// parquetReader streams a Parquet file in record batches and renders every
// cell as canonical text:
//
//   - integers: decimal text; floats: strconv 'g' with the shortest
//     precision that round-trips (NaN, +Inf, -Inf);
//   - decimals: exact decimal text with all scale digits ("-150.000");
//   - date32/date64: "2006-01-02"; time32/time64: "15:04:05.999999999";
//   - timestamps: RFC 3339 with nanoseconds in UTC with "Z" when the column
//     is zoned (adjusted to UTC), without a zone when it is naive;
//   - booleans "true"/"false"; strings as stored;
//   - binary and fixed-size binary: standard base64 (RFC 4648, padded);
//   - lists, structs and maps: compact JSON; anything else: arrow's ValueStr;
//   - null: Nulls[i] = true and an empty value.
//
// Columns are the top-level field names of the schema. Loc.Row is the
// 1-based row number, Loc.Line 0 and Raw nil.
type parquetReader struct {
	ctx     context.Context
	name    string
	pf      *file.Reader
	rr      pqarrow.RecordReader
	columns []string
	rec     arrow.RecordBatch
	conv    []cellFunc
	i       int
	row     int64
	closed  bool
	err     error
}

type cellFunc func(i int) string

func newParquetReader(ctx context.Context, f *os.File, name string) (pr *parquetReader, err error) {
	return newParquetGroupsReader(ctx, f, name, false)
}

// newParquetGroupsReader reads the whole file, or with last only its last
// row group (none when the file has a single one).
func newParquetGroupsReader(ctx context.Context, f *os.File, name string, last bool) (pr *parquetReader, err error) {
	defer func() {
		if r := recover(); r != nil {
			pr, err = nil, unreadable(name, fmt.Sprintf("not a valid parquet file: %v", r), nil)
		}
	}()
	mem := memory.DefaultAllocator
	pf, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		return nil, unreadable(name, "not a parquet file, or a truncated one", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchSize}, mem)
	if err != nil {
		pf.Close()
		return nil, unreadable(name, "unsupported parquet schema", err)
	}
	sc, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, unreadable(name, "unsupported parquet schema", err)
	}
	pr = &parquetReader{ctx: ctx, name: name, pf: pf}
	for _, fld := range sc.Fields() {
		pr.columns = append(pr.columns, fld.Name)
	}
	if len(pr.columns) == 0 || pf.NumRows() == 0 {
		return pr, nil
	}
	var groups []int
	if last {
		if pf.NumRowGroups() < 2 {
			return pr, nil
		}
		groups = []int{pf.NumRowGroups() - 1}
	}
	rr, err := fr.GetRecordReader(ctx, nil, groups)
	if err != nil {
		pf.Close()
		return nil, unreadable(name, "cannot read parquet columns", err)
	}
	pr.rr = rr
	return pr, nil
}

// Columns returns the schema's top-level field names.
func (p *parquetReader) Columns() []string { return p.columns }

// NumRows is the number of rows the file's metadata declares: readers of
// Parquet have the optional capability interface{ NumRows() int64 }, so
// that a sampler can count a file's rows without reading them.
func (p *parquetReader) NumRows() int64 { return p.pf.NumRows() }

// Next returns the next row.
func (p *parquetReader) Next() (row source.Row, err error) {
	if p.err != nil {
		return source.Row{}, p.err
	}
	defer func() {
		if r := recover(); r != nil {
			p.err = unreadable(p.name, fmt.Sprintf("corrupt parquet data after row %d: %v", p.row, r), nil)
			row, err = source.Row{}, p.err
		}
	}()
	for p.rec == nil || p.i >= int(p.rec.NumRows()) {
		if p.rr == nil {
			p.err = io.EOF
			return source.Row{}, io.EOF
		}
		if err := p.ctx.Err(); err != nil {
			p.err = fmt.Errorf("files: %s: %w", p.name, err)
			return source.Row{}, p.err
		}
		p.rec, p.conv, p.i = nil, nil, 0
		if !p.rr.Next() {
			if err := p.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
				p.err = unreadable(p.name, fmt.Sprintf("corrupt parquet data after row %d", p.row), err)
				return source.Row{}, p.err
			}
			p.err = io.EOF
			return source.Row{}, io.EOF
		}
		p.rec = p.rr.RecordBatch()
		p.conv = make([]cellFunc, p.rec.NumCols())
		for c := range p.conv {
			p.conv[c] = converter(p.rec.Column(c))
		}
	}
	p.row++
	row = source.Row{Kind: source.Data, Values: make([]string, len(p.conv)), Loc: source.Locator{Unit: p.name, Row: p.row}}
	for c, conv := range p.conv {
		col := p.rec.Column(c)
		if col.IsNull(p.i) {
			if row.Nulls == nil {
				row.Nulls = make([]bool, len(p.conv))
			}
			row.Nulls[c] = true
			continue
		}
		row.Values[c] = conv(p.i)
	}
	p.i++
	return row, nil
}

// Close releases the batches and closes the file; it is idempotent.
func (p *parquetReader) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.err == nil || errors.Is(p.err, io.EOF) {
		p.err = errClosed
	}
	p.rec, p.conv = nil, nil
	if p.rr != nil {
		p.rr.Release()
		p.rr = nil
	}
	return p.pf.Close()
}

func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

const naiveLayout = "2006-01-02T15:04:05.999999999"

// converter returns the text rendering of a column's non-null cells.
// Strings are copied, so rows do not alias the batch's memory.
func converter(arr arrow.Array) cellFunc {
	switch a := arr.(type) {
	case *array.Int8:
		return func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) }
	case *array.Int16:
		return func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) }
	case *array.Int32:
		return func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) }
	case *array.Int64:
		return func(i int) string { return strconv.FormatInt(a.Value(i), 10) }
	case *array.Uint8:
		return func(i int) string { return strconv.FormatUint(uint64(a.Value(i)), 10) }
	case *array.Uint16:
		return func(i int) string { return strconv.FormatUint(uint64(a.Value(i)), 10) }
	case *array.Uint32:
		return func(i int) string { return strconv.FormatUint(uint64(a.Value(i)), 10) }
	case *array.Uint64:
		return func(i int) string { return strconv.FormatUint(a.Value(i), 10) }
	case *array.Float16:
		return func(i int) string { return formatFloat(float64(a.Value(i).Float32()), 32) }
	case *array.Float32:
		return func(i int) string { return formatFloat(float64(a.Value(i)), 32) }
	case *array.Float64:
		return func(i int) string { return formatFloat(a.Value(i), 64) }
	case *array.Boolean:
		return func(i int) string { return strconv.FormatBool(a.Value(i)) }
	case *array.String:
		return func(i int) string { return strings.Clone(a.Value(i)) }
	case *array.LargeString:
		return func(i int) string { return strings.Clone(a.Value(i)) }
	case *array.StringView:
		return func(i int) string { return strings.Clone(a.Value(i)) }
	case *array.Binary:
		return func(i int) string { return base64.StdEncoding.EncodeToString(a.Value(i)) }
	case *array.LargeBinary:
		return func(i int) string { return base64.StdEncoding.EncodeToString(a.Value(i)) }
	case *array.BinaryView:
		return func(i int) string { return base64.StdEncoding.EncodeToString(a.Value(i)) }
	case *array.FixedSizeBinary:
		return func(i int) string { return base64.StdEncoding.EncodeToString(a.Value(i)) }
	case *array.Decimal32:
		s := scaleOf(arr)
		return func(i int) string { return a.Value(i).ToString(s) }
	case *array.Decimal64:
		s := scaleOf(arr)
		return func(i int) string { return a.Value(i).ToString(s) }
	case *array.Decimal128:
		s := scaleOf(arr)
		return func(i int) string { return a.Value(i).ToString(s) }
	case *array.Decimal256:
		s := scaleOf(arr)
		return func(i int) string { return a.Value(i).ToString(s) }
	case *array.Date32:
		return func(i int) string { return a.Value(i).ToTime().Format(time.DateOnly) }
	case *array.Date64:
		return func(i int) string { return a.Value(i).ToTime().Format(time.DateOnly) }
	case *array.Time32:
		unit := arr.DataType().(*arrow.Time32Type).Unit
		return func(i int) string { return a.Value(i).ToTime(unit).Format("15:04:05.999999999") }
	case *array.Time64:
		unit := arr.DataType().(*arrow.Time64Type).Unit
		return func(i int) string { return a.Value(i).ToTime(unit).Format("15:04:05.999999999") }
	case *array.Timestamp:
		dt := arr.DataType().(*arrow.TimestampType)
		layout := naiveLayout
		if dt.TimeZone != "" {
			layout = time.RFC3339Nano // the time is in UTC: rendered with "Z"
		}
		return func(i int) string { return a.Value(i).ToTime(dt.Unit).Format(layout) }
	case *array.Dictionary:
		dict := converter(a.Dictionary())
		return func(i int) string { return dict(a.GetValueIndex(i)) }
	case *array.List, *array.LargeList, *array.FixedSizeList, *array.ListView, *array.LargeListView, *array.Struct, *array.Map:
		return func(i int) string {
			b, err := json.Marshal(arr.GetOneForMarshal(i))
			if err != nil {
				return arr.ValueStr(i)
			}
			return string(b)
		}
	default:
		return func(i int) string { return strings.Clone(arr.ValueStr(i)) }
	}
}

func scaleOf(arr arrow.Array) int32 {
	if dt, ok := arr.DataType().(arrow.DecimalType); ok {
		return dt.GetScale()
	}
	return 0
}

// OpenLastRowGroup reads only the last row group of a local Parquet unit
// (no rows when it has a single one): gate 3 samples a file's first and
// last rows without reading what lies between.
func (s *Source) OpenLastRowGroup(ctx context.Context, u source.Unit) (source.RowReader, error) {
	rc, err := s.OpenRaw(ctx, u)
	if err != nil {
		return nil, unreadable(u.Name, "cannot open file", err)
	}
	f, ok := rc.(*os.File)
	if !ok {
		rc.Close()
		return nil, unreadable(u.Name, "not a file", nil)
	}
	rr, err := newParquetGroupsReader(ctx, f, u.Name, true)
	if err != nil {
		f.Close()
		return nil, err
	}
	return rr, nil
}
