package files

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/lima-lake/lima/engine/source"
)

// saveBook writes the workbook below dir as name and returns its bytes.
func saveBook(t *testing.T, f *excelize.File, dir, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func style(t *testing.T, f *excelize.File, code string) int {
	t.Helper()
	id, err := f.NewStyle(&excelize.Style{CustomNumFmt: &code})
	must(t, err)
	return id
}

// readAll opens the unit and returns its columns and rows.
func readAll(t *testing.T, dir string, u source.Unit, opts source.Options) ([]string, []source.Row) {
	t.Helper()
	rr, err := New(dir).Open(context.Background(), u, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", u.Name, err)
	}
	defer rr.Close()
	var rows []source.Row
	for {
		r, err := rr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next after %d rows: %v", len(rows), err)
		}
		rows = append(rows, r)
	}
	return rr.Columns(), rows
}

// ordersBook is the workbook of TestXLSXRead: sheet "Orders" (first) and
// "Notes" (second), "Secret" hidden.
func ordersBook(t *testing.T) *excelize.File {
	t.Helper()
	f := excelize.NewFile()
	must(t, f.SetSheetName("Sheet1", "Orders"))
	dateSt := style(t, f, "dd.mm.yyyy")
	dtSt := style(t, f, "dd.mm.yyyy hh:mm")
	timeSt := style(t, f, "h:mm AM/PM")
	moneySt := style(t, f, `#,##0.00 "€";[Red]-#,##0.00 "€"`)
	builtinDate, err := f.NewStyle(&excelize.Style{NumFmt: 14})
	must(t, err)
	set := func(cell string, v any, st int) {
		must(t, f.SetCellValue("Orders", cell, v))
		if st != 0 {
			must(t, f.SetCellStyle("Orders", cell, cell, st))
		}
	}
	for i, h := range []string{"id", "customer", "order_date", "amount", "doubled", "region", "shipped_at", "paid", "slot"} {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		set(cell, h, 0)
	}
	// Row 2: zero-padded id stored as text, a date, a formula with its
	// cached value, a merged region F2:F3.
	set("A2", "0042", 0)
	set("B2", "ACME <GmbH>", 0)
	set("C2", 46027, dateSt) // 2026-01-05
	set("D2", 150.5, moneySt)
	set("E2", 301, 0)
	must(t, f.SetCellFormula("Orders", "E2", "D2*2"))
	set("F2", "North", 0)
	must(t, f.MergeCell("Orders", "F2", "F3"))
	set("G2", 46027.4375, dtSt) // 10:30
	set("H2", true, 0)
	set("I2", 0.75, timeSt)
	// Row 3: a negative amount, a formula never calculated (no cached
	// value), a datetime at midnight, a date-only format with a time.
	set("A3", "0043", 0)
	set("B3", "Bolt", 0)
	set("C3", 46028.25, dateSt)
	set("D3", -12.25, moneySt)
	must(t, f.SetCellFormula("Orders", "E3", "D3*2"))
	set("G3", 46028, dtSt)
	set("H3", false, 0)
	// Row 4 is empty. Row 5: a serial number without a date format stays a
	// number; a built-in date format; trailing cells missing.
	set("A5", "0044", 0)
	set("B5", "Cog", 0)
	set("C5", 46023, builtinDate)
	set("D5", 46023, 0)
	// A second sheet and a hidden one.
	_, err = f.NewSheet("Notes")
	must(t, err)
	must(t, f.SetCellValue("Notes", "A1", "note"))
	must(t, f.SetCellValue("Notes", "A2", "hello"))
	_, err = f.NewSheet("Secret")
	must(t, err)
	must(t, f.SetSheetVisible("Secret", false))
	return f
}

