package files

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
)

func unitNames(units []source.Unit) []string {
	out := []string{}
	for _, u := range units {
		out = append(out, u.Name)
	}
	return out
}

func TestList(t *testing.T) {
	dir := writeTree(t, map[string][]byte{
		"a.csv":          []byte("x"),
		"b.CSV":          []byte("x"),
		"notes.md":       []byte("x"),
		"2024/01/s.csv":  []byte("x"),
		"2024/02/s.csv":  []byte("x"),
		"2024/02/t.json": []byte("x"),
		"2025/01/s.csv":  []byte("x"),
		"x/y/z/deep.csv": []byte("x"),
		"[a].csv":        []byte("x"),
		".hidden.csv":    []byte("x"),
	})
	if err := os.Mkdir(filepath.Join(dir, "empty.csv"), 0o755); err != nil { // a folder is no unit
		t.Fatal(err)
	}
	src := New(dir)
	tests := []struct {
		globs []string
		want  []string
	}{
		{[]string{"*.csv"}, []string{".hidden.csv", "[a].csv", "a.csv"}},
		{[]string{"?.csv"}, []string{"a.csv"}},
		{[]string{"[ab].*"}, []string{"a.csv", "b.CSV"}},
		{[]string{`\[a\].csv`}, []string{"[a].csv"}},
		{[]string{"2024/*/s.csv"}, []string{"2024/01/s.csv", "2024/02/s.csv"}},
		{[]string{"*/01/*"}, []string{"2024/01/s.csv", "2025/01/s.csv"}},
		{[]string{"**/*.csv"}, []string{".hidden.csv", "2024/01/s.csv", "2024/02/s.csv", "2025/01/s.csv", "[a].csv", "a.csv", "x/y/z/deep.csv"}},
		{[]string{"x/**"}, []string{"x/y/z/deep.csv"}},
		{[]string{"**/z/*.csv", "x/**/deep.csv", "./x/y/z/deep.csv"}, []string{"x/y/z/deep.csv"}},
		{[]string{"2024/**", "**/s.csv"}, []string{"2024/01/s.csv", "2024/02/s.csv", "2024/02/t.json", "2025/01/s.csv"}},
		{[]string{"nothing*"}, []string{}},
		{[]string{"no/such/folder/*.csv"}, []string{}},
		{[]string{"empty.csv"}, []string{}},
		{[]string{""}, []string{}},
		{nil, []string{}},
	}
	for _, tc := range tests {
		units, err := src.List(context.Background(), tc.globs)
		if err != nil {
			t.Errorf("List(%q): %v", tc.globs, err)
			continue
		}
		if got := unitNames(units); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.globs, got, tc.want)
		}
	}
	units, err := src.List(context.Background(), []string{"2024/02/s.csv"})
	if err != nil || len(units) != 1 {
		t.Fatalf("List = %v, %v", units, err)
	}
	u := units[0]
	if u.Path != filepath.Join(dir, "2024", "02", "s.csv") || u.Size != 1 || u.ModTime == 0 || u.OriginalName != "" {
		t.Errorf("unit = %+v", u)
	}
}

func TestListErrors(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"a.csv": []byte("x")})
	tests := []struct {
		root  string
		globs []string
		want  string
		is    error
	}{
		{dir, []string{"../*.csv"}, `has a ".." segment`, ErrEscapesRoot},
		{dir, []string{"a/../../etc/passwd"}, `has a ".." segment`, ErrEscapesRoot},
		{dir, []string{"/etc/*"}, "is absolute", ErrEscapesRoot},
		{dir, []string{"*.csv", "[a"}, "syntax error in pattern", nil},
		{filepath.Join(dir, "missing"), []string{"*"}, "does not exist", os.ErrNotExist},
		{filepath.Join(dir, "a.csv"), []string{"*"}, "is not a folder", nil},
		{"", []string{"*"}, "source root is empty", nil},
	}
	for _, tc := range tests {
		_, err := New(tc.root).List(context.Background(), tc.globs)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("List(%q, %q) = %v, want an error containing %q (is %v)", tc.root, tc.globs, err, tc.want, tc.is)
		}
	}
}

func TestListUnreadableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any folder")
	}
	dir := writeTree(t, map[string][]byte{"sub/a.csv": []byte("x")})
	if err := os.Chmod(filepath.Join(dir, "sub"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "sub"), 0o755) })
	if _, err := New(dir).List(context.Background(), []string{"**"}); err == nil {
		t.Fatal("List over an unreadable folder: no error, want one (files must not vanish silently)")
	}
}

