package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/gates"
)

func TestCheckPassesOnTheDemoWorkspace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errs := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", errs)
	}
	code, out, errs := call(t, cmdCheck, "--plan", filepath.Join(dir, "platform.yaml"))
	if code != exitOK {
		t.Fatalf("check exit %d:\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"gate 2 — preconditions of " + filepath.Join(dir, "platform.yaml"),
		"  ✓ source erp: listed folder " + filepath.Join(dir, "data", "erp") + ": ",
		"  ✓ table suppliers: \"suppliers.csv\" matched 1 file(s)",
		"  ✓ target writable: warehouse " + filepath.Join(dir, "lake") + ": wrote, synced and removed .lima-probe-",
		"  ✓ namespace erp_quality: namespace erp_quality exists with ",
		"  ✓ state store: opened the SQLite state store ",
		"  ✓ disk space: ", "  ✓ memory: MemAvailable ", "  ✓ clock: system time ",
		"✓ every precondition holds (",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckFailsWithEvidenceAndFix(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errs := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", errs)
	}
	pp := filepath.Join(dir, "platform.yaml")
	// The supplier master goes missing, and the lake's folder is replaced
	// by a regular file (tests run as root: permissions would not stop a
	// write, a file in the way does).
	if err := os.Remove(filepath.Join(dir, "data", "erp", "suppliers.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "lake")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lake"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := call(t, cmdCheck, "--plan", pp)
	if code != exitPrecondition {
		t.Fatalf("exit %d, want %d:\n%s", code, exitPrecondition, out)
	}
	erp, lake := filepath.Join(dir, "data", "erp"), filepath.Join(dir, "lake")
	for _, want := range []string{
		"  ✗ table suppliers: \"suppliers.csv\" matched no file in " + erp + "\n      fix: correct tables.suppliers.source.files[0] in platform.yaml, or put the files in " + erp + "\n",
		"  ✗ target writable: warehouse " + lake + ": cannot create a file: " + lake + " is a file, not a folder\n      fix: " + lake + " is a file: move it away, or point storage.warehouse in platform.yaml at a folder\n",
		"✗ 2 of ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// run refuses the same way, before writing anything.
	code, _, errs := runCLI(t, "run", "--force", "--plan", pp)
	if code != exitPrecondition || !strings.Contains(errs, "gate 2 found 2 problem(s), nothing was written") {
		t.Errorf("run: exit %d: %s", code, errs)
	}

	// --json: one object with every finding.
	code, out, _ = call(t, cmdCheck, "--plan", pp, "--json")
	var res struct {
		Status   string          `json:"status"`
		ExitCode int             `json:"exit_code"`
		Findings []gates.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if code != exitPrecondition || res.Status != "fail" || res.ExitCode != exitPrecondition || len(gates.FailedFindings(res.Findings)) != 2 {
		t.Errorf("json: exit %d %+v", code, res)
	}
}

// File names are untrusted: they reach the terminal through ui.Sanitize.
func TestCheckSanitizesUntrustedNames(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	if code, _, errs := call(t, cmdInit, "--source", src, "--dir", ws, "--defaults"); code != exitOK {
		t.Fatal(errs)
	}
	evil := filepath.Join(src, "x\x1b[2J\u202etxt.csv")
	if err := os.WriteFile(evil, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A glob that names the file and one that matches nothing.
	pp := filepath.Join(ws, "platform.yaml")
	b, _ := os.ReadFile(pp)
	b = []byte(strings.Replace(string(b), "tables: {}\n", "tables:\n  t:\n    source: {name: erp, files: [\"x*\", \"\\e]2;pwned\\anone*\"]}\n", 1))
	// And a source folder whose name carries an escape sequence and a BiDi override.
	b = []byte(strings.Replace(string(b), "sources:\n", "sources:\n  evil:\n    kind: files\n    path: \"in\\e[2J\\u202eexe.txt\"\n", 1))
	os.WriteFile(pp, b, 0o600)
	code, out, errs := call(t, cmdCheck, "--plan", pp)
	if code != exitPrecondition {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("raw control characters reached the terminal:\n%q", out)
	}
	for _, want := range []string{`"\x1b]2;pwned\anone*" matched no file`, `in\e[2J\u202eexe.txt does not exist`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

func TestCheckUsage(t *testing.T) {
	if code, _, _ := call(t, cmdCheck, "extra"); code != exitUsage {
		t.Errorf("extra argument: exit %d", code)
	}
	if code, _, _ := call(t, cmdCheck, "--timeout", "0s"); code != exitUsage {
		t.Errorf("zero timeout: exit %d", code)
	}
	dir := t.TempDir()
	pp := filepath.Join(dir, "platform.yaml")
	os.WriteFile(pp, []byte("schema_version: 1\nplatform: {prefix: x, patern: hive}\nsources: {}\n"), 0o600)
	if code, _, errs := call(t, cmdCheck, "--plan", pp); code != exitUsage || !strings.Contains(errs, `did you mean "pattern"`) {
		t.Errorf("invalid plan: exit %d: %s", code, errs)
	}
}
