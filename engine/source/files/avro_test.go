package files

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"io"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2/ocf"

	"github.com/lima-lake/lima/engine/source"
)

// The files of these tests are written by the Avro library's own container
// writer (hamba/avro's ocf.Encoder); Lima reads the container framing
// itself. The expected texts are written out by hand from the values put in.

const avroEveryType = `{"type":"record","name":"every","namespace":"t","fields":[
 {"name":"i","type":"int"},
 {"name":"l","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":"double"},
 {"name":"s","type":["null","string"]},
 {"name":"b","type":"bytes"},
 {"name":"ok","type":"boolean"},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"tsu","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
 {"name":"lts","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":3}},
 {"name":"price","type":{"type":"fixed","name":"p8","size":8,"logicalType":"decimal","precision":18,"scale":2}},
 {"name":"fx","type":{"type":"fixed","name":"f4","size":4}},
 {"name":"state","type":{"type":"enum","name":"st","symbols":["OPEN","CLOSED"]}},
 {"name":"tags","type":{"type":"array","items":"long"}},
 {"name":"attrs","type":{"type":"map","values":"string"}},
 {"name":"either","type":["null","long","string"]},
 {"name":"addr","type":{"type":"record","name":"addr","fields":[{"name":"zip","type":"int"},{"name":"cost","type":{"type":"bytes","logicalType":"decimal","precision":6,"scale":2}}]}},
 {"name":"id","type":{"type":"string","logicalType":"uuid"}}
]}`

var avroColumns = []string{"i", "l", "f", "d", "s", "b", "ok", "day", "tm", "tu", "ts", "tsu", "lts", "amount", "price", "fx", "state", "tags", "attrs", "either", "addr", "id"}

// price is a fixed decimal given as its bytes: the unscaled value in
// big-endian two's complement (1999 and -1).
func avroRecords() []map[string]any {
	ts := time.Date(2026, 3, 1, 12, 30, 5, 123000000, time.UTC)
	old := time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)
	return []map[string]any{
		{"i": 1, "l": int64(math.MaxInt64), "f": float32(1.5), "d": 0.1, "s": "Ji-woo Park (품질)", "b": []byte("hi"), "ok": true,
			"day": time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC), "tm": 13*time.Hour + 5*time.Minute + 7*time.Second + 250*time.Millisecond,
			"tu": 42 * time.Microsecond, "ts": ts, "tsu": ts.Add(456 * time.Microsecond), "lts": ts,
			"amount": big.NewRat(-150, 1), "price": [8]byte{0, 0, 0, 0, 0, 0, 0x07, 0xcf}, "fx": [4]byte{0, 1, 2, 255}, "state": "CLOSED",
			"tags": []any{int64(3), int64(-1)}, "attrs": map[string]any{"b": "2", "a": "1"}, "either": map[string]any{"string": "x"},
			"addr": map[string]any{"zip": 1000, "cost": big.NewRat(125, 100)}, "id": "3f1c2a9e-0b7d-4c55-9a1e-6d2f0c8b7a10"},
		{"i": math.MinInt32, "l": int64(math.MinInt64), "f": float32(math.Inf(-1)), "d": math.NaN(), "s": nil, "b": []byte{}, "ok": false,
			"day": time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), "tm": time.Duration(0), "tu": 23*time.Hour + 59*time.Minute + 59*time.Second + 999999*time.Microsecond,
			"ts": old.Truncate(time.Millisecond), "tsu": nil, "lts": old,
			"amount": big.NewRat(1, 1000), "price": [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "fx": [4]byte{}, "state": "OPEN",
			"tags": []any{}, "attrs": map[string]any{}, "either": map[string]any{"long": int64(7)},
			"addr": map[string]any{"zip": -1, "cost": big.NewRat(-5, 100)}, "id": "00000000-0000-0000-0000-000000000000"},
	}
}

// avroWant is what Lima reads from avroRecords; "∅" marks a null.
var avroWant = [][]string{
	{"1", "9223372036854775807", "1.5", "0.1", "Ji-woo Park (품질)", "aGk=", "true", "2026-02-28", "13:05:07.25", "00:00:00.000042",
		"2026-03-01T12:30:05.123Z", "2026-03-01T12:30:05.123456Z", "2026-03-01T12:30:05.123", "-150.000", "19.99", "AAEC/w==", "CLOSED",
		"[3,-1]", `{"a":"1","b":"2"}`, "x", `{"cost":1.25,"zip":1000}`, "3f1c2a9e-0b7d-4c55-9a1e-6d2f0c8b7a10"},
	{"-2147483648", "-9223372036854775808", "-Inf", "NaN", "∅", "", "false", "1900-01-01", "00:00:00", "23:59:59.999999",
		"1969-12-31T23:59:59.999Z", "∅", "1969-12-31T23:59:59.999999", "0.001", "-0.01", "AAAAAA==", "OPEN",
		"[]", "{}", "7", `{"cost":-0.05,"zip":-1}`, "00000000-0000-0000-0000-000000000000"},
}

