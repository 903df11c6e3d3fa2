package sqldb

// The native PostgreSQL read path. database/sql turns every value pgx
// decoded from the wire into a driver.Value (a boxed int64, a time.Time,
// a string built through big.Int for a numeric), copies it again into an
// any, and Text then formats it: three conversions and several
// allocations per value. Here the rows are read through the pgx
// connection under the database/sql one (sql.Conn.Raw), in the extended
// protocol's binary result format pgx asks for, and each column's raw
// bytes are decoded by its type OID straight into the canonical text of
// the package doc, the values of pgFillRows rows in one string (one
// allocation per pgFillRows rows). The common types have their own decoder (int2/4/8, float4/8,
// numeric, text/varchar/bpchar/name, json/jsonb, bool, date, timestamp,
// timestamptz, uuid, bytea); any other type, any value outside a
// decoder's fast range (years outside 1..9999, infinities, NaN, numerics
// beyond the fast decoder) goes through exactly the conversion database/sql's driver does
// (pgx/v5/stdlib's per-OID value functions) and Text: the text is the
// legacy path's, byte for byte (TestPostgresNativeMatchesLegacy).
//
// The rows are decoded on a goroutine of their own, a chunk at a time, so
// decoding overlaps the loader's casting.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lima-lake/lima/engine/source"
)

// errNotPgx: the connection is not pgx's (the *sql.DB was opened with
// another driver); the reader uses database/sql.
var errNotPgx = errors.New("sqldb: not a pgx connection")

// pgxConn is what pgx/v5/stdlib's driver connection offers.
type pgxConn interface{ Conn() *pgx.Conn }

// nativeUsable reports whether conn's driver connection is pgx's.
func nativeUsable(conn *sql.Conn) bool {
	err := conn.Raw(func(dc any) error {
		if _, ok := dc.(pgxConn); !ok {
			return errNotPgx
		}
		return nil
	})
	return err == nil
}

// pgResultFormats are the types read in binary format: those
// pgx/v5/stdlib reads in binary (so their values are database/sql's),
// and numeric and uuid, whose binary decoders write PostgreSQL's text.
// Every other type comes as PostgreSQL's text, as it did through
// database/sql.
var pgResultFormats = pgx.QueryResultFormatsByOID{
	pgtype.BoolOID: 1, pgtype.ByteaOID: 1, pgtype.CIDOID: 1, pgtype.DateOID: 1,
	pgtype.Float4OID: 1, pgtype.Float8OID: 1, pgtype.Int2OID: 1, pgtype.Int4OID: 1,
	pgtype.Int8OID: 1, pgtype.OIDOID: 1, pgtype.TimestampOID: 1, pgtype.TimestamptzOID: 1,
	pgtype.XIDOID: 1, pgtype.NumericOID: 1, pgtype.UUIDOID: 1,
}

// pgKind is a column's decoder.
type pgKind uint8

const (
	pgSlow pgKind = iota // stdlib's conversion, then Text
	pgInt2
	pgInt4
	pgInt8
	pgFloat4
	pgFloat8
	pgBool
	pgRaw // text types in any format, bytea in binary: the bytes as they are
	pgNumeric
	pgDate
	pgTimestamp
	pgTimestamptz
	pgUUID
)

type pgCol struct {
	kind     pgKind
	planType string
	scale    int  // decimal scale for numeric (padScale)
	pad      bool // planType is decimal(p,s): pad to scale
	slow     func(src []byte) (driver.Value, error)
}

// pgDecoder decodes the raw values of one query's rows.
type pgDecoder struct {
	cols []pgCol
	// buf holds the texts of the rows decoded since the last fill, ends
	// the end of each of their values in buf (a row after another).
	buf  []byte
	ends []int
}

// pgFillRows is how many rows' texts share one string: one allocation per
// pgFillRows rows instead of one per row. A value kept past its row (a
// held-back row's values, a sample) keeps that string alive: at most
// pgFillRows rows of text.
const pgFillRows = 64

