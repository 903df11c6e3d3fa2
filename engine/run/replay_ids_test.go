package run

import (
	"slices"
	"testing"
)

// The exception ids a replay commit carries, written by hand.
func TestReplayExceptionIDs(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want string
		back []int64
	}{
		{nil, "", nil},
		{[]int64{7}, "7", []int64{7}},
		{[]int64{5, 3, 4, 12, 7, 6, 12}, "3-7,12", []int64{3, 4, 5, 6, 7, 12}},
		{[]int64{1, 3, 5}, "1,3,5", []int64{1, 3, 5}},
		{[]int64{9, 10}, "9-10", []int64{9, 10}},
	} {
		got := FormatIDs(c.in)
		if got != c.want {
			t.Errorf("FormatIDs(%v) = %q, want %q", c.in, got, c.want)
		}
		back, err := ParseIDs(got)
		if err != nil || !slices.Equal(back, c.back) {
			t.Errorf("ParseIDs(%q) = %v %v, want %v", got, back, err, c.back)
		}
	}
	for _, bad := range []string{"x", "3-", "7-3", "1,,2", "-4"} {
		if _, err := ParseIDs(bad); err == nil {
			t.Errorf("ParseIDs(%q) accepted", bad)
		}
	}
}
