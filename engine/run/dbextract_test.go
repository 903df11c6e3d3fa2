package run

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/engine/source"
)

// TestDBExtractWriter: the extract is strict RFC 4180 (Go's CSV reader
// with LazyQuotes off reads back every value), CRLF-terminated, NULL an
// empty unquoted field and "" a quoted one, in a 0600 file that discard
// removes.
func TestDBExtractWriter(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x-*.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	e := &dbExtract{f: f, gz: gz, ex: rawland.Extract{Columns: []string{"a", "b,\"c\""}}}
	e.w = newExtractBuffer(gz)
	rows := []source.Row{
		{Values: []string{"", ""}, Nulls: []bool{false, true}},
		{Values: []string{"x \"q\", y\r\nz", "\x00\xff"}},
		{Values: []string{"", ""}, Nulls: []bool{true, false}},
	}
	e.writeRecord(e.ex.Columns, nil)
	for _, r := range rows {
		if err := e.add(r); err != nil {
			t.Fatal(err)
		}
	}
	path, ex, err := e.finish()
	if err != nil {
		t.Fatal(err)
	}
	if ex.Rows != int64(len(rows)) {
		t.Errorf("rows %d, want %d", ex.Rows, len(rows))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	recs, err := csv.NewReader(bytes.NewReader(plain)).ReadAll()
	if err != nil {
		t.Fatalf("not RFC 4180: %v", err)
	}
	if len(recs) != len(rows)+1 || recs[0][1] != `b,"c"` {
		t.Fatalf("records %q", recs)
	}
	for i, r := range rows {
		for j, v := range r.Values {
			if recs[i+1][j] != strings.ReplaceAll(v, "\r\n", "\n") { // Go's reader folds CRLF in quoted fields
				t.Errorf("row %d field %d: %q, want %q", i, j, recs[i+1][j], v)
			}
		}
	}
	// NULL vs "": the first record's fields are `""` then nothing.
	lines := strings.Split(string(plain), "\r\n")
	if lines[1] != `"",` || lines[len(lines)-2] != `,""` {
		t.Errorf("null encoding: %q / %q", lines[1], lines[len(lines)-2])
	}
	e.discard()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("discard left %s (%v)", path, err)
	}
}
