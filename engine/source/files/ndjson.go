package files

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/source"
)

var ndjsonDefaults = readerConfig{bufSize: 256 << 10, sampleSize: 64 << 10, maxRecord: source.DefaultMaxRecordBytes}

// ndjsonReader reads one JSON object per line.
//
// Values: strings as they decode, numbers as their literal text, booleans
// "true"/"false", nested objects and arrays as compact JSON text; JSON null
// and a missing key set Nulls[i]. A line that is not one JSON object, has a
// duplicate key or a key that is not among the columns is Malformed: no
// value is ever dropped silently.
type ndjsonReader struct {
	ctx     context.Context
	name    string
	br      *bufio.Reader
	cl      closer
	cfg     readerConfig
	columns []string
	index   map[string]int
	folded  map[string]int // folded name -> column, -1 when ambiguous
	// fixed is false while the columns are still to be taken from the first
	// object (none was found in the sample and none was given).
	fixed bool
	line  int64
	acc   []byte
	max   int // the longest line read whole (see bounded.go)
	err   error
	// in is the unit's encoding and decoded sample (see openText).
	in *textInput
}

func newNDJSONReader(ctx context.Context, r io.Reader, name string, opts source.Options, cfg readerConfig) (*ndjsonReader, error) {
	n := &ndjsonReader{ctx: ctx, name: name, cfg: cfg, max: recordLimit(opts, cfg)}
	if rc, ok := r.(io.Closer); ok {
		n.cl.c = rc
	}
	in, err := openText(r, name, "an NDJSON", opts, cfg)
	if err != nil {
		return nil, err
	}
	n.in, n.br = in, in.br
	sample, atEOF := in.sample, in.atEOF
	if t := bytes.TrimLeft(sample, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return nil, unreadable(name, "a JSON array document, not NDJSON (one JSON object per line)", nil)
	}
	if len(opts.Columns) > 0 {
		n.setColumns(append([]string(nil), opts.Columns...))
		return n, nil
	}
	// The columns are the keys of the sampled objects, in order of first
	// appearance.
	var cols []string
	seen := map[string]bool{}
	for len(sample) > 0 {
		nl := bytes.IndexByte(sample, '\n')
		var line []byte
		if nl < 0 {
			if !atEOF {
				break
			}
			line, sample = sample, nil
		} else {
			line, sample = sample[:nl], sample[nl+1:]
		}
		keys, _, reason := parseObject(line)
		if reason != "" || !cleanUTF8(line) {
			continue // not an object, or keys damaged by invalid bytes
		}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	if len(cols) > 0 {
		n.setColumns(cols)
	}
	return n, nil
}

func (n *ndjsonReader) setColumns(cols []string) {
	n.columns = cols
	n.fixed = true
	n.index = make(map[string]int, len(cols))
	n.folded = make(map[string]int, len(cols))
	for i, c := range cols {
		if _, dup := n.index[c]; !dup {
			n.index[c] = i
		}
		f := normName(c)
		if _, dup := n.folded[f]; dup {
			n.folded[f] = -1
		} else {
			n.folded[f] = i
		}
	}
}

// column finds the column of a key: by exact name, else by folded name
// when that is unambiguous.
func (n *ndjsonReader) column(key string) (int, bool) {
	if i, ok := n.index[key]; ok {
		return i, true
	}
	if i, ok := n.folded[normName(key)]; ok && i >= 0 {
		return i, true
	}
	return 0, false
}

// Encoding returns the unit's encoding: pinned, from a byte order mark or
// detected, with the reason (see csvReader.Encoding).
func (n *ndjsonReader) Encoding() clean.Detection { return n.in.det }

// Columns returns the expected columns or the keys of the sampled objects.
func (n *ndjsonReader) Columns() []string { return n.columns }

// isJSONBlank: a line of JSON whitespace only.
func isJSONBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Next returns the next line as a row. A line holding bytes invalid in the
// unit's encoding, or a string value that decodes to U+FFFD (a \u escape of
// a lone surrogate or of U+FFFD itself), is Malformed with Rule "encoding";
// a line longer than the limit is Malformed with Rule "record_too_large"
// and only its start in Raw (see bounded.go).
func (n *ndjsonReader) Next() (source.Row, error) {
	if n.err != nil {
		return source.Row{}, n.err
	}
	if n.line%ctxCheckEvery == 0 && n.ctx != nil {
		if err := n.ctx.Err(); err != nil {
			n.err = fmt.Errorf("files: %s: %w", n.name, err)
			return source.Row{}, n.err
		}
	}
	raw, size, over, err := n.readLine()
	if err != nil {
		n.err = err
		return source.Row{}, err
	}
	n.line++
	if over {
		stored := n.in.stored(raw)
		return source.Row{Kind: source.Malformed, Rule: source.RuleRecordTooLarge, Raw: stored,
			Reason: tooLargeReason(size, n.max, len(stored), n.line, n.line, false),
			Loc:    source.Locator{Unit: n.name, Line: n.line, Row: n.line}, Encoding: n.in.rowEncoding()}, nil
	}
	stored, text, bad := n.in.decode(raw)
	row := source.Row{Raw: stored, Loc: source.Locator{Unit: n.name, Line: n.line, Row: n.line}, Encoding: n.in.rowEncoding()}
	if isJSONBlank(text) {
		row.Kind = source.Blank
		return row, nil
	}
	row = n.object(row, text, bad != nil)
	if bad != nil {
		row.Kind = source.Malformed
		row.Rule = "encoding"
		row.Reason = n.in.encodingReason(bad, stored)
	}
	return row, nil
}

// object fills row from the line's UTF-8 text; bad is set when the text
// holds U+FFFD for bytes invalid in the encoding, and then the keys cannot
// become the columns.
func (n *ndjsonReader) object(row source.Row, text []byte, bad bool) source.Row {
	keys, vals, reason := parseObject(text)
	if reason != "" {
		row.Kind = source.Malformed
		row.Reason = reason
		return row
	}
	if !n.fixed && bad {
		row.Kind = source.Malformed
		return row
	}
	if !n.fixed {
		n.setColumns(append([]string(nil), keys...))
	}
	row.Values = make([]string, len(n.columns))
	set := make([]bool, len(n.columns))
	var nulls []bool
	for k, key := range keys {
		i, ok := n.column(key)
		if !ok {
			if row.Reason == "" {
				row.Reason = fmt.Sprintf("key %q is not among the columns", key)
			}
			continue
		}
		if set[i] {
			if row.Reason == "" {
				row.Reason = fmt.Sprintf("key %q maps to column %q, which another key already filled", key, n.columns[i])
			}
			continue
		}
		set[i] = true
		v, isNull := jsonText(vals[k])
		if isNull {
			if nulls == nil {
				nulls = make([]bool, len(n.columns))
			}
			nulls[i] = true
			continue
		}
		row.Values[i] = v
	}
	for i, ok := range set {
		if !ok {
			if nulls == nil {
				nulls = make([]bool, len(n.columns))
			}
			nulls[i] = true
		}
	}
	row.Nulls = nulls
	if row.Reason != "" {
		row.Kind = source.Malformed
		return row
	}
	row.Kind = source.Data
	for i, v := range row.Values {
		if strings.ContainsRune(v, '\uFFFD') {
			row.Kind = source.Malformed
			row.Rule = "encoding"
			row.Reason = fmt.Sprintf("value of %q decodes to the replacement character U+FFFD (a \\u escape of a lone surrogate or of U+FFFD): the text was damaged before it was written", n.columns[i])
			break
		}
	}
	return row
}

// parseObject parses a line holding one JSON object: its keys in order and
// their raw values, or the reason it is not one.
func parseObject(line []byte) (keys []string, vals []json.RawMessage, reason string) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, jsonReason(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, "not a JSON object: found " + jsonKind(tok)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, jsonReason(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, "object key is not a string"
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, jsonReason(err)
		}
		if seen[key] {
			return nil, nil, fmt.Sprintf("duplicate key %q", key)
		}
		seen[key] = true
		keys = append(keys, key)
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, jsonReason(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, nil, "data after the JSON object: " + jsonReason(err)
		}
		return nil, nil, "data after the JSON object"
	}
	return keys, vals, ""
}