func writeAvro(t *testing.T, schema string, codec ocf.CodecName, blockLen int, recs []map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(schema, &buf, ocf.WithCodec(codec), ocf.WithBlockLength(blockLen))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// streamOnly hides a reader's Seek and ReadAt: the Avro reader then reads
// block by block, as from a stream, without checking the framing first.
type streamOnly struct{ io.Reader }

func readAvro(t *testing.T, data []byte, opts source.Options) ([]string, [][]string, error) {
	return readAvroFrom(t, bytes.NewReader(data), opts)
}

func readAvroFrom(t *testing.T, r io.Reader, opts source.Options) ([]string, [][]string, error) {
	t.Helper()
	rr, err := newAvroReader(context.Background(), r, "x.avro", opts)
	if err != nil {
		return nil, nil, err
	}
	defer rr.Close()
	var rows [][]string
	for {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return rr.Columns(), rows, nil
		}
		if err != nil {
			return rr.Columns(), rows, err
		}
		if row.Kind != source.Data || row.Loc.Row != int64(len(rows)+1) || row.Raw != nil {
			t.Fatalf("row %d: kind %v loc %+v", len(rows)+1, row.Kind, row.Loc)
		}
		vals := append([]string(nil), row.Values...)
		for i := range vals {
			if row.Nulls != nil && row.Nulls[i] {
				vals[i] = "∅"
			}
		}
		rows = append(rows, vals)
	}
}

func TestAvroEveryTypeEveryCodec(t *testing.T) {
	for _, codec := range []ocf.CodecName{ocf.Null, ocf.Deflate, ocf.Snappy, ocf.ZStandard} {
		t.Run(string(codec), func(t *testing.T) {
			data := writeAvro(t, avroEveryType, codec, 1, avroRecords()) // one record per block
			cols, rows, err := readAvro(t, data, source.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cols, avroColumns) {
				t.Fatalf("columns %v", cols)
			}
			if len(rows) != len(avroWant) {
				t.Fatalf("%d rows, want %d", len(rows), len(avroWant))
			}
			for r := range avroWant {
				for c := range avroColumns {
					if rows[r][c] != avroWant[r][c] {
						t.Errorf("row %d %s = %q, want %q", r+1, avroColumns[c], rows[r][c], avroWant[r][c])
					}
				}
			}
		})
	}
}

