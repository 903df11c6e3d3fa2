package files

import (
	"bytes"
	"fmt"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/textcut"
)

// Bounded records.
//
// A record (a CSV record, an NDJSON line) longer than the unit's limit
// (Options.MaxRecordBytes, default source.DefaultMaxRecordBytes, 16 MiB) is
// not held in memory: its bytes are kept up to the limit while it is read,
// then only its first rawCut bytes, and the rest is counted as it streams
// by. Its row is Malformed with Rule source.RuleRecordTooLarge, a Reason
// naming its size and the limit, and that cut in Raw; the rows after it
// are read as usual. A file is thus read row by row with its exceptions,
// and every record is a row.

// rawCut is the most of a too-large record that its row keeps in Raw.
const rawCut = 64 << 10

// recordLimit is the unit's limit: the option, else the reader's default.
func recordLimit(opts source.Options, cfg readerConfig) int {
	if opts.MaxRecordBytes > 0 {
		return opts.MaxRecordBytes
	}
	if cfg.maxRecord > 0 {
		return cfg.maxRecord
	}
	return source.DefaultMaxRecordBytes
}

// recordAcc accumulates the bytes of one record, line ending included as
// it is read, up to limit (and one byte more: the CR of a CRLF whose LF is
// in the next chunk); past that it keeps only the cut and counts.
type recordAcc struct {
	buf   []byte
	limit int
	size  int64 // bytes added
	last  byte  // the last byte added
	over  bool
	utf8  bool // the stream is UTF-8 (or transcoded to it): cut at a character
}

func (a *recordAcc) add(p []byte) {
	if len(p) == 0 {
		return
	}
	a.size += int64(len(p))
	a.last = p[len(p)-1]
	if a.over {
		return
	}
	a.buf = append(a.buf, p...)
	if len(a.buf) > a.limit+1 {
		a.cut()
	}
}

// cut keeps the first rawCut bytes (at most limit; for UTF-8, never half a
// character) in a buffer of their own, letting the large one go.
func (a *recordAcc) cut() {
	a.over = true
	keep := min(rawCut, a.limit, len(a.buf))
	if a.utf8 {
		keep = textcut.RuneStart(a.buf, keep)
	}
	a.buf = bytes.Clone(a.buf[:keep])
}

// finish ends the record: lineEnd is set when a line ending (LF, not
// added) ends it, so a CR before it is part of the line ending. It returns
// the record's bytes (line ending excluded; the cut when over), its size
// and whether it is longer than the limit. The bytes are the caller's.
func (a *recordAcc) finish(lineEnd bool) (raw []byte, size int64, over bool) {
	size = a.size
	if lineEnd && a.size > 0 && a.last == '\r' {
		size--
		if !a.over {
			a.buf = a.buf[:len(a.buf)-1]
		}
	}
	if !a.over && size > int64(a.limit) {
		a.cut()
	}
	if a.over {
		return a.buf, size, true
	}
	return bytes.Clone(a.buf), size, false
}

// tooLargeReason is the Reason of a too-large record's row.
func tooLargeReason(size int64, limit, kept int, startLine, endLine int64, unterminated bool) string {
	lines := ""
	if endLine > startLine {
		lines = fmt.Sprintf(" (lines %d–%d)", startLine, endLine)
	}
	msg := fmt.Sprintf("record of %s bytes%s is longer than the limit of %s bytes (etl.max_record_bytes); only its first %s bytes are kept",
		textcut.Grouped(size), lines, textcut.Grouped(int64(limit)), textcut.Grouped(int64(kept)))
	if unterminated {
		msg += "; it runs to the end of the file inside a quoted field: is a quote unterminated?"
	}
	return msg
}
