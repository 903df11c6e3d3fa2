package files

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/golang/snappy"
	"github.com/hamba/avro/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/lima-lake/lima/engine/source"
)

// Avro object container files.
//
// The container's framing — the header (magic, metadata, sync marker) and
// the blocks (record count, byte size, data, sync marker) — is read here,
// so that every size a file declares is checked before anything is
// allocated for it: a block is at most twice the unit's record limit
// (Options.MaxRecordBytes, 16 MiB by default; at least 8 MiB) as stored and
// again once decompressed, a block cannot claim more records than
// its bytes can hold, and a string or bytes value is at most the unit's
// record limit (Options.MaxRecordBytes). The records inside a block are
// decoded by hamba/avro against the writer's schema from the header.
// Codecs: null, deflate, snappy (with its CRC-32) and zstandard.
//
// Values are rendered as canonical text, as for Parquet:
//
//   - int and long: decimal text; float and double: the shortest text that
//     round-trips (NaN, +Inf, -Inf); boolean "true"/"false";
//   - string and enum: as stored; bytes and fixed: standard base64;
//   - decimal (bytes or fixed): exact decimal text with all scale digits
//     ("-150.000");
//   - date: "2006-01-02"; time-millis/micros: "15:04:05.999999999";
//   - timestamp-millis/micros: RFC 3339 in UTC with "Z" (an instant);
//     local-timestamp-millis/micros: the same without a zone (naive);
//   - uuid: as stored; duration: compact JSON of months, days, milliseconds;
//   - arrays, maps and records: compact JSON (keys sorted), their values
//     rendered by the same rules;
//   - null, and the null branch of a union: Nulls[i] = true.
//
// The top-level schema must be a record; its fields are the columns.
// Loc.Row is the 1-based record number, Loc.Line 0 and Raw nil. A file
// that is not an Avro container, or is cut short, or whose data does not
// decode, is unreadable (a file-level exception).

const (
	avroMinBlockLimit = 8 << 20 // the least a block may hold, stored or decompressed
	avroMaxMeta       = 1 << 20 // the header's metadata
)

var avroMagic = []byte{'O', 'b', 'j', 1}

type avroReader struct {
	ctx     context.Context
	name    string
	br      *bufio.Reader
	cl      closer
	columns []string
	fields  []*avro.Field
	schema  *avro.RecordSchema
	api     avro.API
	sync    [16]byte
	codec   string
	zdec    *zstd.Decoder
	minRec  int // the fewest bytes a record can take
	// maxBlock bounds a block, stored and decompressed.
	maxBlock int

	stored  []byte // the current block as stored (reused)
	decoded []byte // and decompressed
	dec     *avro.Decoder
	left    int64 // records left in the current block
	blocks  int
	row     int64
	rec     map[string]any
	err     error
	closed  bool
}

func newAvroReader(ctx context.Context, r io.Reader, name string, opts source.Options) (source.RowReader, error) {
	a := &avroReader{ctx: ctx, name: name, br: bufio.NewReaderSize(r, 256<<10)}
	if rc, ok := r.(io.Closer); ok {
		a.cl.c = rc
	}
	if err := a.readHeader(opts); err != nil {
		return nil, err
	}
	if f, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		// A file (a local one, or an object spooled to one): its framing is
		// checked to the last byte before any row is given, so a file cut
		// short or damaged between blocks is held whole, not half loaded.
		pos, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, a.bad("cannot seek in the file", err)
		}
		end, err := f.Seek(0, io.SeekEnd)
		if err == nil {
			_, err = f.Seek(pos, io.SeekStart)
		}
		if err != nil {
			return nil, a.bad("cannot seek in the file", err)
		}
		rows, err := a.scanFrames(f, pos-int64(a.br.Buffered()), end)
		if err != nil {
			return nil, err
		}
		return &countedAvro{a, rows}, nil
	}
	return a, nil
}

// countedAvro is the reader of an Avro file whose blocks were counted.
type countedAvro struct {
	*avroReader
	rows int64
}

// NumRows is the number of records the file's blocks declare: readers with
// it let the sampler count a file's rows without reading them (as for
// Parquet).
func (c *countedAvro) NumRows() int64 { return c.rows }