// Many records over many blocks: every record once, in order.
func TestAvroManyBlocks(t *testing.T) {
	const n = 25_000
	schema := `{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"v","type":["null","double"]}]}`
	recs := make([]map[string]any, n)
	var want float64
	nulls := 0
	for i := range recs {
		recs[i] = map[string]any{"id": int64(i + 1), "v": float64(i%7) / 4}
		if i%11 == 0 {
			recs[i]["v"] = nil
			nulls++
		} else {
			want += float64(i%7) / 4
		}
	}
	for _, codec := range []ocf.CodecName{ocf.Null, ocf.Deflate} {
		_, rows, err := readAvro(t, writeAvro(t, schema, codec, 1000, recs), source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != n {
			t.Fatalf("%s: %d rows, want %d", codec, len(rows), n)
		}
		var got float64
		gotNulls := 0
		for i, r := range rows {
			if r[0] != strings.TrimSpace(big.NewInt(int64(i+1)).String()) {
				t.Fatalf("%s: row %d id %s", codec, i+1, r[0])
			}
			if r[1] == "∅" {
				gotNulls++
				continue
			}
			var f big.Float
			if _, _, err := f.Parse(r[1], 10); err != nil {
				t.Fatal(err)
			}
			v, _ := f.Float64()
			got += v
		}
		if got != want || gotNulls != nulls {
			t.Fatalf("%s: sum %v nulls %d, want %v and %d", codec, got, gotNulls, want, nulls)
		}
	}
}

func TestAvroUnreadable(t *testing.T) {
	schema := `{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"s","type":"string"}]}`
	recs := []map[string]any{}
	for i := range 300 {
		recs = append(recs, map[string]any{"id": int64(i), "s": strings.Repeat("x", i%50)})
	}
	good := writeAvro(t, schema, ocf.Deflate, 100, recs)
	plain := writeAvro(t, schema, ocf.Null, 100, recs)
	header := bytes.Index(plain, plain[len(plain)-16:]) + 16 // the first sync marker ends the header
	long := func(v int64) []byte {
		var b []byte
		u := uint64(v<<1) ^ uint64(v>>63)
		for u >= 0x80 {
			b = append(b, byte(u)|0x80)
			u >>= 7
		}
		return append(b, byte(u))
	}
	sync := plain[len(plain)-16:]
	block := func(count, size int64, data []byte) []byte {
		b := append(append([]byte{}, plain[:header]...), long(count)...)
		b = append(b, long(size)...)
		b = append(b, data...)
		return append(b, sync...)
	}
	var zb bytes.Buffer
	zw, _ := flate.NewWriter(&zb, flate.BestSpeed)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	bomb := zb.Bytes()
	cases := []struct {
		name   string
		data   []byte
		reason string
		rows   int // rows read before the error
		// inData: the damage is inside a block's data, which the check of
		// the framing does not decode: the rows before it are given.
		inData bool
	}{
		{"not avro", []byte("id,s\n1,a\n"), "not an Avro object container", 0, false},
		{"empty", nil, "not an Avro object container", 0, false},
		{"header cut", plain[:header-20], "truncated Avro header", 0, false},
		{"cut in the second block", good[:len(good)/2], "truncated Avro file", 100, false},
		{"sync marker cut", good[:len(good)-5], "truncated Avro file", 200, false},
		{"sync marker wrong", append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^0xff), "without the file's sync marker", 200, false},
		{"a block claims 2^40 bytes", block(1, 1<<40, nil), "declares 1 records in 1099511627776 bytes", 0, false},
		{"a block claims 10^12 records in 3 bytes", block(1_000_000_000_000, 3, []byte{1, 2, 3}), "declares 1000000000000 records", 0, false},
		{"a string claims 2^40 bytes", block(1, 7, append(long(1), long(1<<40)...)), "corrupt Avro data after row 0", 0, false},
		{"a block ends right after its size", block(1, 40, nil)[:header+2], "is cut short", 0, false},
		{"a block holds fewer records than it claims", block(2, 4, []byte{2, 0, 2, 8}), "corrupt Avro data after row 1", 1, true},
		{"a deflate block of 65 MiB once decompressed", append(append([]byte{}, good[:bytes.Index(good, good[len(good)-16:])+16]...), append(append(long(1), long(int64(len(bomb)))...), append(bomb, good[len(good)-16:]...)...)...), "does not decompress", 0, false},
		{"bad deflate data", append(append([]byte{}, good[:bytes.Index(good, good[len(good)-16:])+16]...), append(append(long(1), long(4)...), append([]byte{0xff, 0xff, 0xff, 0xff}, good[len(good)-16:]...)...)...), "does not decompress", 0, false},
	}
	for _, c := range cases {
		// From a file the framing is checked before the first row: no row
		// of a damaged file is given. From a stream the rows of the blocks
		// before the damage are.
		for _, mode := range []string{"file", "stream"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				var r io.Reader = bytes.NewReader(c.data)
				want := 0
				if c.inData {
					want = c.rows
				}
				if mode == "stream" {
					r, want = streamOnly{r}, c.rows
				}
				_, rows, err := readAvroFrom(t, r, source.Options{})
				var ue *UnreadableError
				if !errors.As(err, &ue) || !errors.Is(err, source.ErrUnreadable) {
					t.Fatalf("err %v (%d rows), want an unreadable unit", err, len(rows))
				}
				if !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("err %q, want it to say %q", err, c.reason)
				}
				if len(rows) != want {
					t.Fatalf("%d rows before the error, want %d", len(rows), want)
				}
			})
		}
	}
}

