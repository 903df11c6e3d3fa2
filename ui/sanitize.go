// Package ui holds the reusable terminal parts: styles, key maps and the
// sanitizer every untrusted text passes through before it is drawn.
package ui

import "github.com/lima-lake/lima/ui/textsafe"

// Sanitize makes untrusted text (cell values, file names, column names,
// driver errors) safe for a terminal: C0 and C1 controls, ESC sequences,
// DEL, BiDi overrides and isolates, and invalid UTF-8 become visible
// escapes. Tab and newline are escaped too, so one value stays on one line.
// The definition lives in ui/textsafe, which layers without a terminal
// (reports) use too.
func Sanitize(s string) string { return textsafe.Sanitize(s) }

// EscapeJSON escapes DEL, C1, BiDi controls and U+2028/U+2029 in JSON text
// as \uXXXX; see textsafe.EscapeJSON.
func EscapeJSON(b []byte) []byte { return textsafe.EscapeJSON(b) }
