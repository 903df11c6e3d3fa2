package flow_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/s3test"
	"github.com/lima-lake/lima/internal/s3x"
)

// TestMaintainOnS3: the same retention on a lake on S3 (the loopback S3
// server): three incremental loads, maintain with retain_last 1 expires two
// snapshots and their manifest lists, the table reads back exactly, a
// rerun is recognised; an unreferenced object younger than the safety
// window stays (S3 cannot be given an old modification time, so removal
// itself is tested on disk).
func TestMaintainOnS3(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ws, p := workspace(t, nil, strings.Replace(maintainPlan, "sources:", "storage: {warehouse: 's3://"+bucket+"/lake'}\nsources:", 1))
	p.Maintenance.RetainLast = 1
	if err := os.MkdirAll(filepath.Join(ws.Dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	var wantRows, wantSum int64
	for k := 1; k <= 3; k++ {
		r, s := evFile(t, ws.Dir, k)
		wantRows, wantSum = wantRows+r, wantSum+s
		if tr := runOnce(t, ws, p, flow.RunOptions{}).Result.Tables[0]; tr.Status != run.StatusLoaded {
			t.Fatalf("load %d: %s", k, tr.Status)
		}
	}
	_, tbl := loadIceberg(t, ws, p, "events")
	if !strings.HasPrefix(tbl.Location(), "s3://") {
		t.Fatalf("location %s", tbl.Location())
	}
	prefix := strings.TrimPrefix(tbl.Location(), "s3://"+bucket+"/") + "/"
	fresh := prefix + "data/00000-0-" + uuid.NewString() + ".parquet"
	if err := cl.Put(context.Background(), bucket, fresh, strings.NewReader("junk"), nil); err != nil {
		t.Fatal(err)
	}
	res, err := flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Expired != 2 || res[0].Kept != 1 || res[0].FilesRemoved < 2 || res[0].Removed != 0 {
		t.Fatalf("maintain: %+v", res)
	}
	_, tbl = loadIceberg(t, ws, p, "events")
	if n, s := scanSum(t, tbl); n != wantRows || s != wantSum {
		t.Fatalf("read back %d rows, sum %d; want %d, %d", n, s, wantRows, wantSum)
	}
	objs, err := cl.List(context.Background(), bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	refs := referenced(t, tbl)
	for _, o := range objs {
		if !refs[path.Base(o.Key)] && o.Key != fresh {
			t.Errorf("unreferenced object left: %s", o.Key)
		}
	}
	if !slices.ContainsFunc(objs, func(o s3x.Object) bool { return o.Key == fresh }) {
		t.Error("the fresh object was removed")
	}
	if tr := runOnce(t, ws, p, flow.RunOptions{}).Result.Tables[0]; tr.Status != run.StatusAlreadyLoaded {
		t.Fatalf("rerun: %s", tr.Status)
	}
}
