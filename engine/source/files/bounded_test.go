package files

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

// A record longer than the limit is one row exception holding only the
// start of its bytes; the rows after it are read and counted.

func TestNDJSONRecordTooLarge(t *testing.T) {
	big := `{"id":4,"text":"` + strings.Repeat("x", 300_000) + `"}` // 300,018 bytes
	in := `{"id":1,"text":"a"}` + "\n" + `{"id":2,"text":"b"}` + "\n" + `{"id":3,"text":"c"}` + "\r\n" +
		big + "\r\n" +
		`{"id":5,"text":"e"}` + "\n" + `{"id":6,"text":"f"}` + "\n" + `{"id":7,"text":"g"}`
	for _, cfg := range []readerConfig{ndjsonDefaults, {bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}} {
		r, err := newNDJSONReader(context.Background(), strings.NewReader(in), "t.ndjson", source.Options{MaxRecordBytes: 10_000}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sourcetest.ReadAll(r)
		if err != nil {
			t.Fatalf("bufSize %d: reading: %v (want the rest of the file read)", cfg.bufSize, err)
		}
		if len(rows) != 7 {
			t.Fatalf("bufSize %d: %d rows, want 7", cfg.bufSize, len(rows))
		}
		for i, row := range rows {
			if i == 3 {
				continue
			}
			want := string(rune('a' + i))
			if row.Kind != source.Data || row.Values[1] != want || row.Loc.Line != int64(i+1) {
				t.Errorf("bufSize %d: row %d = %v %q line %d, want data %q at line %d", cfg.bufSize, i+1, row.Kind, row.Values, row.Loc.Line, want, i+1)
			}
		}
		got := rows[3]
		if got.Kind != source.Malformed || got.Rule != source.RuleRecordTooLarge || got.Loc.Line != 4 || got.Loc.Row != 4 {
			t.Fatalf("bufSize %d: row 4 = %v rule %q line %d row %d, want malformed record_too_large at line 4", cfg.bufSize, got.Kind, got.Rule, got.Loc.Line, got.Loc.Row)
		}
		if len(got.Raw) != 10_000 || string(got.Raw) != big[:10_000] {
			t.Errorf("bufSize %d: row 4 keeps %d bytes of Raw, want its first 10,000", cfg.bufSize, len(got.Raw))
		}
		if !strings.Contains(got.Reason, "300,018 bytes") || !strings.Contains(got.Reason, "10,000 bytes") {
			t.Errorf("bufSize %d: reason %q, want the size 300,018 bytes and the limit 10,000 bytes", cfg.bufSize, got.Reason)
		}
	}
}

func TestCSVRecordTooLarge(t *testing.T) {
	long := "4," + strings.Repeat("y", 5000)                   // 5,002 bytes, one line
	quoted := "5,\"" + strings.Repeat("q\r\n", 2000) + "end\"" // 6,007 bytes over lines 6-2006
	in := "id,text\r\n1,a\r\n2,b\n3,c\n" + long + "\r\n" + quoted + "\n6,f\n7,g\n"
	for _, cfg := range []readerConfig{csvDefaults, {bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}} {
		r, err := newCSVReader(context.Background(), strings.NewReader(in), "t.csv", source.Options{Header: "yes", Delimiter: ',', MaxRecordBytes: 4096}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sourcetest.ReadAll(r)
		if err != nil {
			t.Fatalf("bufSize %d: reading: %v (want the rest of the file read)", cfg.bufSize, err)
		}
		if len(rows) != 8 {
			t.Fatalf("bufSize %d: %d rows, want 8", cfg.bufSize, len(rows))
		}
		type want struct {
			kind source.RowKind
			line int64
			val  string
		}
		wants := []want{{source.Header, 1, "text"}, {source.Data, 2, "a"}, {source.Data, 3, "b"}, {source.Data, 4, "c"},
			{source.Malformed, 5, ""}, {source.Malformed, 6, ""}, {source.Data, 2007, "f"}, {source.Data, 2008, "g"}}
		for i, w := range wants {
			row := rows[i]
			if row.Kind != w.kind || row.Loc.Line != w.line || row.Loc.Row != int64(i+1) {
				t.Errorf("bufSize %d: row %d = %v line %d row %d, want %v at line %d", cfg.bufSize, i+1, row.Kind, row.Loc.Line, row.Loc.Row, w.kind, w.line)
				continue
			}
			if w.kind != source.Malformed && row.Values[1] != w.val {
				t.Errorf("bufSize %d: row %d values %q, want text %q", cfg.bufSize, i+1, row.Values, w.val)
			}
		}
		for i, w := range []struct {
			raw    string
			reason []string
		}{
			{long[:4096], []string{"5,002 bytes", "4,096 bytes"}},
			{quoted[:4096], []string{"6,007 bytes", "4,096 bytes", "lines 6–2006"}},
		} {
			row := rows[4+i]
			if row.Rule != source.RuleRecordTooLarge || string(row.Raw) != w.raw {
				t.Errorf("bufSize %d: row %d rule %q, %d bytes of Raw; want record_too_large with the first 4,096 bytes", cfg.bufSize, 5+i, row.Rule, len(row.Raw))
			}
			for _, s := range w.reason {
				if !strings.Contains(row.Reason, s) {
					t.Errorf("bufSize %d: row %d reason %q, want it to say %q", cfg.bufSize, 5+i, row.Reason, s)
				}
			}
		}
	}
}

// A record of exactly the limit is read as it is.
func TestRecordAtLimit(t *testing.T) {
	rec := "1," + strings.Repeat("z", 98) // 100 bytes
	for _, end := range []string{"\n", "\r\n"} {
		in := "id,text" + end + rec + end + "2,b" + end
		cfg := readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}
		r, err := newCSVReader(context.Background(), strings.NewReader(in), "t.csv", source.Options{Header: "yes", Delimiter: ',', MaxRecordBytes: 100}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sourcetest.ReadAll(r)
		if err != nil || len(rows) != 3 || rows[1].Kind != source.Data || string(rows[1].Raw) != rec || rows[2].Kind != source.Data {
			t.Fatalf("line end %q: %d rows, err %v; want the 100-byte record read as data", end, len(rows), err)
		}
		n, err := newNDJSONReader(context.Background(), strings.NewReader(`{"a":"`+strings.Repeat("z", 92)+`"}`+end+`{"a":"b"}`), "t.ndjson", source.Options{MaxRecordBytes: 100}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows, err = sourcetest.ReadAll(n)
		if err != nil || len(rows) != 2 || rows[0].Kind != source.Data || rows[1].Kind != source.Data {
			t.Fatalf("line end %q: NDJSON %d rows, err %v; want the 100-byte line read as data", end, len(rows), err)
		}
	}
}

// Reading a 40 MB single-line record allocates a bounded amount of memory,
// not the record's size (a 50 MB single-line CSV used to peak at 918 MB).
func TestCSVHugeRecordMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 40 MB file")
	}
	const size = 40 << 20
	dir := t.TempDir()
	chunk := strings.Repeat("x", 1<<20)
	for name, parts := range map[string][3]string{
		"big.csv":    {"id,text\n1,a\n2,", "", "\n3,c\n"},
		"big.ndjson": {`{"id":1,"text":"a"}` + "\n" + `{"id":2,"text":"`, "", `"}` + "\n" + `{"id":3,"text":"c"}` + "\n"},
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteString(parts[0])
		for i := 0; i < size>>20; i++ {
			w.WriteString(chunk)
		}
		w.WriteString(parts[2])
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, name := range []string{"big.csv", "big.ndjson"} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := New(dir).Open(context.Background(), source.Unit{Name: name}, source.Options{MaxRecordBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sourcetest.ReadAll(r)
		r.Close()
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		got := rows
		if name == "big.csv" {
			if len(rows) == 0 || rows[0].Kind != source.Header {
				t.Fatalf("%s: %d rows, want the header first", name, len(rows))
			}
			got = rows[1:]
		}
		if len(got) != 3 || got[0].Kind != source.Data || got[1].Kind != source.Malformed || got[1].Rule != source.RuleRecordTooLarge || got[2].Kind != source.Data {
			t.Fatalf("%s: %d rows; want data, record_too_large, data", name, len(rows))
		}
		t.Logf("%s: reading allocated %d bytes", name, after.TotalAlloc-before.TotalAlloc)
		// Everything allocated while reading bounds the peak heap: the
		// 256 KiB read buffer, the record up to the 1 MiB limit (and the
		// growth of its buffer), the kept cut.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Fatalf("%s: reading a %d-byte record allocated %d bytes, want under 8 MiB", name, size, alloc)
		}
	}
}

// An ASCII file with one row of bytes invalid in UTF-8 is read as UTF-8:
// that row is an encoding exception and the others load as they are (it
// used to be read whole as windows-1252). Pinned, the file reads as pinned.
func TestMostlyUTF8FileKeepsUTF8(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,name\n")
	for i := 1; i <= 30; i++ {
		if i == 12 {
			b.WriteString("12,Caf\xE9\n")
			continue
		}
		b.WriteString(strconv.Itoa(i) + ",name" + strconv.Itoa(i) + "\n")
	}
	in := b.String()
	rows, det := readText(t, "csv", []byte(in), source.Options{}, csvDefaults)
	if det.Name != "utf-8" || len(rows) != 31 {
		t.Fatalf("encoding %q, %d rows; want utf-8 and 31 rows (%s)", det.Name, len(rows), det.Reason)
	}
	for i, row := range rows[1:] {
		if i+1 == 12 {
			if row.Kind != source.Malformed || row.Rule != "encoding" || string(row.Raw) != "12,Caf\xE9" {
				t.Errorf("row 12 = %v rule %q raw %q; want an encoding exception with its bytes", row.Kind, row.Rule, row.Raw)
			}
			continue
		}
		if row.Kind != source.Data || row.Values[1] != "name"+strconv.Itoa(i+1) {
			t.Errorf("row %d = %v %q, want data", i+1, row.Kind, row.Values)
		}
	}
	rows, det = readText(t, "csv", []byte(in), source.Options{Encoding: "windows-1252"}, csvDefaults)
	if det.Name != "windows-1252" || rows[12].Kind != source.Data || rows[12].Values[1] != "Café" {
		t.Fatalf("pinned windows-1252: encoding %q, row 12 %v %q; want Café as data", det.Name, rows[12].Kind, rows[12].Values)
	}
}
