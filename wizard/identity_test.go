package wizard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// newAskingHarness is newHarness with the approver's name asked at the
// start, as lima-tui starts the wizard.
func newAskingHarness(t *testing.T, dir string, d Deps, by, from string) *harness {
	t.Helper()
	h := &harness{t: t, now: t0.Add(10 * time.Second), late: make(chan tea.Msg, 1024)}
	d.Now = func() time.Time { return h.now }
	d.MachineZone = func() string { return "UTC" }
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d.Preconditions == nil {
		d.Preconditions = func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding { return nil }
	}
	h.m = New(Options{PlanPath: filepath.Join(dir, "platform.yaml"), Theme: ui.MustTheme(ui.ThemeMono), Deps: d,
		By: by, ByFrom: from, AskName: true})
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.feed(h.m.Init())
	return h
}

func loadPlan(t *testing.T, pp string) *plan.Plan {
	t.Helper()
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNameIsAskedOnceAndRecordedForTheScope(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, "platform.yaml")
	h := newAskingHarness(t, dir, Deps{}, "Ada Lovelace", "git config user.name")
	h.contains("Who is approving?", "> Ada Lovelace", "recommended: Ada Lovelace (git config user.name)")
	h.golden("who")
	// An empty name is refused where it is typed.
	h.key("ctrl+u", "enter")
	h.contains("Who is approving?", "a name is needed")
	h.typeText("Grace Hopper")
	h.key("enter")
	h.contains("Gate 1 · scope & residency", "Which folder")
	if h.m.by != "Grace Hopper" {
		t.Fatalf("approver %q, want the name typed", h.m.by)
	}
	h.key("ctrl+d")
	h.contains("all questions answered", "enter approves the scope as Grace Hopper")
	h.key("enter")
	h.contains("Gate 2 · preconditions")
	a := loadPlan(t, pp).Gates.Scope
	if a == nil || a.ApprovedBy != "Grace Hopper" || a.ApprovedAt != "2026-11-30T09:00:10Z" || a.PlanHash == "" {
		t.Fatalf("gates.scope = %+v, want approved by Grace Hopper at 09:00:10", a)
	}
	// Back at gate 1 the name is not asked again.
	h.key("esc")
	h.contains("Gate 1 · scope & residency", "scope approved by Grace Hopper")
}

func TestScopeApprovalIsKeptWhenWalkedPastAndRenewedWhenChanged(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, "platform.yaml")
	h := newHarness(t, dir, Deps{})
	h.m.by = "tester"
	h.key("ctrl+d")
	h.contains("all questions answered")
	h.key("enter")
	h.contains("Gate 2 · preconditions")
	first := loadPlan(t, pp).Gates.Scope
	if first == nil || first.ApprovedBy != "tester" {
		t.Fatalf("gate 1 passed without a recorded approval: gates.scope = %+v", first)
	}

	// Another person, later, walks past the same answers: nothing changes.
	h2 := newHarness(t, dir, Deps{})
	h2.m.by, h2.now = "someone else", h2.now.Add(time.Hour)
	h2.contains("all questions answered", "scope approved by tester")
	h2.key("enter")
	h2.contains("Gate 2 · preconditions")
	if got := loadPlan(t, pp).Gates.Scope; got == nil || *got != *first {
		t.Fatalf("walking past rewrote the scope approval: %+v, was %+v", got, first)
	}

	// A changed answer is a new scope: approved again, by who changed it.
	h2.key("esc")
	h2.contains("all questions answered")
	for range 7 { // back to the schedule
		h2.key("esc")
	}
	h2.contains("When does the plan run unattended?")
	h2.key("down", "enter") // @hourly
	h2.key("ctrl+d")
	h2.contains("all questions answered")
	if loadPlan(t, pp).Gates.Scope != nil {
		t.Error("the approval of the old answers still stands after an answer changed")
	}
	h2.key("enter")
	h2.contains("Gate 2 · preconditions")
	got := loadPlan(t, pp)
	if a := got.Gates.Scope; a == nil || a.ApprovedBy != "someone else" || a.ApprovedAt != "2026-11-30T10:00:10Z" || got.Schedule.Cron != "@hourly" {
		t.Fatalf("changed scope approved as %+v (cron %q), want someone else at 10:00:10", a, got.Schedule.Cron)
	}
}

