package plan

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullPlan sets every field of every type, with strings that YAML would
// misread if they were not quoted.
func fullPlan() *Plan {
	return &Plan{
		SchemaVersion: SchemaVersion,
		Platform: Platform{Prefix: "acme", Region: "eu-west-1", Environment: "prod", Pattern: "hive",
			Catalog: "glue", Created: "2025-01-31T09:00:00Z", Updated: "2025-02-01T10:30:00+01:00"},
		Storage: Storage{Warehouse: "s3://bucket/lake", Namespace: "acme_raw", CatalogURI: "https://example.com/catalog"},
		Sources: map[string]*Source{
			"crm": {Kind: "files", Path: "data/crm", Encoding: "windows-1252"},
			"erp": {Kind: "files", Path: "/mnt/erp files"},
		},
		Tables: map[string]*Table{
			"orders": {
				Type:        "base",
				Description: "Orders: one row per line # not a comment\nsecond line",
				Source: &TableSource{Name: "crm", Files: []string{"orders/*.csv", "[ab]*.csv"}, Format: "csv",
					CSV:        CSV{Delimiter: "\t", Quote: "'", Header: "no"},
					NullTokens: []string{"", "NULL", "null", `\N`, "~", "-"}},
				Columns: []Column{
					{Name: "order_id", Type: "long", Required: true, SourceName: "Order ID", Description: "yes"},
					{Name: "ordered_at", Type: "timestamp", Formats: []string{"yyyy-MM-dd HH:mm", "dd.MM.yyyy"}},
					{Name: "amount", Type: "decimal(18,2)", Normalize: []string{"trim", `thousands:","`, "decimal_comma"}, Currency: "KRW"},
					{Name: "flag", Type: "boolean", Sensitive: true, Description: "true"},
					{Name: "code", Type: "string", Description: "08:30"},
				},
				Partition:      []string{"day(ordered_at)", "truncate(16, order_id)"},
				JoinKeys:       []JoinKey{{Column: "code", References: "codes.code"}},
				Grain:          []string{"order_id"},
				SumSafeColumns: []string{"amount"},
				Load:           LoadSpec{Mode: "incremental", Keys: []string{"order_id"}, Watermark: "ordered_at"},
				Checks: []Check{
					{Name: "amount positive", Rule: "range", Column: "amount", Min: f64(0), Max: f64(1e9)},
					{Rule: "range", Column: "amount", Min: f64(-0.5)},
					{Rule: "regex", Column: "code", Regex: `^[A-Z]{2}: \d+ #x$`},
					{Rule: "allowed", Column: "code", Values: []string{"yes", "no", "1", "null"}},
					{Rule: "max_length", Column: "code", Length: 12},
				},
				ControlColumns: []string{"amount"},
			},
			"codes": {
				Type:      "mart",
				WrittenBy: "sql/codes.sql",
				Columns:   []Column{{Name: "code", Type: "string"}},
				Grain:     []string{"code"},
			},
		},
		DataQualityIssues: []QualityIssue{{Table: "orders", Column: "amount", Issue: "1.234,50 style numbers", Impact: "sums off", Fix: "decimal_comma"}},
		ETL:               ETL{Tool: "lima", MaxParallelReads: 4, ErrorBudget: 0.01},
		Downstream:        Downstream{Consumer: "bi", Tools: []string{"Power BI", "Excel"}},
		Owners: []Owner{
			{Name: "Ana", Email: "ana@example.com", Table: "orders", Column: "amount", Rule: "range", Deadline: "2d"},
			{Name: "Ops", Default: true},
		},
		Schedule: Schedule{Cron: "0 2 * * 1-5", Timezone: "Europe/Berlin", Window: "01:00-05:00", Deadline: "06:00"},
		Gates: Gates{
			Scope:     &Approval{ApprovedBy: "Ana", ApprovedAt: "2025-01-31T09:05:00Z"},
			DataModel: &Approval{ApprovedBy: "Bo", ApprovedAt: "2025-01-31T10:00:00Z", PlanHash: strings.Repeat("ab", 32)},
		},
	}
}

func TestFullPlanIsValid(t *testing.T) {
	if err := fullPlan().Validate(); err != nil {
		t.Fatalf("fullPlan should be valid:\n%v", err)
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	for name, p := range map[string]*Plan{"full": fullPlan(), "fixture": loadFixture(t)} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "platform.yaml")
			if err := p.Write(path); err != nil {
				t.Fatal(err)
			}
			q, err := Load(path)
			if err != nil {
				data, _ := os.ReadFile(path)
				t.Fatalf("Load: %v\n%s", err, data)
			}
			if !reflect.DeepEqual(p, q) {
				t.Errorf("round trip differs:\n got %#v\nwant %#v", q, p)
			}
			if p.Hash() != q.Hash() {
				t.Errorf("hash changed by the round trip")
			}
			// Writing the loaded plan gives the same bytes.
			path2 := filepath.Join(t.TempDir(), "again.yaml")
			if err := q.Write(path2); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(path)
			b, _ := os.ReadFile(path2)
			if !bytes.Equal(a, b) {
				t.Errorf("second write differs:\n%s\n---\n%s", a, b)
			}
		})
	}
}

func TestWriteModesAndAtomicity(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "new", "ws")
	path := filepath.Join(dir, "platform.yaml")
	p := loadFixture(t)
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	for _, d := range []string{filepath.Join(root, "new"), dir} {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", d, st.Mode().Perm())
		}
	}

	// Overwriting a world-readable file leaves a 0600 file and no temp files.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	p.Platform.Region = "us-east-1"
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("rewritten file mode %v, want 0600", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "platform.yaml" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %v, want only platform.yaml", names)
	}
	q, err := Load(path)
	if err != nil || q.Platform.Region != "us-east-1" {
		t.Errorf("reload: %v %v", err, q)
	}

	// A folder that cannot be created is an error, and nothing is left behind.
	blocker := filepath.Join(root, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.Write(filepath.Join(blocker, "platform.yaml")); err == nil {
		t.Errorf("write under a file: no error")
	}
}

