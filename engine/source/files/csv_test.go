package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

// wantRow is the part of a row the tables spell out by hand.
type wantRow struct {
	kind   source.RowKind
	values []string
	raw    string
	line   int64
	reason string
}

func openCSV(t *testing.T, in string, opts source.Options, cfg readerConfig) *csvReader {
	t.Helper()
	r, err := newCSVReader(context.Background(), bytes.NewReader([]byte(in)), "t.csv", opts, cfg)
	if err != nil {
		t.Fatalf("newCSVReader: %v", err)
	}
	return r
}

func checkRows(t *testing.T, in string, rr source.RowReader, want []wantRow) {
	t.Helper()
	rows, err := sourcetest.ReadAll(rr)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	for i := 0; i < len(rows) || i < len(want); i++ {
		if i >= len(rows) {
			t.Errorf("row %d missing, want %+v", i+1, want[i])
			continue
		}
		if i >= len(want) {
			t.Errorf("unexpected row %d: %v %q raw %q", i+1, rows[i].Kind, rows[i].Values, rows[i].Raw)
			continue
		}
		got, w := rows[i], want[i]
		if got.Kind != w.kind || !reflect.DeepEqual(got.Values, w.values) || string(got.Raw) != w.raw ||
			got.Loc.Line != w.line || got.Loc.Row != int64(i+1) || got.Reason != w.reason {
			t.Errorf("row %d:\n got  %v %q raw %q line %d row %d reason %q\n want %v %q raw %q line %d row %d reason %q",
				i+1, got.Kind, got.Values, got.Raw, got.Loc.Line, got.Loc.Row, got.Reason,
				w.kind, w.values, w.raw, w.line, i+1, w.reason)
		}
		if got.Nulls != nil {
			t.Errorf("row %d: Nulls = %v, want nil for CSV", i+1, got.Nulls)
		}
	}
	if err := sourcetest.CheckRaw([]byte(in), rows); err != nil {
		t.Errorf("CheckRaw: %v", err)
	}
}

