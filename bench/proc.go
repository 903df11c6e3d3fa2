package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// measured is one child process: its wall time, peak resident memory and
// output.
type measured struct {
	Wall     time.Duration
	CPU      time.Duration // user + system time of the child
	OtherCPU time.Duration // CPU time the rest of the machine used meanwhile (Linux; 0 elsewhere)
	PeakRSS  int64         // bytes: ru_maxrss of the child (0 where unknown)
	Load1    float64       // the machine's 1-minute load average as the child started (Linux; 0 elsewhere)
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// PeakRSSMB is the peak resident set size in MB (10^6 bytes).
func (m measured) PeakRSSMB() float64 { return float64(m.PeakRSS) / 1e6 }

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
	m.Load1 = loadAverage()
	busy0, haveBusy := machineBusy()
	start := time.Now()
	err := cmd.Run()
	m.Wall = time.Since(start)
	busy1, _ := machineBusy()
	m.Stdout, m.Stderr = stdout.Bytes(), stderr.Bytes()
	if cmd.ProcessState == nil {
		return m, err
	}
	m.ExitCode = cmd.ProcessState.ExitCode()
	m.PeakRSS = peakRSSBytes(cmd.ProcessState)
	m.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if haveBusy {
		m.OtherCPU = max(busy1-busy0-m.CPU, 0)
	}
	if _, isExit := err.(*exec.ExitError); isExit {
		err = nil // a non-zero exit is reported through ExitCode
	}
	return m, err
}

// machineBusy is the CPU time all processes have used since boot, from the
// first line of /proc/stat (Linux; USER_HZ is 100 there on every mainstream
// kernel build).
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, s := range f[1:8] { // user nice system idle iowait irq softirq
		if i == 3 || i == 4 {
			continue // idle, iowait
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		busy += n
	}
	return time.Duration(busy) * (time.Second / 100), true
}

// loadAverage is the 1-minute load average from /proc/loadavg (0 when
// unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
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
