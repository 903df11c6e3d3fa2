package files

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/lima-lake/lima/engine/source"
)

// Limits of the Excel reader. A workbook is a zip archive; these refuse zip
// bombs before excelize inflates anything.
const (
	// xlsxMaxUnzip caps the declared uncompressed size of all entries.
	xlsxMaxUnzip = 1 << 30
	// xlsxMaxGrowth caps the declared uncompressed size at this multiple of
	// the file size, once it is above xlsxGrowthFloor.
	xlsxMaxGrowth   = 100
	xlsxGrowthFloor = 64 << 20
	// xlsxMaxEntryRatio caps the compression ratio of one entry of at least
	// xlsxRatioFloor bytes (tiny parts compress well and harm no one).
	xlsxMaxEntryRatio = 200
	xlsxRatioFloor    = 1 << 20
	// xlsxMaxEntries caps the number of entries of the archive.
	xlsxMaxEntries = 100_000
	// xlsxXMLInMemory: larger sheet and shared-string parts are inflated
	// to a temporary file by excelize instead of memory.
	xlsxXMLInMemory = 16 << 20
	// xlsxMaxPart caps the small parts Lima parses itself (workbook, rels).
	xlsxMaxPart = 64 << 20
	// xlsxHeaderScan is the number of non-blank rows searched for the header.
	xlsxHeaderScan = 10
	// xlsxMaxMerges caps the merged ranges of a sheet.
	xlsxMaxMerges = 1_000_000
)