// scanFrames walks the blocks from off to end without reading their data:
// every block's declared sizes, its sync marker and the end of the last one
// at the end of the file. It returns the records the blocks declare.
func (a *avroReader) scanFrames(ra io.ReaderAt, off, end int64) (int64, error) {
	var rows int64
	head := make([]byte, 2*binary.MaxVarintLen64)
	var sync [16]byte
	for block := 1; off < end; block++ {
		where := fmt.Sprintf("block %d (after row %d)", block, rows)
		n, err := ra.ReadAt(head, off)
		if n == 0 {
			return 0, a.bad("truncated Avro file: "+where+" is cut short", err)
		}
		count, c1 := binary.Varint(head[:n])
		size, c2 := int64(0), 0
		if c1 > 0 {
			size, c2 = binary.Varint(head[c1:n])
		}
		if c1 <= 0 || c2 <= 0 {
			return 0, a.bad("truncated Avro file: "+where+" is cut short", nil)
		}
		if count < 0 || size < 0 || size > int64(a.maxBlock) {
			return 0, a.bad(fmt.Sprintf("corrupt Avro file: %s declares %d records in %d bytes (at most %d bytes are read)", where, count, size, a.maxBlock), nil)
		}
		off += int64(c1+c2) + size
		if off+16 > end {
			return 0, a.bad("truncated Avro file: "+where+" is cut short", nil)
		}
		if _, err := ra.ReadAt(sync[:], off); err != nil {
			return 0, a.bad("cannot read the file", err)
		}
		if sync != a.sync {
			return 0, a.bad("corrupt Avro file: "+where+" ends without the file's sync marker", nil)
		}
		off += 16
		rows += count
	}
	return rows, nil
}

// bad is the unit's unreadable error. An end of input inside the file is
// never passed on as io.EOF, which a caller would take for the file's end.
func (a *avroReader) bad(reason string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return unreadable(a.name, reason, err)
}

func (a *avroReader) readHeader(opts source.Options) error {
	magic := make([]byte, 4)
	if _, err := io.ReadFull(a.br, magic); err != nil || !bytes.Equal(magic, avroMagic) {
		return a.bad("not an Avro object container file (no \"Obj\\x01\" at its start)", nil)
	}
	meta := map[string][]byte{}
	total := 0
	for {
		n, err := a.readLong()
		if err != nil {
			return a.bad("truncated Avro header", err)
		}
		if n == 0 {
			break
		}
		if n < 0 {
			n = -n
			if _, err := a.readLong(); err != nil { // the block's byte size
				return a.bad("truncated Avro header", err)
			}
		}
		for ; n > 0; n-- {
			k, err := a.readBytes(avroMaxMeta - total)
			if err != nil {
				return a.headerErr(err)
			}
			v, err := a.readBytes(avroMaxMeta - total - len(k))
			if err != nil {
				return a.headerErr(err)
			}
			total += len(k) + len(v)
			meta[string(k)] = v
		}
	}
	if _, err := io.ReadFull(a.br, a.sync[:]); err != nil {
		return a.bad("truncated Avro header (no sync marker)", err)
	}
	maxValue := recordLimit(opts, readerConfig{maxRecord: source.DefaultMaxRecordBytes})
	a.maxBlock = max(avroMinBlockLimit, 2*maxValue)
	switch c := string(meta["avro.codec"]); c {
	case "", "null":
		a.codec = "null"
	case "deflate", "snappy":
		a.codec = c
	case "zstandard":
		a.codec = c
		d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(a.maxBlock)), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return a.bad("cannot start the zstandard decoder", err)
		}
		a.zdec = d
	default:
		return a.bad(fmt.Sprintf("Avro codec %q is not supported (null, deflate, snappy, zstandard are)", c), nil)
	}
	// A fresh cache per file: named types of one file never meet another's.
	sch, err := avro.ParseWithCache(string(meta["avro.schema"]), "", &avro.SchemaCache{})
	if err != nil {
		return a.bad("the Avro schema in the header does not parse", err)
	}
	rs, ok := sch.(*avro.RecordSchema)
	if !ok {
		return a.bad(fmt.Sprintf("the Avro schema is a %s, not a record: there are no columns to read", sch.Type()), nil)
	}
	a.schema, a.fields = rs, rs.Fields()
	for _, f := range a.fields {
		a.columns = append(a.columns, f.Name())
	}
	a.minRec = avroMinSize(rs, 0)
	if a.minRec == 0 {
		return a.bad("every field of the Avro schema is null: its records hold no value", nil)
	}
	a.api = avro.Config{MaxByteSliceSize: maxValue, MaxSliceAllocSize: a.maxBlock}.Freeze()
	return nil
}

