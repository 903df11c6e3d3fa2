// Package faultpoint lets crash tests kill the process at a named point:
// when LIMA_FAULTPOINT names the point, the process sends itself SIGKILL
// there — no deferred cleanup runs, as in a real crash. Unset, it costs one
// comparison.
package faultpoint

import (
	"os"
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
