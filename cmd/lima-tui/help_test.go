package main

import (
	"os"
	"strings"
	"testing"
)

// TestHelpExitsZero: asking a verb for its help is not a usage error. Every
// verb prints its flags and exits 0 on -h and --help, and still exits 2 on
// a flag it does not know — and --help does nothing else (no workspace is
// created, nothing is read).
func TestHelpExitsZero(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	verbs := [][]string{{"run"}, {"run", "--watch"}, {"check"}, {"propose"}, {"approve"}, {"init"}, {"demo"},
		{"exceptions"}, {"exceptions", "list"}, {"exceptions", "show"}, {"exceptions", "export"}, {"report"},
		{"teardown"}, {"adopt"}, {"compact"}, {"schedule"}, {"reconcile"}, {"wizard"}}
	for _, v := range verbs {
		for _, h := range []string{"-h", "--help"} {
			code, _, stderr := runCLI(t, append(append([]string{}, v...), h)...)
			if code != exitOK {
				t.Errorf("lima-tui %s %s: exit %d, want 0; stderr: %s", strings.Join(v, " "), h, code, stderr)
			}
			if !strings.Contains(stderr, "lima-tui") || !strings.Contains(stderr, "\n  -") {
				t.Errorf("lima-tui %s %s printed no flag list: %q", strings.Join(v, " "), h, stderr)
			}
		}
		if code, _, _ := runCLI(t, append(append([]string{}, v...), "--no-such-flag")...); code != exitUsage {
			t.Errorf("lima-tui %s --no-such-flag: exit %d, want 2", strings.Join(v, " "), code)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("--help wrote into the working folder: %v %v", entries, err)
	}
}
