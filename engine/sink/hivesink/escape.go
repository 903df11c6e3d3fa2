package hivesink

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultPartition is the folder value of a null (or empty) partition
// value, as Hive and Athena write it.
const DefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// maxEscaped bounds an escaped value: a path segment holds 255 bytes and
// the key and "=" need room. Longer values keep a readable prefix and end
// in "~" and a hash of the whole value, so distinct values stay distinct.
const maxEscaped = 200

// needsEscape reports whether the byte must be percent-encoded in a
// partition value: the characters Hive escapes (controls, " # % ' * / : =
// ? \ DEL { [ ] ^), plus the ones that are unsafe in object keys or
// shells (space is kept, as Hive keeps it), and every byte of an invalid
// UTF-8 sequence (handled by the caller).
func needsEscape(b byte) bool {
	if b < 0x20 || b == 0x7f {
		return true
	}
	switch b {
	case '"', '#', '%', '\'', '*', '/', ':', '=', '?', '\\', '{', '[', ']', '^', '<', '>', '|', '~':
		return true
	}
	return false
}

const hexDigits = "0123456789ABCDEF"

func pct(sb *strings.Builder, b byte) {
	sb.WriteByte('%')
	sb.WriteByte(hexDigits[b>>4])
	sb.WriteByte(hexDigits[b&15])
}

// EscapeValue turns a partition value into a safe path segment value:
// percent-encoding (%XX, upper-case hex) of the characters Hive escapes,
// of every character that is not printable (C0/C1 controls, BiDi
// overrides, invalid UTF-8) and of a value that is "." or "..". The
// result never contains "/" or "\", is never "." or "..", never empty, and
// UnescapeValue gives the value back unless it was longer than maxEscaped
// (then a readable prefix, "~" and a hash of the value).
func EscapeValue(v string) string {
	if v == "" {
		return DefaultPartition
	}
	if v == DefaultPartition {
		// A real value that happens to spell the marker stays distinct from null.
		return "%5F" + v[1:]
	}
	var sb strings.Builder
	if v == "." || v == ".." {
		for range len(v) {
			sb.WriteString("%2E")
		}
		return sb.String()
	}
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			pct(&sb, v[i])
		case size == 1 && needsEscape(v[i]):
			pct(&sb, v[i])
		case size > 1 && (!unicode.IsPrint(r) || isBiDiControl(r)):
			for j := range size {
				pct(&sb, v[i+j])
			}
		default:
			sb.WriteString(v[i : i+size])
		}
		i += size
	}
	out := sb.String()
	if len(out) > maxEscaped {
		sum := sha256.Sum256([]byte(v))
		cut := maxEscaped - 1 - 16
		// Do not cut inside a %XX escape or a UTF-8 sequence.
		for cut > 0 && (!utf8.RuneStart(out[cut]) || (cut >= 1 && out[cut-1] == '%') || (cut >= 2 && out[cut-2] == '%')) {
			cut--
		}
		out = out[:cut] + "~" + hex.EncodeToString(sum[:8])
	}
	return out
}

func isBiDiControl(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	}
	return false
}

// UnescapeValue reverses EscapeValue (not for hashed long values). The
// second result is false for the null marker.
func UnescapeValue(s string) (string, bool) {
	if s == DefaultPartition {
		return "", false
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			sb.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		sb.WriteByte(s[i])
	}
	return sb.String(), true
}

func isHex(b byte) bool {
	return (b >= '0' && b <= '9') || (b >= 'A' && b <= 'F') || (b >= 'a' && b <= 'f')
}

func unhex(b byte) byte {
	switch {
	case b >= '0' && b <= '9':
		return b - '0'
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10
	}
	return b - 'A' + 10
}

// Segment is one key=value folder of a partition path.
func Segment(key, value string, null bool) string {
	if null {
		return key + "=" + DefaultPartition
	}
	return key + "=" + EscapeValue(value)
}
