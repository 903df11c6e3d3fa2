package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/demo"
	planpkg "github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

func teardownCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmdTeardown(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func loadedDemo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if _, err := demo.Create(dir, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	ws := flow.Workspace{Dir: dir}
	p, err := flow.LoadPlan(ws.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTeardownCommand(t *testing.T) {
	dir := loadedDemo(t)
	plan := filepath.Join(dir, "platform.yaml")
	lake := filepath.Join(dir, "lake")
	steps := []struct {
		name       string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		lakeExists bool
	}{
		{"blast radius only", []string{"--plan", plan}, exitUsage,
			[]string{"the blast radius", "erp_quality.inspections", "drop + remove files", "platform.yaml — the plan"},
			[]string{"Nothing was removed", "--confirm erp_quality"}, true},
		{"wrong prefix", []string{"--plan", plan, "--confirm", "erp-quality"}, exitUsage,
			nil, []string{"nothing was removed", "--confirm erp_quality"}, true},
		{"empty prefix", []string{"--plan", plan, "--confirm="}, exitUsage,
			nil, []string{"no confirmation was typed"}, true},
		{"stray argument", []string{"--plan", plan, "erp_quality"}, exitUsage, nil, []string{"unexpected argument"}, true},
		{"confirmed", []string{"--plan", plan, "--confirm", "erp_quality", "--by", "Ops On-call"}, exitOK,
			[]string{"Teardown complete.", "dropped from the catalog: ", "erp_quality.inspections", "dropped the namespace", "removed lake/erp_quality.db\n"}, nil, false},
		{"again: nothing left", []string{"--plan", plan, "--confirm", "erp_quality"}, exitOK,
			[]string{"Nothing to tear down"}, nil, false},
		{"blast radius of nothing", []string{"--plan", plan}, exitOK,
			[]string{"Nothing to remove"}, []string{"nothing to tear down"}, false},
	}
	for _, s := range steps {
		code, stdout, stderr := teardownCLI(t, s.args...)
		if code != s.code {
			t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", s.name, code, s.code, stdout, stderr)
		}
		for _, w := range s.stdout {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", s.name, w, stdout)
			}
		}
		for _, w := range s.stderr {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", s.name, w, stderr)
			}
		}
		_, err := os.Stat(lake)
		if exists := !errors.Is(err, fs.ErrNotExist); exists != s.lakeExists {
			t.Errorf("%s: lake exists = %v, want %v", s.name, exists, s.lakeExists)
		}
	}
	if _, err := os.Stat(plan); err != nil {
		t.Errorf("platform.yaml: %v", err)
	}
	// Gate 5's human answer is recorded: who typed the prefix, and when.
	p, err := planpkg.Load(plan)
	if err != nil {
		t.Fatal(err)
	}
	if td := p.Gates.Teardown; td == nil || td.ApprovedBy != "Ops On-call" || td.ApprovedAt == "" {
		t.Errorf("gates.teardown = %+v, want the teardown confirmed by Ops On-call", td)
	}
}

func TestTeardownCommandJSON(t *testing.T) {
	dir := loadedDemo(t)
	plan := filepath.Join(dir, "platform.yaml")
	type out struct {
		Status      string `json:"status"`
		ExitCode    int    `json:"exit_code"`
		ConfirmWith string `json:"confirm_with"`
		Inventory   *struct {
			Tables []struct{ Name string } `json:"tables"`
		} `json:"inventory"`
		Result *struct {
			Status        string   `json:"status"`
			DroppedTables []string `json:"dropped_tables"`
		} `json:"result"`
	}
	cases := []struct {
		args   []string
		code   int
		status string
	}{
		{[]string{"--plan", plan, "--json"}, exitUsage, "shown"},
		{[]string{"--plan", plan, "--json", "--confirm", "ERP_QUALITY"}, exitUsage, "refused"},
		{[]string{"--plan", plan, "--json", "--confirm", "erp_quality"}, exitOK, "removed"},
		{[]string{"--plan", plan, "--json", "--confirm", "erp_quality"}, exitOK, "nothing"},
	}
	for _, c := range cases {
		code, stdout, stderr := teardownCLI(t, c.args...)
		var o out
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatalf("%v: stdout is not one JSON document: %v\n%s\nstderr: %s", c.args, err, stdout, stderr)
		}
		if code != c.code || o.ExitCode != c.code || o.Status != c.status || o.ConfirmWith != "erp_quality" {
			t.Errorf("%v: exit %d, output %+v; want exit %d, status %s", c.args, code, o, c.code, c.status)
		}
		if c.status == "shown" && (o.Inventory == nil || len(o.Inventory.Tables) == 0) {
			t.Errorf("shown: no tables in the inventory")
		}
		if c.status == "removed" && (o.Result == nil || o.Result.Status != "pass" || len(o.Result.DroppedTables) != len(o.Inventory.Tables)) {
			t.Errorf("removed: result %+v", o.Result)
		}
	}
}
