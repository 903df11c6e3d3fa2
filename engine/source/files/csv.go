package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/source"
)

// readerConfig sizes a text reader. Tests shrink it to exercise the buffer
// boundaries.
type readerConfig struct {
	// bufSize is the size of the bufio.Reader; it bounds the sample.
	bufSize int
	// sampleSize is how much of the file's start is sampled to detect the
	// delimiter, the header and the columns.
	sampleSize int
	// maxRecord is the longest record read whole when Options.MaxRecordBytes
	// is 0; a longer one is a row of its own, cut (see bounded.go), so that
	// neither a huge field nor an unterminated quote makes memory grow with
	// the file.
	maxRecord int
}

var csvDefaults = readerConfig{bufSize: 256 << 10, sampleSize: 64 << 10, maxRecord: source.DefaultMaxRecordBytes}

// looksBinary: more than 1% of the first binaryCheckSize bytes are NUL —
// a binary file or UTF-16 without its byte order mark. A stray NUL in a
// text field is not that: its row is read, and held back by the control
// character rule of the text column it lands in.
func looksBinary(sample []byte) bool {
	head := sample[:min(len(sample), binaryCheckSize)]
	return bytes.Count(head, []byte{0})*100 > len(head)
}

// binaryCheckSize is how much of a text file's start is checked for NUL bytes.
const binaryCheckSize = 8 << 10

// ctxCheckEvery is how many rows a reader reads between two checks of its
// context.
const ctxCheckEvery = 4096

// scanState is the state of the quote scanner at the end of a chunk.
type scanState uint8

const (
	stFieldStart    scanState = iota // at the start of a field
	stUnquoted                       // inside an unquoted field
	stQuoted                         // inside a quoted field
	stQuoteInQuoted                  // just after a quote inside a quoted field
)

// scan advances the quote state over b. It is the one definition of where
// a record ends: a line ending ends the record unless the state is stQuoted.
func scan(b []byte, st scanState, delim, quote byte) scanState {
	i := 0
	for i < len(b) {
		switch st {
		case stFieldStart:
			switch b[i] {
			case quote:
				st = stQuoted
			case delim:
			default:
				st = stUnquoted
			}
			i++
		case stUnquoted:
			// A quote inside an unquoted field is literal.
			j := bytes.IndexByte(b[i:], delim)
			if j < 0 {
				return stUnquoted
			}
			i += j + 1
			st = stFieldStart
		case stQuoted:
			j := bytes.IndexByte(b[i:], quote)
			if j < 0 {
				return stQuoted
			}
			i += j + 1
			st = stQuoteInQuoted
		case stQuoteInQuoted:
			switch b[i] {
			case quote:
				st = stQuoted // doubled quote
			case delim:
				st = stFieldStart
			default:
				st = stUnquoted // data after the closing quote, kept literally
			}
			i++
		}
	}
	return st
}

// splitResult is what split found in one record.
type splitResult struct {
	values []string
	// reason is non-empty when the record is malformed.
	reason string
}

// split splits a complete record (line ending excluded) into fields. s is
// string(raw): unquoted fields and quoted fields without doubled quotes are
// substrings of it, so a row costs one string however many fields it has.
// line is the line the record starts on, for the reason of an unterminated
// quote.
func split(raw []byte, s string, delim, quote byte, capHint int, line int64) splitResult {
	vals := make([]string, 0, capHint)
	var reason string
	pos := 0
	for {
		if pos >= len(raw) || raw[pos] != quote {
			j := bytes.IndexByte(raw[pos:], delim)
			if j < 0 {
				vals = append(vals, s[pos:])
				return splitResult{values: vals, reason: reason}
			}
			vals = append(vals, s[pos:pos+j])
			pos += j + 1
			continue
		}
		// Quoted field.
		open := pos
		start := pos + 1
		seg := start
		var buf []byte
		j := start
		closed := -1
		for {
			k := bytes.IndexByte(raw[j:], quote)
			if k < 0 {
				break
			}
			k += j
			if k+1 < len(raw) && raw[k+1] == quote {
				buf = append(buf, raw[seg:k+1]...)
				j = k + 2
				seg = j
				continue
			}
			closed = k
			break
		}
		if closed < 0 {
			// Unterminated: only possible at the end of the file.
			var v string
			if buf != nil {
				v = string(append(buf, raw[seg:]...))
			} else {
				v = s[start:]
			}
			vals = append(vals, v)
			if reason == "" {
				reason = fmt.Sprintf("unterminated quoted field starting at line %d", line+int64(bytes.Count(raw[:open], []byte{'\n'})))
			}
			return splitResult{values: vals, reason: reason}
		}
		var v string
		if buf != nil {
			v = string(append(buf, raw[seg:closed]...))
		} else {
			v = s[start:closed]
		}
		pos = closed + 1
		if pos == len(raw) {
			vals = append(vals, v)
			return splitResult{values: vals, reason: reason}
		}
		if raw[pos] == delim {
			vals = append(vals, v)
			pos++
			continue
		}
		// Data after the closing quote: malformed; the rest of the field is
		// kept literally, as scan does.
		if reason == "" {
			r, _ := utf8.DecodeRune(raw[pos:])
			reason = fmt.Sprintf("unexpected %s after the closing quote of field %d", describeRune(r), len(vals)+1)
		}
		end := bytes.IndexByte(raw[pos:], delim)
		last := end < 0
		if last {
			end = len(raw)
		} else {
			end += pos
		}
		vals = append(vals, v+s[pos:end])
		if last {
			return splitResult{values: vals, reason: reason}
		}
		pos = end + 1
	}
}

