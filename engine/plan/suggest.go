package plan

import (
	"fmt"
	"strings"
)

// suggest returns the option closest to name when it is close enough to be
// a likely misspelling: equal ignoring case, _ and -, or within an edit
// distance (transpositions count as one edit) that grows with the length of
// name. Ties go to the earlier option.
func suggest(name string, options []string) (string, bool) {
	if name == "" || len(options) == 0 {
		return "", false
	}
	fold := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
	}
	fn := fold(name)
	for _, o := range options {
		if fold(o) == fn {
			return o, true
		}
	}
	best, bestD := "", -1
	ln := strings.ToLower(name)
	for _, o := range options {
		d := editDistance(ln, strings.ToLower(o))
		if bestD < 0 || d < bestD {
			best, bestD = o, d
		}
	}
	n := len([]rune(name))
	limit := 1
	switch {
	case n >= 9:
		limit = 3
	case n >= 5:
		limit = 2
	case n <= 2:
		limit = 0
	}
	if bestD <= limit {
		return best, true
	}
	return "", false
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// hint is "; did you mean "x"?" when name is close to one of options, or
// "; <what>: a, b, c" listing them (at most 12) otherwise, or "" when there
// is nothing to list.
func hint(name string, options []string, what string) string {
	if s, ok := suggest(name, options); ok {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	if len(options) == 0 {
		return ""
	}
	return "; " + what + ": " + listOf(options, 12)
}

// listOf joins options with ", ", eliding after max.
func listOf(options []string, max int) string {
	if len(options) > max {
		return strings.Join(options[:max], ", ") + fmt.Sprintf(", … (%d more)", len(options)-max)
	}
	return strings.Join(options, ", ")
}

// oneOf writes options as "a, b or c".
func oneOf(options ...string) string {
	switch len(options) {
	case 0:
		return ""
	case 1:
		return options[0]
	}
	return strings.Join(options[:len(options)-1], ", ") + " or " + options[len(options)-1]
}