func TestNFCNames(t *testing.T) {
	nfd := "cafe\u0301/re\u0301sume\u0301.csv" // e + combining acute accent
	nfc := "caf\u00e9/r\u00e9sum\u00e9.csv"
	dir := writeTree(t, map[string][]byte{nfd: []byte("id,v\n1,2\n")})
	src := New(dir)
	for _, glob := range []string{"caf\u00e9/*.csv", "cafe\u0301/*.csv", "**/r\u00e9sum\u00e9.csv"} {
		units, err := src.List(context.Background(), []string{glob})
		if err != nil {
			t.Fatalf("List(%q): %v", glob, err)
		}
		if len(units) != 1 {
			t.Fatalf("List(%q) = %q, want one unit", glob, unitNames(units))
		}
		u := units[0]
		if u.Name != nfc || u.OriginalName != nfd || u.Path != filepath.Join(dir, filepath.FromSlash(nfd)) {
			t.Fatalf("unit = %+v, want Name %q OriginalName %q", u, nfc, nfd)
		}
		rr, err := src.Open(context.Background(), u, source.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		row, err := rr.Next()
		rr.Close()
		if err != nil || row.Loc.Unit != nfc {
			t.Fatalf("first row at %+v, %v; want Loc.Unit %q", row.Loc, err, nfc)
		}
		// Without Path, the unit opens by its original name.
		u.Path = ""
		rr, err = src.Open(context.Background(), u, source.Options{})
		if err != nil {
			t.Fatalf("Open without Path: %v", err)
		}
		rr.Close()
	}
}

func TestNFCCollision(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"e\u0301.csv": []byte("x"), "\u00e9.csv": []byte("y")})
	_, err := New(dir).List(context.Background(), []string{"*.csv"})
	if err == nil || !strings.Contains(err.Error(), "same name in Unicode NFC") {
		t.Fatalf("List = %v, want an error about two files with the same NFC name", err)
	}
}