func newPGDecoder(m *pgtype.Map, fds []pgconnField, cols []ColumnInfo) (*pgDecoder, error) {
	if len(fds) != len(cols) {
		return nil, fmt.Errorf("sqldb: query returned %d columns, want %d", len(fds), len(cols))
	}
	d := &pgDecoder{cols: make([]pgCol, len(cols)), ends: make([]int, 0, len(cols)*pgFillRows)}
	for i, fd := range fds {
		c := pgCol{planType: cols[i].PlanType, slow: stdlibValueFunc(m, fd.oid, fd.format)}
		c.scale, c.pad = decimalScale(c.planType)
		c.kind = fastKind(fd.oid, fd.format, c.planType)
		d.cols[i] = c
	}
	return d, nil
}

type pgconnField struct {
	oid    uint32
	format int16
}

// fastKind is the decoder of a column of type oid sent in format, when its
// plan type is the one MapType gives the type (anything else: pgSlow).
func fastKind(oid uint32, format int16, planType string) pgKind {
	bin := format == pgtype.BinaryFormatCode
	switch oid {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		if planType == "string" {
			return pgRaw
		}
	case pgtype.ByteaOID:
		if bin && planType == "binary" {
			return pgRaw
		}
	case pgtype.JSONOID, pgtype.JSONBOID:
		// Sent as text (not in pgResultFormats): stdlib copies the bytes
		// and Text keeps them as they are.
		if !bin && planType == "string" {
			return pgRaw
		}
	case pgtype.Int2OID:
		if bin && planType == "int" {
			return pgInt2
		}
	case pgtype.Int4OID:
		if bin && planType == "int" {
			return pgInt4
		}
	case pgtype.Int8OID:
		if bin && planType == "long" {
			return pgInt8
		}
	case pgtype.Float4OID:
		if bin && planType == "double" {
			return pgFloat4
		}
	case pgtype.Float8OID:
		if bin && planType == "double" {
			return pgFloat8
		}
	case pgtype.BoolOID:
		if bin && planType == "boolean" {
			return pgBool
		}
	case pgtype.NumericOID:
		if _, isDec := decimalScale(planType); bin && (isDec || planType == "string") {
			return pgNumeric
		}
	case pgtype.DateOID:
		if bin && planType == "date" {
			return pgDate
		}
	case pgtype.TimestampOID:
		if bin && planType == "timestamp" {
			return pgTimestamp
		}
	case pgtype.TimestamptzOID:
		if bin && planType == "timestamptz" {
			return pgTimestamptz
		}
	case pgtype.UUIDOID:
		if bin && planType == "string" {
			return pgUUID
		}
	}
	return pgSlow
}

// stdlibValueFunc converts a column's raw value to the driver.Value
// database/sql hands out, through the codec's own DecodeDatabaseSQLValue
// (pgx's public API, which pgx/v5/stdlib's rows use too); a type the map
// does not know is scanned as text, as stdlib does.
func stdlibValueFunc(m *pgtype.Map, oid uint32, format int16) func(src []byte) (driver.Value, error) {
	if t, ok := m.TypeForOID(oid); ok {
		return func(src []byte) (driver.Value, error) { return t.Codec.DecodeDatabaseSQLValue(m, oid, format, src) }
	}
	var d string
	p := m.PlanScan(oid, format, &d)
	return func(src []byte) (driver.Value, error) { err := p.Scan(src, &d); return d, err }
}

// row decodes one row's raw values (nil: NULL) into the decoder's buffer
// and, when a value is NULL, nulls (len(d.cols), zeroed; a chunk's rows
// share one allocation of each). vals (len(d.cols)) become the row's
// Values; they are set by the next fill, which must come before the row
// is used.
func (d *pgDecoder) row(raw [][]byte, unit string, vals []string, nulls []bool) (source.Row, error) {
	row := source.Row{Kind: source.Data, Values: vals, Loc: source.Locator{Unit: unit}}
	buf, mark, nEnds := d.buf, len(d.buf), len(d.ends)
	for i, src := range raw {
		if src == nil {
			row.Nulls = nulls
			row.Nulls[i] = true
			d.ends = append(d.ends, len(buf))
			continue
		}
		var err error
		if buf, err = d.cols[i].appendText(buf, src); err != nil {
			d.buf, d.ends = buf[:mark], d.ends[:nEnds]
			return source.Row{}, fmt.Errorf("convert field %d failed: %w", i, err)
		}
		d.ends = append(d.ends, len(buf))
	}
	d.buf = buf
	return row, nil
}

