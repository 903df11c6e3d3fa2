package flow_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/fileuri"
)

// TestMaintainInAFolderNamedWithPercent: in a workspace folder whose name
// a file: URI must escape ("pct%41 #lake"), maintain still knows the
// table's own files — an old Lima-named orphan is removed, not reported
// as foreign (the location's path was taken from the URI without
// unescaping it).
func TestMaintainInAFolderNamedWithPercent(t *testing.T) {
	ws0, p := workspace(t, nil, maintainPlan)
	odd := filepath.Join(filepath.Dir(ws0.Dir), "pct%41 #lake")
	if err := os.Rename(ws0.Dir, odd); err != nil {
		t.Fatal(err)
	}
	ws := flow.Workspace{Dir: odd}
	os.MkdirAll(filepath.Join(ws.Dir, "in"), 0o755)
	for k := 1; k <= 3; k++ {
		evFile(t, ws.Dir, k)
		if tr := runOnce(t, ws, p, flow.RunOptions{}).Result.Tables[0]; tr.Status != run.StatusLoaded {
			t.Fatalf("load %d: %s", k, tr.Status)
		}
	}
	_, tbl := loadIceberg(t, ws, p, "events")
	loc, err := fileuri.ToPath(tbl.Location())
	if err != nil {
		t.Fatalf("table location %q: %v", tbl.Location(), err)
	}
	orphan := filepath.Join(loc, "data", "00000-0-"+uuid.NewString()+".parquet")
	plant(t, orphan, 10*24*time.Hour)
	res, err := flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Expired != 1 || res[0].Removed != 1 || len(res[0].Foreign) != 0 {
		t.Fatalf("maintain in %q: %+v", odd, res)
	}
	if _, err := os.Lstat(orphan); !os.IsNotExist(err) {
		t.Errorf("the old orphan is still there: %v", err)
	}
}
