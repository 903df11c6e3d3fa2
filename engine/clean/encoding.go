package clean

// Text encodings of source files: detection, names and strict decoding.
//
// Lima reads seven encodings, named canonically as below. Decoding is
// strict: bytes that are invalid in the encoding are reported (with their
// offset and value) instead of being turned silently into U+FFFD, so that a
// reader can make the one row that holds them an exception and load the
// others. Nothing here imports a source package: readers import clean.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Canonical encoding names, as Detection.Name, Lookup and source.Row.Encoding
// spell them.
const (
	UTF8    = "utf-8"
	UTF16LE = "utf-16le"
	UTF16BE = "utf-16be"
	// EUCKR is decoded as its superset CP949 (Unified Hangul Code):
	// x/text's korean.EUCKR decodes the CP949 extension (lead bytes
	// 0x81–0xC6 with trail bytes 0x41–0x5A, 0x61–0x7A, 0x81–0xA0) too.
	EUCKR = "euc-kr"
	// ShiftJIS is decoded as Windows-31J (CP932: the NEC and IBM extensions
	// included), as x/text's japanese.ShiftJIS does.
	ShiftJIS = "shift_jis"
	// GB18030 is a superset of GBK (CP936) and GB2312.
	GB18030 = "gb18030"
	// Windows1252 is also what "latin1" and "iso-8859-1" mean in practice
	// (as in the WHATWG Encoding Standard). Its five undefined bytes 0x81,
	// 0x8D, 0x8F, 0x90 and 0x9D are invalid.
	Windows1252 = "windows-1252"
)

// Encodings returns the canonical names of the supported encodings.
func Encodings() []string {
	return []string{UTF8, UTF16LE, UTF16BE, EUCKR, ShiftJIS, GB18030, Windows1252}
}

// ErrUnknownEncoding marks an encoding name that Lookup does not know.
var ErrUnknownEncoding = errors.New("unknown or unsupported text encoding")

// aliases maps folded labels (see foldLabel) to canonical names.
var aliases = map[string]string{}

func init() {
	for canon, labels := range map[string][]string{
		UTF8: {"utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8",
			// ASCII is pinned as UTF-8 (not as windows-1252, as WHATWG
			// does): a byte above 0x7F then becomes a row exception unless
			// it is valid UTF-8, never a guessed Latin-1 letter.
			"ascii", "us-ascii", "ansi_x3.4-1968", "iso646-us", "cp367"},
		UTF16LE: {"utf-16le", "utf16le", "utf-16", "utf16", "ucs-2", "ucs2", "unicode", "csunicode", "iso-10646-ucs-2", "unicodefeff", "ucs-2le"},
		UTF16BE: {"utf-16be", "utf16be", "unicodefffe", "ucs-2be"},
		EUCKR: {"euc-kr", "euckr", "cp949", "windows-949", "ms949", "uhc", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601",
			"korean", "csksc56011987", "iso-ir-149", "cseuckr", "x-windows-949"},
		ShiftJIS: {"shift_jis", "shift-jis", "shiftjis", "sjis", "x-sjis", "cp932", "windows-31j", "ms932", "ms_kanji", "csshiftjis", "windows-932"},
		GB18030:  {"gb18030", "gbk", "gb2312", "cp936", "windows-936", "ms936", "euc-cn", "x-gbk", "chinese", "csgb2312", "iso-ir-58", "gb_2312-80", "csiso58gb231280"},
		Windows1252: {"windows-1252", "cp1252", "x-cp1252", "ms1252", "latin1", "latin-1", "l1", "iso-8859-1", "iso8859-1", "iso_8859-1", "iso88591",
			"iso-ir-100", "csisolatin1", "cp819", "ibm819", "ansi"},
	} {
		for _, l := range labels {
			aliases[foldLabel(l)] = canon
		}
	}
}

