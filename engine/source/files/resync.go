package files

import "bytes"

// Resync finds where a record starts in b, bytes of a CSV unit taken from
// anywhere in it (after a seek), without reading the unit from its start.
// The byte after b's first line feed is either the start of a record or
// inside a quoted field that holds a line break: Resync follows both
// readings, line by line, with the scanner that splits records (scan), and
// returns the offset just after the first line feed at which both end a
// record. From there on the two readings are the same, so the records that
// follow are the ones a reader from the start of the unit would find.
// It returns false when the readings do not meet within b (read the unit
// through instead). b must be UTF-8 or a single-byte encoding (no trail
// byte can be a delimiter, a quote or a line feed).
//
// When no quote follows b's first line feed for QuoteFreeProof bytes (or
// up to the end of the unit: final), the reading inside a quoted field is
// dismissed, and the record start is just after that line feed: a quoted
// field would have to run on that long without a quote, from before b
// began (or stay unterminated). Plain fields are so read from any place.
func Resync(b []byte, delim, quote byte, final bool) (int, bool) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return 0, false
	}
	pos := nl + 1
	if q := bytes.IndexByte(b[pos:], quote); pos < len(b) && (q >= QuoteFreeProof || (q < 0 && (final || len(b)-pos >= QuoteFreeProof))) {
		return pos, true
	}
	a, q := stFieldStart, stQuoted // a record starts here; inside quotes
	for pos < len(b) {
		nl := bytes.IndexByte(b[pos:], '\n')
		if nl < 0 {
			return 0, false
		}
		line := b[pos : pos+nl]
		a, q = scan(line, a, delim, quote), scan(line, q, delim, quote)
		pos += nl + 1
		endA, endQ := a != stQuoted, q != stQuoted
		if endA && endQ {
			return pos, true
		}
		if endA {
			a = stFieldStart
		}
		if endQ {
			q = stFieldStart
		}
	}
	return 0, false
}

// QuoteFreeProof is how many bytes without a quote Resync takes to rule
// out that they are all inside one quoted field.
const QuoteFreeProof = 64 << 10