func TestXLSXRead(t *testing.T) {
	dir := t.TempDir()
	saveBook(t, ordersBook(t), dir, "book.xlsx")
	cols, rows := readAll(t, dir, source.Unit{Name: "book.xlsx"}, source.Options{})
	wantCols := []string{"id", "customer", "order_date", "amount", "doubled", "region", "shipped_at", "paid", "slot"}
	if !reflect.DeepEqual(cols, wantCols) {
		t.Fatalf("Columns = %q, want %q", cols, wantCols)
	}
	want := []struct {
		kind   source.RowKind
		values []string
	}{
		{source.Header, wantCols},
		{source.Data, []string{"0042", "ACME <GmbH>", "2026-01-05", "150.5", "301", "North", "2026-01-05T10:30:00", "TRUE", "18:00:00"}},
		{source.Data, []string{"0043", "Bolt", "2026-01-06T06:00:00", "-12.25", "", "North", "2026-01-06T00:00:00", "FALSE", ""}},
		{source.Blank, nil},
		{source.Data, []string{"0044", "Cog", "2026-01-01", "46023", "", "", "", "", ""}},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Kind != w.kind || !reflect.DeepEqual(r.Values, w.values) {
			t.Errorf("row %d = %v %q, want %v %q", i+1, r.Kind, r.Values, w.kind, w.values)
		}
		if r.Loc != (source.Locator{Unit: "book.xlsx", Row: int64(i + 1)}) {
			t.Errorf("row %d: Loc = %+v", i+1, r.Loc)
		}
	}
	// Raw: the row's own cells as JSON, before the merged-range fill.
	if got, want := string(rows[2].Raw), `["0043","Bolt","2026-01-06T06:00:00","-12.25","","","2026-01-06T00:00:00","FALSE"]`; got != want {
		t.Errorf("row 3 Raw = %s, want %s", got, want)
	}
	if got := string(rows[1].Raw); !strings.Contains(got, `"ACME <GmbH>"`) {
		t.Errorf("row 2 Raw = %s, want HTML characters unescaped", got)
	}
	if got := string(rows[3].Raw); got != "[]" {
		t.Errorf("blank row Raw = %s, want []", got)
	}
	for _, r := range rows {
		for _, v := range r.Values {
			if strings.Contains(v, "D2") || strings.Contains(v, xlsxMark) {
				t.Errorf("row %d: value %q leaks a formula or a marker", r.Loc.Row, v)
			}
		}
	}
}

