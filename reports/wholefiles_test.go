package reports

import (
	"fmt"
	"testing"
)

// TestWholeFiles: "1 whole file", never "1 whole files" (the run summary,
// report.md and the generated ARCHITECTURE.md say it alike).
func TestWholeFiles(t *testing.T) {
	for n, want := range map[int64]string{0: "0 whole files", 1: "1 whole file", 3: "3 whole files"} {
		if got := WholeFiles(n); got != want {
			t.Errorf("WholeFiles(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestHeldBackWords: rows and whole files counted apart, the exceptions
// named once, singular and plural right.
func TestHeldBackWords(t *testing.T) {
	for _, c := range []struct {
		total, files int64
		want         string
	}{
		{1, 0, "1 row held back as an exception"},
		{50, 0, "50 rows held back as exceptions"},
		{1, 1, "1 whole file held back as an exception"},
		{3, 3, "3 whole files held back as 3 exceptions"},
		{13, 1, "12 rows and 1 whole file held back as 13 exceptions"},
		{2, 1, "1 row and 1 whole file held back as 2 exceptions"},
	} {
		if got := HeldBack(Exceptions{Total: c.total, Files: c.files}, nil); got != c.want {
			t.Errorf("HeldBack(total %d, files %d) = %q, want %q", c.total, c.files, got, c.want)
		}
	}
	if got := HeldBack(Exceptions{Total: 12345, Files: 1}, func(n int64) string { return "<" + fmt.Sprint(n) + ">" }); got != "<12344> rows and <1> whole file held back as <12345> exceptions" {
		t.Errorf("with a formatter: %q", got)
	}
}