func TestDataModelApprovalIsKeptWhenWalkedPast(t *testing.T) {
	h, pp := toGate3(t, Deps{})
	// An edit, approved by the tester.
	h.key("down", "p", "enter")
	h.contains("Gate 3 approved")
	first := loadPlan(t, pp)
	a1 := first.Gates.DataModel
	if a1 == nil || a1.ApprovedBy != "tester" || !first.ModelApproved() {
		t.Fatalf("gates.data_model = %+v, want approved by tester", a1)
	}

	// Walked again by someone else, an hour later, without an edit.
	h2 := newHarness(t, filepath.Dir(pp), Deps{Preconditions: func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding {
		return []gates.Finding{{Name: "clock", Status: gates.Pass, Detail: "ok"}}
	}})
	h2.m.by, h2.now = "someone else", h2.now.Add(time.Hour)
	h2.contains("all questions answered")
	h2.key("enter")
	h2.contains("every check passes")
	h2.key("enter")
	h2.contains("Gate 3 · data model", "✓ approved by tester", "enter goes on with the approved model")
	h2.key("enter")
	h2.contains("Run · load, reconcile, report")
	after := loadPlan(t, pp)
	if a := after.Gates.DataModel; a == nil || *a != *a1 {
		t.Fatalf("walking past rewrote the data model approval: %+v, was %+v", a, a1)
	}
	if s := after.Gates.Scope; s == nil || s.ApprovedBy != first.Gates.Scope.ApprovedBy || s.ApprovedAt != first.Gates.Scope.ApprovedAt {
		t.Errorf("walking past rewrote the scope approval: %+v, was %+v", s, first.Gates.Scope)
	}
	if h2.m.run.plan == nil || h2.m.run.plan.Hash() != a1.PlanHash {
		t.Error("the run did not get the approved plan")
	}
}

func TestTeardownRecordsWhoConfirmed(t *testing.T) {
	inv := teardownInventory()
	d := Deps{
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			return &flow.Outcome{Report: reconReport(), Result: &run.Result{RunID: "r-1"}}, nil
		},
		TeardownInventory: func(context.Context, flow.TeardownOptions) (*gates.Inventory, error) { return inv, nil },
		Teardown: func(ctx context.Context, o flow.TeardownOptions, confirm string) (*gates.Inventory, *gates.TeardownResult, error) {
			return inv, &gates.TeardownResult{Status: gates.Pass, DroppedTables: []string{"erp_quality.inspections"}}, nil
		},
	}
	h := toRun(t, d)
	h.key("enter", "enter")
	h.contains("Gate 4 · reconciliation")
	h.key("T")
	h.contains("Type the prefix erp_quality", "confirmed as tester")
	h.now = h.now.Add(2 * time.Hour)
	h.typeText("erp_quality")
	h.key("enter")
	h.contains("✓ removed", "confirmed by tester at 2026-11-30T11:00:10Z")
	p := loadPlan(t, filepath.Join(filepath.Dir(h.m.planPath), "platform.yaml"))
	if a := p.Gates.Teardown; a == nil || a.ApprovedBy != "tester" || a.ApprovedAt != "2026-11-30T11:00:10Z" || a.PlanHash != p.Hash() {
		t.Fatalf("gates.teardown = %+v, want confirmed by tester at 11:00:10", a)
	}
}

