package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commentedPlan is an analyst's plan: comments of every kind (head, line,
// foot, end of file), odd indentation, flow and block lists, quoting
// styles, blank lines and tables in a non-alphabetical order.
const commentedPlan = `# Plan for ACME field ops — maintained by Ana, do not reformat
# second head line

schema_version: 1   # keep at 1

# ---- platform ----
platform:
    prefix: acme_ops        # short, lower case
    region: 'eu-central-1'
    pattern: iceberg
    catalog: sqlite
    created: 2025-01-31T09:00:00Z
    updated: "2025-02-01T10:30:00Z"   # bumped by approve
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
      csv:
        delimiter: ";"
        header: "yes"
    columns:
      - name: inspection_id
        type: long
      # the score is a percentage
      - name: score
        type: decimal(5,2)
      - name: defects
        type: int
        required: true
    load:
      mode: incremental
      keys: [inspection_id]
      watermark: inspection_id
    checks:
      - rule: range
        column: score
        min: 0.0
        max: 1e2   # percent

data_quality_issues:
  - table: inspections
    column: score
    issue: "comma decimals"   # seen in March
    impact: sums off
    fix: decimal_comma

owners:
  - name: Ana
    email: ana@example.com
    table: inspections
  - name: Ops desk
    default: true

gates:
  # scope was approved in the kickoff
  scope:
    approved_by: Bo   # Bo signed
    approved_at: 2025-01-31T09:05:00Z

# end of plan: thanks for reading
`

func writeCommented(t *testing.T) (string, *Plan) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(path, []byte(commentedPlan), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, p
}

// replaceOnce is the test's own textual edit: old must occur exactly once.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("test setup: %q occurs %d times", old, n)
	}
	return strings.Replace(s, old, new, 1)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteUnchangedPlanKeepsFileByteForByte(t *testing.T) {
	path, p := writeCommented(t)
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != commentedPlan {
		t.Fatalf("an unchanged plan rewrote the file:\n%s", got)
	}
}

