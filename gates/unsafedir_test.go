package gates

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/internal/fileuri"
)

func TestUnsafeLakeFolder(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home-of-someone")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	rootLink := filepath.Join(tmp, "to-root")
	if err := os.Symlink("/", rootLink); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		"/":                              "root of the file system",
		"/etc":                           "inside the system folder /etc",
		"/etc/lima":                      "inside the system folder /etc",
		"/usr/local/lake":                "inside the system folder /usr",
		"/home":                          "the system folder /home",
		"/home/alice":                    "is a home folder",
		"/tmp":                           "the system folder /tmp",
		"/var":                           "the system folder /var",
		home:                             "your home folder",
		rootLink:                         "root of the file system",
		filepath.Join(tmp, "lake"):       "",
		filepath.Join(home, "acme/lake"): "",
		"/var/lib/lima/lake":             "",
		"/tmp/acme-lake":                 "",
		"/home/alice/lake":               "",
		"":                               "",
	} {
		got := UnsafeLakeFolder(dir)
		if (want == "") != (got == "") || (want != "" && !strings.Contains(got, want)) {
			t.Errorf("UnsafeLakeFolder(%q) = %q, want %q", dir, got, want)
		}
	}
}

// Gate 2 refuses a warehouse at the root, in a system folder or at a home
// folder before it writes its probe there.
func TestPreconditionsRefuseASystemWarehouse(t *testing.T) {
	for _, wh := range []string{"/", "file:///", "/etc/lake", "/home"} {
		p, pr := preWorkspace(t)
		pr.Warehouse = wh
		f := byName(Preconditions(context.Background(), p, pr))["target writable"]
		if f.Status != Fail || f.Fix != unsafeLakeFix {
			t.Errorf("warehouse %s: %s — %s (fix %q), want a failure", wh, f.Status, f.Detail, f.Fix)
		}
	}
	p, pr := preWorkspace(t)
	if f := byName(Preconditions(context.Background(), p, pr))["target writable"]; f.Status != Pass {
		t.Errorf("warehouse %s: %s — %s", pr.Warehouse, f.Status, f.Detail)
	}
}

// Gate 5 never tears down a home folder used as the warehouse: the
// inventory is blocked and every file there survives byte for byte.
func TestTeardownRefusesAHomeFolderWarehouse(t *testing.T) {
	s, ws := handWorkspace(t)
	home := filepath.Join(ws, "lake")
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, "diary.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := BuildInventory(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !inv.Blocked() {
		t.Fatalf("a home folder as warehouse is not blocked: %+v", inv.Findings)
	}
	before := strings.Join(paths(t, ws), "\n")
	if _, err := Teardown(context.Background(), inv, "shop", s); !errors.Is(err, ErrTeardownBlocked) {
		t.Fatalf("teardown: %v, want ErrTeardownBlocked", err)
	}
	if after := strings.Join(paths(t, ws), "\n"); after != before {
		t.Fatalf("files changed:\n%s\n---\n%s", before, after)
	}
	if b, err := os.ReadFile(filepath.Join(home, "diary.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("diary.txt: %q, %v", b, err)
	}
}

// Gate 2 reads a file:// warehouse through fileuri: an escaped URI of a
// folder named pct%41 is probed in that folder (not in pctA), and a URI
// with a raw # is refused without a probe written anywhere.
func TestPreconditionsReadEscapedFileURIs(t *testing.T) {
	p, pr := preWorkspace(t)
	dir := filepath.Join(t.TempDir(), "pct%41")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	uri, err := fileuri.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	pr.Warehouse = uri
	f := byName(Preconditions(context.Background(), p, pr))["target writable"]
	if f.Status != Pass || !strings.Contains(f.Detail, dir) {
		t.Errorf("warehouse %s: %s — %s, want a pass in %s", uri, f.Status, f.Detail, dir)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "pctA")); err == nil {
		t.Errorf("pctA was created beside %s", dir)
	}

	p, pr = preWorkspace(t)
	cwd := t.TempDir()
	t.Chdir(cwd)
	pr.Warehouse = "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "a#b"))
	f = byName(Preconditions(context.Background(), p, pr))["target writable"]
	if f.Status != Fail || !strings.Contains(f.Detail, "%23") || !strings.Contains(f.Fix, "%23") {
		t.Errorf("warehouse %s: %s — %s (fix %q), want a failure naming %%23", pr.Warehouse, f.Status, f.Detail, f.Fix)
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Errorf("the probe wrote into the working folder: %v", ents)
	}
}
