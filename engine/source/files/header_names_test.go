package files

import (
	"slices"
	"strconv"
	"testing"
)

// Names given twice get the first free suffix, as before the per-name
// counter; a header of many copies of one name is named in linear time
// (20,003 columns of "x" took minutes; cmd/lima-tui's hostile corpus,
// file/wide-header, times it).
func TestHeaderNamesSuffixes(t *testing.T) {
	got := headerNames([]string{"a", "a", "a_2", "A", "", "col_5", " b ", "b"})
	want := []string{"a", "a_2", "a_2_2", "A_3", "col_5", "col_5_2", "b", "b_2"}
	if !slices.Equal(got, want) {
		t.Fatalf("headerNames = %q, want %q", got, want)
	}
	many := make([]string, 20000)
	for i := range many {
		many[i] = "x"
	}
	names := headerNames(many)
	for i, n := range names {
		if w := "x_" + strconv.Itoa(i+1); i > 0 && n != w {
			t.Fatalf("column %d named %q, want %q", i+1, n, w)
		}
	}
}