func TestXLSXSheets(t *testing.T) {
	dir := t.TempDir()
	saveBook(t, ordersBook(t), dir, "book.xlsx")
	got, err := Sheets(filepath.Join(dir, "book.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Orders", "Notes"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Sheets = %q, want %q (hidden sheet left out)", got, want)
	}
	units, err := New(dir).List(context.Background(), []string{"*.xlsx"})
	if err != nil || len(units) != 1 {
		t.Fatalf("List = %+v, %v", units, err)
	}
	for _, name := range []string{"Notes", "notes"} {
		u := SheetUnit(units[0], name)
		if u.Name != "book.xlsx#"+name || !strings.HasSuffix(u.Path, "book.xlsx#"+name) {
			t.Fatalf("SheetUnit = %+v", u)
		}
		cols, rows := readAll(t, dir, u, source.Options{})
		if !reflect.DeepEqual(cols, []string{"note"}) || len(rows) != 2 || rows[1].Values[0] != "hello" {
			t.Errorf("sheet %q: columns %q rows %+v", name, cols, rows)
		}
		if rows[1].Loc.Unit != "book.xlsx#"+name {
			t.Errorf("Loc.Unit = %q", rows[1].Loc.Unit)
		}
	}
	// Globs may select a sheet; other globs list files as ever.
	must(t, os.WriteFile(filepath.Join(dir, "a.csv"), []byte("id\n1\n"), 0o644))
	units, err = New(dir).List(context.Background(), []string{"*.xlsx#Notes", "*.csv", "*.csv#Notes", "book.xlsx#Notes"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range units {
		names = append(names, u.Name)
	}
	if want := []string{"a.csv", "book.xlsx#Notes"}; !reflect.DeepEqual(names, want) {
		t.Errorf("List with sheet globs = %q, want %q", names, want)
	}
	if _, rows := readAll(t, dir, units[1], source.Options{}); len(rows) != 2 || rows[1].Values[0] != "hello" {
		t.Errorf("listed sheet unit reads %+v", rows)
	}
	// By name only (no Path), and a hidden sheet named explicitly.
	if _, rows := readAll(t, dir, source.Unit{Name: "book.xlsx#Secret"}, source.Options{}); len(rows) != 0 {
		t.Errorf("hidden sheet rows = %+v, want none", rows)
	}
	_, err = New(dir).Open(context.Background(), source.Unit{Name: "book.xlsx#Nope"}, source.Options{})
	var ue *UnreadableError
	if !errors.As(err, &ue) || !errors.Is(err, source.ErrUnreadable) ||
		ue.Reason != `no sheet named "Nope" (sheets: "Orders", "Notes", "Secret")` {
		t.Errorf("unknown sheet: %v", err)
	}
	// Format "xlsx" forces the reader whatever the extension.
	must(t, os.Rename(filepath.Join(dir, "book.xlsx"), filepath.Join(dir, "book.bin")))
	rr, err := New(dir).Open(context.Background(), source.Unit{Name: "book.bin"}, source.Options{Format: "xlsx"})
	if err != nil {
		t.Fatal(err)
	}
	if s := rr.(interface{ Sheet() string }).Sheet(); s != "Orders" {
		t.Errorf("Sheet() = %q, want Orders", s)
	}
	rr.Close()
}

func TestSplitSheet(t *testing.T) {
	for _, tc := range []struct{ in, file, sheet string }{
		{"book.xlsx", "book.xlsx", ""},
		{"book.xlsx#Sheet 2", "book.xlsx", "Sheet 2"},
		{"/a/B.XLSX#Q1#2", "/a/B.XLSX", "Q1#2"},
		{"dir.xlsx#x/book.xlsx#S", "dir.xlsx#x/book.xlsx", "S"},
		{"dir.xlsx#x/book.xlsx", "dir.xlsx#x/book.xlsx", ""},
		{"book.xlsm#Data", "book.xlsm", "Data"},
		{"book.xlsx#", "book.xlsx#", ""},
		{"a#b.csv", "a#b.csv", ""},
	} {
		file, sheet := splitSheet(tc.in)
		if file != tc.file || sheet != tc.sheet {
			t.Errorf("splitSheet(%q) = %q, %q; want %q, %q", tc.in, file, sheet, tc.file, tc.sheet)
		}
	}
}

func TestXLSXPreambleAndHeader(t *testing.T) {
	dir := t.TempDir()
	f := excelize.NewFile()
	must(t, f.SetCellValue("Sheet1", "A1", "Open items report"))
	must(t, f.MergeCell("Sheet1", "A1", "C1"))
	must(t, f.SetCellValue("Sheet1", "A2", "Company code"))
	must(t, f.SetCellValue("Sheet1", "B2", 1000))
	must(t, f.SetSheetRow("Sheet1", "A4", &[]any{"Doc", "Amount", "Region"}))
	must(t, f.SetSheetRow("Sheet1", "A5", &[]any{"D1", 10, "North"}))
	must(t, f.MergeCell("Sheet1", "C5", "C6"))
	must(t, f.SetSheetRow("Sheet1", "A6", &[]any{"D2", 20}))
	saveBook(t, f, dir, "r.xlsx")
	cols, rows := readAll(t, dir, source.Unit{Name: "r.xlsx"}, source.Options{})
	if want := []string{"Doc", "Amount", "Region"}; !reflect.DeepEqual(cols, want) {
		t.Fatalf("Columns = %q, want %q", cols, want)
	}
	kinds := make([]source.RowKind, len(rows))
	for i, r := range rows {
		kinds[i] = r.Kind
	}
	wantKinds := []source.RowKind{source.Header, source.Header, source.Blank, source.Header, source.Data, source.Data}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Fatalf("kinds = %v, want %v", kinds, wantKinds)
	}
	if got := rows[5].Values; !reflect.DeepEqual(got, []string{"D2", "20", "North"}) {
		t.Errorf("row 6 = %q, want the merged region filled", got)
	}

	// Header "no": every non-blank row is data, columns col_i.
	cols, rows = readAll(t, dir, source.Unit{Name: "r.xlsx"}, source.Options{Header: "no"})
	if want := []string{"col_1", "col_2", "col_3"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("Header no: Columns = %q, want %q", cols, want)
	}
	if rows[0].Kind != source.Data || rows[0].Values[2] != "Open items report" {
		t.Errorf("Header no: row 1 = %v %q", rows[0].Kind, rows[0].Values)
	}
	// Expected columns find the header by name.
	cols, _ = readAll(t, dir, source.Unit{Name: "r.xlsx"}, source.Options{Columns: []string{"doc", "amount", "region"}})
	if want := []string{"Doc", "Amount", "Region"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("with expected columns: Columns = %q, want %q", cols, want)
	}
}

func TestXLSXHeaderlessAndWideRows(t *testing.T) {
	dir := t.TempDir()
	f := excelize.NewFile()
	must(t, f.SetSheetRow("Sheet1", "A1", &[]any{1, "a"}))
	must(t, f.SetSheetRow("Sheet1", "A2", &[]any{2}))
	for r := 3; r <= 12; r++ {
		must(t, f.SetSheetRow("Sheet1", fmt.Sprintf("A%d", r), &[]any{r, "x"}))
	}
	must(t, f.SetSheetRow("Sheet1", "A13", &[]any{13, "y", "beyond"}))
	saveBook(t, f, dir, "n.xlsx")
	cols, rows := readAll(t, dir, source.Unit{Name: "n.xlsx"}, source.Options{})
	if want := []string{"col_1", "col_2"}; !reflect.DeepEqual(cols, want) {
		t.Fatalf("Columns = %q, want %q", cols, want)
	}
	if r := rows[1]; r.Kind != source.Data || !reflect.DeepEqual(r.Values, []string{"2", ""}) {
		t.Errorf("short row = %v %q, want padded", r.Kind, r.Values)
	}
	last := rows[len(rows)-1]
	if last.Kind != source.Malformed || !reflect.DeepEqual(last.Values, []string{"13", "y", "beyond"}) ||
		last.Reason != "a value in column C, beyond the 2 columns of the sheet" {
		t.Errorf("wide row = %v %q %q", last.Kind, last.Values, last.Reason)
	}
	cols, _ = readAll(t, dir, source.Unit{Name: "n.xlsx"}, source.Options{Columns: []string{"id", "code", "extra"}})
	if want := []string{"id", "code", "extra"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("expected columns: Columns = %q, want %q", cols, want)
	}
}

func TestXLSXEmptyAndLargeSheet(t *testing.T) {
	dir := t.TempDir()
	f := excelize.NewFile()
	saveBook(t, f, dir, "empty.xlsx")
	cols, rows := readAll(t, dir, source.Unit{Name: "empty.xlsx"}, source.Options{})
	if len(cols) != 0 || len(rows) != 0 {
		t.Errorf("empty sheet: columns %q rows %d", cols, len(rows))
	}

	// A sheet written with the stream writer, large enough that its XML
	// goes to a temporary file rather than memory.
	f = excelize.NewFile()
	sw, err := f.NewStreamWriter("Sheet1")
	must(t, err)
	must(t, sw.SetRow("A1", []any{"id", "name", "amount"}))
	const n = 60_000
	pad := strings.Repeat("x", 300)
	for i := 2; i <= n+1; i++ {
		cell, _ := excelize.CoordinatesToCellName(1, i)
		must(t, sw.SetRow(cell, []any{i - 1, pad, float64(i) / 4}))
	}
	must(t, sw.Flush())
	raw := saveBook(t, f, dir, "big.xlsx")
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	must(t, err)
	for _, zf := range zr.File {
		if zf.Name == "xl/worksheets/sheet1.xml" && zf.UncompressedSize64 <= xlsxXMLInMemory {
			t.Fatalf("sheet XML is %d bytes, want more than %d", zf.UncompressedSize64, xlsxXMLInMemory)
		}
	}
	rr, err := New(dir).Open(context.Background(), source.Unit{Name: "big.xlsx"}, source.Options{})
	must(t, err)
	defer rr.Close()
	count := 0
	var last source.Row
	for {
		r, err := rr.Next()
		if err == io.EOF {
			break
		}
		must(t, err)
		count++
		last = r
	}
	if count != n+1 || last.Loc.Row != n+1 || last.Values[0] != fmt.Sprint(n) || last.Values[2] != fmt.Sprint(float64(n+1)/4) {
		t.Errorf("big sheet: %d rows, last %+v", count, last.Values[:1])
	}
	if err := rr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := rr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := rr.Next(); err == nil || err == io.EOF {
		t.Errorf("Next after Close = %v, want an error", err)
	}
}

// rewriteZip copies the archive, passing each entry's content through edit.
func rewriteZip(t *testing.T, raw []byte, edit func(name string, b []byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	must(t, err)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, zf := range zr.File {
		rc, err := zf.Open()
		must(t, err)
		b, err := io.ReadAll(rc)
		must(t, err)
		rc.Close()
		w, err := zw.Create(zf.Name)
		must(t, err)
		_, err = w.Write(edit(zf.Name, b))
		must(t, err)
	}
	must(t, zw.Close())
	return out.Bytes()
}

func TestXLSXUnreadable(t *testing.T) {
	dir := t.TempDir()
	f := excelize.NewFile()
	for r := 1; r <= 5; r++ {
		must(t, f.SetSheetRow("Sheet1", fmt.Sprintf("A%d", r), &[]any{"v", r}))
	}
	var buf bytes.Buffer
	must(t, f.Write(&buf))
	good := buf.Bytes()
	sheet := "xl/worksheets/sheet1.xml"
	files := map[string][]byte{
		"text.xlsx": []byte("id,name\n1,a\n"),
		"ole.xlsx":  append(append([]byte{}, oleMagic...), make([]byte, 600)...),
		"cut.xlsx":  good[:len(good)/2],
		"nowb.xlsx": rewriteZip(t, good, func(name string, b []byte) []byte {
			if name == "xl/workbook.xml" {
				return []byte("<nope/>")
			}
			return b
		}),
		"trunc.xlsx": rewriteZip(t, good, func(name string, b []byte) []byte {
			if name == sheet {
				return b[:bytes.Index(b, []byte(`<row r="3"`))]
			}
			return b
		}),
		"badxml.xlsx": rewriteZip(t, good, func(name string, b []byte) []byte {
			if name == sheet {
				return bytes.Replace(b, []byte(`<row r="3"`), []byte(`<row r="3"><c r="A3"<</c></row><row r="4"`), 1)
			}
			return b
		}),
	}
	for name, content := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), content, 0o644))
	}
	reasons := map[string]string{
		"text.xlsx":   "not an .xlsx workbook (not a zip archive, or a truncated one)",
		"ole.xlsx":    "an encrypted workbook or a legacy .xls file (OLE compound document), not an .xlsx: save it as .xlsx without a password",
		"cut.xlsx":    "not an .xlsx workbook (not a zip archive, or a truncated one)",
		"nowb.xlsx":   "the workbook has no visible worksheet",
		"trunc.xlsx":  `sheet "Sheet1" is truncated (its XML does not end)`,
		"badxml.xlsx": `sheet "Sheet1": rows end at`,
	}
	for name, want := range reasons {
		rr, err := New(dir).Open(context.Background(), source.Unit{Name: name}, source.Options{})
		if err == nil {
			for err == nil {
				_, err = rr.Next()
			}
			rr.Close()
		}
		var ue *UnreadableError
		if !errors.Is(err, source.ErrUnreadable) || !errors.As(err, &ue) || !strings.HasPrefix(ue.Reason, want) {
			t.Errorf("%s: %v, want unreadable: %q", name, err, want)
		}
	}
}

