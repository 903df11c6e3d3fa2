// Package ui holds the reusable terminal parts: styles, key maps and the
// sanitizer every untrusted text passes through before it is drawn.
package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sanitize makes untrusted text (cell values, file names, column names,
// driver errors) safe for a terminal: C0 and C1 controls, ESC sequences,
// DEL, BiDi overrides and isolates, and invalid UTF-8 become visible
// escapes. Tab and newline are escaped too, so one value stays on one line.
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
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		case isBidiControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// EscapeJSON makes JSON text safe for a terminal without changing what it
// decodes to: encoding/json escapes C0 controls but writes DEL, C1 controls,
// BiDi controls and the line/paragraph separators raw; here each becomes its
// \uXXXX escape. Outside strings JSON holds only ASCII, so every such
// character is inside a string, where the escape is equivalent.
func EscapeJSON(b []byte) []byte {
	clean := true
	for _, c := range b {
		if c == 0x7f || c >= 0x80 {
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
		switch {
		case r == utf8.RuneError && size <= 1:
			out = append(out, `\ufffd`...)
		case r == 0x7f || r >= 0x80 && r < 0xa0 || isBidiControl(r) || r == 0x2028 || r == 0x2029:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
