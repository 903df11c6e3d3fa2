package gates

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// contents maps every path under root (links not followed) to its bytes,
// "dir", or its link target: equal maps mean nothing was added, removed or
// changed, byte for byte.
func contents(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link→" + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "file:" + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameContents(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s: %s was %q, now %q", what, p, v, after[p])
		}
	}
	for p, v := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared (%q)", what, p, v)
		}
	}
}

// plantForeign fills a folder Lima never wrote.
func plantForeign(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range map[string]string{"precious.txt": "keep me\n", "sub/also.bin": "\x00\x01\x02 and me"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// An inventory handed to Teardown is checked again before anything is
// removed: an area that leaves its base — lexically through a parent link
// (..), even one that comes back in, or through a symbolic link in one of
// its parent folders — refuses the whole teardown (ErrTeardownBlocked),
// and nothing in the workspace or outside it changes.
func TestTeardownRefusesAreasLeavingTheirBase(t *testing.T) {
	cases := []struct {
		name, base, rel, why string
	}{
		{"parent link out of the lake", BaseWarehouse, "raw/../../platform.yaml", "not a path inside"},
		{"parent link out and back in", BaseWarehouse, "../lake/raw", "not a path inside"},
		{"parent link out of reports", BaseReports, "../elsewhere", "not a path inside"},
		{"through a linked folder of the lake", BaseWarehouse, "away/precious.txt", "leads outside"},
		{"through a linked folder of the lake, deeper", BaseWarehouse, "away/sub", "leads outside"},
		{"through a linked folder of the state", BaseState, "away/sub/also.bin", "leads outside"},
		{"through a linked folder of reports", BaseReports, "away/precious.txt", "leads outside"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ws := handWorkspace(t)
			foreign := plantForeign(t)
			sibling := filepath.Join(ws, "elsewhere")
			if err := os.MkdirAll(sibling, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sibling, "mine.txt"), []byte("a sibling of reports/"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, dir := range []string{"lake", ".lima", "reports"} {
				if err := os.Symlink(foreign, filepath.Join(ws, dir, "away")); err != nil {
					t.Fatal(err)
				}
			}
			inv, err := BuildInventory(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if inv.Blocked() {
				t.Fatalf("the honest inventory is blocked: %+v", inv.Findings)
			}
			inv.Areas = append(inv.Areas, AreaInventory{Kind: AreaRaw, Name: c.name, Base: c.base, Rel: c.rel, Path: c.rel, Exists: true})
			wsBefore, foreignBefore := contents(t, ws), contents(t, foreign)
			res, err := Teardown(context.Background(), inv, "shop", s)
			if !errors.Is(err, ErrTeardownBlocked) {
				t.Errorf("err %v, want ErrTeardownBlocked", err)
			}
			if !slices.ContainsFunc(res.Findings, func(f Finding) bool {
				return f.Status == Fail && strings.Contains(f.Detail, "nothing was removed") && strings.Contains(f.Detail, c.why)
			}) {
				t.Errorf("no finding says nothing was removed because the area is %q: %+v", c.why, res.Findings)
			}
			if len(res.Removed) != 0 || res.RemovedFiles != 0 {
				t.Errorf("removed %v (%d files)", res.Removed, res.RemovedFiles)
			}
			sameContents(t, "workspace", wsBefore, contents(t, ws))
			sameContents(t, "foreign folder", foreignBefore, contents(t, foreign))
		})
	}
}

// With reports/ or .lima a symbolic link to another folder, a teardown
// does not follow it: the folder it points to — here holding files Lima
// never wrote — survives byte for byte, and the inventory says so. The lake
// itself is still removed.
func TestTeardownKeepsWhatALinkedReportsOrStateFolderPointsTo(t *testing.T) {
	for _, linked := range []string{"reports", ".lima", "both"} {
		t.Run(linked, func(t *testing.T) {
			s, ws := handWorkspace(t)
			targets := map[string]string{}
			for _, dir := range []string{"reports", ".lima"} {
				if linked != "both" && linked != dir {
					continue
				}
				target := plantForeign(t)
				// What Lima wrote there through the link moves along.
				if err := os.CopyFS(target, os.DirFS(filepath.Join(ws, dir))); err != nil {
					t.Fatal(err)
				}
				if err := os.RemoveAll(filepath.Join(ws, dir)); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, filepath.Join(ws, dir)); err != nil {
					t.Fatal(err)
				}
				targets[dir] = target
			}
			before := map[string]map[string]string{}
			for dir, target := range targets {
				before[dir] = contents(t, target)
			}
			inv, err := BuildInventory(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			for dir := range targets {
				if !slices.ContainsFunc(inv.Kept, func(k KeptItem) bool { return k.Path == dir && strings.Contains(k.Reason, "symbolic link") }) {
					t.Errorf("the inventory does not list %s as a kept link: %+v", dir, inv.Kept)
				}
				for _, a := range inv.Areas {
					if a.Base == map[string]string{"reports": BaseReports, ".lima": BaseState}[dir] {
						t.Errorf("area %+v lies in the linked %s", a, dir)
					}
				}
			}
			res, err := Teardown(context.Background(), inv, "shop", s)
			if err != nil {
				t.Fatalf("teardown: %v %+v", err, res.Findings)
			}
			for dir, target := range targets {
				sameContents(t, "the target of "+dir, before[dir], contents(t, target))
				if fi, err := os.Lstat(filepath.Join(ws, dir)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the link %s: %v", dir, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(ws, "lake", "shop.db")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the lake's namespace folder survived: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "platform.yaml")); err != nil || string(b) != "plan" {
				t.Errorf("platform.yaml: %q %v", b, err)
			}
		})
	}
}
