package fileuri_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lima-lake/lima/internal/fileuri"
)

func TestFromPathEscapesWhatAURIWouldMisread(t *testing.T) {
	cases := []struct{ path, uri string }{
		{"/tmp/lake", "file:///tmp/lake"},
		{"/tmp/pct%41/lake", "file:///tmp/pct%2541/lake"},
		{"/tmp/a#b/lake", "file:///tmp/a%23b/lake"},
		{"/tmp/what?/lake", "file:///tmp/what%3F/lake"},
		{"/tmp/a b/lake", "file:///tmp/a%20b/lake"},
		{"/tmp/데모 lake", "file:///tmp/%EB%8D%B0%EB%AA%A8%20lake"},
		{"/tmp/a;b,c=d&e+f:g@h$", "file:///tmp/a;b,c=d&e+f:g@h$"},
		{"/tmp/lake/", "file:///tmp/lake"}, // filepath.Abs cleans
	}
	for _, c := range cases {
		got, err := fileuri.FromPath(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.uri {
			t.Errorf("FromPath(%q) = %q, want %q", c.path, got, c.uri)
		}
		back, err := fileuri.ToPath(got)
		if err != nil {
			t.Fatalf("ToPath(%q): %v", got, err)
		}
		if want := filepath.Clean(c.path); back != want {
			t.Errorf("ToPath(%q) = %q, want %q", got, back, want)
		}
	}
}

func TestFromPathMakesRelativePathsAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got, err := fileuri.FromPath("x y")
	if err != nil {
		t.Fatal(err)
	}
	back, err := fileuri.ToPath(got)
	if err != nil || back != filepath.Join(wd, "x y") {
		t.Errorf("FromPath(\"x y\") = %q, back %q (%v), want %q", got, back, err, filepath.Join(wd, "x y"))
	}
}

func TestToPathRefusesWhatWasNotEscaped(t *testing.T) {
	for _, uri := range []string{
		"file:///tmp/a#b/lake",     // a # left raw: the rest is a fragment
		"file:///tmp/what?/lake",   // a ? left raw: the rest is a query
		"file:///tmp/lake?",        // an empty query
		"file://server/share/x",    // another machine
		"file:relative/path",       // opaque
		"file://user@/tmp/x",       // user information
		"file:///tmp/bad%zzescape", // not an escape
		"s3://bucket/key",
		"/tmp/plain",
	} {
		if p, err := fileuri.ToPath(uri); err == nil {
			t.Errorf("ToPath(%q) = %q, want an error", uri, p)
		}
	}
	for uri, want := range map[string]string{
		"file:///tmp/x":          "/tmp/x",
		"FILE:///tmp/x":          "/tmp/x",
		"file://localhost/tmp/x": "/tmp/x",
		"file:/tmp/a%20b":        "/tmp/a b",
	} {
		if p, err := fileuri.ToPath(uri); err != nil || p != filepath.FromSlash(want) {
			t.Errorf("ToPath(%q) = %q, %v; want %q", uri, p, err, want)
		}
	}
}

// TestIcebergIOReadsTheEscapedURIs writes through iceberg-go's local IO at
// URIs FromPath built (and at names joined onto them as iceberg-go's
// location provider joins them) and finds each file at the path itself.
func TestIcebergIOReadsTheEscapedURIs(t *testing.T) {
	for _, name := range []string{"pct%41", "a#b", "what?", "a b", "데모 lake"} {
		dir := filepath.Join(t.TempDir(), name)
		uri, err := fileuri.FromPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		loc := strings.TrimSuffix(uri, "/") + "/metadata/00000-x.metadata.json"
		if err := (icebergio.LocalFS{}).WriteFile(loc, []byte(name)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "metadata", "00000-x.metadata.json"))
		if err != nil || string(b) != name {
			t.Errorf("%s: read %q, %v", name, b, err)
		}
		if p, err := fileuri.ToPath(loc); err != nil || p != filepath.Join(dir, "metadata", "00000-x.metadata.json") {
			t.Errorf("%s: ToPath(%q) = %q, %v", name, loc, p, err)
		}
	}
}

// TestNoOtherCodeBuildsFileURIs parses every non-test Go file of the module
// and fails on a string literal that starts a file: URI outside this
// package: such a literal is a URI built or taken
// apart by hand, without the escaping above.
func TestNoOtherCodeBuildsFileURIs(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	self, _ := filepath.Abs(".")
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == self || (p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if fileuri.Is(v) {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d: string %s builds or takes apart a file: URI by hand; use internal/fileuri", rel, fset.Position(lit.Pos()).Line, lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files found under %s", files, root)
	}
}
