// Package faultpoint lets crash tests kill the process at a named point:
// when LIMA_FAULTPOINT names the point, the process sends itself SIGKILL
// there — no deferred cleanup runs, as in a real crash. Unset, it costs one
// comparison.
package faultpoint

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

var armed = os.Getenv("LIMA_FAULTPOINT")

// Hit kills the process if name is the armed fault point.
func Hit(name string) {
	if armed != "" && armed == name {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is delivered asynchronously
	}
}

// Armed reports whether name is the armed fault point (for a seam that
// must do some work of its own before it calls Hit).
func Armed(name string) bool { return armed != "" && armed == name }

// ArmedBytes reports, when the armed fault point is prefix followed by a
// number (data-file-bytes-4096), that number: a writer stops (Hit) once
// it has written that many bytes of a file.
func ArmedBytes(prefix string) (int64, bool) {
	rest, ok := strings.CutPrefix(armed, prefix)
	if !ok || rest == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
