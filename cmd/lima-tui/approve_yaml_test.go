package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// analystPlan is a plan as an analyst keeps it: comments of every kind,
// odd indentation, flow lists, quoting, blank lines, tables out of
// alphabetical order.
const analystPlan = `# ACME field ops — Ana's plan, please keep my notes
schema_version: 1   # do not bump

# ---- platform ----
platform:
    prefix: acme_ops        # short, lower case
    region: 'eu-central-1'
    environment: prod       # the only one
    pattern: iceberg
    catalog: sqlite
    created: 2025-01-31T09:00:00Z
    updated: "2025-02-01T10:30:00Z"   # approve bumps this
    # foot of platform

storage: {warehouse: lake}

sources:
   field:            # three-space indentation on purpose
      kind: files
      path: "data/field"

tables:
  # sites first, then inspections: not alphabetical
  sites:
    source: {name: field, files: [sites.csv]}
    columns:
    - name: site_code      # the business key
      type: string
    - {name: region, type: string}
    load:
      keys: [ site_code ]

  inspections:
    description: >-
      Site inspections, folded
      over two lines
    source:
      name: field
      files:
        - "inspections/*.csv"   # monthly drops
      format: csv
    columns:
      - name: inspection_id
        type: long
      # the score is a percentage
      - name: score
        type: decimal(5,2)
    load:
      keys: [inspection_id]
    checks:
      - rule: range
        column: score
        min: 0.0
        max: 1e2   # percent

downstream: {consumer: bi, tools: [Excel]}

owners:
  - name: Ana
    email: ana@example.com
    default: true

gates:
  # kickoff notes live here
  scope:
    approved_by: Bo   # Bo signed first
    approved_at: 2025-01-31T09:05:00Z

# end of plan
`

var stampRe = `"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"`

// stamp finds the one value written after prefix and checks that it is a
// time between from and to.
func stamp(t *testing.T, file, prefix string, from, to time.Time) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(prefix)+stampRe).FindAllStringSubmatch(file, -1)
	if len(m) != 1 {
		t.Fatalf("%q followed by a time occurs %d times in:\n%s", prefix, len(m), file)
	}
	at, err := time.Parse(time.RFC3339, m[0][1])
	if err != nil || at.Before(from.Truncate(time.Second)) || at.After(to) {
		t.Fatalf("%s%s is not the time of the approval (%v..%v)", prefix, m[0][1], from, to)
	}
	return m[0][1]
}

func mustReplace(t *testing.T, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("test setup: %q occurs %d times", old, n)
	}
	return strings.Replace(s, old, new, 1)
}