func describeRune(r rune) string {
	if r == utf8.RuneError {
		return "byte"
	}
	return "character " + strconv.QuoteRune(r)
}

// csvReader streams RFC 4180 records.
type csvReader struct {
	ctx     context.Context
	name    string
	br      *bufio.Reader
	cl      closer
	cfg     readerConfig
	delim   byte
	quote   byte
	columns []string
	// n is the expected number of fields (header or first record), 0 when
	// the file has no record.
	n         int
	hasHeader bool
	// headerDone is set once the header row has been returned.
	headerDone bool
	line       int64 // lines (LF) consumed so far
	row        int64 // rows returned so far
	acc        []byte
	max        int      // the longest record read whole (see bounded.go)
	pending    []record // read ahead by newCSVReader
	// undecided is set when the sample held no record: the columns are
	// decided on the first one, with opts.
	undecided bool
	opts      source.Options
	err       error // sticky: io.EOF or a unit-level error
	// in is the unit's encoding and decoded sample (see openText).
	in *textInput
	// mask, when the delimiter or the quote can be a trail byte of the
	// encoding, hides trail bytes from the record scanner; mbuf is its
	// output.
	mask *clean.TrailMasker
	mbuf []byte
}

// newCSVReader settles the encoding (see openText) and samples the start of
// r to settle delimiter, header and columns, then returns a reader
// positioned at the first record (after a byte order mark). It closes
// nothing on error; the caller does.
func newCSVReader(ctx context.Context, r io.Reader, name string, opts source.Options, cfg readerConfig) (*csvReader, error) {
	c := &csvReader{ctx: ctx, name: name, cfg: cfg, max: recordLimit(opts, cfg)}
	if rc, ok := r.(io.Closer); ok {
		c.cl.c = rc
	}
	quote := opts.Quote
	if quote == 0 {
		quote = '"'
	}
	if quote >= utf8.RuneSelf || quote == '\n' || quote == '\r' {
		return nil, fmt.Errorf("files: %s: quote %q is not supported: use a single-byte ASCII character", name, quote)
	}
	c.quote = byte(quote)
	if d := opts.Delimiter; d != 0 {
		if d >= utf8.RuneSelf || d == '\n' || d == '\r' || d == quote {
			return nil, fmt.Errorf("files: %s: delimiter %q is not supported: use a single-byte ASCII character other than the quote and line endings", name, d)
		}
		c.delim = byte(d)
	}
	switch h := strings.ToLower(strings.TrimSpace(opts.Header)); h {
	case "", "auto", "yes", "no", "true", "false":
	default:
		return nil, fmt.Errorf("files: %s: header option %q: want auto, yes or no", name, opts.Header)
	}
	in, err := openText(r, name, "a CSV", opts, cfg)
	if err != nil {
		return nil, err
	}
	c.in, c.br = in, in.br
	// The sample is UTF-8: no ASCII byte in it is part of another
	// character, whatever the encoding.
	sample, atEOF := in.sample, in.atEOF
	if c.delim == 0 {
		c.delim = detectDelimiter(sample, atEOF, c.quote)
	}
	if err := c.checkEncodingDialect(); err != nil {
		return nil, err
	}
	recs := sampleRecords(sample, atEOF, c.delim, c.quote, 1000)
	if len(recs) == 0 && !atEOF {
		// The first record is longer than the sample: read it whole (and
		// the blank lines before it, up to a bound), to be returned by
		// Next first.
		for len(c.pending) < maxPending {
			rec, err := c.readRecord()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if rec.over {
				// Its fields, the header or the first row, cannot be
				// known: the file is held whole, before any row is read.
				return nil, unreadable(name, "the first record: "+tooLargeReason(rec.size, c.max, len(c.in.stored(rec.raw)), rec.line, rec.endLine, rec.unterminated), nil)
			}
			c.pending = append(c.pending, rec)
			if !isBlank(rec.raw) {
				_, text, _ := c.in.decode(rec.raw)
				recs = [][]string{split(text, string(text), c.delim, c.quote, 8, rec.line).values}
				break
			}
		}
		if len(recs) == 0 && len(c.pending) == maxPending {
			// Only blank lines so far: decide on the first record.
			c.undecided = true
			c.opts = opts
			return c, nil
		}
	}
	c.decideColumns(recs, opts)
	return c, nil
}

