package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// lima-tui compact on the demo lake: every table (and none twice) is
// reported, none grows, and usage errors exit 2.
func TestCompactVerb(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir, "--headless"); code != exitOK {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "compact", "--plan", filepath.Join(dir, "platform.yaml"), "--json")
	if code != exitOK {
		t.Fatalf("compact exit %d: %s", code, stderr)
	}
	var res []struct {
		Table       string `json:"table"`
		FilesBefore int    `json:"files_before"`
		FilesAfter  int    `json:"files_after"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	seen := map[string]bool{}
	for _, r := range res {
		if seen[r.Table] || r.FilesAfter > r.FilesBefore || r.FilesBefore == 0 {
			t.Errorf("compact result %+v", r)
		}
		seen[r.Table] = true
	}
	if len(res) < 4 {
		t.Fatalf("compact reported %d tables: %+v", len(res), res)
	}
	if code, _, _ := runCLI(t, "compact", "extra"); code != exitUsage {
		t.Fatalf("compact with an argument: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runCLI(t, "run", "--watch", "--full-refresh", "--plan", filepath.Join(dir, "platform.yaml")); code != exitUsage {
		t.Fatalf("run --watch --full-refresh: exit %d, want %d", code, exitUsage)
	}
}