func TestCSV(t *testing.T) {
	const (
		D = source.Data
		H = source.Header
		B = source.Blank
		M = source.Malformed
	)
	tests := []struct {
		name    string
		in      string
		opts    source.Options
		columns []string
		want    []wantRow
	}{
		{
			name:    "CRLF inside quotes is kept byte-exact",
			in:      "id,note\r\n1,\"a\r\nb\"\r\n2,c\r\n",
			columns: []string{"id", "note"},
			want: []wantRow{
				{H, []string{"id", "note"}, "id,note", 1, ""},
				{D, []string{"1", "a\r\nb"}, "1,\"a\r\nb\"", 2, ""},
				{D, []string{"2", "c"}, "2,c", 4, ""},
			},
		},
		{
			name:    "bare CR and LF inside quotes",
			in:      "a,b\n\"x\ry\",\"p\nq\"\n",
			opts:    source.Options{Header: "no"},
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"a", "b"}, "a,b", 1, ""},
				{D, []string{"x\ry", "p\nq"}, "\"x\ry\",\"p\nq\"", 2, ""},
			},
		},
		{
			name:    "embedded LF makes the record span lines",
			in:      "id,text,n\n1,\"one\ntwo\nthree\",5\n2,x,6\n",
			columns: []string{"id", "text", "n"},
			want: []wantRow{
				{H, []string{"id", "text", "n"}, "id,text,n", 1, ""},
				{D, []string{"1", "one\ntwo\nthree", "5"}, "1,\"one\ntwo\nthree\",5", 2, ""},
				{D, []string{"2", "x", "6"}, "2,x,6", 5, ""},
			},
		},
		{
			name:    "UTF-8 BOM is stripped",
			in:      "\xEF\xBB\xBFname,qty\nfoo,1\n",
			columns: []string{"name", "qty"},
			want: []wantRow{
				{H, []string{"name", "qty"}, "name,qty", 1, ""},
				{D, []string{"foo", "1"}, "foo,1", 2, ""},
			},
		},
		{
			name:    "semicolon detected, decimal comma kept",
			in:      "item;price;qty\nfoo;2,50;3\nbar;1,25;4\n",
			columns: []string{"item", "price", "qty"},
			want: []wantRow{
				{H, []string{"item", "price", "qty"}, "item;price;qty", 1, ""},
				{D, []string{"foo", "2,50", "3"}, "foo;2,50;3", 2, ""},
				{D, []string{"bar", "1,25", "4"}, "bar;1,25;4", 3, ""},
			},
		},
		{
			name:    "tab detected",
			in:      "a\tb\tc\n1\t2, 3\t4\n",
			columns: []string{"a", "b", "c"},
			want: []wantRow{
				{H, []string{"a", "b", "c"}, "a\tb\tc", 1, ""},
				{D, []string{"1", "2, 3", "4"}, "1\t2, 3\t4", 2, ""},
			},
		},
		{
			name:    "pipe detected",
			in:      "x|y\n1|2\n",
			columns: []string{"x", "y"},
			want: []wantRow{
				{H, []string{"x", "y"}, "x|y", 1, ""},
				{D, []string{"1", "2"}, "1|2", 2, ""},
			},
		},
		{
			name:    "delimiter tie goes to comma",
			in:      "a,b;c\n1,2;3\n",
			opts:    source.Options{Header: "no"},
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"a", "b;c"}, "a,b;c", 1, ""},
				{D, []string{"1", "2;3"}, "1,2;3", 2, ""},
			},
		},
		{
			name:    "delimiter inside quotes does not count for detection",
			in:      "\"a;b\",c\n\"1;2\",3\n",
			opts:    source.Options{Header: "no"},
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"a;b", "c"}, "\"a;b\",c", 1, ""},
				{D, []string{"1;2", "3"}, "\"1;2\",3", 2, ""},
			},
		},
		{
			name:    "header auto: text over numbers is a header",
			in:      "id,day\n7,2024-01-31\n",
			columns: []string{"id", "day"},
			want: []wantRow{
				{H, []string{"id", "day"}, "id,day", 1, ""},
				{D, []string{"7", "2024-01-31"}, "7,2024-01-31", 2, ""},
			},
		},
		{
			name:    "header auto: text over text is data",
			in:      "foo,bar\nbaz,qux\n",
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"foo", "bar"}, "foo,bar", 1, ""},
				{D, []string{"baz", "qux"}, "baz,qux", 2, ""},
			},
		},
		{
			name:    "header auto: numbers first is data",
			in:      "1,2\n3,4\n",
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"1", "2"}, "1,2", 1, ""},
				{D, []string{"3", "4"}, "3,4", 2, ""},
			},
		},
		{
			name:    "header auto: repeated names are data",
			in:      "a,a\n1,2\n",
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"a", "a"}, "a,a", 1, ""},
				{D, []string{"1", "2"}, "1,2", 2, ""},
			},
		},
		{
			name:    "header auto: matches expected columns by folded name",
			in:      " Customer ID ,AMOUNT,Note\nC1,x,y\n",
			opts:    source.Options{Columns: []string{"customer_id", "amount", "note"}},
			columns: []string{"Customer ID", "AMOUNT", "Note"},
			want: []wantRow{
				{H, []string{" Customer ID ", "AMOUNT", "Note"}, " Customer ID ,AMOUNT,Note", 1, ""},
				{D, []string{"C1", "x", "y"}, "C1,x,y", 2, ""},
			},
		},
		{
			name:    "header auto: expected columns not matched, headerless file named by them",
			in:      "C1,x,y\nC2,z,w\n",
			opts:    source.Options{Columns: []string{"customer_id", "amount", "note"}},
			columns: []string{"customer_id", "amount", "note"},
			want: []wantRow{
				{D, []string{"C1", "x", "y"}, "C1,x,y", 1, ""},
				{D, []string{"C2", "z", "w"}, "C2,z,w", 2, ""},
			},
		},
		{
			name:    "header no: expected columns with another count give col_n",
			in:      "1,2,3\n",
			opts:    source.Options{Header: "no", Columns: []string{"a", "b"}},
			columns: []string{"col_1", "col_2", "col_3"},
			want: []wantRow{
				{D, []string{"1", "2", "3"}, "1,2,3", 1, ""},
			},
		},
		{
			name:    "header yes: empty and repeated names are made unique",
			in:      "a,,a\n1,2,3\n",
			opts:    source.Options{Header: "yes"},
			columns: []string{"a", "col_2", "a_2"},
			want: []wantRow{
				{H, []string{"a", "", "a"}, "a,,a", 1, ""},
				{D, []string{"1", "2", "3"}, "1,2,3", 2, ""},
			},
		},
		{
			name:    "ragged rows are malformed with what was split",
			in:      "a,b,c\n1,2,3\n4,5\n6,7,8,9\n",
			opts:    source.Options{Header: "yes"},
			columns: []string{"a", "b", "c"},
			want: []wantRow{
				{H, []string{"a", "b", "c"}, "a,b,c", 1, ""},
				{D, []string{"1", "2", "3"}, "1,2,3", 2, ""},
				{M, []string{"4", "5"}, "4,5", 3, "expected 3 fields, found 2"},
				{M, []string{"6", "7", "8", "9"}, "6,7,8,9", 4, "expected 3 fields, found 4"},
			},
		},
		{
			name:    "unterminated quote at EOF: the rest is one malformed row",
			in:      "a,b\n1,2\n3,\"open\n4,5\r\n6,7\n",
			opts:    source.Options{Header: "yes"},
			columns: []string{"a", "b"},
			want: []wantRow{
				{H, []string{"a", "b"}, "a,b", 1, ""},
				{D, []string{"1", "2"}, "1,2", 2, ""},
				{M, []string{"3", "open\n4,5\r\n6,7\n"}, "3,\"open\n4,5\r\n6,7\n", 3, "unterminated quoted field starting at line 3"},
			},
		},
		{
			name:    "unterminated quote on a later line of the record",
			in:      "\"x\ny\",\"z\n",
			opts:    source.Options{Header: "no", Delimiter: ','},
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{M, []string{"x\ny", "z\n"}, "\"x\ny\",\"z\n", 1, "unterminated quoted field starting at line 2"},
			},
		},
		{
			name:    "data after a closing quote is malformed",
			in:      "a,b\n\"ab\"c,d\n",
			opts:    source.Options{Header: "yes"},
			columns: []string{"a", "b"},
			want: []wantRow{
				{H, []string{"a", "b"}, "a,b", 1, ""},
				{M, []string{"abc", "d"}, "\"ab\"c,d", 2, "unexpected character 'c' after the closing quote of field 1"},
			},
		},
		{
			name:    "stray quote inside an unquoted field is literal",
			in:      "a,b\nx\"y,5\"\n",
			opts:    source.Options{Header: "yes"},
			columns: []string{"a", "b"},
			want: []wantRow{
				{H, []string{"a", "b"}, "a,b", 1, ""},
				{D, []string{"x\"y", "5\""}, "x\"y,5\"", 2, ""},
			},
		},
		{
			name:    "doubled quotes, empty quoted field, no trimming",
			in:      "a,b,c\n\"say \"\"hi\"\"\",\"\", sp \n",
			opts:    source.Options{Header: "yes"},
			columns: []string{"a", "b", "c"},
			want: []wantRow{
				{H, []string{"a", "b", "c"}, "a,b,c", 1, ""},
				{D, []string{"say \"hi\"", "", " sp "}, "\"say \"\"hi\"\"\",\"\", sp ", 2, ""},
			},
		},
		{
			name:    "blank lines are counted and kept",
			in:      "a,b\n\n1,2\r\n\r\n3,4\n\r",
			opts:    source.Options{Header: "yes"},
			columns: []string{"a", "b"},
			want: []wantRow{
				{H, []string{"a", "b"}, "a,b", 1, ""},
				{B, nil, "", 2, ""},
				{D, []string{"1", "2"}, "1,2", 3, ""},
				{B, nil, "", 4, ""},
				{D, []string{"3", "4"}, "3,4", 5, ""},
				{B, nil, "\r", 6, ""},
			},
		},
		{
			name:    "leading blank line before the header",
			in:      "\nid,v\n1,2\n",
			columns: []string{"id", "v"},
			want: []wantRow{
				{B, nil, "", 1, ""},
				{H, []string{"id", "v"}, "id,v", 2, ""},
				{D, []string{"1", "2"}, "1,2", 3, ""},
			},
		},
		{
			name:    "trailing delimiter is an empty last field",
			in:      "a,b,\n",
			opts:    source.Options{Header: "no"},
			columns: []string{"col_1", "col_2", "col_3"},
			want: []wantRow{
				{D, []string{"a", "b", ""}, "a,b,", 1, ""},
			},
		},
		{
			name:    "lone CR at EOF is data, not a line ending",
			in:      "a,b\r",
			opts:    source.Options{Header: "no"},
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"a", "b\r"}, "a,b\r", 1, ""},
			},
		},
		{
			name:    "explicit delimiter and quote",
			in:      "'a;b':c\n'it''s':d\n",
			opts:    source.Options{Header: "no", Delimiter: ':', Quote: '\''},
			columns: []string{"col_1", "col_2"},
			want: []wantRow{
				{D, []string{"a;b", "c"}, "'a;b':c", 1, ""},
				{D, []string{"it's", "d"}, "'it''s':d", 2, ""},
			},
		},
		{
			name:    "empty file",
			in:      "",
			opts:    source.Options{Columns: []string{"a"}},
			columns: []string{"a"},
			want:    nil,
		},
		{
			name:    "only a BOM",
			in:      "\xEF\xBB\xBF",
			columns: nil,
			want:    nil,
		},
	}
	small := readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := openCSV(t, tc.in, tc.opts, csvDefaults)
			if got := r.Columns(); !reflect.DeepEqual(got, tc.columns) {
				t.Errorf("Columns() = %q, want %q", got, tc.columns)
			}
			checkRows(t, tc.in, r, tc.want)

			// With delimiter and header settled, a 16-byte buffer must read
			// the same rows: records cross buffer boundaries.
			opts := tc.opts
			if opts.Delimiter == 0 {
				opts.Delimiter = rune(r.delim)
			}
			opts.Header = "no"
			for _, w := range tc.want {
				if w.kind == H {
					opts.Header = "yes"
				}
			}
			checkRows(t, tc.in, openCSV(t, tc.in, opts, small), tc.want)
		})
	}
}