// checkEncodingDialect refuses a letter or digit as delimiter or quote in a
// multi-byte encoding, and sets up the trail byte masker when the delimiter
// or quote can be a trail byte (see the comment on text encodings in
// source.go).
func (c *csvReader) checkEncodingDialect() error {
	enc := c.in.det.Name
	if !c.in.legacy || enc == clean.Windows1252 {
		return nil
	}
	for _, b := range []byte{c.delim, c.quote} {
		if 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' {
			return unreadable(c.name, fmt.Sprintf("%q as delimiter or quote is not supported in %s text, where it can be the second byte of a character", rune(b), enc), nil)
		}
	}
	if clean.CanTrail(enc, c.delim) || clean.CanTrail(enc, c.quote) {
		c.mask = clean.NewTrailMasker(enc)
	}
	return nil
}

// Encoding returns the unit's encoding: pinned, from a byte order mark or
// detected, with the reason. The readers that Open returns for CSV and
// NDJSON have the optional capability
//
//	interface{ Encoding() clean.Detection }
func (c *csvReader) Encoding() clean.Detection { return c.in.det }

// maxPending bounds the blank lines read ahead to find the first record.
const maxPending = 4096

// sampleRecords splits the non-blank records of data, at most limit of
// them. A last record that is not terminated is left out unless atEOF.
func sampleRecords(data []byte, atEOF bool, delim, quote byte, limit int) [][]string {
	var recs [][]string
	pos := 0
	for pos < len(data) && len(recs) < limit {
		st := stFieldStart
		i := pos
		end, next := -1, -1
		for {
			nl := bytes.IndexByte(data[i:], '\n')
			if nl < 0 {
				if !atEOF {
					return recs
				}
				end, next = len(data), len(data)
				break
			}
			st = scan(data[i:i+nl], st, delim, quote)
			if st == stQuoted {
				i += nl + 1
				continue
			}
			end, next = i+nl, i+nl+1
			if end > pos && data[end-1] == '\r' {
				end--
			}
			break
		}
		raw := data[pos:end]
		pos = next
		if isBlank(raw) {
			continue
		}
		recs = append(recs, split(raw, string(raw), delim, quote, 8, 1).values)
	}
	return recs
}

func isBlank(raw []byte) bool {
	return len(raw) == 0 || (len(raw) == 1 && raw[0] == '\r')
}

// delimiterCandidates in order of preference on a tie.
var delimiterCandidates = []byte{',', ';', '\t', '|'}

// detectDelimiter picks the candidate whose field count is the most
// consistent across the sampled records (the share of records having the
// most common count), among those whose most common count is above one;
// then the one giving more fields; then the earlier candidate. Comma when
// none splits anything.
func detectDelimiter(sample []byte, atEOF bool, quote byte) byte {
	best, bestShare, bestCount := byte(','), -1.0, 0
	for _, d := range delimiterCandidates {
		recs := sampleRecords(sample, atEOF, d, quote, 1000)
		if len(recs) == 0 && !atEOF {
			recs = sampleRecords(sample, true, d, quote, 1)
		}
		if len(recs) == 0 {
			continue
		}
		freq := map[int]int{}
		mode, modeN := 0, 0
		for _, r := range recs {
			n := len(r)
			freq[n]++
			if freq[n] > modeN || (freq[n] == modeN && n > mode) {
				mode, modeN = n, freq[n]
			}
		}
		if mode < 2 {
			continue
		}
		share := float64(modeN) / float64(len(recs))
		if share > bestShare || (share == bestShare && mode > bestCount) {
			best, bestShare, bestCount = d, share, mode
		}
	}
	return best
}

