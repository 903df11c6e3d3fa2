package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// A fixed exception of a change-capture table is not replayed as a table
// row (that would skip the order of changes and the history): the replay
// refuses with the way to re-send it, commits nothing, and the exception
// stays fixed.
func TestReplayRefusesAChangeCaptureTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := plan.Parse([]byte(cdcPlan), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The source is there (the change file the row came from), so a replay
	// could read the table's columns and commit.
	if err := os.MkdirAll(filepath.Join(dir, "in", "changes"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in", "changes", "c1.csv"), []byte("op,seq,id,name,amount\nI,1,6,a,4\nI,2,7,b,x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	st, err := ledger.OpenSQLite(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var name string
	for n := range p.Tables {
		name = n
	}
	ex := []ledger.Exception{{RunID: "run-1", LoadID: "ld-1", Table: name, Level: ledger.LevelRow, File: "changes/c1.csv", Line: 3,
		Raw: []byte("I,2,7,b,x"), Values: map[string]string{"op": "I", "seq": "2", "id": "7", "name": "b", "amount": "x"},
		Failures: []ledger.Failure{{Column: "amount", Value: "x", Rule: "type"}}}}
	if err := st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Publish(ctx, name, "ld-1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, ex[0].ID, map[string]string{"amount": "5"}, "test", ""); err != nil {
		t.Fatal(err)
	}
	trs, err := Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: sk, Store: st, RunID: "run-2", By: "test"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay: %v, %d tables", err, len(trs))
	}
	if trs[0].Err == nil || !strings.Contains(trs[0].Err.Error(), "change capture") || trs[0].Commit.SnapshotID != 0 {
		t.Fatalf("replay of a cdc table: %+v", trs[0])
	}
	if _, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), name}); err == nil {
		t.Fatal("the replay created or committed to the table")
	} else if !strings.Contains(err.Error(), catalog.ErrNoSuchTable.Error()) {
		t.Fatal(err)
	}
	e, err := st.Get(ctx, ex[0].ID)
	if err != nil || e.Status != ledger.StatusFixed {
		t.Fatalf("exception: %+v %v, want still fixed", e.Status, err)
	}
}