func TestAvroSchemaRefusals(t *testing.T) {
	for _, c := range []struct{ schema, reason string }{
		{`"long"`, "not a record"},
		{`{"type":"record","name":"n","fields":[{"name":"a","type":"null"}]}`, "every field of the Avro schema is null"},
	} {
		var buf bytes.Buffer
		enc, err := ocf.NewEncoder(c.schema, &buf)
		if err != nil {
			t.Fatal(err)
		}
		enc.Close()
		_, _, err = readAvro(t, buf.Bytes(), source.Options{})
		if !errors.Is(err, source.ErrUnreadable) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: err %v, want %q", c.schema, err, c.reason)
		}
	}
	// A codec Lima does not read is named.
	good := writeAvro(t, `{"type":"record","name":"r","fields":[{"name":"a","type":"long"}]}`, ocf.Null, 10, []map[string]any{{"a": int64(1)}})
	bad := bytes.Replace(good, []byte("\x08null"), []byte("\x08bzp2"), 1)
	if bytes.Equal(bad, good) {
		t.Fatal("test fixture: codec not found in the header")
	}
	if _, _, err := readAvro(t, bad, source.Options{}); err == nil || !strings.Contains(err.Error(), `codec "bzp2" is not supported`) {
		t.Errorf("unknown codec: %v", err)
	}
}

// A string longer than the record limit is refused, one within it read.
func TestAvroValueLimit(t *testing.T) {
	schema := `{"type":"record","name":"r","fields":[{"name":"s","type":"string"}]}`
	data := writeAvro(t, schema, ocf.Null, 10, []map[string]any{{"s": strings.Repeat("a", 2000)}})
	if _, rows, err := readAvro(t, data, source.Options{MaxRecordBytes: 4096}); err != nil || len(rows) != 1 || len(rows[0][0]) != 2000 {
		t.Fatalf("within the limit: %v", err)
	}
	if _, _, err := readAvro(t, data, source.Options{MaxRecordBytes: 1000}); !errors.Is(err, source.ErrUnreadable) {
		t.Fatalf("over the limit: %v, want unreadable", err)
	}
}

// Open picks the Avro reader by extension and by the format option, and a
// cancelled context stops it.
func TestAvroOpenAndCancel(t *testing.T) {
	schema := `{"type":"record","name":"r","fields":[{"name":"id","type":"long"}]}`
	recs := make([]map[string]any, 10_000)
	for i := range recs {
		recs[i] = map[string]any{"id": int64(i)}
	}
	data := writeAvro(t, schema, ocf.Snappy, 500, recs)
	dir := writeTree(t, map[string][]byte{"a/part.avro": data, "a/part.bin": data})
	src := New(dir)
	units, err := src.List(context.Background(), []string{"a/*"})
	if err != nil || len(units) != 2 {
		t.Fatalf("units %v %v", units, err)
	}
	for _, u := range units {
		opts := source.Options{}
		if strings.HasSuffix(u.Name, ".bin") {
			opts.Format = "avro"
		}
		ctx, cancel := context.WithCancel(context.Background())
		rr, err := src.Open(ctx, u, opts)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ; n < 5000; n++ {
			if _, err := rr.Next(); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		for {
			_, err = rr.Next()
			if err != nil {
				break
			}
			n++
		}
		if !errors.Is(err, context.Canceled) || n >= 10_000 {
			t.Fatalf("%s: after cancel: %v after %d rows", u.Name, err, n)
		}
		rr.Close()
	}
}

func FuzzAvroReader(f *testing.F) {
	f.Add(writeAvroF(f, ocf.Null))
	f.Add(writeAvroF(f, ocf.Deflate))
	f.Fuzz(func(t *testing.T, data []byte) {
		rr, err := newAvroReader(context.Background(), bytes.NewReader(data), "f.avro", source.Options{MaxRecordBytes: 1 << 16})
		if err != nil {
			if !errors.Is(err, source.ErrUnreadable) {
				t.Fatalf("open: %v is not an unreadable unit", err)
			}
			return
		}
		defer rr.Close()
		for n := 0; ; n++ {
			_, err := rr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !errors.Is(err, source.ErrUnreadable) {
					t.Fatalf("next: %v is not an unreadable unit", err)
				}
				return
			}
			if n > len(data) {
				t.Fatalf("%d rows from %d bytes", n, len(data))
			}
		}
	})
}

func writeAvroF(f *testing.F, codec ocf.CodecName) []byte {
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(`{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"s","type":["null","string"]},{"name":"m","type":{"type":"map","values":{"type":"array","items":"int"}}}]}`, &buf, ocf.WithCodec(codec), ocf.WithBlockLength(2))
	if err != nil {
		f.Fatal(err)
	}
	for i := range 5 {
		if err := enc.Encode(map[string]any{"id": int64(i), "s": "v", "m": map[string]any{"k": []any{i, i + 1}}}); err != nil {
			f.Fatal(err)
		}
	}
	enc.Close()
	return buf.Bytes()
}