// decideColumns settles the header and the columns from the sampled records.
func (c *csvReader) decideColumns(recs [][]string, opts source.Options) {
	if len(recs) == 0 {
		c.columns = append([]string(nil), opts.Columns...)
		return
	}
	first := recs[0]
	c.n = len(first)
	switch strings.ToLower(strings.TrimSpace(opts.Header)) {
	case "yes", "true":
		c.hasHeader = true
	case "no", "false":
		c.hasHeader = false
	default:
		c.hasHeader = looksLikeHeader(recs, opts.Columns)
	}
	if c.hasHeader {
		c.columns = headerNames(first)
		return
	}
	if len(opts.Columns) == c.n {
		c.columns = append([]string(nil), opts.Columns...)
		return
	}
	c.columns = make([]string, c.n)
	for i := range c.columns {
		c.columns[i] = "col_" + strconv.Itoa(i+1)
	}
}

// headerNames trims the header's fields; an empty name becomes col_<i> and a
// repeated name gets a suffix _2, _3, … so that columns are unique.
func headerNames(fields []string) []string {
	names := make([]string, len(fields))
	used := map[string]bool{}
	// next is, per name given twice, the suffix to try first: every lower
	// one is taken already (used only grows), so a header of n copies of
	// one name costs O(n), not O(n²) probes.
	next := map[string]int{}
	for i, f := range fields {
		n := strings.ToValidUTF8(strings.TrimSpace(f), "\uFFFD")
		if n == "" {
			n = "col_" + strconv.Itoa(i+1)
		}
		if base := strings.ToLower(n); used[base] {
			for k := max(2, next[base]); ; k++ {
				cand := n + "_" + strconv.Itoa(k)
				if !used[strings.ToLower(cand)] {
					n = cand
					next[base] = k + 1
					break
				}
			}
		}
		used[strings.ToLower(n)] = true
		names[i] = n
	}
	return names
}

// normName folds a column name for comparison: case, spaces, underscores and
// other punctuation are ignored ("Customer ID" matches "customer_id").
func normName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// looksLikeHeader decides whether the first sampled record is a header.
// With expected columns it is one when at least half of them (and at least
// one) appear among its fields by folded name. Without them, or when none
// appears (the file's header may just use other names), it is one when all
// its fields are non-empty, unique and neither number nor date while a
// later sampled record has a number or date in one of those positions.
func looksLikeHeader(recs [][]string, columns []string) bool {
	first := recs[0]
	if len(columns) > 0 {
		want := map[string]bool{}
		for _, c := range columns {
			if n := normName(c); n != "" {
				want[n] = true
			}
		}
		matched := 0
		got := map[string]bool{}
		for _, f := range first {
			n := normName(f)
			if want[n] && !got[n] {
				got[n] = true
				matched++
			}
		}
		if matched > 0 {
			return matched*2 >= len(want)
		}
	}
	seen := map[string]bool{}
	for _, f := range first {
		t := strings.TrimSpace(f)
		if t == "" || seen[t] || looksNumeric(t) || looksDate(t) {
			return false
		}
		seen[t] = true
	}
	for _, r := range recs[1:] {
		for i, f := range r {
			if i >= len(first) {
				break
			}
			t := strings.TrimSpace(f)
			if looksNumeric(t) || looksDate(t) {
				return true
			}
		}
	}
	return textHeader(recs)
}

// textHeader decides a first record of text over columns of text. Alone
// in the file, it is a header when every field is a name (letters first,
// then letters, digits, _ # . - or spaces): a header-only file loads
// nothing instead of its header. Over later records it is a header when
// none of its fields recurs in its column and, column by column, its
// length stands out from values of one common length more often than it
// shares it (Cust# over C001, C002; country_code over DE, FR) — the shape
// test of csv sniffers.
func textHeader(recs [][]string) bool {
	first := recs[0]
	if len(recs) == 1 {
		for _, f := range first {
			if !nameLike(strings.TrimSpace(f)) {
				return false
			}
		}
		return true
	}
	for i, f := range first {
		t := strings.TrimSpace(f)
		for _, r := range recs[1:] {
			if i < len(r) && strings.TrimSpace(r[i]) == t {
				return false
			}
		}
	}
	header, data := 0, 0
	for i, f := range first {
		l, common := -1, true
		for _, r := range recs[1:] {
			if i >= len(r) {
				continue
			}
			n := utf8.RuneCountInString(strings.TrimSpace(r[i]))
			if l >= 0 && n != l {
				common = false
				break
			}
			l = n
		}
		if !common || l < 0 {
			continue
		}
		if utf8.RuneCountInString(strings.TrimSpace(f)) != l {
			header++
		} else {
			data++
		}
	}
	return header > data
}