func TestCSVSmallBuffer(t *testing.T) {
	in := "id,text\r\n1,\"a long quoted value\r\nthat spans\r\nlines, with \"\"quotes\"\"\"\r\n2,plain value longer than sixteen bytes\r\n\r\n3,\"x\"\r\n"
	want := []wantRow{
		{source.Header, []string{"id", "text"}, "id,text", 1, ""},
		{source.Data, []string{"1", "a long quoted value\r\nthat spans\r\nlines, with \"quotes\""}, "1,\"a long quoted value\r\nthat spans\r\nlines, with \"\"quotes\"\"\"", 2, ""},
		{source.Data, []string{"2", "plain value longer than sixteen bytes"}, "2,plain value longer than sixteen bytes", 5, ""},
		{source.Blank, nil, "", 6, ""},
		{source.Data, []string{"3", "x"}, "3,\"x\"", 7, ""},
	}
	opts := source.Options{Header: "yes", Delimiter: ','}
	for _, size := range []int{16, 17, 19, 23, 64} {
		cfg := readerConfig{bufSize: size, sampleSize: 16, maxRecord: 1 << 20}
		checkRows(t, in, openCSV(t, in, opts, cfg), want)
	}
}

func TestCSVUnreadable(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		reason string
	}{
		{"NUL bytes", "id,name\n1,\x00\x00\x00\n", "binary content (NUL bytes), not a CSV file"},
		{"NUL after BOM", "\xEF\xBB\xBF\x00", "binary content (NUL bytes), not a CSV file"},
		// UTF-16 is decoded now (encoding_test.go); UTF-32 is still refused.
		{"UTF-32 LE BOM", "\xFF\xFE\x00\x00i\x00\x00\x00", "UTF-32 encoded text (byte order mark): convert the file to UTF-8"},
		{"UTF-32 BE BOM", "\x00\x00\xFE\xFF\x00\x00\x00i", "UTF-32 encoded text (byte order mark): convert the file to UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newCSVReader(context.Background(), strings.NewReader(tc.in), "t.csv", source.Options{}, csvDefaults)
			if !errors.Is(err, source.ErrUnreadable) {
				t.Fatalf("err = %v, want it to wrap source.ErrUnreadable", err)
			}
			var ue *UnreadableError
			if !errors.As(err, &ue) || ue.Reason != tc.reason || ue.Unit != "t.csv" {
				t.Fatalf("err = %#v, want an *UnreadableError for t.csv with reason %q", err, tc.reason)
			}
		})
	}
}