// fill sets the Values of rows, the rows decoded since the last fill in
// order, from one string of their texts.
func (d *pgDecoder) fill(rows []source.Row) {
	all := string(d.buf)
	start, k := 0, 0
	for r := range rows {
		vals := rows[r].Values
		for i := range vals {
			end := d.ends[k]
			vals[i] = all[start:end]
			start, k = end, k+1
		}
	}
	d.buf, d.ends = d.buf[:0], d.ends[:0]
}

// appendText appends the canonical text of one non-null value.
func (c *pgCol) appendText(buf, src []byte) ([]byte, error) {
	switch c.kind {
	case pgRaw:
		return append(buf, src...), nil
	case pgInt2:
		if len(src) == 2 {
			return strconv.AppendInt(buf, int64(int16(binary.BigEndian.Uint16(src))), 10), nil
		}
	case pgInt4:
		if len(src) == 4 {
			return strconv.AppendInt(buf, int64(int32(binary.BigEndian.Uint32(src))), 10), nil
		}
	case pgInt8:
		if len(src) == 8 {
			return strconv.AppendInt(buf, int64(binary.BigEndian.Uint64(src)), 10), nil
		}
	case pgFloat4:
		if len(src) == 4 {
			return strconv.AppendFloat(buf, float64(math.Float32frombits(binary.BigEndian.Uint32(src))), 'f', -1, 64), nil
		}
	case pgFloat8:
		if len(src) == 8 {
			return strconv.AppendFloat(buf, math.Float64frombits(binary.BigEndian.Uint64(src)), 'f', -1, 64), nil
		}
	case pgBool:
		if len(src) == 1 {
			return strconv.AppendBool(buf, src[0] != 0), nil
		}
	case pgNumeric:
		if out, ok := appendNumeric(buf, src); ok {
			if c.pad {
				out = appendPadScale(out, len(buf), c.scale)
			}
			return out, nil
		}
	case pgDate:
		if len(src) == 4 {
			if out, ok := appendDate(buf, int64(int32(binary.BigEndian.Uint32(src)))); ok {
				return out, nil
			}
		}
	case pgTimestamp, pgTimestamptz:
		if len(src) == 8 {
			if out, ok := appendTimestamp(buf, int64(binary.BigEndian.Uint64(src)), c.kind == pgTimestamptz); ok {
				return out, nil
			}
		}
	case pgUUID:
		if len(src) == 16 {
			return appendUUID(buf, src), nil
		}
	}
	v, err := c.slow(src)
	if err != nil {
		return buf, err
	}
	if v == nil {
		// A value pgx reads as SQL NULL (it never does for a non-nil src);
		// database/sql would give nil: keep the text empty.
		return buf, nil
	}
	return append(buf, Text(c.planType, v)...), nil
}

// appendPadScale pads the decimal text buf[from:] as padScale does.
func appendPadScale(buf []byte, from, scale int) []byte {
	s := buf[from:]
	dot := -1
	for i, b := range s {
		switch b {
		case '.':
			dot = i
		case 'e', 'E':
			return buf
		}
	}
	if len(s) == 0 {
		return buf
	}
	frac := 0
	if dot >= 0 {
		frac = len(s) - dot - 1
	}
	if frac > scale {
		return buf
	}
	if scale == 0 {
		if dot >= 0 {
			return buf[:from+dot] // "12." → "12" (padScale drops an empty fraction)
		}
		return buf
	}
	if dot < 0 {
		buf = append(buf, '.')
	}
	for ; frac < scale; frac++ {
		buf = append(buf, '0')
	}
	return buf
}

