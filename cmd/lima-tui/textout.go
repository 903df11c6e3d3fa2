package main

import (
	"io"
	"strings"

	"github.com/lima-lake/lima/ui"
)

// layoutSafe writes text whose newlines and tabs are layout (the flag
// package's messages and lists, a saved report.md) with every other unsafe
// character escaped by ui.Sanitize: a flag name or value typed with a
// terminal escape, or a report.md edited behind Lima's back, reaches the
// terminal inert.
type layoutSafe struct{ w io.Writer }

func (l layoutSafe) Write(p []byte) (int, error) {
	lines := strings.Split(string(p), "\n")
	for i, line := range lines {
		cells := strings.Split(line, "\t")
		for j, c := range cells {
			cells[j] = ui.Sanitize(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	if _, err := io.WriteString(l.w, strings.Join(lines, "\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}