func TestCSVNULAfterFirst8KiBIsData(t *testing.T) {
	in := "a,b\n" + strings.Repeat("x,y\n", 2100) + "\x00,z\n" // NUL at byte 8404
	r := openCSV(t, in, source.Options{Header: "yes"}, csvDefaults)
	rows, err := sourcetest.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2102 {
		t.Fatalf("%d rows, want 2102", len(rows))
	}
	if last := rows[len(rows)-1]; last.Kind != source.Data || last.Values[0] != "\x00" {
		t.Fatalf("last row = %v %q, want data [\"\\x00\" \"z\"]", last.Kind, last.Values)
	}
}

func TestCSVRecordTooLong(t *testing.T) {
	// An unterminated quote runs to the end of the file: one record of
	// 104 bytes (its LF included) over the 64-byte limit, kept cut.
	in := "a,b\n1,\"" + strings.Repeat("x", 100) + "\n"
	cfg := readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 64}
	r := openCSV(t, in, source.Options{Header: "yes", Delimiter: ','}, cfg)
	if row, err := r.Next(); err != nil || row.Kind != source.Header {
		t.Fatalf("first Next = %v, %v; want the header", row.Kind, err)
	}
	row, err := r.Next()
	if err != nil || row.Kind != source.Malformed || row.Rule != source.RuleRecordTooLarge || string(row.Raw) != in[4:68] ||
		row.Reason != "record of 104 bytes is longer than the limit of 64 bytes (etl.max_record_bytes); only its first 64 bytes are kept; it runs to the end of the file inside a quoted field: is a quote unterminated?" {
		t.Fatalf("second Next = %v rule %q raw %q reason %q, %v; want the record cut at 64 bytes", row.Kind, row.Rule, row.Raw, row.Reason, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("third Next = %v, want io.EOF", err)
	}
}