// foldLabel lower-cases a label and drops '-', '_', '.', ':' and spaces, so
// that "Shift-JIS", "shift_jis" and "SHIFTJIS" are one label.
func foldLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch r {
		case '-', '_', '.', ':', ' ':
			continue
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Lookup resolves an encoding name or alias (case, '-', '_' and spaces do not
// matter: cp949, ks_c_5601-1987, sjis, shift-jis, latin1, iso-8859-1,
// cp1252, utf8, utf-16, …) to its x/text encoding and canonical name.
// "utf-16" without an endianness means little-endian (a byte order mark in
// the file overrides it); "ascii" means utf-8.
func Lookup(name string) (encoding.Encoding, string, error) {
	canon, ok := aliases[foldLabel(name)]
	if !ok {
		return nil, "", fmt.Errorf("%w %q: use one of %s (or an alias such as cp949, sjis, gbk, latin1)", ErrUnknownEncoding, name, strings.Join(Encodings(), ", "))
	}
	return encodingOf(canon), canon, nil
}

func encodingOf(canon string) encoding.Encoding {
	switch canon {
	case UTF8:
		return unicode.UTF8
	case UTF16LE:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	case UTF16BE:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	case EUCKR:
		return korean.EUCKR
	case ShiftJIS:
		return japanese.ShiftJIS
	case GB18030:
		return simplifiedchinese.GB18030
	case Windows1252:
		return charmap.Windows1252
	}
	return nil
}

// ASCIICompatible reports whether every byte below 0x80 at the start of a
// character is that ASCII character: true for all but UTF-16.
func ASCIICompatible(canon string) bool { return canon != UTF16LE && canon != UTF16BE }

// CanTrail reports whether the ASCII byte c can be a byte other than the
// first of a multi-byte character of the encoding, so that a parser
// splitting on c in the raw bytes could split a character in two:
//
//   - euc-kr (CP949): the letters A–Z and a–z (trail bytes of the CP949
//     extension); never a digit, space, punctuation, CR or LF;
//   - shift_jis: 0x40–0x7E (@, A–Z, [ \ ] ^ _ `, a–z, { | } ~): '|' and
//     '\' are the known traps; never 0x00–0x3F (so not '"', ',', ';', tab,
//     CR, LF) nor 0x7F;
//   - gb18030: 0x40–0x7E like shift_jis, and the digits 0–9 (second and
//     fourth bytes of four-byte characters);
//   - utf-8 and windows-1252: never;
//   - utf-16le/be: every byte (not ASCII-compatible; readers transcode it).
//
// Bytes 0x80 and above are not ASCII and not covered.
func CanTrail(canon string, c byte) bool {
	if c >= utf8.RuneSelf {
		return false
	}
	switch canon {
	case EUCKR:
		return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
	case ShiftJIS:
		return 0x40 <= c && c <= 0x7E
	case GB18030:
		return 0x40 <= c && c <= 0x7E || '0' <= c && c <= '9'
	case UTF16LE, UTF16BE:
		return true
	}
	return false
}

// InvalidError describes the first sequence of bytes in a text that is not
// valid in its encoding (or decodes to U+FFFD or a C1 control character).
type InvalidError struct {
	// Encoding is the canonical name.
	Encoding string
	// Offset is the byte offset of the sequence in the input.
	Offset int
	// Bytes is the sequence as the decoder delimited it (one byte for a lead
	// byte that no valid trail byte follows).
	Bytes []byte
	// Replacement is set when the bytes are a valid encoding of U+FFFD: the
	// text was damaged before it was written in this encoding.
	Replacement bool
	// Control is set when the bytes decode to a C1 control character
	// (U+0080–U+009F), which no legacy-encoded business text holds: in
	// shift_jis the undefined byte 0x80.
	Control bool
}

// Error says what and where, ending in "at byte N" so that a caller can
// append what the offset counts from.
func (e *InvalidError) Error() string {
	switch {
	case e.Replacement:
		return fmt.Sprintf("replacement character U+FFFD (%s in %s: the text was damaged before it was written) at byte %d", Hex(e.Bytes), e.Encoding, e.Offset)
	case e.Control:
		return fmt.Sprintf("invalid %s byte sequence %s (undefined: it would decode to a C1 control character) at byte %d", e.Encoding, Hex(e.Bytes), e.Offset)
	}
	return fmt.Sprintf("invalid %s byte sequence %s at byte %d", e.Encoding, Hex(e.Bytes), e.Offset)
}

// Hex renders bytes as "0xC7 0x41".
func Hex(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		if i > 0 {
			s.WriteByte(' ')
		}
		fmt.Fprintf(&s, "0x%02X", c)
	}
	return s.String()
}

// A Decoder decodes complete texts (a record, a field) of one encoding into
// UTF-8, strictly. It is not safe for concurrent use.
type Decoder struct {
	name string
	t    transform.Transformer // legacy encodings only
	cd   charDec
	// fffd is the encoding of U+FFFD in the encoding, nil when it has none.
	fffd []byte
}

// NewDecoder returns a Decoder for an encoding name or alias (see Lookup).
func NewDecoder(name string) (*Decoder, error) {
	enc, canon, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	d := &Decoder{name: canon}
	if ASCIICompatible(canon) && canon != UTF8 {
		d.t = enc.NewDecoder()
		d.cd = newCharDec(canon)
		if b, err := enc.NewEncoder().Bytes([]byte("\uFFFD")); err == nil {
			d.fffd = b
		}
	}
	return d, nil
}

// Name returns the canonical name of the decoder's encoding.
func (d *Decoder) Name() string { return d.name }

// Append appends the UTF-8 text of src (a complete text: a sequence cut at
// its end is invalid) to dst. When src holds a sequence that is invalid in
// the encoding, decodes to U+FFFD or (for a legacy encoding) to a C1 control
// character, each such sequence becomes U+FFFD in the output and the error
// is an *InvalidError describing the first one. A byte order mark is not
// special here: the caller strips it from the start of a file.
func (d *Decoder) Append(dst, src []byte) ([]byte, error) {
	switch d.name {
	case UTF8:
		return appendUTF8(dst, src)
	case UTF16LE:
		return appendUTF16(dst, src, false)
	case UTF16BE:
		return appendUTF16(dst, src, true)
	}
	return d.appendLegacy(dst, src)
}

// Decode decodes a complete text in the named encoding to UTF-8; see
// Decoder.Append. On an error it still returns the text, with U+FFFD for
// the bad sequences.
func Decode(name string, src []byte) (string, error) {
	d, err := NewDecoder(name)
	if err != nil {
		return "", err
	}
	out, err := d.Append(nil, src)
	return string(out), err
}

var fffdUTF8 = []byte("\uFFFD")

func appendUTF8(dst, src []byte) ([]byte, error) {
	if utf8.Valid(src) && !bytes.Contains(src, fffdUTF8) {
		return append(dst, src...), nil
	}
	var first *InvalidError
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			if first == nil {
				j := i + 1
				for j < len(src) && j-i < 4 {
					if r2, n2 := utf8.DecodeRune(src[j:]); r2 != utf8.RuneError || n2 != 1 {
						break
					}
					j++
				}
				first = &InvalidError{Encoding: UTF8, Offset: i, Bytes: bytes.Clone(src[i:j])}
			}
			dst = append(dst, fffdUTF8...)
		case r == utf8.RuneError:
			if first == nil {
				first = &InvalidError{Encoding: UTF8, Offset: i, Bytes: bytes.Clone(src[i : i+n]), Replacement: true}
			}
			dst = append(dst, src[i:i+n]...)
		default:
			dst = append(dst, src[i:i+n]...)
		}
		i += n
	}
	if first == nil {
		return dst, nil
	}
	return dst, first
}