// oleMagic starts an OLE compound document: a legacy .xls file or an
// encrypted (password-protected) .xlsx.
var oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// splitSheet splits a unit path or name "book.xlsx#Sheet name" into the
// file and the sheet. The fragment is taken after the first ".xlsx#" (or
// ".xlsm#", any case) that is followed by no path separator, so sheet names
// may contain '#' and folders may end in ".xlsx". Without one the sheet is
// "" (the first visible sheet).
func splitSheet(p string) (file, sheet string) {
	lower := strings.ToLower(p)
	for from := 0; ; {
		i := indexWorkbookExt(lower[from:])
		if i < 0 {
			return p, ""
		}
		i += from
		frag := p[i+len(".xlsx#"):]
		if frag != "" && !strings.ContainsAny(frag, `/\`) {
			return p[:i+len(".xlsx")], frag
		}
		from = i + len(".xlsx#")
	}
}

func indexWorkbookExt(lower string) int {
	a, b := strings.Index(lower, ".xlsx#"), strings.Index(lower, ".xlsm#")
	switch {
	case a < 0:
		return b
	case b < 0 || a < b:
		return a
	}
	return b
}

// SheetUnit returns the unit that reads one sheet of the workbook unit u:
// Path and Name get the suffix "#sheet" that Open understands. Discovery
// lists the workbooks with List, their sheets with Sheets, and makes one
// unit (one table) per sheet with SheetUnit.
func SheetUnit(u source.Unit, sheet string) source.Unit {
	u.Path += "#" + sheet
	u.Name += "#" + sheet
	if u.OriginalName != "" {
		u.OriginalName += "#" + sheet
	}
	return u
}

// hasSheetGlob reports whether a glob selects a sheet ("*.xlsx#Orders").
func hasSheetGlob(globs []string) bool {
	for _, g := range globs {
		if _, sheet := splitSheet(g); sheet != "" {
			return true
		}
	}
	return false
}

// listSheets lists globs of which some select a sheet: each group of globs
// with the same sheet is listed without it, and the workbooks it matches
// become units of that sheet (SheetUnit). The result is sorted by Name,
// each once.
func (s *Source) listSheets(ctx context.Context, globs []string) ([]source.Unit, error) {
	bySheet := map[string][]string{}
	var order []string
	for _, g := range globs {
		file, sheet := splitSheet(g)
		if _, ok := bySheet[sheet]; !ok {
			order = append(order, sheet)
		}
		bySheet[sheet] = append(bySheet[sheet], file)
	}
	seen := map[string]bool{}
	units := []source.Unit{}
	for _, sheet := range order {
		found, err := s.List(ctx, bySheet[sheet])
		if err != nil {
			return nil, err
		}
		for _, u := range found {
			if sheet != "" {
				if f, _ := splitSheet(u.Name + "#x"); f != u.Name {
					continue // not a workbook: a sheet cannot apply
				}
				u = SheetUnit(u, sheet)
			}
			if !seen[u.Name] {
				seen[u.Name] = true
				units = append(units, u)
			}
		}
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].Name < units[j].Name })
	return units, nil
}

// Sheets returns the names of the visible worksheets of the workbook at
// path, in tab order. Hidden sheets (often an ERP tool's metadata) and chart
// sheets are left out; Open still reads a hidden worksheet named
// explicitly. A file that is not a readable workbook, or that looks like a
// zip bomb, gives an error wrapping source.ErrUnreadable.
func Sheets(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, unreadable(p, "cannot open file", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, unreadable(p, "cannot stat file", err)
	}
	zr, err := checkWorkbookZip(f, fi.Size(), p)
	if err != nil {
		return nil, err
	}
	bk, err := readBookIndex(zr, p)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, s := range bk.sheets {
		if s.worksheet && s.visible() {
			names = append(names, s.name)
		}
	}
	return names, nil
}

// checkWorkbookZip refuses what is not a zip archive and what looks like a
// zip bomb, from the central directory alone: the declared uncompressed
// sizes (archive/zip fails an entry that inflates to more than it
// declares, so they hold) in total and per entry.
func checkWorkbookZip(ra io.ReaderAt, size int64, name string) (*zip.Reader, error) {
	var magic [8]byte
	if n, _ := ra.ReadAt(magic[:], 0); n == len(magic) && bytes.Equal(magic[:], oleMagic) {
		return nil, unreadable(name, "an encrypted workbook or a legacy .xls file (OLE compound document), not an .xlsx: save it as .xlsx without a password", nil)
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, unreadable(name, "not an .xlsx workbook (not a zip archive, or a truncated one)", err)
	}
	if len(zr.File) > xlsxMaxEntries {
		return nil, unreadable(name, fmt.Sprintf("refused as a possible zip bomb: %d entries (limit %d)", len(zr.File), xlsxMaxEntries), nil)
	}
	var total uint64
	for _, zf := range zr.File {
		u, c := zf.UncompressedSize64, zf.CompressedSize64
		if u > xlsxMaxUnzip {
			return nil, unreadable(name, fmt.Sprintf("refused as a possible zip bomb: entry %q declares %d bytes uncompressed (limit %d)", zf.Name, u, xlsxMaxUnzip), nil)
		}
		if u >= xlsxRatioFloor && (c == 0 || u/c > xlsxMaxEntryRatio) {
			return nil, unreadable(name, fmt.Sprintf("refused as a possible zip bomb: entry %q expands from %d to %d bytes (more than %d×)", zf.Name, c, u, xlsxMaxEntryRatio), nil)
		}
		total += u
		if total > xlsxMaxUnzip {
			return nil, unreadable(name, fmt.Sprintf("refused as a possible zip bomb: entries declare more than %d bytes uncompressed", xlsxMaxUnzip), nil)
		}
	}
	if total > xlsxGrowthFloor && size > 0 && total/uint64(size) >= xlsxMaxGrowth {
		return nil, unreadable(name, fmt.Sprintf("refused as a possible zip bomb: %d bytes expand to %d (more than %d×)", size, total, xlsxMaxGrowth), nil)
	}
	return zr, nil
}

// bookSheet is one sheet of the workbook as its index declares it.
type bookSheet struct {
	name      string
	state     string // "", "visible", "hidden", "veryHidden"
	part      string // zip entry of the sheet's XML
	worksheet bool   // false for chart, dialog and macro sheets
}

func (s bookSheet) visible() bool { return s.state == "" || s.state == "visible" }

type bookIndex struct {
	sheets   []bookSheet
	date1904 bool
	parts    map[string]*zip.File // lower-cased entry name -> entry
}

type xmlRels struct {
	Rels []struct {
		ID     string `xml:"Id,attr"`
		Type   string `xml:"Type,attr"`
		Target string `xml:"Target,attr"`
	} `xml:"Relationship"`
}

type xmlBook struct {
	Pr *struct {
		Date1904 string `xml:"date1904,attr"`
	} `xml:"workbookPr"`
	Sheets []struct {
		Name  string     `xml:"name,attr"`
		State string     `xml:"state,attr"`
		Attrs []xml.Attr `xml:",any,attr"`
	} `xml:"sheets>sheet"`
}

// readBookIndex reads the sheet list of the workbook (names, visibility,
// parts) and its date system, from the package relationships as excelize
// and Excel resolve them.
func readBookIndex(zr *zip.Reader, name string) (*bookIndex, error) {
	bk := &bookIndex{parts: make(map[string]*zip.File, len(zr.File))}
	for _, zf := range zr.File {
		bk.parts[strings.ToLower(strings.ReplaceAll(zf.Name, `\`, "/"))] = zf
	}
	wbPart := "xl/workbook.xml"
	var root xmlRels
	if ok, err := bk.decode("_rels/.rels", &root); err != nil {
		return nil, unreadable(name, "corrupt package relationships (_rels/.rels)", err)
	} else if ok {
		for _, r := range root.Rels {
			if strings.HasSuffix(r.Type, "/officeDocument") {
				wbPart = resolvePart("", r.Target)
				break
			}
		}
	}
	var wb xmlBook
	if ok, err := bk.decode(wbPart, &wb); err != nil {
		return nil, unreadable(name, "corrupt workbook part ("+wbPart+")", err)
	} else if !ok {
		return nil, unreadable(name, "a zip archive but not an Excel workbook (no "+wbPart+")", nil)
	}
	if wb.Pr != nil {
		bk.date1904 = wb.Pr.Date1904 == "1" || strings.EqualFold(wb.Pr.Date1904, "true")
	}
	relsPart := path.Join(path.Dir(wbPart), "_rels", path.Base(wbPart)+".rels")
	var rels xmlRels
	if _, err := bk.decode(relsPart, &rels); err != nil {
		return nil, unreadable(name, "corrupt workbook relationships ("+relsPart+")", err)
	}
	targets := map[string]int{}
	for i, r := range rels.Rels {
		targets[r.ID] = i
	}
	for _, s := range wb.Sheets {
		bs := bookSheet{name: s.Name, state: s.State}
		for _, a := range s.Attrs {
			if a.Name.Local != "id" || a.Name.Space == "" {
				continue
			}
			if i, ok := targets[a.Value]; ok {
				r := rels.Rels[i]
				bs.part = resolvePart(path.Dir(wbPart), r.Target)
				bs.worksheet = strings.HasSuffix(r.Type, "/worksheet")
			}
		}
		bk.sheets = append(bk.sheets, bs)
	}
	return bk, nil
}

// resolvePart resolves a relationship target against the folder of its
// source part.
func resolvePart(dir, target string) string {
	target = strings.ReplaceAll(target, `\`, "/")
	if strings.HasPrefix(target, "/") {
		return path.Clean(target[1:])
	}
	return path.Join(dir, target)
}

// decode unmarshals a small part; ok is false when the part is absent.
func (bk *bookIndex) decode(part string, v any) (ok bool, err error) {
	zf := bk.parts[strings.ToLower(part)]
	if zf == nil {
		return false, nil
	}
	rc, err := zf.Open()
	if err != nil {
		return true, err
	}
	defer rc.Close()
	if err := xml.NewDecoder(io.LimitReader(rc, xlsxMaxPart)).Decode(v); err != nil {
		return true, err
	}
	return true, nil
}

// pick selects the sheet: by name (exactly, else ignoring case as Excel
// does) or, for "", the first visible worksheet in tab order.
func (bk *bookIndex) pick(name, sheet string) (bookSheet, error) {
	if sheet == "" {
		for _, s := range bk.sheets {
			if s.worksheet && s.visible() {
				return s, nil
			}
		}
		return bookSheet{}, unreadable(name, "the workbook has no visible worksheet", nil)
	}
	found := -1
	for i, s := range bk.sheets {
		if s.name == sheet {
			found = i
			break
		}
		if found < 0 && strings.EqualFold(s.name, sheet) {
			found = i
		}
	}
	if found < 0 {
		var names []string
		for _, s := range bk.sheets {
			names = append(names, strconv.Quote(s.name))
		}
		return bookSheet{}, unreadable(name, fmt.Sprintf("no sheet named %q (sheets: %s)", sheet, strings.Join(names, ", ")), nil)
	}
	s := bk.sheets[found]
	if !s.worksheet {
		return bookSheet{}, unreadable(name, fmt.Sprintf("sheet %q is not a worksheet (a chart or dialog sheet)", s.name), nil)
	}
	return s, nil
}

// mergeRange is a merged range, 1-based and inclusive.
type mergeRange struct{ r1, c1, r2, c2 int }

// sheetScan is what a quick pass over a sheet's XML learns before excelize
// reads it.
type sheetScan struct {
	// lastRow is the number of the last row element (excelize's rows
	// iterator stops silently at an XML error; Next compares).
	lastRow int64
	merges  []mergeRange
	// complete is set when the root element is closed (a truncated part
	// is refused).
	complete bool
}

// scanSheet streams the sheet's XML once, without building it: it numbers
// the row elements as excelize does and collects the merged ranges.
func scanSheet(ctx context.Context, r io.Reader) (sheetScan, error) {
	var sc sheetScan
	br := bufio.NewReaderSize(r, 64<<10)
	var tag []byte
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return sc, err
			}
		}
		if err := skipPast(br, "<"); err != nil {
			if err == io.EOF {
				return sc, nil
			}
			return sc, err
		}
		c, err := br.Peek(1)
		if err != nil {
			return sc, nil // a lone '<' at the end: not complete
		}
		switch c[0] {
		case '?':
			err = skipPast(br, "?>")
		case '!':
			if p, _ := br.Peek(3); string(p) == "!--" {
				err = skipPast(br, "-->")
			} else if p, _ := br.Peek(8); string(p) == "![CDATA[" {
				err = skipPast(br, "]]>")
			} else {
				err = skipPast(br, ">")
			}
		case '/':
			tag, err = readTag(br, tag[:0])
			if err == nil && localName(tag[1:]) == "worksheet" {
				sc.complete = true
			}
		default:
			tag, err = readTag(br, tag[:0])
			if err != nil {
				break
			}
			switch localName(tag) {
			case "row":
				if v, ok := attrValue(tag, "r"); ok {
					if r, perr := strconv.ParseInt(v, 10, 64); perr == nil && r > 0 {
						sc.lastRow = r
						break
					}
				}
				sc.lastRow++
			case "mergeCell":
				ref, _ := attrValue(tag, "ref")
				m, ok := parseMerge(ref)
				if !ok {
					break
				}
				if len(sc.merges) >= xlsxMaxMerges {
					return sc, fmt.Errorf("more than %d merged ranges", xlsxMaxMerges)
				}
				sc.merges = append(sc.merges, m)
			}
		}
		if err == io.EOF {
			return sc, nil
		}
		if err != nil {
			return sc, err
		}
	}
}

// skipPast consumes input up to and including the next occurrence of seq.
func skipPast(br *bufio.Reader, seq string) error {
	last := seq[len(seq)-1]
	var tail []byte
	for {
		chunk, err := br.ReadSlice(last)
		if err == nil {
			if len(seq) == 1 {
				return nil
			}
			probe := append(tail, chunk...)
			if bytes.HasSuffix(probe, []byte(seq)) {
				return nil
			}
			tail = append(tail[:0], probe[max(0, len(probe)-len(seq)):]...)
			continue
		}
		if err == bufio.ErrBufferFull {
			tail = append(tail[:0], chunk[max(0, len(chunk)-len(seq)):]...)
			continue
		}
		return err
	}
}

// readTag reads a tag's bytes up to its closing '>' (excluded), honouring
// quoted attribute values. Tags longer than 1 MiB are corrupt.
func readTag(br *bufio.Reader, buf []byte) ([]byte, error) {
	var quote byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			return buf, err
		}
		switch {
		case quote != 0:
			if b == quote {
				quote = 0
			}
		case b == '"' || b == '\'':
			quote = b
		case b == '>':
			return buf, nil
		}
		buf = append(buf, b)
		if len(buf) > 1<<20 {
			return buf, errors.New("an XML tag longer than 1 MiB")
		}
	}
}

// localName returns the element name of a tag without its prefix.
func localName(tag []byte) string {
	end := bytes.IndexAny(tag, " \t\r\n/")
	if end < 0 {
		end = len(tag)
	}
	name := tag[:end]
	if i := bytes.IndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	return string(name)
}

// attrValue returns the value of the unprefixed attribute key of a tag.
func attrValue(tag []byte, key string) (string, bool) {
	i := bytes.IndexAny(tag, " \t\r\n")
	for i >= 0 && i < len(tag) {
		for i < len(tag) && (tag[i] == ' ' || tag[i] == '\t' || tag[i] == '\r' || tag[i] == '\n') {
			i++
		}
		eq := bytes.IndexByte(tag[i:], '=')
		if eq < 0 {
			return "", false
		}
		k := strings.TrimSpace(string(tag[i : i+eq]))
		j := i + eq + 1
		for j < len(tag) && tag[j] != '"' && tag[j] != '\'' {
			j++
		}
		if j >= len(tag) {
			return "", false
		}
		q := tag[j]
		end := bytes.IndexByte(tag[j+1:], q)
		if end < 0 {
			return "", false
		}
		if k == key {
			return string(tag[j+1 : j+1+end]), true
		}
		i = j + 1 + end + 1
	}
	return "", false
}

// parseMerge parses "B2:D4" (either corner first). A single cell is no
// range.
func parseMerge(ref string) (mergeRange, bool) {
	a, b, ok := strings.Cut(ref, ":")
	if !ok {
		return mergeRange{}, false
	}
	c1, r1, err1 := excelize.CellNameToCoordinates(a)
	c2, r2, err2 := excelize.CellNameToCoordinates(b)
	if err1 != nil || err2 != nil {
		return mergeRange{}, false
	}
	m := mergeRange{r1: min(r1, r2), c1: min(c1, c2), r2: max(r1, r2), c2: max(c1, c2)}
	if m.r1 == m.r2 && m.c1 == m.c2 {
		return mergeRange{}, false
	}
	return m, true
}

// Date classes of a number format, carried by the marker formats.
const (
	classNumber   = 0
	classDate     = 'D' // date formats: a date, with the time when it has one
	classDateTime = 'T' // formats with a time: always date and time
)

// xlsxMark starts the text excelize renders for a date-formatted number
// (see markDateStyles). A private-use character: not in any real format.
const xlsxMark = "\uE000lima"

// markDateStyles rewrites the workbook's cell styles in memory so that
// excelize's rows iterator, which gives text but no cell types, says which
// numbers are dates: every style whose number format shows a date or time
// renders the serial number as xlsxMark, the class and the number in
// scientific notation with 15 significant digits (Excel's precision);
// every other style renders as "@" (the value as stored: numbers in
// General with up to 15 significant digits, text as is). Cells without a
// style are numbers or text already. Nothing is written back to the file.
func markDateStyles(book *excelize.File) error {
	st := book.Styles
	if st == nil || st.CellXfs == nil {
		return nil
	}
	custom := map[int]string{}
	if st.NumFmts != nil {
		for _, nf := range st.NumFmts.NumFmt {
			if nf == nil {
				continue
			}
			code := nf.FormatCode
			if nf.FormatCode16 != "" {
				code = nf.FormatCode16
			}
			custom[nf.NumFmtID] = code
		}
	}
	classes := make([]byte, len(st.CellXfs.Xf))
	for i, xf := range st.CellXfs.Xf {
		id := 0
		if xf.NumFmtID != nil {
			id = *xf.NumFmtID
		}
		if code, ok := custom[id]; ok {
			classes[i] = classifyNumFmt(code)
		} else {
			classes[i] = builtinClass(id)
		}
	}
	fmtIDs := map[byte]int{}
	for _, cl := range []byte{classNumber, classDate, classDateTime} {
		code := "@"
		if cl != classNumber {
			code = `"` + xlsxMark + string(cl) + `"0.00000000000000E+00`
		}
		idx, err := book.NewStyle(&excelize.Style{CustomNumFmt: &code})
		if err != nil {
			return fmt.Errorf("cannot add a reading style: %w", err)
		}
		if idx < 0 || idx >= len(st.CellXfs.Xf) || st.CellXfs.Xf[idx].NumFmtID == nil {
			return errors.New("cannot add a reading style")
		}
		fmtIDs[cl] = *st.CellXfs.Xf[idx].NumFmtID
	}
	for i, cl := range classes {
		id := fmtIDs[cl]
		st.CellXfs.Xf[i].NumFmtID = &id
	}
	return nil
}

// builtinClass classifies Excel's built-in number formats. 27–36 and 50–58
// are East Asian formats whose codes depend on the locale: dates, but 32
// and 33 (hours and minutes).
func builtinClass(id int) byte {
	switch {
	case id >= 14 && id <= 17:
		return classDate
	case id >= 18 && id <= 22, id == 45, id == 47, id == 32, id == 33:
		return classDateTime
	case id >= 27 && id <= 36, id >= 50 && id <= 58:
		return classDate
	}
	return classNumber // 46 "[h]:mm:ss" is a duration: a number of days
}

// classifyNumFmt tells a custom number format code showing a date (y, d, m
// without h or s, e, g, b1/b2), a time (h, s, AM/PM; m beside them are
// minutes) or neither. Quoted text, escaped characters, fills, colors and
// locale tags are ignored; elapsed-time formats ([h]:mm) alone are
// durations, numbers.
func classifyNumFmt(code string) byte {
	var date, timeOfDay, month, elapsed bool
	lower := strings.ToLower(code)
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		switch c {
		case '"':
			if j := strings.IndexByte(lower[i+1:], '"'); j >= 0 {
				i += j + 1
			} else {
				i = len(lower)
			}
		case '\\', '_', '*':
			i++
		case '[':
			j := strings.IndexByte(lower[i:], ']')
			if j < 0 {
				i = len(lower)
				break
			}
			if in := lower[i+1 : i+j]; in != "" && strings.Trim(in, in[:1]) == "" && strings.Contains("hms", in[:1]) {
				elapsed = true // [h], [mm], [ss]
			}
			i += j
		case 'y', 'd':
			date = true
		case 'm':
			month = true
		case 'h', 's':
			timeOfDay = true
		case 'a':
			if strings.HasPrefix(lower[i:], "am/pm") || strings.HasPrefix(lower[i:], "a/p") {
				timeOfDay = true
				i += strings.IndexByte(lower[i:], '/') + 1
			}
		case 'e':
			if i+1 < len(lower) && (lower[i+1] == '+' || lower[i+1] == '-') {
				i++ // scientific notation
			} else {
				date = true // era year
			}
		case 'g':
			if strings.HasPrefix(lower[i:], "general") {
				i += len("general") - 1
			} else {
				date = true // era
			}
		case 'b':
			if i+1 < len(lower) && (lower[i+1] == '1' || lower[i+1] == '2') {
				date = true // Buddhist year
			}
		}
	}
	if month && !timeOfDay {
		date = true
	}
	switch {
	case elapsed && !date:
		return classNumber
	case timeOfDay:
		return classDateTime
	case date:
		return classDate
	}
	return classNumber
}

// excelSerialText renders a date-formatted serial number: "2006-01-02" for
// a whole day in a date format, "2006-01-02T15:04:05" (".000" when it has
// milliseconds) for a format with a time or a value with one, "15:04:05"
// for a time of day (a serial below 1). ok is false for numbers that are no
// date (negative, beyond 9999-12-31, or 1900-02-29, which Excel counts but
// never was).
func excelSerialText(v float64, class byte, date1904 bool) (string, bool) {
	if math.IsNaN(v) || v < 0 || v >= 2958466 {
		return "", false
	}
	ms := int64(math.Round(v * 86_400_000))
	days, rem := ms/86_400_000, ms%86_400_000
	if days == 0 {
		if rem == 0 {
			return "", false
		}
		return clockText(rem), true
	}
	var d time.Time
	switch {
	case date1904:
		d = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days))
	case days == 60:
		return "", false
	case days < 60:
		d = time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days))
	default:
		d = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days))
	}
	if d.Year() > 9999 {
		return "", false
	}
	if class == classDate && rem == 0 {
		return d.Format("2006-01-02"), true
	}
	return d.Format("2006-01-02") + "T" + clockText(rem), true
}

func clockText(ms int64) string {
	s := fmt.Sprintf("%02d:%02d:%02d", ms/3_600_000, ms/60_000%60, ms/1000%60)
	if ms%1000 != 0 {
		s += fmt.Sprintf(".%03d", ms%1000)
	}
	return s
}

// cellText turns a value from excelize into Lima's text: marked serials
// become dates (or plain numbers when they are no date); anything else is
// returned as is.
func cellText(v string, date1904 bool) string {
	t, neg := v, false
	if strings.HasPrefix(t, "-"+xlsxMark) {
		t, neg = t[1:], true
	}
	if !strings.HasPrefix(t, xlsxMark) || len(t) < len(xlsxMark)+2 {
		return v
	}
	class := t[len(xlsxMark)]
	f, err := strconv.ParseFloat(t[len(xlsxMark)+1:], 64)
	if err != nil || (class != classDate && class != classDateTime) {
		return v
	}
	if neg {
		f = -f
	}
	if s, ok := excelSerialText(f, class, date1904); ok {
		return s
	}
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// xlsxReader streams one worksheet of an .xlsx workbook.
//
// Sheet: the unit's "#Sheet name" suffix selects it (see splitSheet,
// SheetUnit, and List with a glob "*.xlsx#Sheet name"); without one the
// first visible worksheet in tab order is read.
//
// Values, one per column: text as stored; numbers as Excel shows them in
// General, with up to 15 significant digits ("0.1", "1234.5"; excelize's
// exponent form "1.23456789012346E+17" for the rare one beyond); numbers
// in a date or time format as "2006-01-02", or "2006-01-02T15:04:05" when
// the format shows a time or the value has one, "15:04:05" below one day;
// booleans "TRUE"/"FALSE"; error cells as shown ("#N/A"); formulas as
// their cached values (never the formula text; "" when the workbook was
// saved without calculating them); empty cells and missing trailing cells
// as "". A merged range gives the value of its top-left cell to every cell
// of the range, in every row of it that has a value of its own (a row whose
// only values are a merged range's is Blank).
//
// Rows: Loc.Row is the sheet's row number (1-based, every row counted),
// Loc.Line 0, Raw the row's own cells (before the merged-range fill,
// trailing empty cells dropped) as a JSON array of strings. A row without
// values is Blank. The header is, with opts.Header "yes", the first
// non-blank row; with "no", none; otherwise (auto), among the first ten
// non-blank rows, the first one naming at least half of opts.Columns or,
// failing that, the first whose cells are all non-empty text (no number,
// date or boolean) and which is at least as wide as the next non-blank row
// (a report title above the table is narrower) and not one value spread
// by a merged range. A two-row header needs opts.Columns to be found. Rows above the header (a
// title, filter notes) are Header rows too, skipped for the same declared
// reason. Columns are the header's cells (trimmed; empty ones col_<i>,
// repeated ones suffixed _2, _3, …); without a header opts.Columns when
// there are at least as many as the widest of the first rows, else
// col_1..col_n. A row with a value beyond the last column is Malformed,
// with all its values; shorter rows are padded with "".
//
// Memory: the compressed workbook is held in memory (excelize needs random
// access); sheet XML above 16 MiB is inflated to a temporary file and read
// as a stream, so rows are never all in memory.
type xlsxReader struct {
	ctx      context.Context
	name     string
	sheet    string
	cl       closer
	book     *excelize.File
	rows     *excelize.Rows
	date1904 bool
	scan     sheetScan
	nextM    int          // next merge (by top row) to activate
	active   []mergeValue // merges covering the current row
	columns  []string
	n        int
	header   int64     // row number of the header, 0 without one
	window   []xlsxRow // rows read ahead to find the header
	emitted  int64     // rows returned
	read     int64     // rows read from the sheet
	err      error
}

type mergeValue struct {
	m   mergeRange
	val string
}

// xlsxRow is a row read from the sheet.
type xlsxRow struct {
	num   int64
	cells []string // after the merge fill, trailing "" trimmed
	own   int      // non-empty cells of the row's own (before the fill)
	raw   []byte
}

func newXLSXReader(ctx context.Context, f *os.File, name, sheet string, opts source.Options) (xr *xlsxReader, err error) {
	switch strings.ToLower(strings.TrimSpace(opts.Header)) {
	case "", "auto", "yes", "no", "true", "false":
	default:
		return nil, fmt.Errorf("files: %s: header option %q: want auto, yes or no", name, opts.Header)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, unreadable(name, "cannot stat file", err)
	}
	zr, err := checkWorkbookZip(f, fi.Size(), name)
	if err != nil {
		return nil, err
	}
	x := &xlsxReader{ctx: ctx, name: name}
	defer func() {
		if r := recover(); r != nil {
			x.closeBook()
			xr, err = nil, unreadable(name, fmt.Sprintf("not a valid .xlsx workbook: %v", r), nil)
		}
	}()
	bk, err := readBookIndex(zr, name)
	if err != nil {
		return nil, err
	}
	s, err := bk.pick(name, sheet)
	if err != nil {
		return nil, err
	}
	x.sheet, x.date1904 = s.name, bk.date1904
	part := bk.parts[strings.ToLower(s.part)]
	if part == nil {
		return nil, unreadable(name, fmt.Sprintf("sheet %q has no data part (%s)", s.name, s.part), nil)
	}
	rc, err := part.Open()
	if err != nil {
		return nil, unreadable(name, fmt.Sprintf("cannot read sheet %q", s.name), err)
	}
	x.scan, err = scanSheet(ctx, rc)
	rc.Close()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("files: %s: %w", name, ctx.Err())
		}
		return nil, unreadable(name, fmt.Sprintf("corrupt sheet %q", s.name), err)
	}
	if !x.scan.complete {
		return nil, unreadable(name, fmt.Sprintf("sheet %q is truncated (its XML does not end)", s.name), nil)
	}
	sort.SliceStable(x.scan.merges, func(i, j int) bool { return x.scan.merges[i].r1 < x.scan.merges[j].r1 })
	x.book, err = excelize.OpenReader(io.NewSectionReader(f, 0, fi.Size()), excelize.Options{
		UnzipSizeLimit:    xlsxMaxUnzip,
		UnzipXMLSizeLimit: xlsxXMLInMemory,
	})
	if err != nil {
		x.closeBook()
		return nil, unreadable(name, "not a valid .xlsx workbook", err)
	}
	if err := markDateStyles(x.book); err != nil {
		x.closeBook()
		return nil, unreadable(name, "unsupported cell styles", err)
	}
	x.rows, err = x.book.Rows(s.name)
	if err != nil {
		x.closeBook()
		return nil, unreadable(name, fmt.Sprintf("cannot read sheet %q", s.name), err)
	}
	if err := x.decideColumns(opts); err != nil {
		x.closeBook()
		return nil, err
	}
	x.cl.c = f
	return x, nil
}

// decideColumns reads ahead up to xlsxHeaderScan non-blank rows, settles
// the header and the columns, and keeps the rows for Next.
func (x *xlsxReader) decideColumns(opts source.Options) error {
	for len(x.window) < xlsxHeaderScan {
		r, err := x.readRow()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(r.cells) > 0 {
			x.window = append(x.window, r)
		}
	}
	width := 0
	for _, r := range x.window {
		width = max(width, len(r.cells))
	}
	hdr := -1
	switch strings.ToLower(strings.TrimSpace(opts.Header)) {
	case "yes", "true":
		if len(x.window) > 0 {
			hdr = 0
		}
	case "no", "false":
	default:
		hdr = x.findHeader(opts.Columns)
	}
	if hdr >= 0 {
		h := x.window[hdr]
		x.header = h.num
		x.columns = headerNames(h.cells)
		x.n = len(x.columns)
		return nil
	}
	if len(opts.Columns) >= width && len(opts.Columns) > 0 {
		x.columns = append([]string(nil), opts.Columns...)
		x.n = len(x.columns)
		return nil
	}
	x.n = width
	x.columns = make([]string, width)
	for i := range x.columns {
		x.columns[i] = "col_" + strconv.Itoa(i+1)
	}
	return nil
}

// findHeader returns the index in the window of the header row, -1 for
// none.
func (x *xlsxReader) findHeader(columns []string) int {
	if len(columns) > 0 {
		want := map[string]bool{}
		for _, c := range columns {
			if n := normName(c); n != "" {
				want[n] = true
			}
		}
		for i, r := range x.window {
			got := map[string]bool{}
			for _, c := range r.cells {
				if n := normName(c); want[n] {
					got[n] = true
				}
			}
			if len(got) > 0 && len(got)*2 >= len(want) {
				return i
			}
		}
	}
	for i, r := range x.window {
		text := true
		for _, c := range r.cells {
			t := strings.TrimSpace(c)
			if t == "" || t == "TRUE" || t == "FALSE" || looksNumeric(t) || looksDate(t) || looksClock(t) {
				text = false
				break
			}
		}
		if !text || (r.own < 2 && len(r.cells) > 1) {
			continue // a title spread over a merged range is no header
		}
		if i+1 == len(x.window) || len(r.cells) >= len(x.window[i+1].cells) {
			return i
		}
	}
	return -1
}

// looksClock: the "15:04:05" this reader gives for a time of day.
func looksClock(s string) bool {
	return len(s) >= 8 && s[2] == ':' && s[5] == ':' && looksNumeric(s[:2]) && looksNumeric(s[3:5])
}

// readRow reads the next row of the sheet (every row number, also those
// the XML leaves out) and applies the merged ranges.
func (x *xlsxReader) readRow() (xlsxRow, error) {
	if x.read%ctxCheckEveryXLSX == 0 {
		if err := x.ctx.Err(); err != nil {
			return xlsxRow{}, fmt.Errorf("files: %s: %w", x.name, err)
		}
	}
	if !x.rows.Next() {
		if err := x.rows.Error(); err != nil {
			return xlsxRow{}, unreadable(x.name, fmt.Sprintf("corrupt sheet %q after row %d", x.sheet, x.read), err)
		}
		if x.read < x.scan.lastRow {
			return xlsxRow{}, unreadable(x.name, fmt.Sprintf("sheet %q: rows end at %d of %d (corrupt XML)", x.sheet, x.read, x.scan.lastRow), nil)
		}
		return xlsxRow{}, io.EOF
	}
	cells, err := x.rows.Columns()
	if err != nil {
		return xlsxRow{}, unreadable(x.name, fmt.Sprintf("corrupt sheet %q at row %d", x.sheet, x.read+1), err)
	}
	x.read++
	r := xlsxRow{num: x.read}
	for i, c := range cells {
		cells[i] = cellText(c, x.date1904)
	}
	cells = trimTrailingEmpty(cells)
	r.raw = jsonArray(cells)
	for _, c := range cells {
		if c != "" {
			r.own++
		}
	}
	blank := r.own == 0
	x.applyMerges(&cells, blank)
	if blank {
		return r, nil
	}
	r.cells = trimTrailingEmpty(cells)
	return r, nil
}

const ctxCheckEveryXLSX = 4096

// applyMerges activates the merged ranges starting at the current row,
// drops those that ended, and fills the row (unless it is blank).
func (x *xlsxReader) applyMerges(cells *[]string, blank bool) {
	if len(x.scan.merges) == 0 {
		return
	}
	row := int(x.read)
	kept := x.active[:0]
	for _, a := range x.active {
		if a.m.r2 >= row {
			kept = append(kept, a)
		}
	}
	x.active = kept
	for x.nextM < len(x.scan.merges) && x.scan.merges[x.nextM].r1 <= row {
		m := x.scan.merges[x.nextM]
		x.nextM++
		if m.r1 < row {
			continue // cannot happen: rows come in order
		}
		val := ""
		if m.c1 <= len(*cells) {
			val = (*cells)[m.c1-1]
		}
		x.active = append(x.active, mergeValue{m: m, val: val})
	}
	if blank {
		return
	}
	for _, a := range x.active {
		for len(*cells) < a.m.c2 {
			*cells = append(*cells, "")
		}
		for c := a.m.c1; c <= a.m.c2; c++ {
			(*cells)[c-1] = a.val
		}
	}
}

func trimTrailingEmpty(cells []string) []string {
	n := len(cells)
	for n > 0 && cells[n-1] == "" {
		n--
	}
	return cells[:n]
}

func jsonArray(cells []string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if cells == nil {
		cells = []string{}
	}
	_ = enc.Encode(cells)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Columns returns the header's names or, without a header, the expected
// columns or col_1..col_n.
func (x *xlsxReader) Columns() []string { return x.columns }

// Sheet returns the name of the worksheet being read (an optional
// capability: interface{ Sheet() string }).
func (x *xlsxReader) Sheet() string { return x.sheet }

// Next returns the next row of the sheet.
func (x *xlsxReader) Next() (row source.Row, err error) {
	if x.err != nil {
		return source.Row{}, x.err
	}
	defer func() {
		if r := recover(); r != nil {
			x.err = unreadable(x.name, fmt.Sprintf("corrupt sheet %q after row %d: %v", x.sheet, x.emitted, r), nil)
			row, err = source.Row{}, x.err
		}
	}()
	next := x.emitted + 1
	switch {
	case len(x.window) > 0 && x.window[0].num == next:
		r := x.window[0]
		x.window = x.window[1:]
		x.emitted = next
		return x.classify(r), nil
	case next <= x.read:
		// A blank row read ahead (before or between window rows, or after
		// the last of them).
		x.emitted = next
		return x.blank(next), nil
	}
	r, err := x.readRow()
	if err != nil {
		x.err = err
		return source.Row{}, err
	}
	x.emitted = r.num
	if len(r.cells) == 0 {
		return x.blank(r.num), nil
	}
	return x.classify(r), nil
}

func (x *xlsxReader) blank(num int64) source.Row {
	return source.Row{Kind: source.Blank, Raw: []byte("[]"), Loc: source.Locator{Unit: x.name, Row: num}}
}

func (x *xlsxReader) classify(r xlsxRow) source.Row {
	row := source.Row{Kind: source.Data, Raw: r.raw, Loc: source.Locator{Unit: x.name, Row: r.num}}
	if x.header > 0 && r.num <= x.header {
		row.Kind = source.Header
		row.Values = make([]string, x.n)
		copy(row.Values, r.cells)
		return row
	}
	if len(r.cells) > x.n {
		row.Kind = source.Malformed
		row.Values = r.cells
		col, _ := excelize.ColumnNumberToName(len(r.cells))
		row.Reason = fmt.Sprintf("a value in column %s, beyond the %d columns of the sheet", col, x.n)
		return row
	}
	row.Values = make([]string, x.n)
	copy(row.Values, r.cells)
	return row
}

// closeBook releases excelize's temporary files and the rows iterator.
func (x *xlsxReader) closeBook() {
	if x.rows != nil {
		x.rows.Close()
		x.rows = nil
	}
	if x.book != nil {
		x.book.Close()
		x.book = nil
	}
}

// Close releases the workbook and closes the file; it is idempotent. Next
// after Close fails.
func (x *xlsxReader) Close() error {
	if x.err == nil || errors.Is(x.err, io.EOF) {
		x.err = errClosed
	}
	x.closeBook()
	return x.cl.close()
}