// The first record too large to know the columns: the file is held whole.
func TestCSVFirstRecordTooLarge(t *testing.T) {
	in := "a," + strings.Repeat("b", 200) + "\n1,2\n"
	cfg := readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 64}
	_, err := newCSVReader(context.Background(), strings.NewReader(in), "t.csv", source.Options{Delimiter: ','}, cfg)
	var ue *UnreadableError
	if !errors.As(err, &ue) || ue.Reason != "the first record: record of 202 bytes is longer than the limit of 64 bytes (etl.max_record_bytes); only its first 64 bytes are kept" {
		t.Fatalf("err = %v, want the file unreadable for its first record", err)
	}
}

func TestCSVOptionErrors(t *testing.T) {
	for _, opts := range []source.Options{
		{Delimiter: '\n'},
		{Delimiter: '"'},
		{Delimiter: '§'},
		{Quote: '«'},
		{Header: "maybe"},
	} {
		if _, err := newCSVReader(context.Background(), strings.NewReader("a,b\n"), "t.csv", opts, csvDefaults); err == nil {
			t.Errorf("options %+v: no error", opts)
		}
	}
}

func TestCSVContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, err := newCSVReader(ctx, strings.NewReader("a\n1\n"), "t.csv", source.Options{}, csvDefaults)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := r.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel = %v, want context.Canceled", err)
	}
}

