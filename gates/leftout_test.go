//go:build unix

package gates

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Propose names, with counts, the named pipes it does not read and the
// hidden data files ("..csv") it does not propose: neither is dropped
// without a finding.
func TestProposeNamesPipesAndHiddenDataFiles(t *testing.T) {
	dir, p := writeExport(t, map[string]string{
		"customers.csv": threeCSVs()["customers.csv"],
		"..csv":         threeCSVs()["orders.csv"],
		".old.ndjson":   `{"a":1}` + "\n",
		".DS_Store":     "x",
	})
	for _, name := range []string{"feed.csv", "raw.bin"} {
		if err := syscall.Mkfifo(filepath.Join(dir, "data", name), 0o644); err != nil {
			t.Skip("no named pipes:", err)
		}
	}
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Plan.Tables["customers"] == nil || len(pr.Plan.Tables) != 1 {
		t.Errorf("tables %v, want customers only", pr.Plan.TableNames())
	}
	f := finding(t, pr.Findings, "source src: not regular files")
	if f.Status != Warn || !strings.HasPrefix(f.Detail, "2 file(s) are not regular") || !strings.Contains(f.Detail, "feed.csv (named pipe), raw.bin (named pipe)") {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
	f = finding(t, pr.Findings, "source src: hidden files left out")
	if f.Status != Warn || !strings.HasPrefix(f.Detail, "2 hidden file(s)") || !strings.Contains(f.Detail, "..csv, .old.ndjson") || strings.Contains(f.Detail, "DS_Store") {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}
