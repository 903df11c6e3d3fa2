package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// run --json always answers on stdout with one JSON object: a run refused
// before it reads anything (here: the plan changed since its approval,
// exit 4) says so with its exit code and the message of stderr.
func TestRunJSONSaysWhyItWasRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errs := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", errs)
	}
	pp := filepath.Join(dir, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	// An edit after the approval: the plan hash no longer matches.
	p.Tables["suppliers"].Description += " (edited)"
	if err := p.Write(pp); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "run", "--force", "--json", "--plan", pp)
	if code != exitPrecondition {
		t.Fatalf("exit %d, want %d: %s", code, exitPrecondition, errs)
	}
	var got struct {
		Status   string `json:"status"`
		ExitCode int    `json:"exit_code"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%q", err, out)
	}
	if got.Status != "refused" || got.ExitCode != exitPrecondition || got.Error == "" || !strings.Contains(errs, got.Error) {
		t.Fatalf("stdout %+v\nstderr %s", got, errs)
	}
}