// TestXLSXZipBomb: an entry of 200 MiB of zeros compresses to about 200
// KiB; it is refused from the central directory, before anything inflates.
func TestXLSXZipBomb(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("xl/worksheets/sheet1.xml")
	must(t, err)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 200; i++ {
		_, err := w.Write(zeros)
		must(t, err)
	}
	w, err = zw.Create("xl/workbook.xml")
	must(t, err)
	_, err = w.Write([]byte(`<workbook><sheets><sheet name="S" sheetId="1" r:id="rId1" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"/></sheets></workbook>`))
	must(t, err)
	must(t, zw.Close())
	if buf.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes, want it small", buf.Len())
	}
	p := filepath.Join(dir, "bomb.xlsx")
	must(t, os.WriteFile(p, buf.Bytes(), 0o644))
	start := time.Now()
	_, err = New(dir).Open(context.Background(), source.Unit{Name: "bomb.xlsx"}, source.Options{})
	var ue *UnreadableError
	if !errors.As(err, &ue) || !errors.Is(err, source.ErrUnreadable) ||
		!strings.HasPrefix(ue.Reason, `refused as a possible zip bomb: entry "xl/worksheets/sheet1.xml" expands from`) {
		t.Fatalf("Open(bomb) = %v, want a zip-bomb refusal", err)
	}
	if _, err := Sheets(p); !errors.Is(err, source.ErrUnreadable) || !strings.Contains(err.Error(), "zip bomb") {
		t.Errorf("Sheets(bomb) = %v, want a zip-bomb refusal", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusal took %v: something inflated the entry", d)
	}

	// Declared sizes alone decide (the central directory is all that is
	// read): entries under the per-entry ratio that add up too much.
	for _, tc := range []struct {
		name       string
		entries    int
		compressed int
		declared   uint64
		reason     string
	}{
		{"growth", 1, 600 << 10, 80 << 20, "refused as a possible zip bomb: 6"},
		{"total", 12, 1 << 20, 100 << 20, "refused as a possible zip bomb: entries declare more than 1073741824 bytes uncompressed"},
		{"entry", 1, 11 << 20, 1100 << 20, `refused as a possible zip bomb: entry "p0.xml" declares 1153433600 bytes uncompressed (limit 1073741824)`},
		{"fine", 3, 1 << 20, 20 << 20, ""},
	} {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for i := 0; i < tc.entries; i++ {
			w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("p%d.xml", i), Method: zip.Deflate,
				CompressedSize64: uint64(tc.compressed), UncompressedSize64: tc.declared})
			must(t, err)
			_, err = w.Write(make([]byte, tc.compressed))
			must(t, err)
		}
		must(t, zw.Close())
		_, err := checkWorkbookZip(bytes.NewReader(b.Bytes()), int64(b.Len()), tc.name)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.name, err)
			}
			continue
		}
		if !errors.As(err, &ue) || !strings.HasPrefix(ue.Reason, tc.reason) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.reason)
		}
	}
}

