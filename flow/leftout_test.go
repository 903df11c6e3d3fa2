//go:build unix

package flow_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// A named pipe matched by a table's glob is not read (it could block the
// run forever) but named with a count in the run's checks; a file named
// "..csv" that the glob matches is read like any other.
func TestNonRegularFilesAreFindings(t *testing.T) {
	ws, p := workspace(t, map[string][]byte{
		"a.csv":  []byte("id,amount,note\n1,1.00,a\n2,2.00,b\n"),
		"..csv":  []byte("id,amount,note\n3,3.00,c\n"),
		"~x.csv": []byte("id,amount,note\n4,4.00,d\n"),
	}, badInputPlan)
	if err := syscall.Mkfifo(filepath.Join(ws.Dir, "in", "feed.csv"), 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	if tr.RowsRead != 7 || tr.RowsLoaded != 4 || !tr.Balanced() || len(tr.FileExceptions) != 0 {
		t.Fatalf("read %d loaded %d, file exceptions %d; want the 4 rows of a.csv, ..csv and ~x.csv", tr.RowsRead, tr.RowsLoaded, len(tr.FileExceptions))
	}
	var found *gates.Finding
	for i, c := range tableReport(t, out.Report, "orders").Checks {
		if c.Name == "files left out" {
			found = &tableReport(t, out.Report, "orders").Checks[i]
		}
	}
	if found == nil || found.Status != gates.Warn || !strings.Contains(found.Detail, "1 matched by the globs") || !strings.Contains(found.Detail, "feed.csv (named pipe)") {
		t.Fatalf("files left out finding = %+v; want a warning naming feed.csv (named pipe)", found)
	}
}
