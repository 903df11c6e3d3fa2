package flow_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/flow"
)

// TestTableRunWindow: a table with its own run window refuses a run that
// includes it outside the window (naming it and how to run the rest), and
// loads inside it, with --force, or when the run leaves it out.
func TestTableRunWindow(t *testing.T) {
	file := filepath.Join(t.TempDir(), "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	dbExec(t, db, `CREATE TABLE big (id INTEGER PRIMARY KEY, qty INTEGER)`)
	dbExec(t, db, `CREATE TABLE small (id INTEGER PRIMARY KEY)`)
	dbExec(t, db, `INSERT INTO big VALUES (1, 10), (2, 20)`)
	dbExec(t, db, `INSERT INTO small VALUES (1)`)
	db.Close()
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: win}
sources:
  erp: {kind: sqlite, path: `+file+`}
schedule: {timezone: Asia/Seoul}
tables:
  big:
    source: {name: erp, table: big, window: "01:00-05:00"}
    load: {keys: [id]}
  small:
    source: {name: erp, table: small}
    load: {keys: [id]}
`)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	at := func(h int) func() time.Time {
		return func() time.Time { return time.Date(2026, 11, 30, h, 30, 0, 0, seoul) }
	}
	run := func(o flow.RunOptions) (*flow.Outcome, error) {
		o.Workspace, o.Plan = ws, p
		return flow.Run(context.Background(), o)
	}
	_, err = run(flow.RunOptions{Now: at(12)})
	if !errors.Is(err, flow.ErrOutsideWindow) || !strings.Contains(err.Error(), "big (window 01:00-05:00 Asia/Seoul") ||
		!strings.Contains(err.Error(), "--table small") || !strings.Contains(err.Error(), "nothing was read or written") {
		t.Fatalf("outside the window: %v", err)
	}
	for name, o := range map[string]flow.RunOptions{
		"inside the window":     {Now: at(2)},
		"forced":                {Now: at(12), Force: true},
		"without the big table": {Now: at(12), Tables: []string{"small"}},
	} {
		out, err := run(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, tr := range out.Result.Tables {
			if tr.Err != nil {
				t.Fatalf("%s: %s: %v", name, tr.Name, tr.Err)
			}
		}
	}
}