func TestLooksNumericAndDate(t *testing.T) {
	for s, want := range map[string]bool{
		"12": true, "-1.5": true, "1,234.50": true, "1.234,5": true, "€ 12": true, "12%": true, "1e5": true,
		"id": false, "NaN": false, "Inf": false, "": false, "12a": false, "-": false,
	} {
		if got := looksNumeric(s); got != want {
			t.Errorf("looksNumeric(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{
		"2024-01-31": true, "31.01.2024": true, "1/31/24": true, "2024-01-31T10:00:00Z": true, "2024-01-31 10:00": true,
		"2024-01": false, "name": false, "12345-1-1": false, "2024-01-31x": false,
	} {
		if got := looksDate(s); got != want {
			t.Errorf("looksDate(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCSVDialect(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"a.csv": []byte("x;y\n1;2\n"), "b.csv": []byte("p|q\nr|s\n")})
	src := New(dir)
	for name, want := range map[string]Dialect{
		"a.csv": {Delimiter: ';', Quote: '"', Header: true},
		"b.csv": {Delimiter: '|', Quote: '"', Header: false},
	} {
		rr, err := src.Open(context.Background(), source.Unit{Name: name}, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d, ok := rr.(interface{ Dialect() Dialect })
		if !ok {
			t.Fatalf("%s: reader has no Dialect capability", name)
		}
		if got := d.Dialect(); got != want {
			t.Errorf("%s: Dialect() = %+v, want %+v", name, got, want)
		}
		rr.Close()
	}
}

func TestCSVManyLeadingBlankLines(t *testing.T) {
	in := strings.Repeat("\n", 5000) + "id,v\n1,2\n"
	cfg := readerConfig{bufSize: 64, sampleSize: 64, maxRecord: 1 << 20}
	r := openCSV(t, in, source.Options{Header: "yes"}, cfg)
	rows, err := sourcetest.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5002 || rows[5000].Kind != source.Header || rows[5001].Kind != source.Data ||
		rows[5001].Loc.Line != 5002 || !reflect.DeepEqual(r.Columns(), []string{"id", "v"}) {
		t.Fatalf("%d rows, columns %q, last %+v", len(rows), r.Columns(), rows[len(rows)-1])
	}
	if err := sourcetest.CheckRaw([]byte(in), rows); err != nil {
		t.Fatal(err)
	}
}

func TestCSVFirstRecordLongerThanSample(t *testing.T) {
	in := "\n\"" + strings.Repeat("long header ", 10) + "\",b\n1,2\n"
	cfg := readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}
	r := openCSV(t, in, source.Options{Delimiter: ',', Header: "yes"}, cfg)
	want := []string{strings.TrimSpace(strings.Repeat("long header ", 10)), "b"}
	if !reflect.DeepEqual(r.Columns(), want) {
		t.Fatalf("Columns() = %q, want %q", r.Columns(), want)
	}
	rows, err := sourcetest.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Kind != source.Blank || rows[1].Kind != source.Header || rows[2].Kind != source.Data {
		t.Fatalf("rows = %+v", rows)
	}
}
