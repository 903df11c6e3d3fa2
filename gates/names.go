package gates

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// maxName is the longest table or column name the plan accepts.
const maxName = 128

// SnakeName turns a header or file name into a plan name: snake_case of
// lower-case ASCII letters, digits and _ ("InspectionID" → inspection_id,
// "Order Date" → order_date, "Métrologie" → metrologie). Hangul is written
// in the Revised Romanization, syllable by syllable ("협력사코드" →
// hyeopryeoksakodeu), so a Korean header keeps a readable name. Letters of
// other scripts are dropped; the result is "" when nothing is left, and
// starts with fallback+"_" when it would start with a digit.
func SnakeName(s, fallback string) string {
	// First pass: ASCII only, Hangul romanized, a _ where the script changes.
	var rs []rune
	lastHangul := false
	alnum := func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' }
	for _, r := range norm.NFC.String(s) {
		if r >= 0xAC00 && r <= 0xD7A3 {
			if n := len(rs); n > 0 && !lastHangul && alnum(rs[n-1]) {
				rs = append(rs, '_')
			}
			rs = append(rs, []rune(romanize(r))...)
			lastHangul = true
			continue
		}
		var ascii []rune
		switch {
		case r < 0x80:
			ascii = []rune{r}
		case r == 'ß':
			ascii = []rune{'s', 's'}
		default:
			// Latin letters with marks lose the marks; letters of other
			// scripts are dropped.
			for _, d := range norm.NFD.String(string(r)) {
				if d < 0x80 {
					ascii = append(ascii, d)
				}
			}
			if len(ascii) == 0 {
				ascii = []rune{'_'}
			}
		}
		for _, a := range ascii {
			if lastHangul && alnum(a) {
				rs = append(rs, '_')
			}
			lastHangul = false
			rs = append(rs, a)
		}
	}
	// Second pass: split camelCase, lower-case, _ for anything else.
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r >= 'A' && r <= 'Z':
			if i > 0 {
				prev, next := rs[i-1], rune(0)
				if i+1 < len(rs) {
					next = rs[i+1]
				}
				if prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9' || (prev >= 'A' && prev <= 'Z' && next >= 'a' && next <= 'z') {
					b.WriteByte('_')
				}
			}
			b.WriteRune(r + ('a' - 'A'))
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	out = strings.Trim(out, "_")
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = fallback + "_" + out
	}
	if len(out) > maxName {
		out = strings.TrimRight(out[:maxName], "_")
	}
	return out
}

var (
	hangulInitial = [...]string{"g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"}
	hangulVowel   = [...]string{"a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we", "wi", "yu", "eu", "ui", "i"}
	hangulFinal   = [...]string{"", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p", "t", "t", "ng", "t", "t", "k", "t", "p", "t"}
)

// romanize writes one Hangul syllable in the Revised Romanization of
// Korean, without the sound changes between syllables.
func romanize(r rune) string {
	i := int(r - 0xAC00)
	return hangulInitial[i/588] + hangulVowel[(i%588)/28] + hangulFinal[i%28]
}
