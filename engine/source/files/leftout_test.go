//go:build unix

package files

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

// List does not return a named pipe a glob matches (opening it could
// block forever) but names it, and LeftOut says so with a count; a pipe
// no glob matches is not mentioned.
func TestListNamesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"feed.csv", "other.pipe"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Skip("no named pipes:", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := New(dir)
	units, err := s.List(ctx, []string{"*.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || units[0].Name != "a.csv" {
		t.Fatalf("units %+v, want a.csv only", units)
	}
	if got := s.NotRegular(); !reflect.DeepEqual(got, []string{"feed.csv (named pipe)"}) {
		t.Errorf("NotRegular = %q", got)
	}
	want := []string{"files left out: 1 matched by the globs, not regular files (pipes, devices, sockets), not read: feed.csv (named pipe)"}
	if got := s.LeftOut(); !reflect.DeepEqual(got, want) {
		t.Errorf("LeftOut = %q, want %q", got, want)
	}
	// A later List forgets what an earlier one met.
	if _, err := s.List(ctx, []string{"a.*"}); err != nil {
		t.Fatal(err)
	}
	if got := s.LeftOut(); got != nil {
		t.Errorf("LeftOut after a List matching no pipe = %q", got)
	}
}
