package ui

import "testing"

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"한일정밀", "한일정밀"},
		{"red \x1b[31mALERT\x1b[0m", `red \e[31mALERT\e[0m`},
		{"line1\r\nline2", `line1\r\nline2`},
		{"a\tb", `a\tb`},
		{"evil\u202eexe.txt", `evil\u202eexe.txt`},
		{"iso\u2066late", `iso\u2066late`},
		{"c1 \u0085 next", `c1 \u0085 next`},
		{"bad \xff byte", `bad \xff byte`},
		{"bell\a", `bell\x07`},
		{"del\x7f", `del\x7f`},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