func TestExcelSerialText(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		class  byte
		d1904  bool
		want   string
		wantOK bool
	}{
		{46027, classDate, false, "2026-01-05", true},
		{46027.4375, classDate, false, "2026-01-05T10:30:00", true},
		{46027, classDateTime, false, "2026-01-05T00:00:00", true},
		{46027.5000115740, classDateTime, false, "2026-01-05T12:00:01", true},
		{46027.0000005787, classDateTime, false, "2026-01-05T00:00:00.050", true},
		{0.75, classDateTime, false, "18:00:00", true},
		{0.75, classDate, false, "18:00:00", true},
		{0, classDate, false, "", false},
		{1, classDate, false, "1900-01-01", true},
		{59, classDate, false, "1900-02-28", true},
		{60, classDate, false, "", false}, // 1900-02-29 never was
		{61, classDate, false, "1900-03-01", true},
		{2958465, classDate, false, "9999-12-31", true},
		{2958466, classDate, false, "", false},
		{-1, classDate, false, "", false},
		{44561, classDate, true, "2026-01-01", true}, // 1904 system
		{0.99999999, classDateTime, false, "23:59:59.999", true},
		{0.999999999, classDateTime, false, "1900-01-01T00:00:00", true}, // rounds to the next day
	} {
		got, ok := excelSerialText(tc.v, tc.class, tc.d1904)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("excelSerialText(%v, %c, %v) = %q, %v; want %q, %v", tc.v, tc.class, tc.d1904, got, ok, tc.want, tc.wantOK)
		}
	}
	for in, want := range map[string]string{
		xlsxMark + "D4.60270000000000E+04":       "2026-01-05",
		"-" + xlsxMark + "D5.00000000000000E+00": "-5",
		xlsxMark + "D0.00000000000000E+00":       "0",
		xlsxMark + "X1":                          xlsxMark + "X1",
		"plain":                                  "plain",
		"1.5E+05":                                "1.5E+05",
	} {
		if got := cellText(in, false); got != want {
			t.Errorf("cellText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClassifyNumFmt(t *testing.T) {
	for code, want := range map[string]byte{
		"General":                     classNumber,
		"0.00":                        classNumber,
		"#,##0.00 \"€\"":              classNumber,
		"0.00E+00":                    classNumber,
		"@":                           classNumber,
		"[h]:mm:ss":                   classNumber,
		"[mm]:ss":                     classNumber,
		"[Red]#,##0;[Blue]-#,##0":     classNumber,
		`"days"0`:                     classNumber,
		"dd.mm.yyyy":                  classDate,
		"mmm-yy":                      classDate,
		"[$-F800]dddd, mmmm dd, yyyy": classDate,
		`yyyy"年"m"月"d"日"`:             classDate,
		"[$-404]e/m/d":                classDate,
		"dd.mm.yyyy hh:mm":            classDateTime,
		"h:mm AM/PM":                  classDateTime,
		"mm:ss":                       classDateTime,
		`yyyy-mm-dd\Thh:mm:ss`:        classDateTime,
	} {
		if got := classifyNumFmt(code); got != want {
			t.Errorf("classifyNumFmt(%q) = %q, want %q", code, got, want)
		}
	}
	for id, want := range map[int]byte{0: classNumber, 4: classNumber, 14: classDate, 17: classDate, 20: classDateTime, 22: classDateTime, 46: classNumber, 49: classNumber, 31: classDate, 32: classDateTime} {
		if got := builtinClass(id); got != want {
			t.Errorf("builtinClass(%d) = %q, want %q", id, got, want)
		}
	}
}

func TestXLSXCanceled(t *testing.T) {
	dir := t.TempDir()
	saveBook(t, ordersBook(t), dir, "book.xlsx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(dir).Open(ctx, source.Unit{Name: "book.xlsx"}, source.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a canceled context = %v", err)
	}
}

// FuzzXLSXScanSheet checks that the quick pass over sheet XML never panics
// and numbers rows as they come.
func FuzzXLSXScanSheet(f *testing.F) {
	for _, s := range []string{
		`<worksheet><sheetData><row r="1"><c r="A1"><v>1</v></c></row><row><c/></row></sheetData><mergeCells><mergeCell ref="A1:B2"/></mergeCells></worksheet>`,
		`<x:worksheet><x:sheetData><x:row r="7" spans='1:2'/></x:sheetData></x:worksheet>`,
		`<!-- <row r="9"> --><![CDATA[<row>]]><?pi <row>?><worksheet/>`,
		`<row r="x"><row r="-1"><mergeCell ref="B2"/><mergeCell ref="Z9:A1"/><mergeCell ref=`,
		"<", "<row a=\"<>\" r=\"3\">",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scanSheet(context.Background(), bytes.NewReader(data))
		if err != nil {
			return
		}
		if sc.lastRow < 0 {
			t.Fatalf("lastRow %d", sc.lastRow)
		}
		for _, m := range sc.merges {
			if m.r1 > m.r2 || m.c1 > m.c2 || m.r1 < 1 || m.c1 < 1 {
				t.Fatalf("merge %+v", m)
			}
		}
	})
}

