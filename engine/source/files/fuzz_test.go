package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

var csvSeeds = []string{
	"",
	"\xEF\xBB\xBF",
	"id,note\r\n1,\"a\r\nb\"\r\n2,c\r\n",
	"a,b\n\"x\ny\",2\n",
	"a;b;c\n1;2,5;3\n",
	"a\tb\n1\t2\n",
	"a,b\n1,\"open\n2,3\n",
	"a,b\n\"ab\"c,d\n",
	"a,b\nx\"y,5\"\n",
	"a,b\n\n1,2\r\n\r\n3,4\n\r",
	"\"\"\"\",\"\"\n\"",
	"a,b,c\n1,2\n3,4,5,6\n",
	"\r\n\r\r\n\n\"\r\"\r\n",
	"x\x00y\n",
	"\xFF\xFEa\x00",
}

// FuzzCSV checks that the CSV reader never panics and loses no byte: after
// a UTF-8 BOM the input is exactly the concatenation of every row's Raw and
// a line ending ("\n" or "\r\n") after each row but possibly the last
// (sourcetest.CheckRaw, which also checks Loc.Line; checkRawUnit does it in
// the unit's encoding). Rows are numbered 1, 2, …; data rows have one value
// per column; a row without quote bytes is its values joined by the
// delimiter (once decoded; checkEncodedRow checks the encoding rules).
func FuzzCSV(f *testing.F) {
	for i, s := range csvSeeds {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opts := source.Options{}
		switch mode % 4 {
		case 1:
			opts.Delimiter = ','
		case 2:
			opts.Delimiter = ';'
		case 3:
			opts.Delimiter = '\t'
		}
		opts.Header = []string{"", "yes", "no"}[int(mode/4)%3]
		cfg := csvDefaults
		if mode&0x80 != 0 {
			cfg = readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}
		}
		r, err := newCSVReader(context.Background(), bytes.NewReader(data), "f.csv", opts, cfg)
		if err != nil {
			if !errors.Is(err, source.ErrUnreadable) {
				t.Fatalf("open: %v, want nil or ErrUnreadable", err)
			}
			return
		}
		rows, err := sourcetest.ReadAll(r)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if err := checkRawUnit(data, rows, r.Encoding()); err != nil {
			t.Fatalf("CheckRaw: %v\ninput %q\nrows %+v", err, data, rows)
		}
		cols := r.Columns()
		for i, row := range rows {
			if row.Loc.Row != int64(i+1) {
				t.Fatalf("row %d: Loc.Row = %d", i+1, row.Loc.Row)
			}
			checkEncodedRow(t, i, row)
			text := rowText(row) // Raw decoded from the unit's encoding
			switch row.Kind {
			case source.Blank:
				if len(text) > 1 || (len(text) == 1 && text[0] != '\r') || row.Values != nil {
					t.Fatalf("row %d: blank with raw %q values %q", i+1, row.Raw, row.Values)
				}
			case source.Data, source.Header:
				if len(row.Values) != len(cols) {
					t.Fatalf("row %d: %v with %d values for %d columns %q", i+1, row.Kind, len(row.Values), len(cols), cols)
				}
			case source.Malformed:
				if row.Reason == "" {
					t.Fatalf("row %d: malformed without reason", i+1)
				}
			}
			if row.Kind != source.Blank && row.Rule != "encoding" && strings.IndexByte(text, '"') < 0 {
				if got := strings.Join(row.Values, string(r.delim)); got != text {
					t.Fatalf("row %d: values %q joined by %q = %q, want raw %q", i+1, row.Values, r.delim, got, row.Raw)
				}
			}
		}
		if _, err := r.Next(); err == nil {
			t.Fatal("Next after EOF returned a row")
		}
	})
}

var ndjsonSeeds = []string{
	"",
	"{\"id\":1,\"n\":12.50,\"s\":\"x\",\"b\":true,\"z\":null,\"o\":{\"a\":[1, 2]}}\n",
	"{\"a\":1}\r\n\r\n   \n{\"a\":2,\"b\":3}",
	"not json\n{\"a\":\n[1]\n{\"a\":1,\"a\":2}\n{} {}\n",
	"[{\"a\":1}]",
	"{\"\\u00e9\":\"\\ud800\"}\n",
	"\xEF\xBB\xBF{\"a\":\"\xff\"}",
}

// FuzzNDJSON checks that the NDJSON reader never panics, loses no byte
// (checkRawUnit), gives data rows one value per column with nulls
// empty, and never calls a line data that encoding/json rejects, nor calls
// a valid object malformed except for a duplicate or unknown key.
func FuzzNDJSON(f *testing.F) {
	for i, s := range ndjsonSeeds {
		f.Add([]byte(s), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, small bool) {
		cfg := ndjsonDefaults
		if small {
			cfg = readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}
		}
		r, err := newNDJSONReader(context.Background(), bytes.NewReader(data), "f.ndjson", source.Options{}, cfg)
		if err != nil {
			if !errors.Is(err, source.ErrUnreadable) {
				t.Fatalf("open: %v, want nil or ErrUnreadable", err)
			}
			return
		}
		rows, err := sourcetest.ReadAll(r)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if err := checkRawUnit(data, rows, r.Encoding()); err != nil {
			t.Fatalf("CheckRaw: %v\ninput %q", err, data)
		}
		cols := r.Columns()
		for i, row := range rows {
			if row.Loc.Row != int64(i+1) || row.Loc.Line != int64(i+1) {
				t.Fatalf("row %d: Loc = %+v", i+1, row.Loc)
			}
			checkEncodedRow(t, i, row)
			text := rowText(row) // Raw decoded from the unit's encoding
			isObject := json.Valid([]byte(text)) && strings.HasPrefix(strings.TrimLeft(text, " \t\r"), "{")
			switch row.Kind {
			case source.Data:
				if !isObject {
					t.Fatalf("row %d: data but encoding/json rejects %q", i+1, row.Raw)
				}
				if len(row.Values) != len(cols) || (row.Nulls != nil && len(row.Nulls) != len(cols)) {
					t.Fatalf("row %d: %d values, %d nulls for %d columns", i+1, len(row.Values), len(row.Nulls), len(cols))
				}
				for j, null := range row.Nulls {
					if null && row.Values[j] != "" {
						t.Fatalf("row %d: null column %d has value %q", i+1, j, row.Values[j])
					}
				}
			case source.Malformed:
				if isObject && row.Rule != "encoding" && !strings.HasPrefix(row.Reason, "duplicate key") && !strings.HasPrefix(row.Reason, "key ") {
					t.Fatalf("row %d: valid object %q malformed: %s", i+1, row.Raw, row.Reason)
				}
			case source.Blank:
				if strings.Trim(text, " \t\r") != "" {
					t.Fatalf("row %d: blank with raw %q", i+1, row.Raw)
				}
			}
		}
	})
}