func TestMarshal(t *testing.T) {
	p := &Plan{
		SchemaVersion: 1,
		Platform:      Platform{Prefix: "acme"},
		Sources:       map[string]*Source{"b": {Kind: "files", Path: "b"}, "a": {Kind: "files", Path: "a"}},
		Tables:        map[string]*Table{},
	}
	got, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := Header + `schema_version: 1

platform:
  prefix: acme

sources:
  a:
    kind: files
    path: a
  b:
    kind: files
    path: b

tables: {}
`
	if string(got) != want {
		t.Errorf("Marshal:\n%s\nwant:\n%s", got, want)
	}
	var nilPlan *Plan
	if _, err := nilPlan.Marshal(); err == nil {
		t.Errorf("nil plan: no error")
	}
}

func TestMarshalDeterministic(t *testing.T) {
	first, _ := fullPlan().Marshal()
	for range 20 {
		again, _ := fullPlan().Marshal()
		if !bytes.Equal(first, again) {
			t.Fatal("Marshal is not deterministic")
		}
	}
}

func TestHash(t *testing.T) {
	base := loadFixture(t).Hash()
	if len(base) != 64 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("hash %q is not 64 hex digits", base)
	}
	tests := []struct {
		name    string
		mut     func(p *Plan)
		changes bool
	}{
		{"nothing", func(p *Plan) {}, false},
		{"approval recorded", func(p *Plan) {
			p.Gates.DataModel = &Approval{ApprovedBy: "Ana", ApprovedAt: "2025-03-01T00:00:00Z", PlanHash: base}
		}, false},
		{"approvals cleared", func(p *Plan) { p.Gates = Gates{} }, false},
		{"timestamps touched", func(p *Plan) { p.Touch(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) }, false},
		{"column type", func(p *Plan) { p.Tables["inspections"].Columns[3].Type = "decimal(6,2)" }, true},
		{"key", func(p *Plan) { p.Tables["sites"].Load.Keys = []string{"site_code", "region"} }, true},
		{"prefix", func(p *Plan) { p.Platform.Prefix = "acme_ops2" }, true},
		{"new table", func(p *Plan) { p.Tables["x"] = &Table{} }, true},
		{"owner", func(p *Plan) { p.Owners = p.Owners[:1] }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := loadFixture(t)
			tc.mut(p)
			if got := p.Hash(); (got != base) != tc.changes {
				t.Errorf("hash changed = %v, want %v", got != base, tc.changes)
			}
		})
	}
}

// TestHashKeyOrder: the same plan written with its keys, tables, sources
// and map entries in another order, and other YAML styles, hashes the same.
func TestHashKeyOrder(t *testing.T) {
	a := `schema_version: 1
platform: {prefix: acme, pattern: iceberg}
sources:
  s1: {kind: files, path: one}
  s2: {kind: files, path: two}
tables:
  alpha:
    source: {name: s1, files: ["a/*.csv"]}
    columns: [{name: id, type: long}, {name: v, type: double}]
    load: {mode: full, keys: [id]}
  beta:
    source: {name: s2, files: ["b/*.csv"]}
    checks: [{rule: range, column: v, min: 1.0, max: 10}]
`
	b := `# the same plan, reordered
tables:
  beta:
    checks:
      - max: 10.0
        min: 1
        column: v
        rule: range
    source:
      files:
        - b/*.csv
      name: s2
  alpha:
    load:
      keys: [id]
      mode: "full"
    columns:
      - type: long
        name: id
      - {type: double, name: v}
    source: {files: ['a/*.csv'], name: s1}
sources:
  s2: {path: two, kind: files}
  s1: {path: one, kind: files}
platform:
  pattern: iceberg
  prefix: acme
schema_version: 1
gates:
  scope: {approved_by: Ana, approved_at: "2025-01-01T00:00:00Z"}
`
	pa, err := Parse([]byte(a), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Parse([]byte(b), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pa.Hash() != pb.Hash() {
		ma, _ := pa.Marshal()
		mb, _ := pb.Marshal()
		t.Errorf("hashes differ:\n%s\n---\n%s", ma, mb)
	}
}

func TestModelApproved(t *testing.T) {
	p := loadFixture(t)
	if p.ModelApproved() {
		t.Fatal("approved without an approval")
	}
	p.Gates.DataModel = &Approval{ApprovedBy: "Ana", ApprovedAt: "2025-03-01T00:00:00Z", PlanHash: p.Hash()}
	if !p.ModelApproved() {
		t.Fatal("not approved after recording the hash")
	}
	p.Touch(time.Now())
	if !p.ModelApproved() {
		t.Fatal("touching the timestamps revoked the approval")
	}
	p.Tables["sites"].Columns[1].Type = "int"
	if p.ModelApproved() {
		t.Fatal("still approved after a type change")
	}
}

// TestWriteRelocatesLines: after Write, Validate reports lines of the new file.
func TestWriteRelocatesLines(t *testing.T) {
	p := loadFixture(t)
	path := filepath.Join(t.TempDir(), "out.yaml")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	p.Schedule.Deadline = "6pm"
	err := p.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 1 {
		t.Fatalf("got %v", err)
	}
	data, _ := os.ReadFile(path)
	var line int
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "  deadline:") {
			line = i + 1
		}
	}
	if ve.File != path || ve.Errors[0].Line != line || line == 0 {
		t.Errorf("got %s:%d, want %s:%d", ve.File, ve.Errors[0].Line, path, line)
	}
}
