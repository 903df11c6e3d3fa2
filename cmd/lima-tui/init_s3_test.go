package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/s3test"
)

// TestInitS3Source: init accepts an S3 prefix as a source, records it in
// the plan, and gate 3 proposes from its objects the same tables as from
// the same files in a folder. An empty prefix is refused.
func TestInitS3Source(t *testing.T) {
	noTTY(t)
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(src, p)
			s3test.PutFile(t, cl, bucket, "exports/erp/"+filepath.ToSlash(rel), p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	uri := "s3://" + bucket + "/exports/erp"

	tables := func(dir string) []string {
		t.Helper()
		p, err := plan.Load(filepath.Join(dir, "platform.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ev, _, err := gates.Gather(context.Background(), p, gates.ProposeOptions{Workspace: dir})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ev {
			// A workbook's sheets are proposed from S3 as from a folder:
			// the sheet is part of what is compared (book.xlsx#Sheet),
			// with the rows and columns read as evidence.
			var cols []string
			for _, c := range e.Columns {
				cols = append(cols, c.Profile.Name)
			}
			names = append(names, fmt.Sprintf("%s %s rows=%d units=%v cols=%v", e.Name, strings.Join(e.Globs, ","), e.Rows, e.Units, cols))
		}
		sort.Strings(names)
		return names
	}

	s3dir := filepath.Join(ws, "on_s3")
	code, out, errs := call(t, cmdInit, "--source", uri, "--defaults", "--dir", s3dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, uri+": ") {
		t.Errorf("stdout does not report the listing:\n%s", out)
	}
	p, err := plan.Load(filepath.Join(s3dir, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range p.Sources {
		paths = append(paths, s.Kind+" "+s.Path)
	}
	if strings.Join(paths, ",") != plan.SourceFiles+" "+uri {
		t.Errorf("sources %v, want one files source at %s", paths, uri)
	}

	localDir := filepath.Join(ws, "local")
	if code, _, errs := call(t, cmdInit, "--source", src, "--defaults", "--dir", localDir); code != 0 {
		t.Fatalf("folder init: exit %d: %s", code, errs)
	}
	fromS3, fromFolder := tables(s3dir), tables(localDir)
	if len(fromFolder) < 2 || strings.Join(fromS3, ";") != strings.Join(fromFolder, ";") {
		t.Errorf("tables from S3 %v, from the folder %v", fromS3, fromFolder)
	}
	// The workbooks of the folder, their sheets read from the files
	// directly: each sheet is a table proposed from S3.
	books, _ := filepath.Glob(filepath.Join(src, "*.xlsx"))
	var sheets int
	for _, b := range books {
		ss, err := files.Sheets(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range ss {
			sheets++
			if !strings.Contains(strings.Join(fromS3, ";"), ".xlsx#"+sh+" ") {
				t.Errorf("sheet %s of %s not proposed from S3: %v", sh, filepath.Base(b), fromS3)
			}
		}
	}
	if sheets == 0 {
		t.Errorf("the erp data holds no workbook sheet to compare (%v)", books)
	}

	emptyDir := filepath.Join(ws, "empty")
	code, _, errs = call(t, cmdInit, "--source", "s3://"+bucket+"/nothing-here", "--defaults", "--dir", emptyDir)
	if code != exitUsage || !strings.Contains(errs, "no objects under this prefix") {
		t.Errorf("empty prefix: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(emptyDir, "platform.yaml")); !os.IsNotExist(err) {
		t.Error("a refused init wrote a plan")
	}
}
