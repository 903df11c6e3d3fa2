package clean

import (
	"fmt"
	"strings"
	"testing"
)

// asciiRows is a header and n ASCII rows.
func asciiRows(n int) string {
	var b strings.Builder
	b.WriteString("id,name,city\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d,name %d,city %d\n", i, i, i)
	}
	return b.String()
}

// A file that is mostly valid UTF-8 keeps UTF-8: its few rows with bytes
// invalid in UTF-8 become encoding exceptions, instead of the whole file
// being read as a single-byte code page. Text mostly in another encoding
// is still detected as such.
func TestDetectMostlyUTF8(t *testing.T) {
	tests := []struct {
		name, sample string
		all          bool
		want         string
	}{
		{"ASCII file with one invalid row", asciiRows(20) + "21,Caf\xE9,Paris\n" + asciiRows(20)[13:], true, UTF8},
		{"ASCII file with one invalid row, sample cut", asciiRows(40) + "41,ab\xFFc,x\n" + asciiRows(40)[13:] + "99,unfinished", false, UTF8},
		{"one bad line in eleven", asciiRows(9) + "10,G\xFCnther,x\n", true, UTF8},
		// More than one line in ten: the bytes are the file's encoding.
		{"two bad lines in eleven", asciiRows(8) + "9,G\xFCnther,x\n10,Jos\xE9,y\n", true, Windows1252},
		{"Latin-1 letters", "name\nJos\xE9\nFran\xE7ois\nG\xFCnther\n", false, Windows1252},
		// Multi-byte legacy text is recognised by its characters, however
		// few its rows are.
		{"one EUC-KR row among ASCII rows", asciiRows(30) + "31,\xC7\xD1\xC0\xCF\xC1\xA4\xB9\xD0,x\n", true, EUCKR},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Detect([]byte(tc.sample))
			if tc.all {
				d = DetectAll([]byte(tc.sample))
			}
			if d.Name != tc.want {
				t.Fatalf("Detect = %q, want %q; reason: %s", d.Name, tc.want, d.Reason)
			}
		})
	}
}
