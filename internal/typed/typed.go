// Package typed is the one check of a typed confirmation — the project
// prefix typed before a teardown (gate 5), the table name typed before a
// migration switches a catalog entry: exact, letter case and surrounding
// blanks included, with the near miss told apart so the message can say
// what differs.
package typed

import "strings"

// Result is how the typed text compares with the wanted one.
type Result int

const (
	// Exact: typed is want.
	Exact Result = iota
	// Empty: nothing was typed.
	Empty
	// CaseOrBlanks: typed differs from want only in letter case or
	// surrounding blanks — still no confirmation.
	CaseOrBlanks
	// Other: other text.
	Other
)

// Check compares the typed text with want. Only Exact confirms.
func Check(want, typed string) Result {
	switch {
	case typed == want:
		return Exact
	case typed == "":
		return Empty
	case strings.EqualFold(strings.TrimSpace(typed), want):
		return CaseOrBlanks
	}
	return Other
}
