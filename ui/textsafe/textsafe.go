// Package textsafe is the one definition of the characters that must never
// reach a terminal or a rendered document raw: C0 controls, DEL, C1
// controls (U+0080–U+009F), BiDi formatting characters and invalid UTF-8.
// It has no dependencies, so every layer (ui, reports, JSON outputs) can
// use it; ui.Sanitize is its terminal form.
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether r must be escaped before it is shown: C0 controls,
// DEL, C1 controls and BiDi controls (LRM, RLM, ALM, embeddings, overrides,
// isolates).
func Unsafe(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || Bidi(r)
}

// Bidi reports the BiDi formatting characters: U+200E, U+200F, U+061C,
// U+202A–U+202E and U+2066–U+2069.
func Bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// Sanitize makes untrusted text safe for a terminal: every Unsafe character
// and every invalid byte becomes a visible escape (\n \r \t \e, \xNN for C0,
// DEL and invalid bytes, \uNNNN for C1 and BiDi). One value stays on one line.
// Text with nothing to escape is returned as is, without a copy.
func Sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if esc, ok := named[r]; ok {
			b.WriteString(esc)
		} else if r == utf8.RuneError && size == 1 || r < 0x20 || r == 0x7f {
			// An invalid byte, a C0 control or DEL: the byte itself.
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else if Unsafe(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// named are the controls Sanitize writes by their usual name.
var named = map[rune]string{'\n': `\n`, '\r': `\r`, '\t': `\t`, 0x1b: `\e`}

// EscapeJSON makes JSON text safe for a terminal without changing what it
// decodes to: encoding/json escapes C0 controls but writes DEL, C1 controls,
// BiDi controls and the line/paragraph separators raw; here each becomes its
// \uXXXX escape, and so does a raw C0 control other than the newline and the
// tab, which JSON allows between tokens (MarshalIndent's layout) and which
// stay. Outside strings JSON holds only ASCII, so every escaped character is
// inside a string, where the escape is equivalent. JSON with nothing to
// escape is returned as is, without a copy.
func EscapeJSON(b []byte) []byte {
	clean := true
	for _, c := range b {
		if c >= 0x80 || escapeInJSON(rune(c)) {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
		} else if escapeInJSON(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// escapeInJSON reports the characters EscapeJSON escapes.
func escapeInJSON(r rune) bool {
	return Unsafe(r) && r != '\n' && r != '\t' || r == 0x2028 || r == 0x2029
}