func jsonReason(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of JSON input"
	}
	return err.Error()
}

func jsonKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "array"
		}
		return "delimiter " + t.String()
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// jsonText renders a raw JSON value as canonical text.
func jsonText(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", true
	}
	switch v[0] {
	case 'n':
		return "", true
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return string(v), false
		}
		return s, false
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			return string(v), false
		}
		return b.String(), false
	default: // number, true, false: the literal text
		return string(v), false
	}
}

// readLine reads one line, line ending (LF or CRLF) excluded; the slice is
// the caller's. A line longer than the limit comes back cut (see
// recordAcc), with its size and over set.
func (n *ndjsonReader) readLine() (line []byte, size int64, over bool, err error) {
	a := recordAcc{buf: n.acc[:0], limit: n.max, utf8: !n.in.legacy}
	used := false
	defer func() {
		if !a.over && cap(a.buf) <= 1<<20 {
			n.acc = a.buf[:0]
		} else {
			n.acc = nil // the cut is the caller's; a huge buffer is let go
		}
	}()
	for {
		chunk, err := n.br.ReadSlice('\n')
		switch {
		case err == nil:
			content := chunk[:len(chunk)-1]
			if !used {
				if len(content) > 0 && content[len(content)-1] == '\r' {
					content = content[:len(content)-1]
				}
				if len(content) <= n.max {
					return bytes.Clone(content), int64(len(content)), false, nil
				}
			}
			a.add(content)
			line, size, over = a.finish(true)
			return line, size, over, nil
		case err == bufio.ErrBufferFull:
			a.add(chunk)
			used = true
		case err == io.EOF:
			if len(chunk) == 0 && !used {
				return nil, 0, false, io.EOF
			}
			a.add(chunk)
			line, size, over = a.finish(false)
			return line, size, over, nil
		default:
			return nil, 0, false, fmt.Errorf("files: %s: read at line %d: %w", n.name, n.line+1, err)
		}
	}
}

// Close closes the file; it is idempotent. Next after Close fails.
func (n *ndjsonReader) Close() error {
	if n.err == nil || errors.Is(n.err, io.EOF) {
		n.err = errClosed
	}
	return n.cl.close()
}