func (a *avroReader) headerErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return a.bad("truncated Avro header", err)
	}
	return a.bad("bad Avro header metadata", err)
}

// readLong reads one zig-zag varint long of the framing.
func (a *avroReader) readLong() (int64, error) {
	u, err := binary.ReadUvarint(a.br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

func (a *avroReader) readBytes(max int) ([]byte, error) {
	n, err := a.readLong()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(max) {
		return nil, fmt.Errorf("a length of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(a.br, b); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return b, nil
}

// Columns returns the record schema's field names.
func (a *avroReader) Columns() []string { return a.columns }

// nextBlock reads the next block; io.EOF at the end of the file.
func (a *avroReader) nextBlock() error {
	if _, err := a.br.Peek(1); errors.Is(err, io.EOF) {
		return io.EOF
	}
	a.blocks++
	where := fmt.Sprintf("block %d (after row %d)", a.blocks, a.row)
	count, err := a.readLong()
	if err != nil {
		return a.bad("truncated Avro file: "+where+" is cut short", err)
	}
	size, err := a.readLong()
	if err != nil {
		return a.bad("truncated Avro file: "+where+" is cut short", err)
	}
	if count < 0 || size < 0 || size > int64(a.maxBlock) {
		return a.bad(fmt.Sprintf("corrupt Avro file: %s declares %d records in %d bytes (at most %d bytes are read)", where, count, size, a.maxBlock), nil)
	}
	if cap(a.stored) < int(size) {
		a.stored = make([]byte, size)
	}
	a.stored = a.stored[:size]
	if _, err := io.ReadFull(a.br, a.stored); err != nil {
		return a.bad("truncated Avro file: "+where+" is cut short", err)
	}
	var sync [16]byte
	if _, err := io.ReadFull(a.br, sync[:]); err != nil {
		return a.bad("truncated Avro file: "+where+" has no sync marker", err)
	}
	if sync != a.sync {
		return a.bad("corrupt Avro file: "+where+" ends without the file's sync marker", nil)
	}
	data, err := a.decompress(a.stored)
	if err != nil {
		return a.bad("corrupt Avro file: "+where+" does not decompress", err)
	}
	if count > int64(len(data)/a.minRec) {
		return a.bad(fmt.Sprintf("corrupt Avro file: %s declares %d records in %d bytes", where, count, len(data)), nil)
	}
	a.left = count
	a.dec = a.api.NewDecoder(a.schema, bytes.NewReader(data))
	return nil
}

func (a *avroReader) decompress(b []byte) ([]byte, error) {
	switch a.codec {
	case "deflate":
		// Grown by hand up to the limit: a buffer doubling past it would
		// hold twice the limit for a block that is refused.
		fr := flate.NewReader(bytes.NewReader(b))
		out := a.decoded[:0]
		for {
			if len(out) == cap(out) {
				if len(out) > a.maxBlock {
					return a.keepDecoded(out)
				}
				grown := make([]byte, len(out), min(max(2*cap(out), 64<<10), a.maxBlock+1))
				copy(grown, out)
				out = grown
			}
			n, err := fr.Read(out[len(out):cap(out)])
			out = out[:len(out)+n]
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
		}
		return a.keepDecoded(out)
	case "snappy":
		if len(b) < 4 {
			return nil, errors.New("no snappy checksum")
		}
		n, err := snappy.DecodedLen(b[:len(b)-4])
		if err != nil {
			return nil, err
		}
		if n > a.maxBlock {
			return nil, fmt.Errorf("%d bytes once decompressed (at most %d)", n, a.maxBlock)
		}
		if cap(a.decoded) < n {
			a.decoded = make([]byte, n)
		}
		out, err := snappy.Decode(a.decoded[:n], b[:len(b)-4])
		if err != nil {
			return nil, err
		}
		if crc32.ChecksumIEEE(out) != binary.BigEndian.Uint32(b[len(b)-4:]) {
			return nil, errors.New("snappy checksum mismatch")
		}
		return out, nil
	case "zstandard":
		out, err := a.zdec.DecodeAll(b, a.decoded[:0])
		if err != nil {
			return nil, err
		}
		return a.keepDecoded(out)
	}
	return b, nil
}

// keepDecoded keeps a decompressed block's buffer for the next block, or
// refuses a block larger than the bound.
func (a *avroReader) keepDecoded(out []byte) ([]byte, error) {
	if len(out) > a.maxBlock {
		return nil, fmt.Errorf("more than %d bytes once decompressed", a.maxBlock)
	}
	a.decoded = out
	return out, nil
}

// Next returns the next record.
func (a *avroReader) Next() (row source.Row, err error) {
	if a.err != nil {
		return source.Row{}, a.err
	}
	defer func() {
		if r := recover(); r != nil {
			a.err = a.bad(fmt.Sprintf("corrupt Avro data after row %d: %v", a.row, r), nil)
			row, err = source.Row{}, a.err
		}
	}()
	for a.left == 0 {
		if err := a.ctx.Err(); err != nil {
			a.err = fmt.Errorf("files: %s: %w", a.name, err)
			return source.Row{}, a.err
		}
		if err := a.nextBlock(); err != nil {
			a.err = err
			return source.Row{}, err
		}
	}
	if a.row%4096 == 0 {
		if err := a.ctx.Err(); err != nil {
			a.err = fmt.Errorf("files: %s: %w", a.name, err)
			return source.Row{}, a.err
		}
	}
	if a.rec == nil {
		a.rec = make(map[string]any, len(a.fields))
	}
	if err := a.dec.Decode(&a.rec); err != nil {
		a.err = a.bad(fmt.Sprintf("corrupt Avro data after row %d", a.row), err)
		return source.Row{}, a.err
	}
	a.left--
	a.row++
	row = source.Row{Kind: source.Data, Values: make([]string, len(a.fields)), Loc: source.Locator{Unit: a.name, Row: a.row}}
	for c, f := range a.fields {
		s, null := avroText(a.rec[f.Name()], f.Type())
		if null {
			if row.Nulls == nil {
				row.Nulls = make([]bool, len(a.fields))
			}
			row.Nulls[c] = true
			continue
		}
		row.Values[c] = s
	}
	return row, nil
}

// Close closes the file; it is idempotent.
func (a *avroReader) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	if a.err == nil || errors.Is(a.err, io.EOF) {
		a.err = errClosed
	}
	if a.zdec != nil {
		a.zdec.Close()
	}
	a.stored, a.decoded, a.dec, a.rec = nil, nil, nil, nil
	return a.cl.close()
}

// avroMinSize is the fewest bytes a value of the schema is encoded in.
func avroMinSize(s avro.Schema, depth int) int {
	if depth > 64 {
		return 0
	}
	switch s.Type() {
	case avro.Null:
		return 0
	case avro.Float:
		return 4
	case avro.Double:
		return 8
	case avro.Fixed:
		return s.(*avro.FixedSchema).Size()
	case avro.Record:
		n := 0
		for _, f := range s.(*avro.RecordSchema).Fields() {
			n += avroMinSize(f.Type(), depth+1)
		}
		return n
	case avro.Ref:
		return avroMinSize(s.(*avro.RefSchema).Schema(), depth+1)
	}
	return 1 // boolean, int, long, string, bytes, enum, union index, array and map counts
}

// branch is the schema a decoded union value came from: the only non-null
// branch, else the first whose Go type matches v's, else nil.
func branch(u *avro.UnionSchema, v any) avro.Schema {
	var only avro.Schema
	n := 0
	for _, t := range u.Types() {
		if t.Type() != avro.Null {
			only, n = t, n+1
		}
	}
	if n == 1 {
		return only
	}
	for _, t := range u.Types() {
		if t.Type() != avro.Null && avroGoMatches(t, v) {
			return t
		}
	}
	return nil
}

func avroGoMatches(t avro.Schema, v any) bool {
	if r, ok := t.(*avro.RefSchema); ok {
		t = r.Schema()
	}
	switch v.(type) {
	case bool:
		return t.Type() == avro.Boolean
	case int:
		return t.Type() == avro.Int
	case int64:
		return t.Type() == avro.Long
	case float32:
		return t.Type() == avro.Float
	case float64:
		return t.Type() == avro.Double
	case string:
		return t.Type() == avro.String || t.Type() == avro.Enum
	case []byte:
		return t.Type() == avro.Bytes
	case time.Time, time.Duration, *big.Rat, avro.LogicalDuration:
		return logicalOf(t) != ""
	case []any:
		return t.Type() == avro.Array
	case map[string]any:
		return t.Type() == avro.Record || t.Type() == avro.Map
	}
	return t.Type() == avro.Fixed
}

func logicalOf(s avro.Schema) avro.LogicalType {
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		return l.Logical().Type()
	}
	return ""
}

// avroText renders a decoded value of schema s as canonical text.
func avroText(v any, s avro.Schema) (string, bool) {
	if v == nil {
		return "", true
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		s = branch(u, v)
	}
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	switch x := v.(type) {
	case string:
		return x, false
	case bool:
		return strconv.FormatBool(x), false
	case int:
		return strconv.Itoa(x), false
	case int64:
		return strconv.FormatInt(x, 10), false
	case float32:
		return formatFloat(float64(x), 32), false
	case float64:
		return formatFloat(x, 64), false
	case []byte:
		return base64.StdEncoding.EncodeToString(x), false
	case time.Time:
		switch lt := logicalOf(s); {
		case lt == avro.Date:
			return x.UTC().Format(time.DateOnly), false
		case lt == avro.LocalTimestampMillis || lt == avro.LocalTimestampMicros:
			return x.UTC().Format(naiveLayout), false
		}
		return x.UTC().Format(time.RFC3339Nano), false
	case time.Duration:
		return time.Time{}.Add(x).Format("15:04:05.999999999"), false
	case *big.Rat:
		scale := -1
		if l, ok := s.(avro.LogicalTypeSchema); ok {
			if d, ok := l.Logical().(*avro.DecimalLogicalSchema); ok {
				scale = d.Scale()
			}
		}
		return ratText(x, scale), false
	case avro.LogicalDuration:
		return fmt.Sprintf(`{"days":%d,"milliseconds":%d,"months":%d}`, x.Days, x.Milliseconds, x.Months), false
	case []any, map[string]any:
		b, err := json.Marshal(avroPlain(v, s, 0))
		if err != nil {
			return fmt.Sprint(v), false
		}
		return string(b), false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return base64.StdEncoding.EncodeToString(b), false
	}
	return fmt.Sprint(v), false
}

// avroPlain turns a nested value into one encoding/json renders by the
// rules of avroText (numbers stay numbers, decimals exact).
func avroPlain(v any, s avro.Schema, depth int) any {
	if v == nil || depth > 64 {
		return nil
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		s = branch(u, v)
	}
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	switch x := v.(type) {
	case []any:
		var items avro.Schema
		if a, ok := s.(*avro.ArraySchema); ok {
			items = a.Items()
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = avroPlain(e, items, depth+1)
		}
		return out
	case map[string]any:
		fieldType := map[string]avro.Schema{}
		var values avro.Schema
		switch t := s.(type) {
		case *avro.RecordSchema:
			for _, f := range t.Fields() {
				fieldType[f.Name()] = f.Type()
			}
		case *avro.MapSchema:
			values = t.Values()
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(x))
		for _, k := range keys {
			ft := values
			if t, ok := fieldType[k]; ok {
				ft = t
			}
			out[k] = avroPlain(x[k], ft, depth+1)
		}
		return out
	case int, int64, bool, string:
		return x
	case float32, float64:
		f := reflect.ValueOf(x).Float()
		if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
			t, _ := avroText(x, s)
			return t // NaN and the infinities have no JSON number
		}
		t, _ := avroText(x, s)
		return json.Number(t)
	case *big.Rat:
		t, _ := avroText(x, s)
		return json.Number(t)
	}
	t, _ := avroText(v, s)
	return t
}

// ratText is a decimal's exact text with scale digits after the point; with
// scale < 0, as many as the value needs.
func ratText(r *big.Rat, scale int) string {
	if scale < 0 {
		scale = 0
		den := new(big.Int).Set(r.Denom())
		ten := big.NewInt(10)
		for den.Cmp(big.NewInt(1)) != 0 && scale < 100 {
			g := new(big.Int).GCD(nil, nil, den, ten)
			if g.Cmp(big.NewInt(1)) == 0 {
				break // not a finite decimal: rounded at 100 digits
			}
			den.Quo(den, g)
			scale++
		}
	}
	s := r.FloatString(scale)
	if strings.HasPrefix(s, "-") && strings.Trim(s[1:], "0.") == "" {
		s = s[1:] // -0.000 is 0.000
	}
	return s
}
