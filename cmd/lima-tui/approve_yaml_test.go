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
