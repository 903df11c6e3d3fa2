// The same class tests as ui's, against the definition itself (so a
// mutation test of this package sees them).
package textsafe

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// bidiControls is every BiDi formatting character the sanitizer claims:
// LRM, RLM, ALM, the embeddings and overrides, the isolates.
var bidiControls = []rune{0x200e, 0x200f, 0x061c, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069}

// rawDangerous reports a character that must never reach a terminal raw.
func rawDangerous(r rune) bool {
	if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
		return true
	}
	for _, b := range bidiControls {
		if r == b {
			return true
		}
	}
	return false
}

// assertInert fails if s holds a control, C1, BiDi control or invalid byte.
func assertInert(t *testing.T, what, s string) {
	t.Helper()
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			t.Errorf("%s: invalid byte %#x at %d", what, s[i], i)
		} else if rawDangerous(r) {
			t.Errorf("%s: raw %U at %d", what, r, i)
		}
		i += size
	}
}

// TestSanitizeEveryClass goes through every code point of each class the
// sanitizer claims and computes the escape it must become here, apart from
// the code.
func TestSanitizeEveryClass(t *testing.T) {
	named := map[rune]string{'\n': `\n`, '\r': `\r`, '\t': `\t`, 0x1b: `\e`}
	for r := rune(0); r < 0x20; r++ { // C0
		want := named[r]
		if want == "" {
			want = fmt.Sprintf(`\x%02x`, r)
		}
		if got := Sanitize("a" + string(r) + "b"); got != "a"+want+"b" {
			t.Errorf("C0 %U: got %q, want %q", r, got, "a"+want+"b")
		}
	}
	if got := Sanitize("a\x7fb"); got != `a\x7fb` {
		t.Errorf("DEL: got %q", got)
	}
	for r := rune(0x80); r <= 0x9f; r++ { // C1 as characters
		want := fmt.Sprintf(`a\u%04xb`, r)
		if got := Sanitize("a" + string(r) + "b"); got != want {
			t.Errorf("C1 %U: got %q, want %q", r, got, want)
		}
		// ... and as the raw byte, which is not UTF-8.
		want = fmt.Sprintf(`a\x%02xb`, r)
		if got := Sanitize("a" + string([]byte{byte(r)}) + "b"); got != want {
			t.Errorf("C1 byte %#x: got %q, want %q", r, got, want)
		}
	}
	for _, r := range bidiControls {
		want := fmt.Sprintf(`a\u%04xb`, r)
		if got := Sanitize("a" + string(r) + "b"); got != want {
			t.Errorf("BiDi %U: got %q, want %q", r, got, want)
		}
	}
	// Sequences: CSI (7-bit and 8-bit), OSC setting the title, DCS.
	for in, want := range map[string]string{
		"\x1b[2J\x1b[31mred":        `\e[2J\e[31mred`,
		"\u009b31mred":              `\u009b31mred`,
		"\x1b]0;owned\x07title":     `\e]0;owned\x07title`,
		"\x1b]8;;http://x\x1b\\lnk": `\e]8;;http://x\e\lnk`,
		"\u009d0;t\u009c":           `\u009d0;t\u009c`,
		"\x1bP1$r\x1b\\":            `\eP1$r\e\`,
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	// What is none of these passes unchanged.
	for _, s := range []string{"plain", "한일정밀 협력사", "café ½ € 😀", "\u00a0nbsp", "ZWJ\u200d"} {
		if got := Sanitize(s); got != s {
			t.Errorf("Sanitize(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0xa0; r++ {
		all.WriteRune(r)
	}
	for _, r := range bidiControls {
		all.WriteRune(r)
	}
	all.WriteString("\u2028\u2029 한 \xff")
	b, err := json.Marshal(map[string]string{"v": all.String()})
	if err != nil {
		t.Fatal(err)
	}
	out := EscapeJSON(b)
	assertInert(t, "EscapeJSON", string(out))
	for _, r := range []rune{0x2028, 0x2029} {
		if strings.ContainsRune(string(out), r) {
			t.Errorf("raw %U", r)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	var orig map[string]string
	json.Unmarshal(b, &orig)
	if back["v"] != orig["v"] {
		t.Errorf("EscapeJSON changed the value:\n%q\n%q", back["v"], orig["v"])
	}
}
