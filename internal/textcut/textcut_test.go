package textcut

import (
	"strings"
	"testing"
)

func TestGrouped(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 52428800: "52,428,800", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := Grouped(n); got != want {
			t.Errorf("Grouped(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCell(t *testing.T) {
	if got := Cell("short", 10); got != "short" {
		t.Errorf("short value = %q", got)
	}
	if got := Cell("0123456789", 10); got != "0123456789" {
		t.Errorf("value of exactly the limit = %q", got)
	}
	big := strings.Repeat("x", 52428800)
	if got := Cell(big, 8); got != "xxxxxxxx…(52,428,800 bytes)" {
		t.Errorf("52 MB value = %q", got)
	}
	// "é" is 2 bytes: a cut at 3 would split the second one.
	if got := Cell("éééé", 3); got != "é…(8 bytes)" {
		t.Errorf("cut inside a character = %q", got)
	}
	if got := Cell(strings.Repeat("y", MaxCell+1), 0); got != strings.Repeat("y", MaxCell)+"…(4,097 bytes)" {
		t.Errorf("default limit: got %d bytes", len(got))
	}
}
