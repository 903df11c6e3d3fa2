// Package sourcetest is the conformance suite that every file-like
// source.Source (local folder, object store) runs against itself:
//
//	func TestConformance(t *testing.T) {
//		sourcetest.Run(t, func(t *testing.T, files map[string][]byte) (source.Source, []string) {
//			dir := t.TempDir()
//			// write files below dir …
//			return files.New(dir), []string{"**"}
//		})
//	}
//
// newSource must return a Source holding exactly the given files (names are
// relative, with forward slashes) and globs that select all of them. The
// suite reads CSV (.csv) and NDJSON (.ndjson) units with default options.
package sourcetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
)

// NewSource builds the Source under test holding files, and globs that
// select all of them.
type NewSource = func(t *testing.T, files map[string][]byte) (source.Source, []string)

// Run runs the conformance suite.
func Run(t *testing.T, newSource NewSource) {
	t.Helper()
	t.Run("List", func(t *testing.T) { testList(t, newSource) })
	t.Run("Read", func(t *testing.T) { testRead(t, newSource) })
	t.Run("Unreadable", func(t *testing.T) { testUnreadable(t, newSource) })
	t.Run("Lifecycle", func(t *testing.T) { testLifecycle(t, newSource) })
}

func testList(t *testing.T, newSource NewSource) {
	files := map[string][]byte{
		"b.csv":      []byte("id\n1\n"),
		"a.csv":      []byte("id\n1\n2\n"),
		"c/d.csv":    []byte("id\n"),
		"c/a.ndjson": []byte("{\"id\":1}\n"),
		"z.ndjson":   []byte(""),
	}
	want := []string{"a.csv", "b.csv", "c/a.ndjson", "c/d.csv", "z.ndjson"}
	src, globs := newSource(t, files)
	ctx := context.Background()

	t.Run("OrderAndStability", func(t *testing.T) {
		units, err := src.List(ctx, globs)
		if err != nil {
			t.Fatalf("List(%q): %v", globs, err)
		}
		if got := names(units); !reflect.DeepEqual(got, want) {
			t.Fatalf("List(%q) names = %q, want %q", globs, got, want)
		}
		for _, u := range units {
			if int(u.Size) != len(files[u.Name]) {
				t.Errorf("unit %q: Size = %d, want %d", u.Name, u.Size, len(files[u.Name]))
			}
			if u.OriginalName != "" {
				t.Errorf("unit %q: OriginalName = %q, want empty for an NFC name", u.Name, u.OriginalName)
			}
		}
		again, err := src.List(ctx, globs)
		if err != nil {
			t.Fatalf("second List: %v", err)
		}
		if !reflect.DeepEqual(again, units) {
			t.Fatalf("List is not stable:\n first %+v\nsecond %+v", units, again)
		}
	})
	t.Run("Deduplicated", func(t *testing.T) {
		units, err := src.List(ctx, append(slices.Clone(globs), globs...))
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if got := names(units); !reflect.DeepEqual(got, want) {
			t.Fatalf("List with every glob twice = %q, want %q", got, want)
		}
	})
	t.Run("NoGlobs", func(t *testing.T) {
		units, err := src.List(ctx, nil)
		if err != nil {
			t.Fatalf("List(nil): %v", err)
		}
		if len(units) != 0 {
			t.Fatalf("List(nil) = %q, want no units", names(units))
		}
	})
	t.Run("NoMatch", func(t *testing.T) {
		units, err := src.List(ctx, []string{"no-such-folder/*.csv"})
		if err != nil {
			t.Fatalf("List of a glob matching nothing: %v, want no error", err)
		}
		if len(units) != 0 {
			t.Fatalf("List of a glob matching nothing = %q, want no units", names(units))
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		units, err := src.List(cctx, globs)
		if err == nil {
			t.Fatalf("List with a canceled context = %q, want an error", names(units))
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("List with a canceled context: %v, want it to wrap context.Canceled", err)
		}
	})
}

func names(units []source.Unit) []string {
	out := []string{}
	for _, u := range units {
		out = append(out, u.Name)
	}
	return out
}

// Short names for the row kinds in the table below.
const (
	d = source.Data
	h = source.Header
	b = source.Blank
	m = source.Malformed
)

type readCase struct {
	name    string
	file    string
	content string
	columns []string
	kinds   []source.RowKind
	lines   []int64 // 1-based start line of each row
}

var readCases = []readCase{
	{
		name:    "csv header and data",
		file:    "t.csv",
		content: "id,name,amount\n1,Ann,12.50\n2,Bob,7\n",
		columns: []string{"id", "name", "amount"},
		kinds:   []source.RowKind{h, d, d},
		lines:   []int64{1, 2, 3},
	},
	{
		name:    "csv blank lines and CRLF",
		file:    "t.csv",
		content: "id,name\r\n1,a\r\n\r\n2,b\r\n",
		columns: []string{"id", "name"},
		kinds:   []source.RowKind{h, d, b, d},
		lines:   []int64{1, 2, 3, 4},
	},
	{
		name:    "csv ragged rows are malformed, not dropped",
		file:    "t.csv",
		content: "id,name\n1,a\n2\n3,c,x\n4,d\n",
		columns: []string{"id", "name"},
		kinds:   []source.RowKind{h, d, m, m, d},
		lines:   []int64{1, 2, 3, 4, 5},
	},
	{
		name:    "csv quoted field spanning lines",
		file:    "t.csv",
		content: "id,note\n1,\"line1\nline2\"\n2,x\n",
		columns: []string{"id", "note"},
		kinds:   []source.RowKind{h, d, d},
		lines:   []int64{1, 2, 4},
	},
	{
		name:    "csv unterminated quote swallows the rest as one malformed row",
		file:    "t.csv",
		content: "id,note\n1,\"open\n2,x\n",
		columns: []string{"id", "note"},
		kinds:   []source.RowKind{h, m},
		lines:   []int64{1, 2},
	},
	{
		name:    "csv without final line ending",
		file:    "t.csv",
		content: "id,v\n1,2",
		columns: []string{"id", "v"},
		kinds:   []source.RowKind{h, d},
		lines:   []int64{1, 2},
	},
	{
		name:    "csv with UTF-8 BOM",
		file:    "t.csv",
		content: "\xEF\xBB\xBFid,v\n1,2\n",
		columns: []string{"id", "v"},
		kinds:   []source.RowKind{h, d},
		lines:   []int64{1, 2},
	},
	{
		name:    "csv empty file",
		file:    "t.csv",
		content: "",
		kinds:   nil,
	},
	{
		name:    "ndjson data, blank, null and malformed lines",
		file:    "t.ndjson",
		content: "{\"id\":1,\"v\":\"a\"}\n\n{\"id\":2,\"v\":null}\nnot json\n{\"id\":3,\"v\":\"c\"}",
		columns: []string{"id", "v"},
		kinds:   []source.RowKind{d, b, d, m, d},
		lines:   []int64{1, 2, 3, 4, 5},
	},
}

func testRead(t *testing.T, newSource NewSource) {
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			content := []byte(tc.content)
			src, globs := newSource(t, map[string][]byte{tc.file: content})
			ctx := context.Background()
			units, err := src.List(ctx, globs)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(units) != 1 || units[0].Name != tc.file {
				t.Fatalf("List = %q, want [%q]", names(units), tc.file)
			}
			u := units[0]
			rr, err := src.Open(ctx, u, source.Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer rr.Close()
			rows, err := ReadAll(rr)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			if tc.columns != nil && !reflect.DeepEqual(rr.Columns(), tc.columns) {
				t.Errorf("Columns() = %q, want %q", rr.Columns(), tc.columns)
			}
			var kinds []source.RowKind
			var lines []int64
			for _, r := range rows {
				kinds = append(kinds, r.Kind)
				lines = append(lines, r.Loc.Line)
			}
			if !reflect.DeepEqual(kinds, tc.kinds) {
				t.Fatalf("kinds = %v, want %v", kinds, tc.kinds)
			}
			if !reflect.DeepEqual(lines, tc.lines) {
				t.Errorf("lines = %v, want %v", lines, tc.lines)
			}
			for i, r := range rows {
				if r.Loc.Unit != u.Name {
					t.Errorf("row %d: Loc.Unit = %q, want %q", i+1, r.Loc.Unit, u.Name)
				}
				if r.Loc.Row != int64(i+1) {
					t.Errorf("row %d: Loc.Row = %d, want %d (1-based, consecutive)", i+1, r.Loc.Row, i+1)
				}
				switch r.Kind {
				case source.Data, source.Header:
					if len(r.Values) != len(rr.Columns()) {
						t.Errorf("row %d (%v): %d values for %d columns", i+1, r.Kind, len(r.Values), len(rr.Columns()))
					}
				case source.Malformed:
					if r.Reason == "" {
						t.Errorf("row %d: malformed without a reason", i+1)
					}
				}
				if r.Nulls != nil && len(r.Nulls) != len(r.Values) {
					t.Errorf("row %d: %d nulls for %d values", i+1, len(r.Nulls), len(r.Values))
				}
			}
			if err := CheckRaw(content, rows); err != nil {
				t.Errorf("rows do not account for every byte: %v", err)
			}
		})
	}
}

