package flow_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/flow"
)

// The demo runs with reports/ and .lima each a symbolic link to a folder
// that also holds files Lima never wrote; `teardown` removes the lake but
// follows neither link: the planted files survive byte for byte.
func TestTeardownDoesNotFollowALinkedReportsOrStateFolder(t *testing.T) {
	ws, p := newDemo(t)
	planted := map[string]string{}
	for _, dir := range []string{"reports", ".lima"} {
		target := t.TempDir()
		link := filepath.Join(ws.Dir, dir)
		if _, err := os.Lstat(link); err == nil {
			if err := os.CopyFS(target, os.DirFS(link)); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{"notes.txt": "mine, not Lima's\n", "deep/keep.bin": "\x00\x1b[2J\xff"} {
			f := filepath.Join(target, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			planted[f] = body
		}
	}
	runOnce(t, ws, p, flow.RunOptions{})
	lake := filepath.Join(ws.Dir, "lake", p.Namespace()+".db")
	if _, err := os.Stat(lake); err != nil {
		t.Fatalf("the run made no lake: %v", err)
	}
	inv, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), p.Platform.Prefix)
	if err != nil {
		t.Fatalf("teardown: %v\n%s", err, res.Summary())
	}
	for f, body := range planted {
		if b, err := os.ReadFile(f); err != nil || string(b) != body {
			t.Errorf("%s: %q %v, was %q", f, b, err, body)
		}
	}
	for _, dir := range []string{"reports", ".lima"} {
		if fi, err := os.Lstat(filepath.Join(ws.Dir, dir)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the link %s: %v", dir, err)
		}
	}
	if _, err := os.Stat(lake); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lake survived: %v\n%s", err, inv.Summary())
	}
}
