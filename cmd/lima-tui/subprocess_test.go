package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The hostile-input, canary and escape tests run the built lima-tui as a
// child process, so that a panic, a hang or a memory blow-up is seen as the
// user sees it: an exit status, a process that must be killed, a peak RSS.
// The binary is built once per test binary (limaBin), into a folder removed
// when the package's tests end.

var (
	limaBinOnce sync.Once
	limaBinPath string
	limaBinErr  error
	limaBinDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if limaBinDir != "" {
		os.RemoveAll(limaBinDir)
	}
	os.Exit(code)
}

// limaBin returns the path of a lima-tui built from this package.
func limaBin(t *testing.T) string {
	t.Helper()
	limaBinOnce.Do(func() {
		limaBinDir, limaBinErr = os.MkdirTemp("", "lima-bin-")
		if limaBinErr != nil {
			return
		}
		limaBinPath = filepath.Join(limaBinDir, "lima-tui")
		out, err := exec.Command("go", "build", "-o", limaBinPath, ".").CombinedOutput()
		if err != nil {
			limaBinErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if limaBinErr != nil {
		t.Fatal(limaBinErr)
	}
	return limaBinPath
}

// child is one run of the binary: what it printed, how it ended, its peak
// memory.
type child struct {
	code      int
	stdout    string
	stderr    string
	maxRSSKiB int64
	elapsed   time.Duration
	timedOut  bool
	signaled  string
}

// childOpts tune one run.
type childOpts struct {
	dir     string        // working folder (default: a new temporary folder)
	env     []string      // added to the clean environment
	stdin   string        // fed to stdin (default: /dev/null)
	timeout time.Duration // SIGTERM after this long (default 90s), SIGKILL 10s later
	term    time.Duration // send SIGTERM after this long, expecting an orderly exit
}

// childEnv is the environment every child runs in: no credentials, no
// user configuration, nothing of the caller's LIMA_ settings.
func childEnv(dir string, extra []string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"TZ=UTC",
		"LANG=C.UTF-8",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "no-aws-credentials"),
		"USER=tester",
	}
	return append(env, extra...)
}

// runBin runs lima-tui with args and reports how it ended. It never fails
// the test itself; callers judge the result (see checkSane).
func runBin(t *testing.T, o childOpts, args ...string) child {
	t.Helper()
	bin := limaBin(t)
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	if o.timeout == 0 {
		o.timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = o.dir
	cmd.Env = childEnv(o.dir, o.env)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if o.stdin != "" {
		cmd.Stdin = strings.NewReader(o.stdin)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", args, err)
	}
	if o.term > 0 {
		go func() {
			time.Sleep(o.term)
			cmd.Process.Signal(syscall.SIGTERM)
		}()
	}
	err := cmd.Wait()
	c := child{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start), timedOut: ctx.Err() != nil}
	if ps := cmd.ProcessState; ps != nil {
		c.code = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			c.maxRSSKiB = ru.Maxrss // KiB on Linux
		}
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			c.signaled = ws.Signal().String()
		}
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return c
}

// checkSane fails when the child panicked, hung, was killed by a signal
// or used more memory than rssMiB.
func checkSane(t *testing.T, what string, c child, rssMiB int64) {
	t.Helper()
	if c.timedOut {
		t.Errorf("%s: still running at the timeout (%s); stderr: %.500s", what, c.elapsed, c.stderr)
	}
	if c.signaled != "" {
		t.Errorf("%s: killed by %s", what, c.signaled)
	}
	for _, s := range []string{"panic:", "goroutine ", "fatal error:", "runtime error", "SIGSEGV"} {
		if strings.Contains(c.stderr, s) || strings.Contains(c.stdout, s) {
			t.Errorf("%s: the output holds %q (a panic or a runtime crash):\n%.2000s", what, s, c.stderr)
			break
		}
	}
	if rssMiB > 0 && c.maxRSSKiB > rssMiB<<10 {
		t.Errorf("%s: peak RSS %d MiB, above the bound of %d MiB", what, c.maxRSSKiB>>10, rssMiB)
	}
}

// tableCounts are one table's counts in report.json.
type tableCounts struct {
	Name            string `json:"name"`
	Status          string `json:"status"`
	RowsRead        int64  `json:"rows_read"`
	RowsLoaded      int64  `json:"rows_loaded"`
	RowsQuarantined int64  `json:"rows_quarantined"`
	RowsSkipped     int64  `json:"rows_skipped"`
	Balanced        bool   `json:"balanced"`
	Checks          []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"checks"`
	Files []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"files"`
}

type reportCounts struct {
	RunID      string        `json:"run_id"`
	Status     string        `json:"status"`
	Tables     []tableCounts `json:"tables"`
	Exceptions struct {
		Total  int64            `json:"total"`
		Files  int64            `json:"files"`
		ByRule map[string]int64 `json:"by_rule"`
	} `json:"exceptions"`
}

// latestReport reads report.json of the newest run under dir/reports.
func latestReport(t *testing.T, dir string) (reportCounts, bool) {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(dir, "reports"))
	var r reportCounts
	newest := ""
	for _, e := range ents {
		if e.IsDir() && e.Name() > newest {
			if _, err := os.Stat(filepath.Join(dir, "reports", e.Name(), "report.json")); err == nil {
				newest = e.Name()
			}
		}
	}
	if newest == "" {
		return r, false
	}
	b, err := os.ReadFile(filepath.Join(dir, "reports", newest, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Logf("report.json of %s: %v", newest, err)
	}
	r.RunID = newest
	return r, true
}