func testUnreadable(t *testing.T, newSource NewSource) {
	content := []byte("id,v\n1,\x00\x01\x02\n")
	src, globs := newSource(t, map[string][]byte{"bin.csv": content})
	ctx := context.Background()
	units, err := src.List(ctx, globs)
	if err != nil || len(units) != 1 {
		t.Fatalf("List = %q, %v; want one unit", names(units), err)
	}
	rr, err := src.Open(ctx, units[0], source.Options{})
	if err == nil {
		defer rr.Close()
		_, err = rr.Next()
	}
	if !errors.Is(err, source.ErrUnreadable) {
		t.Fatalf("reading a CSV with NUL bytes: %v, want an error wrapping source.ErrUnreadable", err)
	}
}

func testLifecycle(t *testing.T, newSource NewSource) {
	src, globs := newSource(t, map[string][]byte{"t.csv": []byte("id,v\n1,2\n")})
	ctx := context.Background()
	units, err := src.List(ctx, globs)
	if err != nil || len(units) != 1 {
		t.Fatalf("List = %q, %v; want one unit", names(units), err)
	}
	rr, err := src.Open(ctx, units[0], source.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := ReadAll(rr); err != nil {
		t.Fatalf("reading: %v", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := rr.Next(); err != io.EOF {
			t.Fatalf("Next after io.EOF (call %d) = %v, want io.EOF", i+1, err)
		}
	}
	if err := rr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := rr.Close(); err != nil {
		t.Fatalf("second Close: %v, want nil (Close is idempotent)", err)
	}
	// A reader closed before its end.
	rr, err = src.Open(ctx, units[0], source.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := rr.Next(); err != nil {
		t.Fatalf("Next: %v", err)
	}
	if err := rr.Close(); err != nil {
		t.Fatalf("Close before the end: %v", err)
	}
	if err := rr.Close(); err != nil {
		t.Fatalf("second Close before the end: %v", err)
	}
	if _, err := rr.Next(); err == nil {
		t.Fatalf("Next after Close returned a row, want an error")
	}
}

// ReadAll reads rows until io.EOF. It returns the rows read and the first
// other error.
func ReadAll(rr source.RowReader) ([]source.Row, error) {
	var rows []source.Row
	for {
		r, err := rr.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
}

// CheckRaw checks that the rows of a text unit account for every byte of
// content exactly once, in order: after a UTF-8 BOM, content is the
// concatenation of each row's Raw followed by a line ending ("\n" or
// "\r\n"), except that the last row may have none. Lines must agree: each
// row starts one line after the previous row's start plus the LFs inside
// the previous Raw.
func CheckRaw(content []byte, rows []source.Row) error {
	content = bytes.TrimPrefix(content, []byte("\xEF\xBB\xBF"))
	pos := 0
	line := int64(1)
	for i, r := range rows {
		if r.Loc.Line != line {
			return fmt.Errorf("row %d: Loc.Line = %d, want %d", i+1, r.Loc.Line, line)
		}
		if !bytes.HasPrefix(content[pos:], r.Raw) {
			return fmt.Errorf("row %d: Raw %q is not the content at offset %d (%q)", i+1, r.Raw, pos, clip(content[pos:]))
		}
		pos += len(r.Raw)
		line += int64(bytes.Count(r.Raw, []byte{'\n'}))
		switch {
		case bytes.HasPrefix(content[pos:], []byte("\r\n")):
			pos += 2
		case bytes.HasPrefix(content[pos:], []byte("\n")):
			pos++
		case pos == len(content) && i == len(rows)-1:
		default:
			return fmt.Errorf("row %d: no line ending after Raw %q at offset %d (%q)", i+1, r.Raw, pos, clip(content[pos:]))
		}
		line++
	}
	if pos != len(content) {
		return fmt.Errorf("%d bytes at offset %d belong to no row: %q", len(content)-pos, pos, clip(content[pos:]))
	}
	return nil
}

func clip(b []byte) string {
	s := string(b)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// NewTableSource builds a table-like Source under test (a database or
// DynamoDB table: one unit, no files) holding rows — each a map of column
// to value text, a missing column being a null — and returns it with its
// unit's name. Every value is text (a string column).
type NewTableSource = func(t *testing.T, rows []map[string]string) (src source.Source, unit string)

// RunTable is the conformance suite of a table-like source: listing by
// name or glob, reading every row once as Data with its locator, nulls
// declared by the source, an unknown unit unreadable, and the reader's
// lifecycle. columns are the column names the rows use.
func RunTable(t *testing.T, columns []string, newSource NewTableSource) {
	t.Helper()
	rows := []map[string]string{}
	for i := 0; i < 250; i++ {
		r := map[string]string{}
		for j, c := range columns {
			if j == 0 || (i+j)%4 != 0 { // the first column is never null
				r[c] = fmt.Sprintf("%s-%d", c, i)
			}
		}
		rows = append(rows, r)
	}
	src, unit := newSource(t, rows)
	ctx := context.Background()
	t.Run("List", func(t *testing.T) {
		for _, globs := range [][]string{{unit}, {"*"}, {"**"}, {unit, "*", unit}} {
			units, err := src.List(ctx, globs)
			if err != nil {
				t.Fatalf("List(%q): %v", globs, err)
			}
			if got := names(units); !reflect.DeepEqual(got, []string{unit}) {
				t.Fatalf("List(%q) = %q, want [%q] once", globs, got, unit)
			}
		}
		if units, err := src.List(ctx, nil); err != nil || len(units) != 0 {
			t.Fatalf("List(nil) = %q, %v; want no units", names(units), err)
		}
		if units, err := src.List(ctx, []string{"no-such-table"}); err != nil || len(units) != 0 {
			t.Fatalf("List of a name matching nothing = %q, %v; want no units, no error", names(units), err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := src.List(cctx, []string{"*"}); !errors.Is(err, context.Canceled) {
			t.Fatalf("List with a canceled context: %v, want it to wrap context.Canceled", err)
		}
	})
	t.Run("Read", func(t *testing.T) {
		rr, err := src.Open(ctx, source.Unit{Name: unit, Path: unit}, source.Options{Columns: columns})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer rr.Close()
		if !reflect.DeepEqual(rr.Columns(), columns) {
			t.Fatalf("Columns() = %q, want %q", rr.Columns(), columns)
		}
		got, err := ReadAll(rr)
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		want := map[string]int{}
		for _, r := range rows {
			want[rowKey(columns, r)]++
		}
		for i, r := range got {
			if r.Kind != source.Data {
				t.Fatalf("row %d: kind %v, want data", i+1, r.Kind)
			}
			if r.Loc.Unit != unit || r.Loc.Row != int64(i+1) {
				t.Fatalf("row %d: locator %+v, want unit %q row %d (1-based, consecutive)", i+1, r.Loc, unit, i+1)
			}
			if len(r.Values) != len(columns) || len(r.Nulls) != len(columns) {
				t.Fatalf("row %d: %d values and %d nulls for %d columns", i+1, len(r.Values), len(r.Nulls), len(columns))
			}
			m := map[string]string{}
			for j, c := range columns {
				if !r.Nulls[j] {
					m[c] = r.Values[j]
				}
			}
			k := rowKey(columns, m)
			if want[k] == 0 {
				t.Fatalf("row %d (%s) is not a source row, or read twice", i+1, k)
			}
			want[k]--
		}
		if len(got) != len(rows) {
			t.Fatalf("read %d rows, want %d", len(got), len(rows))
		}
		if c, ok := src.(source.Counter); ok {
			if n, _ := c.ReadTotals(); n != int64(len(rows)) {
				t.Errorf("ReadTotals after the end: %d rows, want %d", n, len(rows))
			}
		}
	})
	t.Run("Unreadable", func(t *testing.T) {
		rr, err := src.Open(ctx, source.Unit{Name: "no-such-table", Path: "no-such-table"}, source.Options{Columns: columns})
		if err == nil {
			defer rr.Close()
			_, err = rr.Next()
		}
		if !errors.Is(err, source.ErrUnreadable) {
			t.Fatalf("reading an unknown unit: %v, want an error wrapping source.ErrUnreadable", err)
		}
	})
	t.Run("Lifecycle", func(t *testing.T) {
		u := source.Unit{Name: unit, Path: unit}
		rr, err := src.Open(ctx, u, source.Options{Columns: columns})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if _, err := ReadAll(rr); err != nil {
			t.Fatalf("reading: %v", err)
		}
		for i := 0; i < 3; i++ {
			if _, err := rr.Next(); err != io.EOF {
				t.Fatalf("Next after io.EOF (call %d) = %v, want io.EOF", i+1, err)
			}
		}
		if err := rr.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := rr.Close(); err != nil {
			t.Fatalf("second Close: %v, want nil (Close is idempotent)", err)
		}
		rr, err = src.Open(ctx, u, source.Options{Columns: columns})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if _, err := rr.Next(); err != nil {
			t.Fatalf("Next: %v", err)
		}
		if err := rr.Close(); err != nil {
			t.Fatalf("Close before the end: %v", err)
		}
		if err := rr.Close(); err != nil {
			t.Fatalf("second Close before the end: %v", err)
		}
		if _, err := rr.Next(); err == nil {
			t.Fatalf("Next after Close returned a row, want an error")
		}
	})
}

func rowKey(columns []string, r map[string]string) string {
	var b strings.Builder
	for _, c := range columns {
		if v, ok := r[c]; ok {
			fmt.Fprintf(&b, "%s=%q;", c, v)
		} else {
			fmt.Fprintf(&b, "%s=NULL;", c)
		}
	}
	return b.String()
}