// nameLike is a field that reads as a column name.
func nameLike(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		switch {
		case unicode.IsLetter(r):
		case i > 0 && (unicode.IsDigit(r) || strings.ContainsRune("_#.- ", r)):
		default:
			return false
		}
	}
	return true
}

// looksNumeric: an optional sign or currency, digits with optional grouping
// and decimal separators, an optional exponent or percent sign.
func looksNumeric(s string) bool {
	if s == "" {
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return !strings.ContainsAny(strings.ToLower(s), "in") // not NaN, Inf
	}
	s = strings.TrimLeft(s, "+-$€£ ")
	s = strings.TrimRight(s, "% ")
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == ',' || c == '\'' || c == ' ':
		default:
			return false
		}
	}
	return digits > 0
}

// looksDate: d{1,4} sep d{1,2} sep d{1,4} at the start (2024-01-31,
// 31.01.2024, 1/31/24), anything after (a time).
func looksDate(s string) bool {
	parts := 0
	i := 0
	for parts < 3 {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n := j - i
		if n == 0 || n > 4 {
			return false
		}
		parts++
		if parts == 3 {
			return j == len(s) || s[j] == ' ' || s[j] == 'T'
		}
		if j >= len(s) || (s[j] != '-' && s[j] != '/' && s[j] != '.') {
			return false
		}
		i = j + 1
	}
	return false
}

// Dialect is how a CSV unit is read: the delimiter and quote in use (given
// or detected) and whether its first record is a header. The readers that
// Open returns for CSV have the optional capability
//
//	interface{ Dialect() files.Dialect }
//
// so that a caller can show what was detected.
type Dialect struct {
	Delimiter rune
	Quote     rune
	Header    bool
}

// Dialect returns the delimiter, quote and header decision in use.
func (c *csvReader) Dialect() Dialect {
	return Dialect{Delimiter: rune(c.delim), Quote: rune(c.quote), Header: c.hasHeader}
}

// Columns returns the header names (trimmed) or, without a header, the
// expected columns when their number matches, else col_1..col_n. For a file
// that starts with thousands of blank lines they are known only once Next
// has returned the first non-blank record.
func (c *csvReader) Columns() []string { return c.columns }

// Next returns the next record. Every byte of the file (after a byte order
// mark) belongs to exactly one row's Raw or to a line ending (LF or CRLF, in
// UTF-16 their 2-byte units) that ends a row, except the bytes past the cut
// of a record longer than the limit: that row is Malformed with Rule
// "record_too_large" (see bounded.go). Values are UTF-8; a record
// holding bytes invalid in the unit's encoding is Malformed with Rule
// "encoding", before any other check.
func (c *csvReader) Next() (source.Row, error) {
	if c.err != nil {
		return source.Row{}, c.err
	}
	if c.row%ctxCheckEvery == 0 && c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			c.err = fmt.Errorf("files: %s: %w", c.name, err)
			return source.Row{}, c.err
		}
	}
	var rec record
	if len(c.pending) > 0 {
		rec = c.pending[0]
		c.pending = c.pending[1:]
	} else {
		var err error
		if rec, err = c.readRecord(); err != nil {
			c.err = err
			return source.Row{}, err
		}
	}
	c.row++
	raw, startLine := rec.raw, rec.line
	if rec.over {
		stored := c.in.stored(raw)
		c.headerDone = true // a header was read ahead; this record is after it
		return source.Row{Kind: source.Malformed, Rule: source.RuleRecordTooLarge, Raw: stored,
			Reason: tooLargeReason(rec.size, c.max, len(stored), rec.line, rec.endLine, rec.unterminated),
			Loc:    source.Locator{Unit: c.name, Line: startLine, Row: c.row}, Encoding: c.in.rowEncoding()}, nil
	}
	stored, text, bad := c.in.decode(raw)
	row := source.Row{Raw: stored, Loc: source.Locator{Unit: c.name, Line: startLine, Row: c.row}, Encoding: c.in.rowEncoding()}
	if isBlank(raw) {
		row.Kind = source.Blank
		return row, nil
	}
	res := split(text, string(text), c.delim, c.quote, c.n, startLine)
	row.Values = res.values
	if c.undecided {
		c.undecided = false
		c.decideColumns([][]string{res.values}, c.opts)
	}
	switch {
	case bad != nil:
		row.Kind = source.Malformed
		row.Rule = "encoding"
		row.Reason = c.in.encodingReason(bad, stored)
	case res.reason != "":
		row.Kind = source.Malformed
		row.Reason = res.reason
	case c.hasHeader && !c.headerDone:
		row.Kind = source.Header
	case len(res.values) != c.n:
		row.Kind = source.Malformed
		row.Reason = fmt.Sprintf("expected %d fields, found %d", c.n, len(res.values))
	default:
		row.Kind = source.Data
	}
	if c.hasHeader && !c.headerDone {
		c.headerDone = true
	}
	return row, nil
}

