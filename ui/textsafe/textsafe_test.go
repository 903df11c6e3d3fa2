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
	// ... and so do the neighbours of every class (space, ~, U+00A0, the
	// characters around each BiDi range) and a real U+FFFD, which is a
	// character, not an invalid byte.
	for _, s := range []string{"plain", "한일정밀 협력사", "café ½ € 😀", "\u00a0nbsp", "ZWJ\u200d",
		" ~", "\u00a0\u00a1", "\u200d\u2010", "\u2029\u202f", "\u2065\u206a", "\u061b\u061d", "bad \ufffd char"} {
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

// TestEscapeJSONExact pins the bytes EscapeJSON writes, worked out by hand.
func TestEscapeJSONExact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"é"`, `"é"`},                                                 // a printable character stays
		{"\"\ufffd\"", "\"\ufffd\""},                                   // a real U+FFFD too (a character, not an invalid byte)
		{"\"a\x7fb\"", `"a\u007fb"`},                                   // DEL
		{"\"a\u0085\u009fb\"", `"a\u0085\u009fb"`},                     // C1
		{"\"\u200f\u202e\u2066\u061c\"", `"\u200f\u202e\u2066\u061c"`}, // BiDi
		{"\"\u2028\u2029\"", `"\u2028\u2029"`},                         // line and paragraph separators
		{"\"a\xffb\"", `"a\ufffdb"`},                                   // an invalid byte
		{"\"\x1b[31mred\"", `"\u001b[31mred"`},                         // a raw ESC in ASCII-only text
		{"\"a\rb\"", `"a\u000db"`},                                     // a raw carriage return
		// MarshalIndent's newlines and tabs between tokens stay, or the
		// text would no longer be JSON.
		{"{\n\t\"t\": \"한\u0085\"\n}", "{\n\t\"t\": \"한\\u0085\"\n}"},
	} {
		if got := string(EscapeJSON([]byte(c.in))); got != c.want {
			t.Errorf("EscapeJSON(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestEscapeJSONKeepsIndentedJSON: the indented JSON of a report (lima
// report --json) with a non-ASCII value is still JSON, with the same value.
func TestEscapeJSONKeepsIndentedJSON(t *testing.T) {
	for _, indent := range []string{"  ", "\t"} {
		v := map[string]any{"table": "한일정밀\u202e", "rows": []int{1, 2}}
		b, err := json.MarshalIndent(v, "", indent)
		if err != nil {
			t.Fatal(err)
		}
		out := EscapeJSON(b)
		assertInert(t, "EscapeJSON", strings.NewReplacer("\n", "", "\t", "").Replace(string(out)))
		var back map[string]any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("indent %q: %v\n%s", indent, err, out)
		}
		if back["table"] != "한일정밀\u202e" {
			t.Errorf("indent %q: table %q", indent, back["table"])
		}
	}
}

// TestCleanTextIsNotCopied: text with nothing to escape (every cell of
// every table goes through Sanitize) is returned as is, without a copy.
func TestCleanTextIsNotCopied(t *testing.T) {
	s := "plain text with spaces ~ and {json}: [1, 2]"
	if n := testing.AllocsPerRun(100, func() { _ = Sanitize(s) }); n != 0 {
		t.Errorf("Sanitize of clean text allocates %v times", n)
	}
	b := []byte("{\n\t\"a b\": \"~\"\n}")
	if n := testing.AllocsPerRun(100, func() { _ = EscapeJSON(b) }); n != 0 {
		t.Errorf("EscapeJSON of clean JSON allocates %v times", n)
	}
}