// appendNumeric writes a binary numeric as PostgreSQL's numeric_out does
// (what database/sql handed out: stdlib reads numerics in text format):
// exactly dscale fraction digits. pgx's own text of a binary numeric is
// the same except for a zero with a display scale ("0" for "0.000").
// ok is false for NaN, infinities and anything unusual (the slow path
// then decides).
func appendNumeric(buf, src []byte) ([]byte, bool) {
	if len(src) < 8 {
		return buf, false
	}
	ndigits := int(binary.BigEndian.Uint16(src[0:]))
	weight := int(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	dscale := int(int16(binary.BigEndian.Uint16(src[6:])))
	if (sign != 0 && sign != 0x4000) || dscale < 0 || len(src) != 8+2*ndigits || ndigits > 64 {
		return buf, false
	}
	if ndigits == 0 {
		// Zero: PostgreSQL's own text keeps the display scale ("0.000"),
		// which database/sql saw (stdlib asks for numerics as text).
		buf = append(buf, '0')
		if dscale > 0 {
			buf = append(buf, '.')
			for range dscale {
				buf = append(buf, '0')
			}
		}
		return buf, true
	}
	// The decimal digits of every base-10000 digit, then the exponent.
	var digits [64*4 + 8]byte
	n := 0
	for i := 0; i < ndigits; i++ {
		g := binary.BigEndian.Uint16(src[8+2*i:])
		if g > 9999 {
			return buf, false
		}
		digits[n] = byte('0' + g/1000)
		digits[n+1] = byte('0' + g/100%10)
		digits[n+2] = byte('0' + g/10%10)
		digits[n+3] = byte('0' + g%10)
		n += 4
	}
	exp := (weight - ndigits + 1) * 4
	var trail int // zeros after the digits
	if dscale > 0 {
		frac := -exp
		switch {
		case dscale > frac:
			trail = dscale - frac
		case dscale < frac:
			n -= frac - dscale // truncate (pgx divides the magnitude)
			if n < 0 {
				n = 0
			}
		}
		exp = -dscale
	} else if exp >= 0 {
		trail, exp = exp, 0
	} else {
		return buf, false
	}
	d := digits[:n]
	for len(d) > 0 && d[0] == '0' {
		d = d[1:]
	}
	zero := len(d) == 0
	if zero && trail > 0 {
		trail = 0 // 0 × 10^k is "0"
	}
	if sign == 0x4000 && !zero {
		buf = append(buf, '-')
	}
	intLen := len(d) + trail // the digits of the integer mantissa
	if zero {
		intLen = 1
	}
	appendMantissa := func(b []byte, from, to int) []byte {
		// Mantissa digits [from, to): d, then trail zeros; "0" when zero.
		for k := from; k < to; k++ {
			switch {
			case zero:
				b = append(b, '0')
			case k < len(d):
				b = append(b, d[k])
			default:
				b = append(b, '0')
			}
		}
		return b
	}
	if exp == 0 {
		return appendMantissa(buf, 0, intLen), true
	}
	f := -exp
	if intLen <= f {
		buf = append(buf, '0', '.')
		for k := 0; k < f-intLen; k++ {
			buf = append(buf, '0')
		}
		return appendMantissa(buf, 0, intLen), true
	}
	buf = appendMantissa(buf, 0, intLen-f)
	buf = append(buf, '.')
	return appendMantissa(buf, intLen-f, intLen), true
}

// pgEpochDays is 2000-01-01 in days since 1970-01-01; pgEpochMicros the
// same instant in microseconds.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1_000_000
	// Days since 1970 of 0001-01-01 and of 10000-01-01: the fast range.
	minFastDays = -719162
	maxFastDays = 2932897
)

// civil is the proleptic Gregorian date of days since 1970-01-01
// (H. Hinnant's algorithm), as Go's time package computes it.
func civil(z int64) (y int64, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func appendYMD(b []byte, days int64) []byte {
	y, m, d := civil(days)
	yy := int(y)
	b = append(b, byte('0'+yy/1000), byte('0'+yy/100%10), byte('0'+yy/10%10), byte('0'+yy%10), '-')
	b = append2(b, m)
	b = append(b, '-')
	return append2(b, d)
}

// appendDate writes days since 2000-01-01 as yyyy-MM-dd (years 1..9999).
func appendDate(buf []byte, pgDays int64) ([]byte, bool) {
	days := pgDays + pgEpochDays
	if days < minFastDays || days >= maxFastDays {
		return buf, false
	}
	return appendYMD(buf, days), true
}

// appendTimestamp writes microseconds since 2000-01-01 as
// 2006-01-02T15:04:05.000000 (…Z when zoned: the instant in UTC).
func appendTimestamp(buf []byte, pgMicros int64, zoned bool) ([]byte, bool) {
	const dayMicros = 86400 * 1_000_000
	if pgMicros < (minFastDays-pgEpochDays)*dayMicros || pgMicros >= (maxFastDays-pgEpochDays)*dayMicros {
		return buf, false
	}
	us := pgMicros + pgEpochMicros
	days := us / dayMicros
	rem := us % dayMicros
	if rem < 0 {
		days--
		rem += dayMicros
	}
	buf = appendYMD(buf, days)
	sec := int(rem / 1_000_000)
	frac := int(rem % 1_000_000)
	buf = append(buf, 'T')
	buf = append2(buf, sec/3600)
	buf = append(buf, ':')
	buf = append2(buf, sec/60%60)
	buf = append(buf, ':')
	buf = append2(buf, sec%60)
	buf = append(buf, '.',
		byte('0'+frac/100000), byte('0'+frac/10000%10), byte('0'+frac/1000%10),
		byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10))
	if zoned {
		buf = append(buf, 'Z')
	}
	return buf, true
}