func utf16Unit(b []byte, be bool) uint16 {
	if be {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

func appendUTF16(dst, src []byte, be bool) ([]byte, error) {
	name := UTF16LE
	if be {
		name = UTF16BE
	}
	var first *InvalidError
	bad := func(i, n int, repl bool) {
		if first == nil {
			first = &InvalidError{Encoding: name, Offset: i, Bytes: bytes.Clone(src[i : i+n]), Replacement: repl}
		}
		dst = append(dst, fffdUTF8...)
	}
	i := 0
	for ; i+1 < len(src); i += 2 {
		u := utf16Unit(src[i:], be)
		switch {
		case u < 0xD800 || u > 0xDFFF:
			if u == 0xFFFD {
				bad(i, 2, true)
				continue
			}
			dst = utf8.AppendRune(dst, rune(u))
		case u < 0xDC00 && i+3 < len(src):
			if u2 := utf16Unit(src[i+2:], be); 0xDC00 <= u2 && u2 <= 0xDFFF {
				dst = utf8.AppendRune(dst, 0x10000+(rune(u)-0xD800)<<10+(rune(u2)-0xDC00))
				i += 2
				continue
			}
			bad(i, 2, false)
		default:
			bad(i, 2, false) // lone surrogate
		}
	}
	if i < len(src) {
		bad(i, 1, false) // odd number of bytes
	}
	if first == nil {
		return dst, nil
	}
	return dst, first
}

// badRune reports whether a rune decoded from a legacy encoding must not
// reach the lake: U+FFFD (invalid bytes) or a C1 control.
func badRune(r rune) bool { return r == utf8.RuneError || 0x80 <= r && r <= 0x9F }

func (d *Decoder) appendLegacy(dst, src []byte) ([]byte, error) {
	n0 := len(dst)
	// One byte decodes to at most 3 UTF-8 bytes (U+FFFD, half-width
	// katakana, €); a 2-byte character to at most 3; a 4-byte one to 4.
	need := 3*len(src) + utf8.UTFMax
	if cap(dst)-n0 < need {
		grown := make([]byte, n0, n0+need)
		copy(grown, dst)
		dst = grown
	}
	nDst, nSrc, err := d.t.Transform(dst[n0:n0+need], src, true)
	if err == nil && nSrc == len(src) && !(d.name == GB18030 && gbSuspect(src)) {
		out := dst[n0 : n0+nDst]
		if !bytes.Contains(out, fffdUTF8) && !hasC1(out) {
			return dst[:n0+nDst], nil
		}
	}
	// Slow path: character by character, to find the first bad sequence.
	dst = dst[:n0]
	var first *InvalidError
	for i := 0; i < len(src); {
		r, n := d.cd.next(src[i:], true)
		if badRune(r) {
			if first == nil {
				seq := bytes.Clone(src[i : i+n])
				first = &InvalidError{Encoding: d.name, Offset: i, Bytes: seq,
					Replacement: r == utf8.RuneError && d.fffd != nil && bytes.Equal(seq, d.fffd),
					Control:     r != utf8.RuneError}
			}
			dst = append(dst, fffdUTF8...)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		i += n
	}
	if first == nil {
		return dst, nil
	}
	return dst, first
}

// hasC1 reports whether UTF-8 text holds a character U+0080–U+009F.
func hasC1(b []byte) bool {
	for {
		i := bytes.IndexByte(b, 0xC2)
		if i < 0 || i+1 >= len(b) {
			return false
		}
		if 0x80 <= b[i+1] && b[i+1] <= 0x9F {
			return true
		}
		b = b[i+1:]
	}
}

// gbSuspect reports whether src may hold what x/text's gb18030 decoder
// wrongly accepts as a four-byte character: a lead byte followed by
// 0x3A–0x3F (GB18030 allows only the digits 0x30–0x39 there). The pattern
// also occurs in valid text (a trail byte before ':' or ';'); the slow path
// decides.
func gbSuspect(src []byte) bool {
	for i := 1; i < len(src); i++ {
		if 0x3A <= src[i] && src[i] <= 0x3F && 0x81 <= src[i-1] && src[i-1] <= 0xFE {
			return true
		}
	}
	return false
}

// charDec decodes one character at a time with an x/text decoder, so that
// the bytes each character spans are exactly those the decoder consumes —
// with one correction: x/text's gb18030 decoder accepts 0x3A–0x3F as the
// second byte of a four-byte character, which GB18030 does not (only
// 0x30–0x39); charDec makes such a lead byte an invalid character of its
// own, so that a ';' or ':' after a stray lead byte stays ASCII.
type charDec struct {
	t   transform.Transformer
	gb  bool
	buf [utf8.UTFMax]byte
}

func newCharDec(canon string) charDec {
	return charDec{t: encodingOf(canon).NewDecoder(), gb: canon == GB18030}
}

// next decodes the character at the start of b (len(b) > 0): the rune
// (U+FFFD for an invalid sequence) and how many bytes it spans; 0 bytes when
// b holds only the start of a character and !atEOF.
func (d *charDec) next(b []byte, atEOF bool) (rune, int) {
	if b[0] < utf8.RuneSelf {
		return rune(b[0]), 1
	}
	if d.gb && len(b) > 1 && 0x3A <= b[1] && b[1] <= 0x3F {
		return utf8.RuneError, 1
	}
	src := b
	if len(src) > 4 { // no character is longer
		src, atEOF = src[:4], false
	}
	// A destination just large enough for one rune makes the decoder stop
	// after the first character.
	for l := 1; l <= utf8.UTFMax; l++ {
		nDst, nSrc, err := d.t.Transform(d.buf[:l], src, atEOF)
		if nDst > 0 {
			r, _ := utf8.DecodeRune(d.buf[:nDst])
			return r, nSrc
		}
		if err == transform.ErrShortSrc {
			return utf8.RuneError, 0
		}
		if err != transform.ErrShortDst {
			break
		}
	}
	return utf8.RuneError, 1
}

// TrailMasker copies text of a multi-byte legacy encoding, replacing every
// ASCII byte that is the trail byte of a two-byte character with 0x80, so
// that a parser looking for ASCII delimiters and quotes in the copy cannot
// mistake half a character for one (a Shift-JIS "ポ" is 0x83 0x7C: a '|').
// It follows the x/text decoders byte for byte: a lead byte followed by a
// byte that cannot be its trail is a character on its own (invalid) and the
// next byte starts a new character, exactly as the decoder resynchronizes.
// The digits inside gb18030 four-byte characters are not masked: a parser
// must not use digits or letters as delimiters or quotes in a multi-byte
// encoding. State carries over from one Mask call to the next, so a text
// can be masked in chunks.
type TrailMasker struct {
	name string
	cd   charDec // euc-kr: whether a lead and an ASCII letter form a character
	lead byte    // a lead byte seen at the end of the last chunk, 0 when none
}

// NewTrailMasker returns a masker for euc-kr, shift_jis or gb18030, nil for
// an encoding that has no ASCII trail bytes (utf-8, windows-1252) or is not
// ASCII-compatible (utf-16).
func NewTrailMasker(name string) *TrailMasker {
	_, canon, err := Lookup(name)
	if err != nil {
		return nil
	}
	switch canon {
	case EUCKR:
		return &TrailMasker{name: canon, cd: newCharDec(canon)}
	case ShiftJIS, GB18030:
		return &TrailMasker{name: canon}
	}
	return nil
}

// Reset forgets a lead byte left over from the last chunk.
func (m *TrailMasker) Reset() { m.lead = 0 }

func (m *TrailMasker) isLead(c byte) bool {
	switch m.name {
	case ShiftJIS:
		return 0x81 <= c && c <= 0x9F || 0xE0 <= c && c <= 0xFC
	default: // euc-kr, gb18030
		return 0x81 <= c && c <= 0xFE
	}
}

// pairs reports whether the lead c0 and the next byte c1 form one
// two-byte character for the decoder.
func (m *TrailMasker) pairs(c0, c1 byte) bool {
	if c1 >= 0x80 {
		// Consumed with the lead, valid or not (shift_jis 0xFD–0xFF,
		// euc-kr 0x80/0xFF and gb18030 0xFF included) — except gb18030's
		// 0xFF, which is invalid as a trail and left alone.
		return !(m.name == GB18030 && c1 == 0xFF)
	}
	switch m.name {
	case ShiftJIS:
		return 0x40 <= c1 && c1 <= 0x7E
	case GB18030:
		return 0x40 <= c1 && c1 <= 0x7E
	case EUCKR:
		if c0 >= 0xC7 || !('A' <= c1 && c1 <= 'Z' || 'a' <= c1 && c1 <= 'z') {
			return false
		}
		// An unmapped pair with an ASCII trail is one invalid lead byte
		// followed by the ASCII letter.
		r, n := m.cd.next([]byte{c0, c1}, true)
		return n == 2 && r != utf8.RuneError
	}
	return false
}

// Mask appends the masked copy of src to dst.
func (m *TrailMasker) Mask(dst, src []byte) []byte {
	dst = append(dst, src...)
	out := dst[len(dst)-len(src):]
	i := 0
	if m.lead != 0 && len(src) > 0 {
		if m.pairs(m.lead, src[0]) {
			if src[0] < utf8.RuneSelf {
				out[0] = 0x80
			}
			i = 1
		}
		m.lead = 0
	}
	for i < len(src) {
		c := src[i]
		if c < utf8.RuneSelf || !m.isLead(c) {
			i++
			continue
		}
		if i+1 >= len(src) {
			m.lead = c
			break
		}
		if m.pairs(c, src[i+1]) {
			if src[i+1] < utf8.RuneSelf {
				out[i+1] = 0x80
			}
			i += 2
			continue
		}
		i++
	}
	return dst
}

// Detection is the encoding found for a file.
type Detection struct {
	// Name is one of the canonical names (Encodings).
	Name string
	// Confidence is between 0 and 1: 1 for a byte order mark or a pinned
	// encoding, lower for a guess from the content.
	Confidence float64
	// BOM is the length in bytes of the byte order mark at the start of the
	// sample, 0 when there is none.
	BOM int
	// Reason says in one sentence why.
	Reason string
}

// SniffBOM returns the encoding and length of a byte order mark at the start
// of b: EF BB BF (utf-8), FF FE (utf-16le), FE FF (utf-16be); 0 when none.
// (A UTF-32LE mark FF FE 00 00 starts like the UTF-16LE one: the caller
// checks for UTF-32 first if it cares.)
func SniffBOM(b []byte) (name string, n int) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return UTF8, 3
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return UTF16LE, 2
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return UTF16BE, 2
	}
	return "", 0
}

// Detect guesses the encoding of a file from a sample of its start (64 KiB
// is plenty; the sample may end in the middle of a character). In order:
//
//  1. a byte order mark decides (utf-8, utf-16le, utf-16be);
//  2. UTF-16 without a mark: at least 60% of the 2-byte units have a NUL
//     high byte (ASCII-heavy text), almost no unit has a NUL low byte, and
//     the units decode to text (no lone surrogates, no control characters
//     but tab, CR and LF);
//  3. valid UTF-8 is utf-8 (ASCII only too, with confidence 0.5: it reads
//     the same in every candidate);
//  4. otherwise each candidate decodes the sample and is scored per byte
//     above 0x7F; the highest score wins;
//  5. but when that is windows-1252, the fallback, while at most one line
//     in ten holds bytes invalid in UTF-8, the file is UTF-8 with a few
//     damaged rows (see mostlyUTF8).
//
// Scores run from +1 for a byte of a character of the candidate's common
// script down to −2 for a byte of an invalid sequence; private use and C1
// control characters count −1 everywhere:
//
//   - utf-8 (a file with damaged bytes, or with some rows in another
//     encoding): +1 per byte of a valid multi-byte character, −2 per invalid
//     byte; a candidate only with at least one valid multi-byte character;
//   - euc-kr: +1 for the 2,350 Hangul syllables of KS X 1001, 0.3 for CP949
//     extension syllables and Hanja;
//   - gb18030: +1 for GB2312 level-1 hanzi, 0.6 for level 2, 0.1 for the GBK
//     extension, −0.5 for four-byte characters; level-1 hanzi count only 0.3
//     when four or more have a lead byte of 0xB0–0xC8 and under a tenth as
//     many one from 0xC9 on (pinyin initials sh–z, which Chinese text always
//     has): such bytes are Korean Hangul;
//   - shift_jis: +1 for Hiragana, Katakana and JIS level-1 kanji, 0.8 for
//     half-width katakana, 0.6 for level-2 kanji;
//   - for these three: −0.5 for a character between two ASCII letters (the
//     bytes of a Latin letter in UTF-8 or Windows-1252, as in "Müller");
//   - windows-1252: +1 for a Latin-1 letter alone or paired between ASCII
//     bytes, 0.2 in longer runs (CJK bytes read as Latin-1 are long runs),
//     0.6 for common symbols (€, °, …), −1 for the bytes of a valid UTF-8
//     sequence ("Ã¼", "â€™": UTF-8 read as Windows-1252).
//
// A multi-byte legacy candidate is out with more than max(2, 10%) invalid
// characters or without a positive score; windows-1252 is never out: it is
// the fallback for single-byte text that is not UTF-8. A tie goes to the
// earlier of utf-8, euc-kr, gb18030, shift_jis, windows-1252 (so two hanzi
// whose bytes are also two Hangul syllables read as euc-kr: pin the
// encoding when a file is that short).
//
// The result is deterministic; Reason gives the numbers. Use DetectAll when
// the sample is the whole file, so that a character cut at its end counts
// as invalid rather than as cut by the sample.
func Detect(sample []byte) Detection { return detect(sample, false) }

// DetectAll is Detect for a sample that is the whole file.
func DetectAll(text []byte) Detection { return detect(text, true) }

func detect(sample []byte, atEOF bool) Detection {
	if name, n := SniffBOM(sample); n > 0 {
		return Detection{Name: name, Confidence: 1, BOM: n, Reason: fmt.Sprintf("byte order mark %s", Hex(sample[:n]))}
	}
	if d, ok := detectUTF16(sample); ok {
		return d
	}
	if d, ok := detectUTF8(sample, atEOF); ok {
		return d
	}
	return detectLegacy(sample, atEOF)
}

func detectUTF16(sample []byte) (Detection, bool) {
	units := len(sample) / 2
	if units < 2 {
		return Detection{}, false
	}
	zeroEven, zeroOdd := 0, 0
	for i := 0; i+1 < len(sample); i += 2 {
		if sample[i] == 0 {
			zeroEven++
		}
		if sample[i+1] == 0 {
			zeroOdd++
		}
	}
	var be bool
	var zeroHigh, zeroLow int
	switch {
	case zeroOdd >= zeroEven:
		zeroHigh, zeroLow = zeroOdd, zeroEven
	default:
		be = true
		zeroHigh, zeroLow = zeroEven, zeroOdd
	}
	if zeroHigh*10 < units*6 || zeroLow*10 > units {
		return Detection{}, false
	}
	bad := 0
	for i := 0; i+1 < len(sample); i += 2 {
		u := utf16Unit(sample[i:], be)
		switch {
		case u == '\t' || u == '\n' || u == '\r':
		case u < 0x20 || 0x7F <= u && u < 0xA0 || u == 0xFFFE || u == 0xFFFF:
			bad++
		case 0xD800 <= u && u < 0xDC00:
			if i+3 < len(sample) {
				if u2 := utf16Unit(sample[i+2:], be); 0xDC00 <= u2 && u2 <= 0xDFFF {
					i += 2
					continue
				}
				bad++
			}
		case 0xDC00 <= u && u <= 0xDFFF:
			bad++
		}
	}
	if bad*20 > units {
		return Detection{}, false
	}
	name, hi := UTF16LE, "odd"
	if be {
		name, hi = UTF16BE, "even"
	}
	share := float64(zeroHigh) / float64(units)
	conf := round2(math.Min(0.95, share) * (1 - float64(bad)/float64(units)))
	return Detection{Name: name, Confidence: conf, Reason: fmt.Sprintf(
		"no byte order mark, but %d%% of the %d two-byte units have a NUL at the %s byte: ASCII text in UTF-16",
		int(share*100), units, hi)}, true
}

// trimIncomplete drops a multi-byte UTF-8 sequence cut by the end of the
// sample.
func trimIncomplete(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

func detectUTF8(sample []byte, atEOF bool) (Detection, bool) {
	s := sample
	if !atEOF {
		s = trimIncomplete(sample)
	}
	if !utf8.Valid(s) {
		return Detection{}, false
	}
	multi := 0
	for _, c := range s {
		if utf8.RuneStart(c) && c >= utf8.RuneSelf {
			multi++
		}
	}
	switch {
	case len(sample) == 0:
		return Detection{Name: UTF8, Confidence: 0.5, Reason: "empty sample: utf-8 assumed"}, true
	case multi == 0:
		return Detection{Name: UTF8, Confidence: 0.5, Reason: fmt.Sprintf(
			"the first %d bytes are ASCII, which reads the same in every ASCII-compatible encoding: utf-8 assumed (rows with bytes invalid in UTF-8 become exceptions; pin the encoding if the file is not UTF-8)", len(sample))}, true
	}
	return Detection{Name: UTF8, Confidence: round2(math.Min(0.99, 0.8+0.05*float64(multi))), Reason: fmt.Sprintf(
		"valid UTF-8 with %d multi-byte characters", multi)}, true
}

// candidates in order of preference on a tie.
var candidates = []string{UTF8, EUCKR, GB18030, ShiftJIS, Windows1252}

type candidate struct {
	name     string
	score    float64
	chars    int // non-ASCII characters decoded (an invalid byte counts as one)
	invalid  int // of which invalid
	script   int // of which in the expected script (weight ≥ 0.6)
	odd      int // of which implausible (weight < 0)
	eligible bool
}

func detectLegacy(sample []byte, atEOF bool) Detection {
	high := 0
	for _, c := range sample {
		if c >= utf8.RuneSelf {
			high++
		}
	}
	cands := make([]candidate, len(candidates))
	for k, name := range candidates {
		if name == UTF8 {
			cands[k] = scoreUTF8(sample, high, atEOF)
		} else {
			cands[k] = scoreLegacy(name, sample, high, atEOF)
		}
	}
	best := -1
	for k := range cands {
		c := &cands[k]
		if c.eligible && (best < 0 || c.score > cands[best].score+1e-9) {
			best = k
		}
	}
	second := math.Inf(-1)
	for k := range cands {
		if k != best && cands[k].eligible && cands[k].score > second {
			second = cands[k].score
		}
	}
	b := cands[best]
	if b.name == Windows1252 {
		// The fallback for single-byte text; but a file whose lines are
		// nearly all valid UTF-8 is UTF-8 with a few damaged rows.
		if d, ok := mostlyUTF8(sample, atEOF); ok {
			return d
		}
	}
	margin := 1.0
	if !math.IsInf(second, -1) {
		margin = math.Min(1, 0.5+(b.score-math.Max(second, -1))/2)
	}
	conf := math.Max(0.05, math.Min(1, b.score)) * margin
	if high < 16 {
		conf *= 0.5 + float64(high)/32
	}
	conf = round2(math.Max(0, math.Min(conf, 0.95)))
	var parts []string
	order := make([]int, len(cands))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(i, j int) bool { return cands[order[i]].score > cands[order[j]].score })
	for _, k := range order {
		c := cands[k]
		p := fmt.Sprintf("%s %.2f (%d of %d characters in script, %d implausible, %d invalid)", c.name, c.score, c.script, c.chars, c.odd, c.invalid)
		if !c.eligible {
			p += " out"
		}
		parts = append(parts, p)
	}
	why := fmt.Sprintf("not valid UTF-8; scores per byte above 0x7F (%d): %s", high, strings.Join(parts, "; "))
	switch {
	case b.name == UTF8:
		why = "mostly UTF-8: rows holding invalid bytes become exceptions; " + why
	case b.name == Windows1252 && b.score < 0.5:
		why = "no encoding fits well; windows-1252 is the fallback for single-byte text: " + why
	}
	return Detection{Name: b.name, Confidence: conf, Reason: why}
}

// mostlyUTF8 decides UTF-8 for a sample in which at most one line in ten
// (and at least one) holds bytes invalid in UTF-8: an ASCII or UTF-8 file
// with a few damaged rows, which become encoding exceptions, rather than a
// file in a single-byte code page. A line cut by the end of the sample is
// not counted.
func mostlyUTF8(sample []byte, atEOF bool) (Detection, bool) {
	lines, bad := 0, 0
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
		if len(bytes.TrimRight(line, "\r")) == 0 {
			continue
		}
		lines++
		if !utf8.Valid(line) {
			bad++
		}
	}
	if bad == 0 || bad*10 > lines {
		return Detection{}, false
	}
	return Detection{Name: UTF8, Confidence: round2(0.5 * (1 - float64(bad)/float64(lines))), Reason: fmt.Sprintf(
		"mostly UTF-8: %d of %d lines sampled hold bytes invalid in UTF-8 (at most one in ten); those rows become encoding exceptions: pin the encoding if the file is windows-1252", bad, lines)}, true
}