func TestGate1RefusesAMissingSourceFolder(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, Deps{})
	h.key("ctrl+u")
	h.typeText("exports/2026")
	h.key("enter")
	h.contains("Which folder, S3 prefix or database", "the folder exports/2026 does not exist in",
		"fix: answer a folder that holds the files, or create it and answer again")
	// The defaults stop there too when their folder is missing.
	if err := os.Remove(filepath.Join(dir, "data", "erp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
	h.key("ctrl+d")
	h.contains("Which folder, S3 prefix or database", "the folder data does not exist")
	// Once it exists, the answer is taken.
	if err := os.MkdirAll(filepath.Join(dir, "exports", "2026"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.key("ctrl+u")
	h.typeText("exports/2026")
	h.key("enter")
	h.contains("Which prefix", "> lake_2026")
	if p := loadPlan(t, filepath.Join(dir, "platform.yaml")); p.Sources["2026"] == nil || p.Sources["2026"].Path != "exports/2026" {
		t.Errorf("sources recorded %+v, want exports/2026", p.Sources)
	}
}

func TestGate1RecommendsTheMachinesTimeZone(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, Deps{MachineZone: func() string { return "Asia/Seoul" }})
	for range 8 {
		if strings.Contains(h.screen(), "In which time zone") {
			break
		}
		h.key("enter")
	}
	h.contains("In which time zone", "Asia/Seoul")
	h.key("ctrl+d")
	h.contains("all questions answered")
	if p := loadPlan(t, filepath.Join(dir, "platform.yaml")); p.Schedule.Timezone != "Asia/Seoul" {
		t.Errorf("schedule.timezone = %q, want the machine's Asia/Seoul", p.Schedule.Timezone)
	}
}

func TestMachineZone(t *testing.T) {
	known := func(z string) bool { return z == "UTC" || z == "Europe/Berlin" || z == "Asia/Seoul" }
	noLink := func(string) (string, error) { return "", os.ErrNotExist }
	link := func(to string) func(string) (string, error) {
		return func(p string) (string, error) {
			if p != "/etc/localtime" {
				return "", os.ErrNotExist
			}
			return to, nil
		}
	}
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, c := range []struct {
		name     string
		local    string
		env      func(string) (string, bool)
		readlink func(string) (string, error)
		want     string
	}{
		{"Go knows the name", "Europe/Berlin", env(), noLink, "Europe/Berlin"},
		{"Local from /etc/localtime", "Local", env(), link("/usr/share/zoneinfo/Asia/Seoul"), "Asia/Seoul"},
		{"relative link", "Local", env(), link("../usr/share/zoneinfo/Europe/Berlin"), "Europe/Berlin"},
		{"posix variant", "Local", env(), link("/usr/share/zoneinfo/posix/Asia/Seoul"), "Asia/Seoul"},
		{"Local without a name", "Local", env(), noLink, "UTC"},
		{"link to no zone", "Local", env(), link("/etc/some-file"), "UTC"},
		{"TZ names a zone", "Local", env("TZ", "Asia/Seoul"), noLink, "Asia/Seoul"},
		{"TZ with a colon", "Local", env("TZ", ":Europe/Berlin"), noLink, "Europe/Berlin"},
		{"TZ empty is UTC", "Local", env("TZ", ""), link("/usr/share/zoneinfo/Asia/Seoul"), "UTC"},
		{"TZ unknown", "Local", env("TZ", "Mars/Olympus"), link("/usr/share/zoneinfo/Asia/Seoul"), "UTC"},
		{"TZ a zoneinfo file", "Local", env("TZ", "/usr/share/zoneinfo/Europe/Berlin"), noLink, "Europe/Berlin"},
		{"TZ /etc/localtime", "Local", env("TZ", "/etc/localtime"), link("/usr/share/zoneinfo/Asia/Seoul"), "Asia/Seoul"},
	} {
		if got := machineZone(c.local, c.env, c.readlink, known); got != c.want {
			t.Errorf("%s: machineZone = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestGate1AsksForTheDefaultOwnerAndDeadline(t *testing.T) {
	dir := t.TempDir()
	h := newAskingHarness(t, dir, Deps{}, "Grace Hopper", "git config user.name")
	h.key("enter")
	h.contains("Which folder")
	for range 9 {
		if strings.Contains(h.screen(), "Who handles the rows that fail a check?") {
			break
		}
		h.key("enter")
	}
	h.contains("Who handles the rows that fail a check?", "> Grace Hopper", "recommended: Grace Hopper")
	h.key("ctrl+u")
	h.typeText("Ji-woo Park (quality)")
	h.key("enter")
	h.contains("How long may an exception stay open", "2bd", "(recommended) two business days")
	h.key("ctrl+d")
	h.contains("all questions answered", "owner              Ji-woo Park (quality)", "owner_deadline     2bd")
	p := loadPlan(t, filepath.Join(dir, "platform.yaml"))
	if len(p.Owners) != 1 || p.Owners[0] != (plan.Owner{Name: "Ji-woo Park (quality)", Default: true, Deadline: "2bd"}) {
		t.Fatalf("owners %+v, want the default owner Ji-woo Park (quality) with 2bd", p.Owners)
	}
	// An exception of this project gets that owner and a due date two
	// business days on (Friday → Tuesday), not unassigned and –.
	fri := time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)
	owner, due := run.NewRouter(p).Route("orders", "amount", "type", fri)
	if owner != "Ji-woo Park (quality)" || !due.Equal(time.Date(2026, 12, 8, 16, 0, 0, 0, time.UTC)) {
		t.Errorf("routed to %q due %v, want Ji-woo Park (quality) due Tuesday 16:00", owner, due)
	}
}
