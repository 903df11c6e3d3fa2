package run

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// replayWorkspace is the folder of a replay test: the plan parsed from
// yaml, in/a.csv holding csv, an Iceberg sink and a SQLite ledger in the
// folder, both closed when the test ends.
func replayWorkspace(t *testing.T, yaml, csv string) (string, *plan.Plan, *icesink.Sink, *ledger.SQLiteStore) {
	t.Helper()
	dir := t.TempDir()
	p, err := plan.Parse([]byte(yaml), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in", "a.csv"), []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	sk, err := icesink.Open(context.Background(), icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	st, err := ledger.OpenSQLite(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return dir, p, sk, st
}
