//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSBytes is the child's peak resident set size: ru_maxrss from wait4,
// which Linux and the BSDs report in KiB and macOS in bytes.
func peakRSSBytes(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
