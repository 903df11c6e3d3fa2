package hivesink_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lima-lake/lima/engine/sink/hivesink"
)

// TestTableColumns: a table's columns as it was created (gate 3's
// renames ask whether a table is in the lake), and no table before.
func TestTableColumns(t *testing.T) {
	ctx := context.Background()
	sk, err := hivesink.Open(ctx, hivesink.Options{Warehouse: filepath.Join(t.TempDir(), "lake")})
	if err != nil {
		t.Fatal(err)
	}
	if cols, ok, err := sk.TableColumns("lake", "visits"); err != nil || ok || cols != nil {
		t.Fatalf("before the table: %v %v %v", cols, ok, err)
	}
	if _, err := sk.OpenTable(ctx, siteSpec()); err != nil {
		t.Fatal(err)
	}
	cols, ok, err := sk.TableColumns("lake", "visits")
	if err != nil || !ok || !slices.Equal(cols, []string{"id", "site", "note"}) {
		t.Fatalf("after: %v %v %v, want id, site, note", cols, ok, err)
	}
	if _, _, err := sk.TableColumns("lake", "../x"); err == nil {
		t.Error("a name with a path separator was read")
	}
}
