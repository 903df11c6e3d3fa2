package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
)

// accessibleInput is the answers to every gate-1 question that applies to
// the plan (blank: the recommended or recorded answer), with extra lines
// spliced in after the first answer, then the given tail.
func accessibleInput(t *testing.T, pp string, afterFirst []string, tail ...string) string {
	t.Helper()
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	a := gates.AnswersOf(p)
	n := 0
	for _, q := range gates.Questions() {
		if q.Applies(a) {
			n++
		}
	}
	lines := make([]string, n)
	lines = append(lines[:1], append(afterFirst, lines[1:]...)...)
	// The approver's name comes first: a name with a terminal escape is
	// refused, then a plain one taken.
	lines = append([]string{"Ada \x1b[31mLovelace", "Ada Lovelace"}, lines...)
	return strings.Join(append(lines, tail...), "\n") + "\n"
}

func TestAccessibleWizardWalksTheGatesAsLines(t *testing.T) {
	old := wizardTerminal
	defer func() { wizardTerminal = old }()
	wizardTerminal = func() bool { return false } // no terminal is needed
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(dir, "platform.yaml")
	// The second question (the prefix) first gets an answer it refuses.
	in := accessibleInput(t, pp, []string{"Bad Prefix"}, "", "n")
	before, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := startWizard(context.Background(), pp, "mono", true, strings.NewReader(in), &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	s := out.String()
	for _, want := range []string{"accessible mode", "Question 1:", "Answer (enter for data/erp)", "1. iceberg  (recommended) Apache Iceberg", "Enter takes option 1.", "the recorded answer",
		`Not accepted: "Bad Prefix" is not allowed`, "Gate 2: preconditions.", "Every check passes.",
		"Gate 3: the data model.", "Base tables (6)", "Marts (1)", "SUM-safe", "Data model approved by", "Not run."} {
		if !strings.Contains(s, want) {
			t.Errorf("stdout lacks %q\n%s", want, s)
		}
	}
	if strings.Contains(s, "\x1b[") {
		t.Error("accessible mode wrote escape sequences")
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	// Walking past the demo's approved, unchanged model keeps its
	// approval as recorded (it was rewritten as the OS user).
	if !p.ModelApproved() || *p.Gates.DataModel != *before.Gates.DataModel {
		t.Errorf("the data model approval %+v, want the recorded %+v kept", p.Gates.DataModel, before.Gates.DataModel)
	}
	// The scope is approved: kept as recorded when it was, else by the name given.
	switch sc := p.Gates.Scope; {
	case sc == nil:
		t.Error("gate 1 passed without a recorded scope approval")
	case before.Gates.Scope != nil && *sc != *before.Gates.Scope:
		t.Errorf("the scope approval %+v, want the recorded %+v kept", sc, before.Gates.Scope)
	case before.Gates.Scope == nil && sc.ApprovedBy != "Ada Lovelace":
		t.Errorf("scope approved by %q, want Ada Lovelace", sc.ApprovedBy)
	}
	if !strings.Contains(s, "Not accepted: the name holds control") {
		t.Errorf("a name with an escape sequence was not refused:\n%s", s)
	}
	if p.Platform.Prefix != "erp_quality" {
		t.Errorf("prefix %q: the recorded answer should stay", p.Platform.Prefix)
	}
}

func TestAccessibleWizardStopsAtTheEndOfInput(t *testing.T) {
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := startWizard(context.Background(), filepath.Join(dir, "platform.yaml"), "", true, strings.NewReader("\n\n"), &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "the input ended") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// A new plan, answered from a pipe through huh's accessible prompts: a
// number out of range and a refused prefix are asked again, an "other"
// answer is typed, and every answer lands in platform.yaml.
func TestAccessibleWizardNewPlanFromAPipe(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "orders.csv"), []byte("id,amount\n1,2.50\n2,3.75\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(dir, "platform.yaml")
	in := strings.Join([]string{
		"Grace Hopper",       // the approver's name
		"data",               // sources
		"Bad Prefix", "acme", // prefix: refused, then accepted
		"9", "1", // region: out of range, then local
		"4", "Staging", "uat", // environment: other…, refused, then typed
		"", "", "", // pattern, consumer, volume
		"3",             // schedule: manual (no time zone question)
		"",              // owner: none (no deadline question)
		"2",             // partitioning: date
		"email, *_iban", // sensitive columns
		"",              // split region: no
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	code := startWizard(context.Background(), pp, "mono", true, strings.NewReader(in), &out, &errb)
	s := out.String()
	if code == exitOK {
		t.Fatalf("the input ended before gate 3, yet exit %d\n%s", code, s)
	}
	for _, want := range []string{`Not accepted: "Bad Prefix" is not allowed`, "Invalid: must be a number between 1 and 6",
		`Not accepted: "Staging" is not an environment name`, "Gate 1 answers saved to"} {
		if !strings.Contains(s, want) {
			t.Errorf("stdout lacks %q\n%s", want, s)
		}
	}
	if strings.Contains(s, "In which time zone") {
		t.Error("the time zone was asked for a manual schedule")
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if p.Gates.Scope == nil || p.Gates.Scope.ApprovedBy != "Grace Hopper" {
		t.Errorf("scope approval %+v, want one by Grace Hopper", p.Gates.Scope)
	}
	a := gates.AnswersOf(p)
	want := gates.Answers{gates.QSources: "data", gates.QPrefix: "acme", gates.QRegion: "local", gates.QEnvironment: "uat",
		gates.QPattern: "iceberg", gates.QConsumer: "unknown", gates.QVolume: "small", gates.QSchedule: "manual",
		gates.QPartitioning: "date", gates.QSensitive: "email, *_iban", gates.QSplitRegion: "no"}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("platform.yaml answer %s = %q, want %q", k, a[k], v)
		}
	}
}

// TestAccessibleWizardRunsAndTearsDown: accessible mode goes on past gate
// 3 — the run with gate 4 per table as lines, then gate 5: t shows the
// inventory, a wrong prefix removes nothing (exit 2), and a second walk
// with the typed prefix removes the lake and records who confirmed it.
func TestAccessibleWizardRunsAndTearsDown(t *testing.T) {
	old := wizardTerminal
	defer func() { wizardTerminal = old }()
	wizardTerminal = func() bool { return false }
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(dir, "platform.yaml")
	walk := func(tail ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := startWizard(context.Background(), pp, "mono", true, strings.NewReader(accessibleInput(t, pp, nil, tail...)), &out, &errb)
		if strings.Contains(out.String(), "\x1b[") {
			t.Error("accessible mode wrote escape sequences")
		}
		return code, out.String() + errb.String()
	}
	// Approve (enter), run (enter), gate 5: t, then a wrong prefix.
	code, s := walk("", "", "t", "erp_qualityX")
	if code != exitUsage {
		t.Fatalf("a wrong prefix: exit %d, want %d\n%s", code, exitUsage, s)
	}
	for _, want := range []string{"balanced", "gate 4", "Gate 5 (teardown)", "erp_quality", `"erp_qualityX" is not the prefix: nothing was removed`} {
		if !strings.Contains(s, want) {
			t.Errorf("first walk lacks %q\n%s", want, s)
		}
	}
	lake := filepath.Join(dir, "lake")
	if _, err := os.Stat(lake); err != nil {
		t.Fatalf("the lake is gone after a wrong prefix: %v", err)
	}
	// Again, the run finds everything loaded; the prefix typed right.
	code, s = walk("", "", "t", "erp_quality")
	if code != exitOK {
		t.Fatalf("teardown walk: exit %d\n%s", code, s)
	}
	if !strings.Contains(s, "Teardown confirmed by Ada Lovelace") {
		t.Errorf("no confirmation line\n%s", s)
	}
	if _, err := os.Stat(lake); !os.IsNotExist(err) {
		t.Errorf("the lake is still there after the typed prefix: %v", err)
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if p.Gates.Teardown == nil || p.Gates.Teardown.ApprovedBy != "Ada Lovelace" {
		t.Errorf("gates.teardown %+v, want confirmed by Ada Lovelace", p.Gates.Teardown)
	}
}