// scanChunk is scan over bytes as read, hiding trail bytes that look like
// the delimiter or the quote when the encoding has them.
func (c *csvReader) scanChunk(b []byte, st scanState) scanState {
	if c.mask == nil {
		return scan(b, st, c.delim, c.quote)
	}
	c.mbuf = c.mask.Mask(c.mbuf[:0], b)
	return scan(c.mbuf, st, c.delim, c.quote)
}

// record is one record as readRecord read it.
type record struct {
	// raw is the record, line ending excluded (bytes as stored, or UTF-8
	// transcoded from UTF-16); only its start when over.
	raw []byte
	// line and endLine are the lines it starts and ends on.
	line, endLine int64
	// size is its length in bytes; over is set when that is above the
	// limit, unterminated when it then ran to the end of the file inside
	// a quoted field.
	size               int64
	over, unterminated bool
}

// readRecord reads one record; the returned slice is the caller's. It
// returns io.EOF when the file is exhausted. A record longer than the
// limit is read to its end without being held (see recordAcc).
func (c *csvReader) readRecord() (rec record, err error) {
	rec.line = c.line + 1
	st := stFieldStart
	if c.mask != nil {
		c.mask.Reset()
	}
	a := recordAcc{buf: c.acc[:0], limit: c.max, utf8: !c.in.legacy}
	used := false
	defer func() {
		if !a.over && cap(a.buf) <= 1<<20 {
			c.acc = a.buf[:0]
		} else {
			c.acc = nil // the cut is the caller's; a huge buffer is let go
		}
	}()
	for {
		chunk, rerr := c.br.ReadSlice('\n')
		switch {
		case rerr == nil:
			content := chunk[:len(chunk)-1]
			st = c.scanChunk(content, st)
			if c.mask != nil {
				c.mask.Reset() // LF is never a trail byte
			}
			c.line++
			if st == stQuoted {
				// The line ending is inside a quoted field: part of it.
				a.add(chunk)
				used = true
				continue
			}
			rec.endLine = c.line
			if !used {
				if len(content) > 0 && content[len(content)-1] == '\r' {
					content = content[:len(content)-1] // CRLF
				}
				if len(content) <= c.max {
					rec.raw, rec.size = bytes.Clone(content), int64(len(content))
					return rec, nil
				}
			}
			a.add(content)
			rec.raw, rec.size, rec.over = a.finish(true)
			return rec, nil
		case rerr == bufio.ErrBufferFull:
			st = c.scanChunk(chunk, st)
			a.add(chunk)
			used = true
		case rerr == io.EOF:
			if len(chunk) == 0 && !used {
				return record{}, io.EOF
			}
			// The last record has no line ending (or is an unterminated
			// quoted field, which split reports).
			st = c.scanChunk(chunk, st)
			a.add(chunk)
			rec.endLine = c.line
			if len(chunk) > 0 {
				rec.endLine++
			}
			rec.raw, rec.size, rec.over = a.finish(false)
			rec.unterminated = rec.over && st == stQuoted
			return rec, nil
		default:
			return record{}, fmt.Errorf("files: %s: read at line %d: %w", c.name, c.line+1, rerr)
		}
	}
}

// Close closes the file; it is idempotent. Next after Close fails.
func (c *csvReader) Close() error {
	if c.err == nil || errors.Is(c.err, io.EOF) {
		c.err = errClosed
	}
	return c.cl.close()
}
