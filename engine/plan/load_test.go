package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"weak"
)

// planHead is a small valid plan; tests append a tables: section.
const planHead = `schema_version: 1
platform:
  prefix: acme
sources:
  field: {kind: files, path: data}
`

func TestParseRejectsUnknownFields(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // the whole Error()
	}{
		{"nested misspelling", planHead + `tables:
  inspections:
    source: {name: field, files: ["*.csv"]}
    load:
      mdoe: full
`, `platform.yaml:10: tables.inspections.load.mdoe: unknown field; did you mean "mode"?`},
		{"top-level misspelling", planHead + `tabels:
  inspections:
    source: {name: field}
`, `platform.yaml:6: tabels: unknown field; did you mean "tables"?`},
		{"case and separators", `schema_version: 1
Platform:
  Prefix: acme
  catalog-uri: x
`, `platform.yaml:2: Platform: unknown field; did you mean "platform"?`}, // what is under an unknown field is not looked at
		{"nothing close: list the fields", planHead + `tables:
  inspections:
    load: {colour: red}
`, `platform.yaml:8: tables.inspections.load.colour: unknown field; valid fields: mode, keys, watermark, lookback, detect_deletes, soft_delete, changes`},
		{"field one level too high", planHead + `tables:
  inspections:
    source: {name: field, files: ["*.csv"]}
    mode: incremental
`, `platform.yaml:9: tables.inspections.mode: unknown field; mode belongs under load: write it as load.mode`},
		{"in a list item", planHead + `tables:
  inspections:
    columns:
      - name: id
        typ: long
`, `platform.yaml:10: tables.inspections.columns[0].typ: unknown field; did you mean "type"?`},
		{"odd key is quoted", "schema_version: 1\n\"bad\u202ekey\": 1\n",
			`platform.yaml:2: ["bad\u202ekey"]: unknown field; valid fields: schema_version, platform, scope, storage, sources, tables, data_quality_issues, etl, downstream, owners, schedule, maintenance, … (1 more)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.doc), "platform.yaml")
			if err == nil {
				t.Fatalf("no error; plan %+v", p)
			}
			if p != nil {
				t.Errorf("plan returned with an error")
			}
			if !errors.Is(err, ErrInvalidPlan) {
				t.Errorf("not ErrInvalidPlan: %v", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", err, tc.want)
			}
		})
	}
}

func TestParseCollectsAllProblems(t *testing.T) {
	doc := planHead + `tables:
  inspections:
    descripton: x
    source:
      name: field
      files: "*.csv"
    columns:
      - name: id
        type: long
        requird: true
      - name: n
        required: maybe
    load:
      mode: full
      mode: incremental
etl:
  max_parallel_reads: four
  error_budget: lots
colour: blue
`
	_, err := Parse([]byte(doc), "p.yaml")
	want := `p.yaml:8: tables.inspections.descripton: unknown field; did you mean "description"?
p.yaml:11: tables.inspections.source.files: expected a list, got "*.csv"; write [*.csv] or one "- item" per line
p.yaml:15: tables.inspections.columns[0].requird: unknown field; did you mean "required"?
p.yaml:17: tables.inspections.columns[1].required: expected true or false, got "maybe"
p.yaml:20: tables.inspections.load.mode: given twice (first at line 19); keep one
p.yaml:22: etl.max_parallel_reads: expected a whole number, got "four"
p.yaml:23: etl.error_budget: expected a number, got "lots"
p.yaml:24: colour: unknown field; valid fields: schema_version, platform, scope, storage, sources, tables, data_quality_issues, etl, downstream, owners, schedule, maintenance, … (1 more)`
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

func TestParseValueTypeErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"string where a list goes", planHead + "tables:\n  t:\n    columns: id, name\n",
			`platform.yaml:8: tables.t.columns: expected a list, got "id, name"`},
		{"list where fields go", "schema_version: 1\nplatform: [a, b]\n",
			"platform.yaml:2: platform: expected fields (name: value, one per line), got a list"},
		{"list where named entries go", "schema_version: 1\ntables: [a]\n",
			"platform.yaml:2: tables: expected named entries (name: …, one per line), got a list"},
		{"fields where text goes", "schema_version: 1\nplatform:\n  prefix: {a: 1}\n",
			"platform.yaml:3: platform.prefix: expected text, got fields (a mapping)"},
		{"fraction where a whole number goes", "schema_version: 1\netl:\n  max_parallel_reads: 4.5\n",
			`platform.yaml:3: etl.max_parallel_reads: expected a whole number, got "4.5"`},
		{"text where a number goes", planHead + "tables:\n  t:\n    checks:\n      - {rule: range, min: abc}\n",
			`platform.yaml:9: tables.t.checks[0].min: expected a number, got "abc"`},
		{"quoted version", "schema_version: \"1\"\n",
			`platform.yaml:1: schema_version: expected a whole number, got "1"`},
		{"table name twice", planHead + "tables:\n  t: {}\n  t: {}\n",
			`platform.yaml:8: tables.t: "t" is given twice (first at line 7); names must be unique`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "platform.yaml")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got:\n%v\nwant:\n%s", err, tc.want)
			}
		})
	}
}

func TestParseWholeFileProblems(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "platform.yaml: empty file; a plan starts with schema_version: 1"},
		{"only comments", "# nothing\n", "platform.yaml: empty file; a plan starts with schema_version: 1"},
		{"null", "~\n", "platform.yaml:1: empty file; a plan starts with schema_version: 1"},
		{"not a mapping", "- a\n- b\n", "platform.yaml:1: expected a mapping with schema_version, platform, sources, tables, …, got a list"},
		{"two documents", "schema_version: 1\n---\nschema_version: 1\n",
			"platform.yaml:2: a second YAML document starts here; a plan is one document (remove the extra ---)"},
		{"newer schema", "schema_version: 2\nfuture: {x: 1}\n",
			"platform.yaml:1: schema_version: 2 was written by a newer version of Lima; this build reads schema_version 1: upgrade lima-tui"},
		{"syntax", "schema_version: 1\nplatform:\n  prefix: [acme\n",
			"platform.yaml:3: YAML syntax: did not find expected ',' or ']'"},
		{"bad indentation", "schema_version: 1\nplatform:\n    prefix: acme\n  region: x\n",
			"platform.yaml:4: YAML syntax: did not find expected key"},
		// The yaml library names the line where the mapping with the problem starts.
		{"dash in a mapping", "schema_version: 1\nplatform:\n  prefix: acme\n  - x\n",
			"platform.yaml:3: YAML syntax: did not find expected key"},
		{"tab indentation", "schema_version: 1\nplatform:\n\tprefix: acme\n",
			"platform.yaml:3: YAML syntax: found character that cannot start any token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "platform.yaml")
			if err == nil || err.Error() != tc.want {
				t.Errorf("got:\n%v\nwant:\n%s", err, tc.want)
			}
			if err != nil && !errors.Is(err, ErrInvalidPlan) {
				t.Errorf("not ErrInvalidPlan")
			}
		})
	}
}

func TestParseAnchorsAndMerge(t *testing.T) {
	doc := `schema_version: 1
platform: {prefix: acme}
sources:
  s: &src {kind: files, path: data}
  t: *src
tables:
  a: &tbl
    source: {name: s, files: ["a/*.csv"]}
    load: {mode: full}
  b:
    <<: *tbl
    description: B
    load: {mode: incremental, watermark: ts}
`
	p, err := Parse([]byte(doc), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := p.Tables["b"]
	if b.Source == nil || b.Source.Name != "s" || b.Description != "B" || b.Load.Mode != "incremental" {
		t.Errorf("merge: %+v", b)
	}
	if p.Sources["t"].Path != "data" {
		t.Errorf("alias: %+v", p.Sources["t"])
	}

	bad := strings.Replace(doc, "load: {mode: full}", "laod: {mode: full}", 1)
	_, err = Parse([]byte(bad), "platform.yaml")
	want := `platform.yaml:9: tables.a.laod: unknown field; did you mean "load"?
platform.yaml:9: tables.b.laod: unknown field; did you mean "load"?`
	if err == nil || err.Error() != want {
		t.Errorf("merged unknown field:\n%v\nwant:\n%s", err, want)
	}
}

func TestParseNullsAndDefaults(t *testing.T) {
	doc := planHead + `storage:
tables:
  t:
    columns: ~
    source: {name: field, files: ["*.csv"]}
`
	p, err := Parse([]byte(doc), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Tables["t"].Columns != nil || p.Storage != (Storage{}) {
		t.Errorf("nulls: %+v %+v", p.Tables["t"], p.Storage)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestParseMissingVersionIsForValidate(t *testing.T) {
	p, err := Parse([]byte("platform: {prefix: acme}\nsources: {s: {kind: files, path: d}}\n"), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = p.Validate()
	if err == nil || err.Error() != "platform.yaml:1: schema_version: missing; write schema_version: 1 at the top of the file" {
		t.Errorf("got %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrInvalidPlan) {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(path, []byte("schema_version: 1\nplatfrom: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	if err == nil || err.Error() != path+`:2: platfrom: unknown field; did you mean "platform"?` {
		t.Errorf("got %v", err)
	}
}

func TestSuggest(t *testing.T) {
	opts := []string{"mode", "keys", "watermark"}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"mdoe", "mode", true},
		{"Mode", "mode", true},
		{"mod", "mode", true},
		{"watermrk", "watermark", true},
		{"water_mark", "watermark", true},
		{"key", "keys", true},
		{"colour", "", false},
		{"m", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, ok := suggest(tc.in, opts)
		if got != tc.want || ok != tc.ok {
			t.Errorf("suggest(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if d := editDistance("mdoe", "mode"); d != 1 {
		t.Errorf("transposition distance = %d, want 1", d)
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("kitten/sitting = %d, want 3", d)
	}
}

// TestLinesAreReleased: the side table of lines does not keep plans alive.
func TestLinesAreReleased(t *testing.T) {
	p := loadFixture(t)
	wp := weak.Make(p)
	if originOf(p) == nil {
		t.Fatal("no lines recorded by Load")
	}
	p = nil
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		if _, ok := origins.Load(wp); !ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("lines of a collected plan are still recorded")
}

// --plan naming a FIFO, a device or a folder is refused at once instead of
// blocking on open (a FIFO without a writer waits forever).
func TestLoadRefusesWhatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plan.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{fifo, dir, "/dev/null"} {
		done := make(chan error, 1)
		go func() { _, err := Load(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s) = %v, want 'not a regular file'", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) blocked", p)
		}
	}
}

// A plan past MaxPlanSize is refused before it is parsed.
func TestLoadRefusesAHugePlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "platform.yaml")
	big := "schema_version: 1\n# " + strings.Repeat("x", MaxPlanSize) + "\n"
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("Load of a %d-byte plan: %v", len(big), err)
	}
}