// scoreUTF8 scores a sample that is not valid UTF-8 as UTF-8 with damaged
// bytes: +1 per byte of a valid multi-byte character, −1 for a C1 control
// or private use, −2 per invalid byte. It is a candidate when it has at
// least one valid multi-byte character: legacy text read as UTF-8 is
// mostly invalid bytes (a low score), while UTF-8 with a damaged byte beats
// windows-1252, which reads its valid characters as mojibake ("Ã«").
func scoreUTF8(sample []byte, high int, atEOF bool) candidate {
	c := candidate{name: UTF8}
	sum := 0.0
	for i := 0; i < len(sample); {
		if sample[i] < utf8.RuneSelf {
			i++
			continue
		}
		if !atEOF && !utf8.FullRune(sample[i:]) {
			break
		}
		r, n := utf8.DecodeRune(sample[i:])
		c.chars++
		switch {
		case r == utf8.RuneError && n == 1:
			c.invalid++
			sum -= 2
		case isPrivateUse(r) || in(r, 0x80, 0x9F):
			c.odd++
			sum -= float64(n)
		default:
			c.script++
			sum += float64(n)
		}
		i += n
	}
	if high > 0 {
		c.score = round2(sum / float64(high))
	}
	c.eligible = c.script > 0
	return c
}