// TestWriteEditsOnlyChangedFields makes the changes approve and propose
// --write make (approvals, the updated stamp, a new quality issue, a column
// type) and compares the file with the original edited by hand.
func TestWriteEditsOnlyChangedFields(t *testing.T) {
	path, p := writeCommented(t)
	p.Platform.Updated = "2026-12-01T20:00:00Z"
	p.Gates.Scope = &Approval{ApprovedBy: "Ana", ApprovedAt: "2026-12-01T20:00:00Z", PlanHash: "abc123"}
	p.Gates.DataModel = &Approval{ApprovedBy: "Cy", ApprovedAt: "2026-12-01T20:00:01Z", PlanHash: "def456"}
	p.DataQualityIssues = append(p.DataQualityIssues, QualityIssue{Table: "sites", Issue: "trailing blanks", Impact: "joins miss", Fix: "trim"})
	p.Tables["inspections"].Columns[2].Type = "long"
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	want := commentedPlan
	want = replaceOnce(t, want, `updated: "2025-02-01T10:30:00Z"   # bumped`, `updated: "2026-12-01T20:00:00Z"   # bumped`)
	want = replaceOnce(t, want, "approved_by: Bo   # Bo signed\n    approved_at: 2025-01-31T09:05:00Z\n",
		"approved_by: Ana   # Bo signed\n    approved_at: \"2026-12-01T20:00:00Z\"\n    plan_hash: abc123\n"+
			"  data_model:\n    approved_by: Cy\n    approved_at: \"2026-12-01T20:00:01Z\"\n    plan_hash: def456\n")
	want = replaceOnce(t, want, "    fix: decimal_comma\n",
		"    fix: decimal_comma\n  - table: sites\n    issue: trailing blanks\n    impact: joins miss\n    fix: trim\n")
	want = replaceOnce(t, want, "        type: int\n", "        type: long\n")
	if got := readFile(t, path); got != want {
		t.Fatalf("file differs from the hand edit:\n--- got\n%s\n--- want\n%s", got, want)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Marshal()
	b, _ := q.Marshal()
	if string(a) != string(b) {
		t.Fatal("the edited file does not load as the written plan")
	}
}

// TestWriteAddsAndDropsKeysInPlace covers a key that goes away, a plan
// without a gates section and a list that shrinks.
func TestWriteAddsAndDropsKeysInPlace(t *testing.T) {
	path, p := writeCommented(t)
	p.Gates = Gates{DataModel: &Approval{ApprovedBy: "Cy", ApprovedAt: "x", PlanHash: "h"}}
	p.Owners = p.Owners[:1]
	p.Tables["inspections"].Description = ""
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	want := commentedPlan
	want = replaceOnce(t, want, "  scope:\n    approved_by: Bo   # Bo signed\n    approved_at: 2025-01-31T09:05:00Z\n",
		"  data_model:\n    approved_by: Cy\n    approved_at: x\n    plan_hash: h\n")
	want = replaceOnce(t, want, "  - name: Ops desk\n    default: true\n", "")
	want = replaceOnce(t, want, "    description: >-\n      Site inspections, folded\n      over two lines\n", "")
	if got := readFile(t, path); got != want {
		t.Fatalf("file differs from the hand edit:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestWriteNewFileIsCanonical: without a file, Write writes Marshal's form.
func TestWriteNewFileIsCanonical(t *testing.T) {
	_, p := writeCommented(t)
	path := filepath.Join(t.TempDir(), "new.yaml")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	want, _ := p.Marshal()
	if got := readFile(t, path); got != string(want) {
		t.Fatalf("new file is not canonical:\n%s", got)
	}
}

// TestWriteAnyChangeLoadsBack: whatever the change, the written file loads
// as the plan that was written (edited in place or, failing that, rendered
// whole).
func TestWriteAnyChangeLoadsBack(t *testing.T) {
	for name, p := range map[string]*Plan{"full": fullPlan(), "fixture": loadFixture(t)} {
		t.Run(name, func(t *testing.T) {
			path, _ := writeCommented(t)
			if err := p.Write(path); err != nil {
				t.Fatal(err)
			}
			q, err := Load(path)
			if err != nil {
				t.Fatalf("%v\n%s", err, readFile(t, path))
			}
			a, _ := p.Marshal()
			b, _ := q.Marshal()
			if string(a) != string(b) {
				t.Fatalf("written plan does not load back:\n%s", readFile(t, path))
			}
		})
	}
}

// TestWriteEditsInPlaceForCommonChanges: changes a plan editor makes are
// edits in place (the analyst's first and last comments survive), and the
// file loads as the written plan.
func TestWriteEditsInPlaceForCommonChanges(t *testing.T) {
	changes := map[string]func(p *Plan){
		"new table": func(p *Plan) {
			p.Tables["audits"] = &Table{Source: &TableSource{Name: "field", Files: []string{"audits.csv"}},
				Columns: []Column{{Name: "audit_id", Type: "long"}}}
		},
		"drop table":        func(p *Plan) { delete(p.Tables, "sites") },
		"drop first column": func(p *Plan) { c := p.Tables["inspections"]; c.Columns = c.Columns[1:] },
		"rename column": func(p *Plan) {
			p.Tables["sites"].Columns[0].Name = "site_id"
			p.Tables["sites"].Load.Keys = []string{"site_id"}
		},
		"add column": func(p *Plan) {
			c := p.Tables["sites"]
			c.Columns = append(c.Columns, Column{Name: "city", Type: "string"})
		},
		"partition":          func(p *Plan) { p.Tables["inspections"].Partition = []string{"bucket(4, inspection_id)"} },
		"required":           func(p *Plan) { p.Tables["inspections"].Columns[0].Required = true },
		"check max":          func(p *Plan) { m := 99.5; p.Tables["inspections"].Checks[0].Max = &m },
		"no quality issues":  func(p *Plan) { p.DataQualityIssues = nil },
		"flow source change": func(p *Plan) { p.Tables["sites"].Source.Files = []string{"sites.csv", "sites_*.csv"} },
		"description":        func(p *Plan) { p.Tables["inspections"].Description = "one line now" },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			path, p := writeCommented(t)
			change(p)
			if err := p.Write(path); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, path)
			if !strings.HasPrefix(got, "# Plan for ACME field ops") || !strings.HasSuffix(got, "# end of plan: thanks for reading\n") {
				t.Errorf("the file was rewritten, not edited:\n%s", got)
			}
			q, err := Load(path)
			if err != nil {
				t.Fatalf("%v\n%s", err, got)
			}
			a, _ := p.Marshal()
			b, _ := q.Marshal()
			if string(a) != string(b) {
				t.Fatalf("the file does not load as the written plan:\n%s", got)
			}
		})
	}
}

// TestWriteKeepsFlowStyle: a change inside a flow mapping rewrites that
// mapping, still in flow style; the rest of the table stays as it was.
func TestWriteKeepsFlowStyle(t *testing.T) {
	path, p := writeCommented(t)
	p.Tables["sites"].Source.Files = []string{"sites.csv", "sites_*.csv"}
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	want := replaceOnce(t, commentedPlan, "source: {name: field, files: [sites.csv]}", "source: {name: field, files: [sites.csv, sites_*.csv]}")
	if got := readFile(t, path); got != want {
		t.Fatalf("file differs from the hand edit:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// An empty flow collection only holds the place: the tables gate 3 puts in
// `tables: {}` (as init writes it) are written in block style, one field a
// line, like a plan written from scratch — not as one long flow line.
func TestWriteFillsAnEmptyFlowCollectionInBlockStyle(t *testing.T) {
	_, p := writeCommented(t)
	path := filepath.Join(t.TempDir(), "platform.yaml")
	start := "# written by init\nschema_version: 1\n\nplatform:\n  prefix: acme_ops\n  pattern: iceberg\n  catalog: sqlite\n\nsources:\n  field: {kind: files, path: data/field}\n\ntables: {}\n\n# end\n"
	if err := os.WriteFile(path, []byte(start), 0o600); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	q.Tables["sites"] = p.Tables["sites"]
	if err := q.Write(path); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if strings.Contains(got, "tables: {") || !strings.Contains(got, "\ntables:\n  sites:\n") {
		t.Fatalf("tables not written in block style:\n%s", got)
	}
	if !strings.HasPrefix(got, "# written by init\n") || !strings.HasSuffix(got, "\n# end\n") || !strings.Contains(got, "  field: {kind: files, path: data/field}\n") {
		t.Fatalf("the rest of the file changed:\n%s", got)
	}
	if r, err := Load(path); err != nil || len(r.Tables) != 1 || r.Tables["sites"].Load.Keys[0] != "site_code" {
		t.Fatalf("reload: %v %+v", err, r)
	}
}
