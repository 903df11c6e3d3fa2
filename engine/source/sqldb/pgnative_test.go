package sqldb

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
)

// pgGenCol is a column of the generated table: its type, and per row the
// SQL literal inserted (nil: NULL) and the canonical text Lima must read
// back, computed here from the generated value, not by the reader.
type pgGenCol struct {
	name, sqlType string
}

var pgGenCols = []pgGenCol{
	{"id", "bigint PRIMARY KEY"}, {"i2", "smallint"}, {"i4", "integer"}, {"i8", "bigint"},
	{"f4", "real"}, {"f8", "double precision"}, {"dec", "numeric(12,2)"}, {"dec38", "numeric(38,10)"},
	{"num", "numeric"}, {"txt", "text"}, {"vc", "varchar(20)"}, {"bp", "char(5)"}, {"ok", "boolean"},
	{"d", "date"}, {"ts", "timestamp"}, {"tstz", "timestamptz"}, {"u", "uuid"}, {"b", "bytea"},
	{"j", "jsonb"}, {"tod", "time"}, {"m", "money"}, {"arr", "integer[]"}, {"js", "json"},
}

type genCell struct {
	lit  string // SQL literal; "" = NULL
	want string
}

func lit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// decText is the canonical text of unscaled/10^scale.
func decText(unscaled *big.Int, scale int) string {
	neg := unscaled.Sign() < 0
	s := new(big.Int).Abs(unscaled).String()
	for len(s) <= scale {
		s = "0" + s
	}
	if scale > 0 {
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// pgGenRows generates n random rows and then the edge rows; each cell has
// its literal and its expected text.
func pgGenRows(n int) [][]genCell {
	rng := rand.New(rand.NewPCG(15, 4))
	null := genCell{}
	maybe := func(c genCell) genCell {
		if rng.IntN(8) == 0 {
			return null
		}
		return c
	}
	var rows [][]genCell
	base := time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		i2 := int16(rng.IntN(65536) - 32768)
		i4 := int32(rng.Uint32())
		i8 := int64(rng.Uint64())
		f4 := float32(rng.NormFloat64() * 1e3)
		f8 := rng.NormFloat64() * 1e6
		dec := big.NewInt(rng.Int64N(2e12) - 1e12) // 12 digits
		dec38, _ := new(big.Int).SetString(fmt.Sprintf("%019d%019d", rng.Uint64N(1e19), rng.Uint64N(1e19)), 10)
		dec38.Div(dec38, big.NewInt(int64(rng.IntN(1e6)+1)))
		if rng.IntN(2) == 0 {
			dec38.Neg(dec38)
		}
		numScale := rng.IntN(6)
		num := big.NewInt(rng.Int64N(1e15) - 5e14)
		txt := fmt.Sprintf("text %d ü 'q' \"dq\" %x", i, rng.Uint32())
		vc := fmt.Sprintf("v%d", rng.IntN(1e6))
		bp := fmt.Sprintf("%d", rng.IntN(1000))
		d := base.AddDate(0, 0, rng.IntN(60000))
		ts := base.Add(time.Duration(rng.Int64N(3e9)) * time.Second).Add(time.Duration(rng.IntN(1e6)) * time.Microsecond)
		tz := time.FixedZone("", (rng.IntN(27)-12)*3600)
		tstz := ts.Add(time.Duration(rng.Int64N(1e6)) * time.Second).In(tz)
		var u [16]byte
		for k := range u {
			u[k] = byte(rng.UintN(256))
		}
		us := hex.EncodeToString(u[:4]) + "-" + hex.EncodeToString(u[4:6]) + "-" + hex.EncodeToString(u[6:8]) + "-" + hex.EncodeToString(u[8:10]) + "-" + hex.EncodeToString(u[10:])
		b := make([]byte, rng.IntN(20))
		for k := range b {
			b[k] = byte(rng.UintN(256))
		}
		tod := fmt.Sprintf("%02d:%02d:%02d", rng.IntN(24), rng.IntN(60), rng.IntN(60))
		cents := rng.Int64N(1e9) - 5e8
		ok := rng.IntN(2) == 0
		rows = append(rows, []genCell{
			{strconv.Itoa(i), strconv.Itoa(i)},
			maybe(genCell{strconv.Itoa(int(i2)), strconv.Itoa(int(i2))}),
			maybe(genCell{strconv.Itoa(int(i4)), strconv.Itoa(int(i4))}),
			maybe(genCell{strconv.FormatInt(i8, 10), strconv.FormatInt(i8, 10)}),
			// float4 is widened to double: its text is the float64's shortest.
			maybe(genCell{strconv.FormatFloat(float64(f4), 'g', -1, 32) + "::real", strconv.FormatFloat(float64(f4), 'f', -1, 64)}),
			maybe(genCell{strconv.FormatFloat(f8, 'g', -1, 64), strconv.FormatFloat(f8, 'f', -1, 64)}),
			maybe(genCell{decText(dec, 2), decText(dec, 2)}),
			maybe(genCell{decText(dec38, 10), decText(dec38, 10)}),
			maybe(genCell{decText(num, numScale), decText(num, numScale)}),
			maybe(genCell{lit(txt), txt}),
			maybe(genCell{lit(vc), vc}),
			maybe(genCell{lit(bp), bp + strings.Repeat(" ", 5-len(bp))}),
			maybe(genCell{strconv.FormatBool(ok), strconv.FormatBool(ok)}),
			maybe(genCell{lit(d.Format("2006-01-02")), d.Format("2006-01-02")}),
			maybe(genCell{lit(ts.Format("2006-01-02 15:04:05.999999")), ts.Format("2006-01-02T15:04:05.000000")}),
			maybe(genCell{lit(tstz.Format("2006-01-02 15:04:05.999999-07:00")), tstz.UTC().Format("2006-01-02T15:04:05.000000Z")}),
			maybe(genCell{lit(us), us}),
			maybe(genCell{lit(`\x` + hex.EncodeToString(b)), string(b)}),
			maybe(genCell{lit(fmt.Sprintf(`{"i": %d}`, i)), fmt.Sprintf(`{"i": %d}`, i)}),
			maybe(genCell{lit(tod), tod}),
			maybe(genCell{decText(big.NewInt(cents), 2), decText(big.NewInt(cents), 2)}),
			maybe(genCell{lit(fmt.Sprintf("{%d,%d}", i, -i)), fmt.Sprintf("[%d,%d]", i, -i)}),
			// json keeps its text as written (spaces, key order, escapes).
			// (NULL every 8th row, without drawing from rng: the other
			// columns' values stay as they were.)
			map[bool]genCell{false: {lit(fmt.Sprintf(`{ "z" : %d,"a":[ %q ] }`, i, txt)), fmt.Sprintf(`{ "z" : %d,"a":[ %q ] }`, i, txt)}, true: null}[i%8 == 0],
		})
	}
	// Edge rows: every column at its edges, by hand.
	e := func(l, w string) genCell { return genCell{l, w} }
	edge := [][]genCell{
		{e("", ""), e("-32768", "-32768"), e("-2147483648", "-2147483648"), e("-9223372036854775808", "-9223372036854775808"),
			e("'NaN'::real", "NaN"), e("'-Infinity'", "-Inf"), e("'NaN'", "NaN.00"), e("0", "0.0000000000"),
			e("'NaN'", "NaN"), e("''", ""), e("''", ""), e("''", "     "), e("false", "false"),
			e("'-infinity'", "-infinity"), e("'-infinity'", "-infinity"), e("'-infinity'", "-infinity"),
			e("'00000000-0000-0000-0000-000000000000'", "00000000-0000-0000-0000-000000000000"), e(`'\x'`, ""),
			e("'null'", "null"), e("'00:00:00'", "00:00:00"), e("'-92233720368547758.08'", "-92233720368547758.08"), e("'{}'", "[]")},
		{e("", ""), e("32767", "32767"), e("2147483647", "2147483647"), e("9223372036854775807", "9223372036854775807"),
			e("'Infinity'::real", "+Inf"), e("'-0'", "-0"), e("9999999999.99", "9999999999.99"),
			e("9999999999999999999999999999.9999999999", "9999999999999999999999999999.9999999999"),
			e("'Infinity'", "Infinity"), e("E'\\t tab\\u00e9 \\U0001F600'", "\t tabé \U0001F600"), e("'12345678901234567890'", "12345678901234567890"),
			e("'abcde'", "abcde"), e("true", "true"),
			e("'infinity'", "infinity"), e("'infinity'", "infinity"), e("'infinity'", "infinity"),
			e("'ffffffff-ffff-ffff-ffff-ffffffffffff'", "ffffffff-ffff-ffff-ffff-ffffffffffff"), e(`'\x00ff41'`, "\x00\xffA"),
			e(`'[1, "a"]'`, `[1, "a"]`), e("'23:59:59.999999'", "23:59:59.999999"), e("'92233720368547758.07'", "92233720368547758.07"), e("NULL", "")},
		{e("", ""), e("0", "0"), e("0", "0"), e("0", "0"),
			e("0.1::real", strconv.FormatFloat(float64(float32(0.1)), 'f', -1, 64)), e("1e300", "1"+strings.Repeat("0", 300)), e("-0.01", "-0.01"),
			e("0.0000000001", "0.0000000001"), e("'-Infinity'", "-Infinity"), e("'NULL'", "NULL"), e("' x '", " x "), e("'a'", "a    "), e("NULL", ""),
			e("'0001-01-01'", "0001-01-01"), e("'0001-01-01 00:00:00'", "0001-01-01T00:00:00.000000"), e("'0001-01-01 00:00:00+00'", "0001-01-01T00:00:00.000000Z"),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("0", "0.00"), e("'{NULL,1}'", "[null,1]")},
		{e("", ""), e("-1", "-1"), e("-1", "-1"), e("-1", "-1"),
			e("'-0'::real", "-0"), e("5e-324", "0."+strings.Repeat("0", 323)+"5"), e("0.5", "0.50"),
			e("-0.5", "-0.5000000000"), e("1000000", "1000000"), e("'x'", "x"), e("NULL", ""), e("NULL", ""), e("NULL", ""),
			e("'9999-12-31'", "9999-12-31"), e("'9999-12-31 23:59:59.999999'", "9999-12-31T23:59:59.999999"), e("'9999-12-31 23:59:59.999999-01'", "10000-01-01T00:59:59.999999Z"),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", "")},
		{e("", ""), e("1", "1"), e("1", "1"), e("1", "1"),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("0.000", "0.000"), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""),
			e("'2000-01-01'", "2000-01-01"), e("'1999-12-31 23:59:59.999999'", "1999-12-31T23:59:59.999999"), e("'1969-12-31 23:59:59.5+00'", "1969-12-31T23:59:59.500000Z"),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", "")},
		{e("", ""), e("2", "2"), e("2", "2"), e("2", "2"),
			e("NULL", ""), e("NULL", ""), e("10000.00", "10000.00"), e("100000000", "100000000.0000000000"), e("120000", "120000"),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""),
			e("'0044-03-15 BC'", time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC).Format("2006-01-02")),
			e("'0044-03-15 12:00:00 BC'", time.Date(-43, 3, 15, 12, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000000")),
			e("'294276-12-31 23:59:59.999999+00'", "294276-12-31T23:59:59.999999Z"),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", "")},
		{e("", ""), e("3", "3"), e("3", "3"), e("3", "3"),
			e("NULL", ""), e("NULL", ""), e("-99.90", "-99.90"), e("-0.0000000001", "-0.0000000001"), e("0.00001000", "0.00001000"),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""),
			e("NULL", ""), e("NULL", ""), e("NULL", ""),
			e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", ""), e("NULL", "")},
	}
	jsonEdge := []genCell{e(`'"\u00e9 ü"'`, `"\u00e9 ü"`), e("'null'", "null"), e("' [] '", " [] "), e("'{\"a\":1,\"a\":2}'", `{"a":1,"a":2}`)}
	for k := range edge {
		c := e("NULL", "")
		if k < len(jsonEdge) {
			c = jsonEdge[k]
		}
		edge[k] = append(edge[k], c)
	}
	for k, r := range edge {
		id := strconv.Itoa(n + 1 + k)
		r[0] = genCell{id, id}
		for j := range r {
			if r[j].lit == "NULL" {
				r[j] = null
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// readAllRows reads every row of the table through src.
func readAllRows(t *testing.T, src *Source, name string) (*Reader, []source.Row) {
	t.Helper()
	r, rows, _, _ := readTable(t, src, name, nil)
	return r, rows
}

// castRecord casts rows into one Arrow record with the reader's plan
// types (no null tokens: the values as read).
func castRecord(t *testing.T, r *Reader, rows []source.Row) arrow.RecordBatch {
	t.Helper()
	names, types := r.Columns(), r.PlanTypes()
	specs := make([]clean.ColumnSpec, len(types))
	fields := make([]arrow.Field, len(types))
	for i, ts := range types {
		pt, err := plan.ParseType(ts)
		if err != nil {
			t.Fatal(err)
		}
		specs[i] = clean.ColumnSpec{Name: names[i], Type: pt, NullTokens: []string{}, AllowControl: true}
		fields[i] = arrow.Field{Name: names[i], Type: clean.ArrowType(pt), Nullable: true}
	}
	c, err := clean.NewCaster(specs, arrow.NewSchema(fields, nil), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	for _, row := range rows {
		if c.Cast(row.Values, row.Nulls) != nil {
			continue // the same rows fail on both paths (compared as text)
		}
		c.Accept()
	}
	return c.NewBatch()
}

// TestPostgresNativeMatchesLegacy loads a generated table covering every
// type the native path decodes (and some it hands to the slow path), with
// NULLs and edge values, through database/sql (the legacy path) and the
// native binary path, serially and in parallel ranges: the texts must be
// the generator's and identical on every path, and so must the Arrow
// records the caster makes of them.
func TestPostgresNativeMatchesLegacy(t *testing.T) {
	db := openService(t, Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_t_")
	s := mustQuote(t, Postgres, schema)
	mustExec(t, db, "CREATE SCHEMA "+s)
	t.Cleanup(func() { mustExec(t, db, "DROP SCHEMA "+s+" CASCADE") })
	var defs []string
	for _, c := range pgGenCols {
		defs = append(defs, c.name+" "+c.sqlType)
	}
	mustExec(t, db, "CREATE TABLE "+s+".gen ("+strings.Join(defs, ", ")+")")
	gen := pgGenRows(3000)
	for lo := 0; lo < len(gen); lo += 500 {
		var vals []string
		for _, row := range gen[lo:min(lo+500, len(gen))] {
			var lits []string
			for _, c := range row {
				if c.lit == "" {
					lits = append(lits, "NULL")
				} else {
					lits = append(lits, c.lit)
				}
			}
			vals = append(vals, "("+strings.Join(lits, ", ")+")")
		}
		mustExec(t, db, "INSERT INTO "+s+".gen VALUES "+strings.Join(vals, ",\n"))
	}
	name := schema + ".gen"
	read := func(legacy bool, par int) (*Reader, []source.Row) {
		src, err := New(Postgres, db, []Table{{schema, "gen"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		src.legacyPG = legacy
		if par > 0 {
			if err := src.SetParallel(name, Parallel{Column: "id", Max: par}); err != nil {
				t.Fatal(err)
			}
		}
		r, rows := readAllRows(t, src, name)
		if r.native == legacy {
			t.Fatalf("legacy %v: reader native = %v", legacy, r.native)
		}
		if par > 1 && !strings.Contains(r.ParallelNote(), "ranges") {
			t.Fatalf("parallel read did not happen: %s", r.ParallelNote())
		}
		return r, rows
	}
	lr, legacy := read(true, 0)
	if len(legacy) != len(gen) {
		t.Fatalf("legacy read %d rows, want %d", len(legacy), len(gen))
	}
	wantCols := make([]string, len(pgGenCols))
	for i, c := range pgGenCols {
		wantCols[i] = c.name
	}
	if strings.Join(lr.Columns(), ",") != strings.Join(wantCols, ",") {
		t.Fatalf("columns %q, want %q", lr.Columns(), wantCols)
	}
	// The generator's texts, on the legacy path first (the reference).
	check := func(path string, rows []source.Row) {
		t.Helper()
		bad := 0
		for i, row := range rows {
			for j, c := range gen[i] {
				isNull := row.Nulls != nil && row.Nulls[j]
				if isNull != (c.lit == "") || (!isNull && row.Values[j] != c.want) {
					if bad++; bad <= 10 {
						t.Errorf("%s: row %d column %s: got %q (null %v), want %q (null %v)", path, i+1, pgGenCols[j].name, row.Values[j], isNull, c.want, c.lit == "")
					}
				}
			}
		}
		if bad > 10 {
			t.Errorf("%s: %d cells differ in all", path, bad)
		}
	}
	check("legacy", legacy)
	lrec := castRecord(t, lr, legacy)
	defer lrec.Release()
	for _, par := range []int{0, 3} {
		path := fmt.Sprintf("native (parallel %d)", par)
		nr, native := read(false, par)
		check(path, native)
		for i := range min(len(native), len(legacy)) {
			for j := range legacy[i].Values {
				ln := legacy[i].Nulls != nil && legacy[i].Nulls[j]
				nn := native[i].Nulls != nil && native[i].Nulls[j]
				if ln != nn || legacy[i].Values[j] != native[i].Values[j] {
					t.Errorf("%s: row %d column %s: %q (null %v), legacy %q (null %v)", path, i+1, pgGenCols[j].name, native[i].Values[j], nn, legacy[i].Values[j], ln)
				}
			}
		}
		nrec := castRecord(t, nr, native)
		if nrec.NumRows() < int64(len(gen))-10 || !array.RecordEqual(lrec, nrec) {
			t.Errorf("%s: Arrow record of %d rows differs from the legacy path's (%d rows)", path, nrec.NumRows(), lrec.NumRows())
		}
		nrec.Release()
	}
}

// TestPostgresBinaryDecodersMatchPgx compares each fast decoder with the
// conversion database/sql's driver makes (stdlib's value function, then
// Text) over random and edge binary values, without a server.
func TestPostgresBinaryDecodersMatchPgx(t *testing.T) {
	m := pgtype.NewMap()
	rng := rand.New(rand.NewPCG(4, 15))
	check := func(oid uint32, planType string, src []byte) {
		t.Helper()
		c := pgCol{planType: planType, slow: stdlibValueFunc(m, oid, pgtype.BinaryFormatCode), kind: fastKind(oid, pgtype.BinaryFormatCode, planType)}
		c.scale, c.pad = decimalScale(planType)
		if c.kind == pgSlow {
			t.Fatalf("oid %d as %s has no fast decoder", oid, planType)
		}
		got, err := c.appendText(nil, src)
		v, werr := c.slow(src)
		if err != nil || werr != nil {
			if (err == nil) != (werr == nil) {
				t.Fatalf("oid %d %x: error %v, pgx %v", oid, src, err, werr)
			}
			return
		}
		want := Text(planType, v)
		if oid == pgtype.NumericOID && len(src) >= 8 && src[0] == 0 && src[1] == 0 && src[4]&0xC0 != 0xC0 {
			// Zero: PostgreSQL's text keeps the display scale, pgx's does not.
			want = "0"
			if sc := int(binary.BigEndian.Uint16(src[6:])); sc > 0 {
				want += "." + strings.Repeat("0", sc)
			}
			want = textOf(planType, want)
		}
		if string(got) != want {
			t.Fatalf("oid %d (%s) %x: %q, pgx/Text %q", oid, planType, src, got, want)
		}
	}
	enc := func(oid uint32, v any) []byte {
		b, err := m.Encode(oid, pgtype.BinaryFormatCode, v, nil)
		if err != nil {
			t.Fatalf("encode %v: %v", v, err)
		}
		return b
	}
	u8 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	for range 20000 {
		check(pgtype.Int8OID, "long", u8(rng.Uint64()))
		check(pgtype.Float8OID, "double", u8(rng.Uint64()))
		check(pgtype.Float4OID, "double", binary.BigEndian.AppendUint32(nil, rng.Uint32()))
		check(pgtype.Int4OID, "int", binary.BigEndian.AppendUint32(nil, rng.Uint32()))
		check(pgtype.Int2OID, "int", binary.BigEndian.AppendUint16(nil, uint16(rng.Uint32())))
		check(pgtype.DateOID, "date", binary.BigEndian.AppendUint32(nil, uint32(rng.Int32N(6e6)-3e6)))
		check(pgtype.DateOID, "date", binary.BigEndian.AppendUint32(nil, rng.Uint32()))
		us := rng.Int64N(6e17) - 3e17
		check(pgtype.TimestampOID, "timestamp", u8(uint64(us)))
		check(pgtype.TimestamptzOID, "timestamptz", u8(uint64(us)))
		check(pgtype.TimestamptzOID, "timestamptz", u8(rng.Uint64()))
		var u [16]byte
		for k := range u {
			u[k] = byte(rng.UintN(256))
		}
		check(pgtype.UUIDOID, "string", u[:])
		check(pgtype.BoolOID, "boolean", []byte{byte(rng.UintN(2))})
		// numerics: random digits, scales and exponents, through pgx's
		// own binary encoder.
		digits := rng.IntN(38) + 1
		n, _ := new(big.Int).SetString(strconv.FormatUint(rng.Uint64(), 10)+strconv.FormatUint(rng.Uint64(), 10), 10)
		n.Mod(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil))
		if rng.IntN(2) == 0 {
			n.Neg(n)
		}
		exp := int32(rng.IntN(30) - 20)
		src := enc(pgtype.NumericOID, pgtype.Numeric{Int: n, Exp: exp, Valid: true})
		sc := rng.IntN(12)
		check(pgtype.NumericOID, "string", src)
		check(pgtype.NumericOID, fmt.Sprintf("decimal(38,%d)", sc), src)
		// and with another display scale than the encoder's
		if len(src) >= 8 {
			alt := append([]byte(nil), src...)
			binary.BigEndian.PutUint16(alt[6:], uint16(rng.IntN(16)))
			check(pgtype.NumericOID, "string", alt)
			check(pgtype.NumericOID, fmt.Sprintf("decimal(38,%d)", sc), alt)
		}
	}
	for _, v := range []uint64{0, 1 << 63, 1<<63 - 1, math.Float64bits(math.NaN()), math.Float64bits(math.Inf(-1)), math.Float64bits(math.Copysign(0, -1))} {
		check(pgtype.Int8OID, "long", u8(v))
		check(pgtype.Float8OID, "double", u8(v))
		check(pgtype.TimestampOID, "timestamp", u8(v))
		check(pgtype.TimestamptzOID, "timestamptz", u8(v))
	}
	for _, d := range []int32{0, 1<<31 - 1, -1 << 31, minFastDays - pgEpochDays, minFastDays - pgEpochDays - 1, maxFastDays - pgEpochDays - 1, maxFastDays - pgEpochDays} {
		check(pgtype.DateOID, "date", binary.BigEndian.AppendUint32(nil, uint32(d)))
	}
	for _, s := range []string{"0", "-0", "0.00", "NaN", "Infinity", "-Infinity", "0.000000000000000000000000000001", "12345678901234567890123456789012345678", "10000", "0.0001", "-9999.9999", "100000000.0000000000"} {
		var n pgtype.Numeric
		if err := n.Scan(s); err != nil {
			t.Fatal(err)
		}
		src := enc(pgtype.NumericOID, n)
		check(pgtype.NumericOID, "string", src)
		check(pgtype.NumericOID, "decimal(12,2)", src)
		check(pgtype.NumericOID, "decimal(38,0)", src)
	}
}

// TestPostgresNativeQueryFailureIsUnreadable: a read whose query fails
// (the table dropped after Open) fails at the first Next with
// source.ErrUnreadable on both paths, and the reader still closes.
func TestPostgresNativeQueryFailureIsUnreadable(t *testing.T) {
	db := openService(t, Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_t_")
	s := mustQuote(t, Postgres, schema)
	mustExec(t, db, "CREATE SCHEMA "+s)
	t.Cleanup(func() { mustExec(t, db, "DROP SCHEMA "+s+" CASCADE") })
	for _, legacy := range []bool{true, false} {
		mustExec(t, db, "CREATE TABLE "+s+".gone (id int PRIMARY KEY)")
		src, err := New(Postgres, db, []Table{{schema, "gone"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		src.legacyPG = legacy
		r, err := src.OpenTable(context.Background(), source.Unit{Name: schema + ".gone"})
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, "DROP TABLE "+s+".gone")
		_, err = r.Next()
		if !errors.Is(err, source.ErrUnreadable) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("legacy %v: Next = %v, want ErrUnreadable naming the missing table", legacy, err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("legacy %v: Close: %v", legacy, err)
		}
	}
}

// json and jsonb, sent as text, are copied as they are (their text is the
// legacy path's: TestPostgresNativeMatchesLegacy); in binary (jsonb's
// starts with a version byte) or under another plan type they keep the
// slow path.
func TestPostgresJSONFastKind(t *testing.T) {
	for _, c := range []struct {
		oid    uint32
		format int16
		typ    string
		want   pgKind
	}{
		{pgtype.JSONBOID, pgtype.TextFormatCode, "string", pgRaw},
		{pgtype.JSONOID, pgtype.TextFormatCode, "string", pgRaw},
		{pgtype.JSONBOID, pgtype.BinaryFormatCode, "string", pgSlow},
		{pgtype.JSONOID, pgtype.BinaryFormatCode, "string", pgSlow},
		{pgtype.JSONBOID, pgtype.TextFormatCode, "binary", pgSlow},
	} {
		if got := fastKind(c.oid, c.format, c.typ); got != c.want {
			t.Errorf("fastKind(%d, format %d, %s) = %d, want %d", c.oid, c.format, c.typ, got, c.want)
		}
	}
	if f, ok := pgResultFormats[pgtype.JSONBOID]; ok && f != pgtype.TextFormatCode {
		t.Errorf("jsonb is asked for in format %d; its fast path reads text", f)
	}
}