func scoreLegacy(name string, sample []byte, high int, atEOF bool) candidate {
	c := candidate{name: name}
	cd := newCharDec(name)
	sum := 0.0
	run := 0 // length of the current run of bytes above 0x7F (windows-1252)
	// windows-1252: the bytes of a valid UTF-8 multi-byte sequence read as
	// two or three Windows-1252 characters ("Ã¼", "â€™") are the classic
	// mojibake of UTF-8 text, not Western text.
	utf8Until := 0
	// gb18030: GB2312 hanzi by lead byte. Level 1 is ordered by pinyin, and
	// Chinese text always has hanzi of the initials sh–z (lead 0xC9 and
	// up); Korean EUC-KR text decoded as gb18030 gives only hanzi of lead
	// 0xB0–0xC8 (the Hangul rows of KS X 1001), all "common".
	lower, upper := 0, 0
	for i := 0; i < len(sample); {
		if sample[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := cd.next(sample[i:], atEOF)
		if n == 0 {
			break // a character cut by the end of the sample
		}
		seq := sample[i : i+n]
		hb := 0
		for _, b := range seq {
			if b >= utf8.RuneSelf {
				hb++
			}
		}
		if name == Windows1252 {
			if i == 0 || sample[i-1] < utf8.RuneSelf {
				run = 0
				for j := i; j < len(sample) && sample[j] >= utf8.RuneSelf; j++ {
					run++
				}
			}
			if i >= utf8Until {
				if r8, n8 := utf8.DecodeRune(sample[i:]); n8 > 1 && r8 != utf8.RuneError {
					utf8Until = i + n8
				}
			}
		}
		c.chars++
		switch {
		case badRune(r):
			c.invalid++
			sum -= 2 * float64(hb)
		case i < utf8Until:
			c.odd++
			sum -= float64(hb)
		default:
			w := weight(name, r, seq, run)
			if name != Windows1252 && w > 0 && i > 0 && i+n < len(sample) && isASCIILetter(sample[i-1]) && isASCIILetter(sample[i+n]) {
				// One CJK character inside a Latin word ("M?ller"): the
				// bytes are a Latin letter in UTF-8 or Windows-1252.
				w = -0.5
			}
			sum += w * float64(hb)
			if w >= 0.6 {
				c.script++
			}
			if w < 0 {
				c.odd++
			}
			if name == GB18030 && len(seq) == 2 && seq[1] >= 0xA1 && in(r, 0x4E00, 0x9FFF) {
				switch {
				case in(rune(seq[0]), 0xB0, 0xC8):
					lower++
				case in(rune(seq[0]), 0xC9, 0xF7):
					upper++
				}
			}
		}
		i += n
	}
	if lower >= 4 && upper*10 < lower {
		// Hanzi only from the Hangul rows: the bytes are Korean.
		sum -= 0.7 * 2 * float64(lower)
		c.script -= lower
	}
	if high > 0 {
		c.score = round2(sum / float64(high))
	}
	// A multi-byte encoding is out with more than max(2, 10%) invalid
	// characters or without a positive score; windows-1252 never is: it is
	// the fallback.
	c.eligible = name == Windows1252 || c.invalid <= max(2, c.chars/10) && c.score > 0
	return c
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func in(r, lo, hi rune) bool { return lo <= r && r <= hi }

func isPrivateUse(r rune) bool {
	return in(r, 0xE000, 0xF8FF) || in(r, 0xF0000, 0x10FFFF)
}

// weight is the plausibility of one decoded non-ASCII character in a
// business text of the encoding: 1 for its common script, less for rarer
// characters, below 0 for implausible ones.
func weight(name string, r rune, seq []byte, run int) float64 {
	if isPrivateUse(r) || in(r, 0x80, 0x9F) {
		return -1
	}
	cjkSym := in(r, 0x3000, 0x303F) || in(r, 0xFF01, 0xFF5E) || in(r, 0xFFE0, 0xFFEF)
	cjk := in(r, 0x4E00, 0x9FFF) || in(r, 0x3400, 0x4DBF)
	switch name {
	case EUCKR:
		switch {
		case in(r, 0xAC00, 0xD7A3):
			if seq[0] >= 0xB0 && len(seq) == 2 && seq[1] >= 0xA1 {
				return 1 // the 2,350 syllables of KS X 1001
			}
			return 0.3 // CP949 extension: rare syllables
		case in(r, 0x3131, 0x318E):
			return 0.5 // compatibility jamo
		case cjk || in(r, 0xF900, 0xFAFF):
			return 0.3 // Hanja: rare in Korean business text
		case cjkSym || in(r, 0x2000, 0x206F):
			return 0.3
		}
		return 0.1
	case GB18030:
		switch {
		case len(seq) == 4:
			return -0.5 // four-byte characters: rare in Chinese text
		case cjk && len(seq) == 2 && seq[1] >= 0xA1 && in(rune(seq[0]), 0xB0, 0xD7):
			return 1 // GB2312 level 1: the 3,755 common hanzi
		case cjk && len(seq) == 2 && seq[1] >= 0xA1 && in(rune(seq[0]), 0xD8, 0xF7):
			return 0.6 // GB2312 level 2
		case cjk:
			return 0.1 // GBK extension: rare hanzi
		case cjkSym:
			return 0.5 // full-width punctuation
		case r == '€':
			return 0.2
		}
		return 0.1
	case ShiftJIS:
		switch {
		case in(r, 0x3041, 0x309F) || in(r, 0x30A0, 0x30FF):
			return 1 // Hiragana, Katakana
		case cjk && len(seq) == 2 && (in(rune(seq[0]), 0x88, 0x97) || seq[0] == 0x98 && seq[1] <= 0x72):
			return 1 // JIS level 1 kanji
		case cjk && len(seq) == 2 && (in(rune(seq[0]), 0x98, 0x9F) || in(rune(seq[0]), 0xE0, 0xEA)):
			return 0.6 // JIS level 2 kanji
		case cjk || in(r, 0xF900, 0xFAFF):
			return 0.3 // NEC/IBM extension kanji
		case in(r, 0xFF61, 0xFF9F):
			return 0.8 // half-width katakana
		case cjkSym:
			return 0.7 // full-width punctuation, digits and letters
		}
		return 0.1
	case Windows1252:
		alone := run <= 2
		switch {
		case in(r, 0xC0, 0xFF) && r != 0xD7 && r != 0xF7,
			strings.ContainsRune("ŠšŽžŒœŸ", r):
			if alone {
				return 1
			}
			return 0.2
		case strings.ContainsRune("€‘’“”–—•…™\u00A0°²³µ·£¥§©®±½¼¾«»¿¡ºª×÷¢", r):
			if alone {
				return 0.6
			}
			return 0
		}
		if alone {
			return 0 // ƒ ‚ „ † ‡ ˆ ‰ ‹ › ˜ ¤ ¦ ¨ ¬ soft hyphen ¯ ´ ¸ ¹
		}
		return -0.5
	}
	return 0
}