func appendUUID(buf, src []byte) []byte {
	const hexd = "0123456789abcdef"
	for i, b := range src {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf = append(buf, '-')
		}
		buf = append(buf, hexd[b>>4], hexd[b&15])
	}
	return buf
}

// streamPG runs q on conn's pgx connection and sends its rows in chunks
// until the end, an error, or stop. ctx bounds the query (a range reader's
// context; a serial read passes context.Background() and stops through
// stop, so that closing early drains the rows as database/sql did and the
// snapshot connection stays usable for its ROLLBACK).
func (r *Reader) streamPG(ctx context.Context, conn *sql.Conn, q string, args []any, ch chan<- parItem, stop <-chan struct{}) {
	send := func(it parItem) bool {
		select {
		case ch <- it:
			return true
		case <-stop:
			return false
		}
	}
	stopped, started := false, false
	err := conn.Raw(func(dc any) error {
		pc, ok := dc.(pgxConn)
		if !ok {
			return errNotPgx
		}
		c := pc.Conn()
		rows, err := c.Query(ctx, q, append([]any{pgResultFormats}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		fds := rows.FieldDescriptions()
		fields := make([]pgconnField, len(fds))
		for i, fd := range fds {
			fields[i] = pgconnField{oid: fd.DataTypeOID, format: fd.Format}
		}
		dec, err := newPGDecoder(c.TypeMap(), fields, r.cols)
		if err != nil {
			return err
		}
		started = true
		const chunkRows = 1024
		n := len(r.cols)
		var chunk []source.Row
		var vals []string
		var nulls []bool
		for rows.Next() {
			if len(chunk) == 0 {
				chunk = make([]source.Row, 0, chunkRows)
				vals = make([]string, chunkRows*n)
				nulls = make([]bool, chunkRows*n)
			}
			k := len(chunk) * n
			row, err := dec.row(rows.RawValues(), r.unit, vals[k:k+n:k+n], nulls[k:k+n:k+n])
			if err != nil {
				return err
			}
			chunk = append(chunk, row)
			if len(chunk)%pgFillRows == 0 {
				dec.fill(chunk[len(chunk)-pgFillRows:])
			}
			if len(chunk) == chunkRows {
				if !send(parItem{rows: chunk}) {
					stopped = true
					return nil
				}
				chunk = nil
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		dec.fill(chunk[len(chunk)/pgFillRows*pgFillRows:])
		if len(chunk) > 0 && !send(parItem{rows: chunk}) {
			stopped = true
		}
		return nil
	})
	if err != nil && !stopped {
		send(parItem{err: err, start: !started})
	}
}

// startSerialPG starts the serial read of the table through the native
// path: one range, the whole read, on the snapshot connection itself.
func (r *Reader) startSerialPG() error {
	q, args, err := r.Query()
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	pr := &parallelRead{serial: true}
	var once bool
	pr.cancel = func() {
		if !once {
			once = true
			close(stop)
		}
	}
	ch := make(chan parItem, 4)
	pr.chans = []chan parItem{ch}
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		defer close(ch)
		r.streamPG(context.Background(), r.conn, q, args, ch, stop)
	}()
	r.par = pr
	return nil
}