// TestApproveKeepsTheAnalystsFile: approve --gate scope, then --gate
// data-model, change only the approval fields and platform.updated; every
// other byte of the analyst's file stays as it was. The expected file is the
// original edited by hand here.
func TestApproveKeepsTheAnalystsFile(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, "platform.yaml")
	if err := os.WriteFile(pp, []byte(analystPlan), 0o600); err != nil {
		t.Fatal(err)
	}
	orig, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	hash := orig.Hash()

	from := time.Now()
	if code, out, errs := runCLI(t, "approve", "--plan", pp, "--gate", "scope", "--by", "Ana"); code != exitOK {
		t.Fatalf("approve scope: exit %d: %s %s", code, out, errs)
	}
	got, _ := os.ReadFile(pp)
	at := stamp(t, string(got), "    approved_at: ", from, time.Now())
	upd := stamp(t, string(got), "    updated: ", from, time.Now())
	want := analystPlan
	want = mustReplace(t, want, `updated: "2025-02-01T10:30:00Z"   # approve`, `updated: "`+upd+`"   # approve`)
	want = mustReplace(t, want, "    approved_by: Bo   # Bo signed first\n    approved_at: 2025-01-31T09:05:00Z\n",
		"    approved_by: Ana   # Bo signed first\n    approved_at: \""+at+"\"\n    plan_hash: "+hash+"\n")
	if string(got) != want {
		t.Fatalf("approve --gate scope changed more than the approval:\n--- got\n%s\n--- want\n%s", got, want)
	}

	from = time.Now()
	if code, out, errs := runCLI(t, "approve", "--plan", pp, "--gate", "data-model", "--by", "Cy Analyst"); code != exitOK {
		t.Fatalf("approve data-model: exit %d: %s %s", code, out, errs)
	}
	got, _ = os.ReadFile(pp)
	at2 := stamp(t, string(got), "    approved_at: \""+at+"\"\n    plan_hash: "+hash+"\n  data_model:\n    approved_by: Cy Analyst\n    approved_at: ", from, time.Now())
	upd2 := stamp(t, string(got), "    updated: ", from, time.Now())
	want = mustReplace(t, want, `updated: "`+upd+`"`, `updated: "`+upd2+`"`)
	want = mustReplace(t, want, "    plan_hash: "+hash+"\n",
		"    plan_hash: "+hash+"\n  data_model:\n    approved_by: Cy Analyst\n    approved_at: \""+at2+"\"\n    plan_hash: "+hash+"\n")
	if string(got) != want {
		t.Fatalf("approve --gate data-model changed more than the approval:\n--- got\n%s\n--- want\n%s", got, want)
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if p.Gates.DataModel == nil || p.Gates.DataModel.PlanHash != p.Hash() || p.Gates.Scope.ApprovedBy != "Ana" {
		t.Fatalf("approvals as loaded: %+v %+v", p.Gates.Scope, p.Gates.DataModel)
	}
}

// cutSection removes the top-level section key (its line to the next
// top-level line) and returns the rest and the section.
func cutSection(t *testing.T, s, key string) (rest, section string) {
	t.Helper()
	i := strings.Index(s, "\n"+key+":")
	if i < 0 {
		return s, ""
	}
	i++
	j := i + 1
	for j < len(s) {
		nl := strings.IndexByte(s[j:], '\n')
		if nl < 0 {
			j = len(s)
			break
		}
		j += nl + 1
		if j < len(s) && s[j] != ' ' && s[j] != '\n' && s[j] != '#' {
			break
		}
	}
	return s[:i] + s[j:], s[i:j]
}

// TestProposeWriteKeepsTheAnalystsFile: propose --write on a plan with
// tables appends its findings to data_quality_issues and bumps
// platform.updated; the analyst's comments and everything else stay byte
// for byte, and the issues already there stay as they were, in front.
func TestProposeWriteKeepsTheAnalystsFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	pp := filepath.Join(dir, "platform.yaml")
	b, err := os.ReadFile(pp)
	if err != nil {
		t.Fatal(err)
	}
	orig := "# Ana's notes: keep them\n" + string(b)
	orig = mustReplace(t, orig, "\ntables:\n", "\n# ---- the tables ----\ntables:   # reviewed in March\n")
	orig = mustReplace(t, orig, "\nowners:\n", "\n\n# who fixes what\nowners:\n")
	orig += "# end of Ana's plan\n"
	if err := os.WriteFile(pp, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "propose", "--plan", pp, "--write"); code != exitOK {
		t.Fatalf("propose --write: %s", errs)
	}
	got, _ := os.ReadFile(pp)
	updated := regexp.MustCompile(`(?m)^  updated: .*\n`)
	restGot, dqGot := cutSection(t, updated.ReplaceAllString(string(got), ""), "data_quality_issues")
	restWant, dqWant := cutSection(t, updated.ReplaceAllString(orig, ""), "data_quality_issues")
	if restGot != restWant {
		t.Fatalf("propose --write changed more than data_quality_issues and platform.updated:\n--- got\n%s\n--- want\n%s", got, orig)
	}
	if dqWant == "" || !strings.HasPrefix(dqGot, strings.TrimRight(dqWant, "\n")) || len(dqGot) <= len(dqWant) {
		t.Fatalf("the issues already recorded were not kept in front of the new ones:\n--- got\n%s\n--- before\n%s", dqGot, dqWant)
	}
}
