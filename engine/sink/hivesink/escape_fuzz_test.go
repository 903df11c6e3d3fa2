package hivesink_test

import (
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/lima-lake/lima/engine/sink/hivesink"
)

// FuzzEscapeValue: whatever the value, its folder is one path segment
// inside the table (no separator, not . or .., no control or BiDi
// character, not empty, at most 255 bytes with its key) and, unless it was
// shortened, unescaping gives the value back.
func FuzzEscapeValue(f *testing.F) {
	for _, s := range []string{"", ".", "..", "../x", "a/b", `a\b`, "100%", "%2F", "k=v", "c:", "\x00", "\x1b[31m", "\u202e", "협력사", "__HIVE_DEFAULT_PARTITION__",
		strings.Repeat("é", 150), strings.Repeat("%", 90), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		e := hivesink.EscapeValue(v)
		seg := hivesink.Segment("key_name", v, false)
		if e == "" || e == "." || e == ".." || strings.ContainsAny(e, "/\\") {
			t.Fatalf("EscapeValue(%q) = %q: not a safe segment", v, e)
		}
		if len(seg) > 255 {
			t.Fatalf("segment of %q is %d bytes", v, len(seg))
		}
		if !utf8.ValidString(e) {
			t.Fatalf("EscapeValue(%q) = %q is not valid UTF-8", v, e)
		}
		for _, r := range e {
			if !unicode.IsPrint(r) && r != ' ' || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("EscapeValue(%q) = %q keeps %U", v, e, r)
			}
		}
		if strings.Count(seg, "=") != 1 {
			t.Fatalf("segment %q has more than one =", seg)
		}
		joined := path.Join("/lake/ns/table", seg)
		if !strings.HasPrefix(joined, "/lake/ns/table/") || strings.Count(joined, "/") != 4 {
			t.Fatalf("segment %q leaves the table: %q", seg, joined)
		}
		u, ok := hivesink.UnescapeValue(e)
		switch {
		case v == "":
			if ok {
				t.Fatalf("the empty value did not map to the default partition")
			}
		case strings.Contains(e, "~"):
			// shortened: distinct values must still differ (hash suffix)
			if len(e) > 200 {
				t.Fatalf("shortened value is %d bytes", len(e))
			}
		case !ok || u != v:
			t.Fatalf("UnescapeValue(EscapeValue(%q)) = %q, %v", v, u, ok)
		}
	})
}
