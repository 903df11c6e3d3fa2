package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// run --cpuprofile/--memprofile write two runtime/pprof profiles (gzipped
// protocol buffers), created 0600 even when the file existed with a wider mode.
func TestRunWritesProfiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errs := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", errs)
	}
	cpu, mem := filepath.Join(t.TempDir(), "cpu.pprof"), filepath.Join(t.TempDir(), "mem.pprof")
	if err := os.WriteFile(mem, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "run", "--force", "--full-refresh", "--plan", filepath.Join(dir, "platform.yaml"),
		"--cpuprofile", cpu, "--memprofile", mem)
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	for _, p := range []string{cpu, mem} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: not a pprof profile (gzip): %v", p, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s: empty or broken profile: %v", p, err)
		}
	}
	// A profile path that cannot be created is a usage error before the run.
	bad := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	if code, _, _ := runCLI(t, "run", "--force", "--plan", filepath.Join(dir, "platform.yaml"), "--cpuprofile", bad); code != exitUsage {
		t.Fatalf("unwritable --cpuprofile: exit %d, want %d", code, exitUsage)
	}
}