func TestXLSXScanSheet(t *testing.T) {
	for _, tc := range []struct {
		xml      string
		lastRow  int64
		merges   []mergeRange
		complete bool
	}{
		{`<worksheet><sheetData><row r="1"><c r="A1"><v>1</v></c></row><row><c/></row></sheetData>` +
			`<mergeCells><mergeCell ref="A1:B2"/><mergeCell ref="D4:C3"/><mergeCell ref="E5"/></mergeCells></worksheet>`,
			2, []mergeRange{{1, 1, 2, 2}, {3, 3, 4, 4}}, true},
		{`<?xml version="1.0"?><x:worksheet xmlns:x="ns"><x:sheetData><x:row spans='1:2' r="7"/>` +
			`<!-- <row r="99"> --><x:row><x:c><x:is><x:t><![CDATA[<row r="50">]]></x:t></x:is></x:c></x:row></x:sheetData></x:worksheet>`,
			8, nil, true},
		{`<worksheet><sheetData><row r="3">`, 3, nil, false},
	} {
		sc, err := scanSheet(context.Background(), strings.NewReader(tc.xml))
		if err != nil || sc.lastRow != tc.lastRow || !reflect.DeepEqual(sc.merges, tc.merges) || sc.complete != tc.complete {
			t.Errorf("scanSheet(%.40q…) = %+v, %v; want lastRow %d merges %v complete %v", tc.xml, sc, err, tc.lastRow, tc.merges, tc.complete)
		}
	}
}
