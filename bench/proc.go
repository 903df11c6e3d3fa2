package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// measured is one child process: its wall time, peak resident memory and
// output.
type measured struct {
	Wall     time.Duration
	CPU      time.Duration // user + system time of the child
	MaxRSS   int64         // raw ru_maxrss: KiB on Linux, bytes on macOS (see maxRSSBytes)
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// PeakRSSMB is the peak resident set size in MB (10^6 bytes).
func (m measured) PeakRSSMB() float64 { return float64(maxRSSBytes(m.MaxRSS)) / 1e6 }

// runMeasured runs name with args as a child process and measures it. The
// child's stderr goes to the returned buffer and, when tee is set, to ours.
func runMeasured(ctx context.Context, tee bool, name string, args ...string) (measured, error) {
	var m measured
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if tee {
		cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	m.Wall = time.Since(start)
	m.Stdout, m.Stderr = stdout.Bytes(), stderr.Bytes()
	if cmd.ProcessState == nil {
		return m, err
	}
	m.ExitCode = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.MaxRSS = int64(ru.Maxrss)
		m.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if _, isExit := err.(*exec.ExitError); isExit {
		err = nil // a non-zero exit is reported through ExitCode
	}
	return m, err
}

// runQuiet runs a short helper command and returns its combined output.
func runQuiet(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// tail returns the last n lines of b, for error messages.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// buildLima builds the product binary from the parent module into out.
func buildLima(ctx context.Context, repo, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/lima-tui")
	cmd.Dir = repo
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/lima-tui in %s: %w\n%s", repo, err, b)
	}
	return nil
}
