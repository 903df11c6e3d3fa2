package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeOf lists every path under root with a file's size, links unfollowed.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%v %d", info.Mode().Type(), info.Size())
		if d.IsDir() {
			out[rel] = "dir"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDemoHeadlessInHostileFolderNames runs `demo --headless --json` and
// then `teardown --confirm` in workspace folders whose names a hand-built
// file:// URI misreads: the demo loads and reconciles (exit 0, status ok,
// the same counts as in a plain folder), nothing is written beside the
// workspace, and teardown removes the lake, the catalog and the state.
func TestDemoHeadlessInHostileFolderNames(t *testing.T) {
	type table struct {
		Name            string `json:"name"`
		RowsRead        int64  `json:"rows_read"`
		RowsLoaded      int64  `json:"rows_loaded"`
		RowsQuarantined int64  `json:"rows_quarantined"`
		RowsSkipped     int64  `json:"rows_skipped"`
		Balanced        bool   `json:"balanced"`
		Reconciliation  string `json:"reconciliation"`
	}
	type summary struct {
		Status string  `json:"status"`
		Tables []table `json:"tables"`
	}
	demoRun := func(t *testing.T, dir string) summary {
		t.Helper()
		code, stdout, stderr := runCLI(t, "demo", "--dir", dir, "--headless", "--json")
		if code != exitOK {
			t.Fatalf("demo exit %d: %s", code, stderr)
		}
		var s summary
		if err := json.Unmarshal([]byte(stdout), &s); err != nil {
			t.Fatalf("stdout is not one JSON summary: %v\n%s", err, stdout)
		}
		return s
	}
	ref := demoRun(t, filepath.Join(t.TempDir(), "plain"))
	if ref.Status != "ok" || len(ref.Tables) == 0 {
		t.Fatalf("plain folder: %+v", ref)
	}
	for _, tr := range ref.Tables {
		if tr.RowsLoaded == 0 || !tr.Balanced || tr.Reconciliation != "pass" {
			t.Fatalf("plain folder: table %+v", tr)
		}
	}
	for i, name := range []string{"pct%41", "hash#lake", "what?lake", "space lake", "데모 lake"} {
		t.Run(fmt.Sprintf("folder%d", i), func(t *testing.T) {
			t.Logf("workspace folder %q", name)
			parent := t.TempDir()
			for _, n := range []string{"pctA", "hash", "what"} {
				if err := os.MkdirAll(filepath.Join(parent, n), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(parent, n, "keep.txt"), []byte("not Lima's"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := treeOf(t, parent)
			dir := filepath.Join(parent, name)
			got := demoRun(t, dir)
			if got.Status != "ok" || len(got.Tables) != len(ref.Tables) {
				t.Fatalf("summary %+v, plain folder %+v", got, ref)
			}
			for i, tr := range got.Tables {
				if tr != ref.Tables[i] {
					t.Errorf("table %+v, plain folder %+v", tr, ref.Tables[i])
				}
			}
			outsideOf := func() map[string]string {
				all := treeOf(t, parent)
				for p := range all {
					if p == name || strings.HasPrefix(p, name+string(filepath.Separator)) {
						delete(all, p)
					}
				}
				return all
			}
			sameTree := func(when string, want, have map[string]string) {
				t.Helper()
				for p, v := range want {
					if have[p] != v {
						t.Errorf("%s: %s was %q, now %q", when, p, v, have[p])
					}
				}
				for p := range have {
					if _, ok := want[p]; !ok {
						t.Errorf("%s: %s appeared outside the workspace", when, p)
					}
				}
			}
			sameTree("after the demo", before, outsideOf())
			for _, p := range []string{filepath.Join("lake", "erp_quality.db"), filepath.Join(".lima", "catalog.db"), filepath.Join(".lima", "state.db")} {
				if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
					t.Errorf("%s is not in the workspace: %v", p, err)
				}
			}
			code, stdout, stderr := runCLI(t, "teardown", "--plan", filepath.Join(dir, "platform.yaml"), "--confirm", "erp_quality")
			if code != exitOK || !strings.Contains(stdout, "Teardown complete.") {
				t.Fatalf("teardown exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			sameTree("after teardown", before, outsideOf())
			for _, p := range []string{filepath.Join("lake", "erp_quality.db"), filepath.Join(".lima", "catalog.db"), filepath.Join(".lima", "state.db")} {
				if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
					t.Errorf("%s is still in the workspace after teardown", p)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "platform.yaml")); err != nil {
				t.Errorf("teardown removed the plan: %v", err)
			}
		})
	}
}
