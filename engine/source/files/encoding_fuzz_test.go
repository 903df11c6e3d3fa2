package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

// rowText is a row's Raw as UTF-8 text: decoded from row.Encoding when set
// (with U+FFFD for invalid bytes).
func rowText(row source.Row) string {
	if row.Encoding == "" {
		return string(row.Raw)
	}
	s, _ := clean.Decode(row.Encoding, row.Raw)
	return s
}

// checkRawUnit is sourcetest.CheckRaw for a unit in any encoding: after the
// byte order mark, content is the concatenation of every row's Raw and a
// line ending (LF or CRLF, as 2-byte units in UTF-16) after each row but
// possibly the last, and each row starts one line after the previous row's
// start plus the LFs inside its Raw.
func checkRawUnit(content []byte, rows []source.Row, det clean.Detection) error {
	if det.BOM > 0 && len(content) < det.BOM {
		return fmt.Errorf("detection has a %d-byte BOM in %d bytes", det.BOM, len(content))
	}
	want := det.Name
	if want == clean.UTF8 {
		want = ""
	}
	for i, r := range rows {
		if r.Encoding != want {
			return fmt.Errorf("row %d: Encoding %q, want %q", i+1, r.Encoding, want)
		}
	}
	if det.Name != clean.UTF16LE && det.Name != clean.UTF16BE {
		if det.BOM > 0 && !bytes.HasPrefix(content, []byte("\xEF\xBB\xBF")) {
			return fmt.Errorf("a %d-byte BOM that is not the UTF-8 one", det.BOM)
		}
		return sourcetest.CheckRaw(content, rows)
	}
	be := det.Name == clean.UTF16BE
	enc := func(s string) []byte {
		var b []byte
		for _, c := range []byte(s) {
			if be {
				b = append(b, 0, c)
			} else {
				b = append(b, c, 0)
			}
		}
		return b
	}
	lf, crlf := enc("\n"), enc("\r\n")
	content = content[det.BOM:]
	pos, line := 0, int64(1)
	for i, r := range rows {
		if r.Loc.Line != line {
			return fmt.Errorf("row %d: Loc.Line = %d, want %d", i+1, r.Loc.Line, line)
		}
		if !bytes.HasPrefix(content[pos:], r.Raw) {
			return fmt.Errorf("row %d: Raw %q is not the content at offset %d", i+1, r.Raw, pos)
		}
		if pos%2 != 0 {
			return fmt.Errorf("row %d starts at odd offset %d", i+1, pos)
		}
		pos += len(r.Raw)
		for j := 0; j+1 < len(r.Raw); j += 2 {
			if bytes.Equal(r.Raw[j:j+2], lf) {
				line++
			}
		}
		switch {
		case bytes.HasPrefix(content[pos:], crlf):
			pos += 4
		case bytes.HasPrefix(content[pos:], lf):
			pos += 2
		case pos == len(content) && i == len(rows)-1:
		default:
			return fmt.Errorf("row %d: no line ending after Raw %q at offset %d", i+1, r.Raw, pos)
		}
		line++
	}
	if pos != len(content) {
		return fmt.Errorf("%d bytes at offset %d belong to no row", len(content)-pos, pos)
	}
	return nil
}

// checkEncodedRow checks the encoding rules of a row: no U+FFFD and only
// valid UTF-8 in the Values of a Data row; Rule "encoding" only on a
// Malformed row whose Reason names the encoding; Raw decodes strictly
// unless the row is such an exception.
func checkEncodedRow(t *testing.T, i int, row source.Row) {
	t.Helper()
	if row.Kind == source.Data {
		for j, v := range row.Values {
			if !utf8.ValidString(v) || strings.ContainsRune(v, utf8.RuneError) {
				t.Fatalf("row %d: data value %d %q is not clean UTF-8 (raw %q, encoding %q)", i+1, j, v, row.Raw, row.Encoding)
			}
		}
	}
	enc := row.Encoding
	if enc == "" {
		enc = clean.UTF8
	}
	_, err := clean.Decode(enc, row.Raw)
	if row.Rule == "encoding" {
		if row.Kind != source.Malformed || !strings.Contains(row.Reason, enc) && !strings.Contains(row.Reason, "U+FFFD") {
			t.Fatalf("row %d: rule encoding on a %v row with reason %q", i+1, row.Kind, row.Reason)
		}
		return
	}
	if err != nil && row.Kind != source.Blank {
		t.Fatalf("row %d: raw %q is invalid in %s (%v) but the row is %v with rule %q", i+1, row.Raw, enc, err, row.Kind, row.Rule)
	}
}

var encodingSeeds = []struct {
	data string
	mode uint8
}{
	{"id|name\n1|" + sjPump + "\"x\n2|" + sjSource + "\n", 0x12},
	{"id,name\n1," + krHanil + "\n2,\xC7A\n", 0x01},
	{"a;b\n\x81;\x81\x30;x\n1;" + gbBeijing + "\n", 0x23},
	{"\xFF\xFEi\x00d\x00\n\x001\x00\x00\xD8\n\x00", 0x04},
	{"a,b\n1,\xFFc\n", 0x00},
	{"a,b\n1,M\xFCller\n", 0x05},
}

// The fuzzed encodings: detection, then each pinned.
var fuzzEncodings = []string{"", "utf-8", "euc-kr", "shift_jis", "gb18030", "windows-1252", "utf-16le", "utf-16be"}

// FuzzCSVEncoding reads arbitrary bytes as CSV in every encoding (detected
// or pinned) with ',', ';', tab or '|' and checks that no byte is lost in
// the unit's encoding, that Data rows hold clean UTF-8 (never U+FFFD), that
// rows invalid in the encoding are exceptions with rule encoding, and that
// a row without quotes is its decoded Raw split at the delimiter.
func FuzzCSVEncoding(f *testing.F) {
	for _, s := range encodingSeeds {
		f.Add([]byte(s.data), s.mode)
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opts := source.Options{
			Encoding:  fuzzEncodings[int(mode)%len(fuzzEncodings)],
			Delimiter: []rune{',', ';', '\t', '|'}[int(mode>>3)%4],
		}
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
		det := r.Encoding()
		if err := checkRawUnit(data, rows, det); err != nil {
			t.Fatalf("checkRawUnit: %v\ninput %q (%+v)\nrows %+v", err, data, det, rows)
		}
		for i, row := range rows {
			checkEncodedRow(t, i, row)
			text := rowText(row)
			if row.Kind != source.Blank && row.Rule != "encoding" && strings.IndexByte(text, '"') < 0 {
				if got := strings.Join(row.Values, string(r.delim)); got != text {
					t.Fatalf("row %d: values %q joined = %q, want the decoded raw %q", i+1, row.Values, got, text)
				}
			}
		}
	})
}
