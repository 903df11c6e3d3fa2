package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run id from a flag never leaves the reports folder: reconcile --run
// ../.. and report ../../etc read nothing outside it.
func TestRunDirRefusesPaths(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"", ".", "..", "../..", "../outside", "/etc", "a/b", `a\b`, "run\x1b[2J"} {
		if got, err := RunDir(dir, id); err == nil {
			t.Errorf("RunDir(%q) = %q, want a refusal", id, got)
		}
	}
	id := "20260101T120000.000000Z-a1b2c3"
	got, err := RunDir(dir, id)
	if err != nil || got != filepath.Join(dir, id) {
		t.Fatalf("RunDir(%q) = %q, %v", id, got, err)
	}
	// The refusal holds where a file would be found: expected.json planted
	// one level above the reports folder is not read.
	outside := filepath.Dir(dir)
	reports := filepath.Join(dir, "reports")
	if err := os.MkdirAll(reports, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "expected.json"), []byte(`[]`), 0o600); err != nil {
		t.Skip("cannot write beside the temp folder:", err)
	}
	defer os.Remove(filepath.Join(outside, "expected.json"))
	if _, err := ReadExpectations(reports, ".."); err == nil {
		t.Fatal(`ReadExpectations(reports, "..") read a file outside the reports folder`)
	}
}

// A damaged expected.json is an error that names the file, never a panic
// further on (reconcile indexed Types by Columns).
func TestReadExpectationsRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	id := "20260101T120000.000000Z-a1b2c3"
	if err := os.MkdirAll(filepath.Join(dir, id), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"not json":          `{"table":`,
		"fewer types":       `[{"table":"t","columns":["a","b"],"types":["int"]}]`,
		"more types":        `[{"table":"t","columns":["a"],"types":["int","string"]}]`,
		"required mismatch": `[{"table":"t","columns":["a","b"],"types":["int","int"],"required":[true]}]`,
		"no table":          `[{"columns":["a"],"types":["int"]}]`,
	} {
		if err := os.WriteFile(filepath.Join(dir, id, "expected.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadExpectations(dir, id)
		if err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("%s: err = %v, want a 'damaged' error", name, err)
		}
	}
	ok := `[{"table":"t","columns":["a","b"],"types":["int","string"],"required":[true,false]},{"table":"u","columns":["x"],"types":["date"]}]`
	if err := os.WriteFile(filepath.Join(dir, id, "expected.json"), []byte(ok), 0o600); err != nil {
		t.Fatal(err)
	}
	es, err := ReadExpectations(dir, id)
	if err != nil || len(es) != 2 || es[0].Table != "t" || es[1].Columns[0] != "x" {
		t.Fatalf("a sound expected.json: %+v, %v", es, err)
	}
}

// An expected.json of JSON null is damaged, not a run that expects
// nothing: reconcile passed it with nothing checked (hostile corpus
// state/expected-null).
func TestNullExpectationsAreDamaged(t *testing.T) {
	dir := t.TempDir()
	id := "20260101T000000.000000Z-000000"
	if err := os.MkdirAll(filepath.Join(dir, id), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"null", " null\n"} {
		if err := os.WriteFile(filepath.Join(dir, id, "expected.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadExpectations(dir, id); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("expected.json %q: err = %v, want damaged", body, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, id, "expected.json"), []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	if es, err := ReadExpectations(dir, id); err != nil || len(es) != 0 {
		t.Errorf("expected.json []: %v, %v; want no expectations, no error", es, err)
	}
}
