package reports

import "testing"

// TestWholeFiles: "1 whole file", never "1 whole files" (the run summary,
// report.md and the generated ARCHITECTURE.md say it alike).
func TestWholeFiles(t *testing.T) {
	for n, want := range map[int64]string{0: "0 whole files", 1: "1 whole file", 3: "3 whole files"} {
		if got := WholeFiles(n); got != want {
			t.Errorf("WholeFiles(%d) = %q, want %q", n, got, want)
		}
	}
}
