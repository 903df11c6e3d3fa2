// Package textcut bounds the text Lima copies from untrusted input into
// reports, samples and messages: a value longer than a limit is cut, and
// the cut says how long the value was.
package textcut

import (
	"strconv"
	"unicode/utf8"
)

// Grouped formats n with a comma between groups of three digits
// (52428800 → "52,428,800").
func Grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// RuneStart returns the longest prefix of b[:n] (n clamped to len(b)) that
// does not end inside a UTF-8 sequence: a cut never splits a character of
// valid UTF-8 text.
func RuneStart(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	if n <= 0 {
		return 0
	}
	// Back off over at most 3 continuation bytes to the start of the
	// character that the cut would split.
	for k := n; k > 0 && k > n-utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			return k
		}
	}
	return n
}

// MaxCell is the default longest value shown in a report or sample: 4 KiB.
const MaxCell = 4 << 10

// Cell returns s when it is at most max bytes long (MaxCell when max <= 0),
// else its first max bytes (never half a UTF-8 character) followed by
// "…(N bytes)" stating the full length.
func Cell(s string, max int) string {
	if max <= 0 {
		max = MaxCell
	}
	if len(s) <= max {
		return s
	}
	k := RuneStart([]byte(s[:max+1]), max)
	return s[:k] + "…(" + Grouped(int64(len(s))) + " bytes)"
}