func TestSymlinksStayInside(t *testing.T) {
	outside := writeTree(t, map[string][]byte{"secret.csv": []byte("a,b\n1,2\n")})
	dir := writeTree(t, map[string][]byte{"in.csv": []byte("a,b\n1,2\n")})
	if err := os.Symlink(filepath.Join(outside, "secret.csv"), filepath.Join(dir, "link.csv")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	src := New(dir)
	units, err := src.List(context.Background(), []string{"**"})
	if err != nil {
		t.Fatal(err)
	}
	if got := unitNames(units); !reflect.DeepEqual(got, []string{"in.csv"}) {
		t.Fatalf("List = %q, want only in.csv (links are not listed)", got)
	}
	for _, u := range []source.Unit{{Name: "link.csv"}, {Name: "linkdir/secret.csv"}} {
		if rr, err := src.Open(context.Background(), u, source.Options{}); err == nil {
			rr.Close()
			t.Errorf("Open(%q) through a link out of the root succeeded", u.Name)
		}
	}
}

// TestSymlinksInsideAreFollowed: a link to a file or a folder inside the
// root is listed under the link's name and reads; a link out of the root or
// to nothing is named by LinksOutside; a link cycle is walked once.
func TestSymlinksInsideAreFollowed(t *testing.T) {
	outside := writeTree(t, map[string][]byte{"secret.csv": []byte("a,b\n1,2\n")})
	dir := writeTree(t, map[string][]byte{"store/2026/jan.csv": []byte("a,b\n1,2\n"), "store/feb.csv": []byte("a,b\n3,4\n")})
	for link, target := range map[string]string{
		"current.csv": filepath.Join(dir, "store", "feb.csv"), // absolute, inside
		"months":      filepath.Join("store", "2026"),         // relative folder, inside
		"loop":        ".",                                    // a cycle
		"away.csv":    filepath.Join(outside, "secret.csv"),
		"gone.csv":    filepath.Join(dir, "nothing.csv"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	src := New(dir)
	for glob, want := range map[string][]string{
		// a file reached directly and through a link is listed once, by
		// its own name
		"**/*.csv":     {"store/2026/jan.csv", "store/feb.csv"},
		"months/*.csv": {"months/jan.csv"},
		"current.csv":  {"current.csv"},
	} {
		units, err := src.List(context.Background(), []string{glob})
		if err != nil {
			t.Fatal(err)
		}
		if got := unitNames(units); !reflect.DeepEqual(got, want) {
			t.Errorf("List(%s) = %q, want %q", glob, got, want)
		}
		for _, u := range units {
			rr, err := src.Open(context.Background(), u, source.Options{})
			if err != nil {
				t.Errorf("Open(%q): %v", u.Name, err)
				continue
			}
			rr.Close()
		}
	}
	if _, err := src.List(context.Background(), []string{"**"}); err != nil {
		t.Fatal(err)
	}
	if got := src.LinksOutside(); !reflect.DeepEqual(got, []string{"away.csv", "gone.csv"}) {
		t.Errorf("LinksOutside = %q, want away.csv and gone.csv", got)
	}
}

func TestOpenEscapes(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"a.csv": []byte("x,y\n")})
	src := New(dir)
	for _, u := range []source.Unit{
		{Name: "../a.csv"},
		{Name: "sub/../../a.csv"},
		{Name: "/etc/passwd"},
		{Path: "/etc/passwd", Name: "a.csv"},
		{Path: filepath.Join(dir, "..", "a.csv"), Name: "a.csv"},
		{Path: dir, Name: "a.csv"},
	} {
		rr, err := src.Open(context.Background(), u, source.Options{})
		if err == nil {
			rr.Close()
		}
		if !errors.Is(err, ErrEscapesRoot) {
			t.Errorf("Open(%+v) = %v, want ErrEscapesRoot", u, err)
		}
	}
}

func TestOpenFormats(t *testing.T) {
	dir := writeTree(t, map[string][]byte{
		"a.csv":     []byte("id,v\n1,2\n"),
		"a.TSV":     []byte("id\tv,w\n1\t2,3\n"),
		"a.txt":     []byte("id;v\n1;2\n"),
		"a.jsonl":   []byte("{\"id\":1}\n"),
		"a.json":    []byte("{\"id\":1}\n"),
		"a.ndjson":  []byte("{\"id\":1}\n"),
		"data":      []byte("id,v\n1,2\n"),
		"sheet.xls": []byte("x"),
	})
	src := New(dir)
	tests := []struct {
		name    string
		format  string
		columns []string
		reason  string
	}{
		{"a.csv", "", []string{"id", "v"}, ""},
		{"a.TSV", "", []string{"id", "v,w"}, ""},
		{"a.txt", "", []string{"id", "v"}, ""},
		{"a.jsonl", "", []string{"id"}, ""},
		{"a.json", "", []string{"id"}, ""},
		{"a.ndjson", "", []string{"id"}, ""},
		{"data", "csv", []string{"id", "v"}, ""},
		{"a.csv", "CSV", []string{"id", "v"}, ""},
		{"data", "", nil, "no file extension to tell the format: set the format to csv, ndjson, parquet or avro"},
		{"sheet.xls", "", nil, `unknown file type ".xls": set the format to csv, ndjson, parquet or avro`},
		{"a.csv", "xlsx", nil, "not an .xlsx workbook (not a zip archive, or a truncated one)"},
		{"a.csv", "parquet", nil, "not a parquet file, or a truncated one"},
		{"missing.csv", "", nil, "cannot open file"},
	}
	for _, tc := range tests {
		rr, err := src.Open(context.Background(), source.Unit{Name: tc.name}, source.Options{Format: tc.format})
		if tc.reason != "" {
			var ue *UnreadableError
			if !errors.Is(err, source.ErrUnreadable) || !errors.As(err, &ue) || ue.Reason != tc.reason {
				t.Errorf("Open(%q, %q) = %v, want unreadable: %q", tc.name, tc.format, err, tc.reason)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q, %q): %v", tc.name, tc.format, err)
			continue
		}
		if got := rr.Columns(); !reflect.DeepEqual(got, tc.columns) {
			t.Errorf("Open(%q, %q).Columns() = %q, want %q", tc.name, tc.format, got, tc.columns)
		}
		if _, err := rr.Next(); err != nil && err != io.EOF {
			t.Errorf("Open(%q, %q).Next: %v", tc.name, tc.format, err)
		}
		rr.Close()
	}
}

func TestOpenFolderIsUnreadable(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"sub.csv/a": []byte("x")})
	_, err := New(dir).Open(context.Background(), source.Unit{Name: "sub.csv"}, source.Options{})
	if !errors.Is(err, source.ErrUnreadable) {
		t.Fatalf("Open of a folder = %v, want ErrUnreadable", err)
	}
}

func TestOpenCanceled(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"a.csv": []byte("x,y\n")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(dir).Open(ctx, source.Unit{Name: "a.csv"}, source.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a canceled context = %v, want context.Canceled", err)
	}
}
