package plan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidPlan classifies every problem with the content of a plan:
// syntax, unknown fields, wrong value types and failed validation. A
// *ValidationError unwraps to it, so callers can tell a bad plan from an
// unreadable file with errors.Is(err, plan.ErrInvalidPlan).
var ErrInvalidPlan = errors.New("invalid plan")

// FieldError is one problem at one place of a plan.
type FieldError struct {
	// Path names the field, e.g. tables.orders.columns[2].type. Map keys
	// that are not plain names are written as ["key"]; list indexes are
	// 0-based. Empty for problems with the whole file.
	Path string
	// Line is the 1-based line in the file the plan was last loaded from or
	// written to; 0 when unknown (a plan built in code). For a missing field
	// it is the line of the nearest enclosing field.
	Line int
	// Msg says what is wrong and what is allowed.
	Msg string
}

// Error formats the problem as "line N: path: msg".
func (e FieldError) Error() string { return e.format("") }

func (e FieldError) format(file string) string {
	var b strings.Builder
	switch {
	case file != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", file, e.Line)
	case file != "":
		b.WriteString(file + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ValidationError is every problem found in a plan, ordered by line.
type ValidationError struct {
	// File is the name the plan was loaded from or written to; may be empty.
	File   string
	Errors []FieldError
}

// Error lists one problem per line, each as "file:line: path: msg".
func (e *ValidationError) Error() string {
	if len(e.Errors) == 0 {
		return ErrInvalidPlan.Error()
	}
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fe.format(e.File)
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns ErrInvalidPlan.
func (e *ValidationError) Unwrap() error { return ErrInvalidPlan }

// collector gathers FieldErrors and fills in their lines.
type collector struct {
	file  string
	lines map[string]int
	errs  []FieldError
}

func (c *collector) add(path, format string, args ...any) {
	c.errs = append(c.errs, FieldError{Path: path, Line: c.lineOf(path), Msg: fmt.Sprintf(format, args...)})
}

// addAt records a problem at a known line.
func (c *collector) addAt(path string, line int, format string, args ...any) {
	c.errs = append(c.errs, FieldError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// lineOf is the line of path, or of its nearest ancestor with a known line.
func (c *collector) lineOf(path string) int {
	if c.lines == nil {
		return 0
	}
	for {
		if l, ok := c.lines[path]; ok {
			return l
		}
		if path == "" {
			return 0
		}
		path = parentPath(path)
	}
}

// result returns nil or a *ValidationError with the problems ordered by line
// (unknown lines last, in the order found).
func (c *collector) result() error {
	if len(c.errs) == 0 {
		return nil
	}
	errs := slices.Clone(c.errs)
	slices.SortStableFunc(errs, func(a, b FieldError) int {
		la, lb := a.Line, b.Line
		if la == 0 {
			la = int(^uint(0) >> 1)
		}
		if lb == 0 {
			lb = int(^uint(0) >> 1)
		}
		return cmp.Compare(la, lb)
	})
	return &ValidationError{File: c.file, Errors: errs}
}

// Paths.

// joinKey appends a field or map key to a path: parent.key, or
// parent["odd key"] when key is not a plain name.
func joinKey(parent, key string) string {
	if isPlainKey(key) {
		if parent == "" {
			return key
		}
		return parent + "." + key
	}
	return parent + "[" + strconv.Quote(key) + "]"
}

// joinIndex appends a list index to a path.
func joinIndex(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

func isPlainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// parentPath strips the last segment of a path built by joinKey/joinIndex.
func parentPath(path string) string {
	last := 0
	i := 0
	for i < len(path) {
		last = i
		switch path[i] {
		case '[':
			if i+1 < len(path) && path[i+1] == '"' {
				q, err := strconv.QuotedPrefix(path[i+1:])
				if err != nil {
					return path[:last]
				}
				i += 1 + len(q) + 1
			} else {
				j := strings.IndexByte(path[i:], ']')
				if j < 0 {
					return path[:last]
				}
				i += j + 1
			}
		default:
			if path[i] == '.' {
				i++
			}
			for i < len(path) && path[i] != '.' && path[i] != '[' {
				i++
			}
		}
	}
	return path[:last]
}
