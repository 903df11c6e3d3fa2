package flow_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/gluetest"
	mt "github.com/lima-lake/lima/internal/migratetest"
	"github.com/lima-lake/lima/reports"
)

// TestMigrateFileRemovedWhileAsked: validation passes, and while the
// person is being asked to type the name a Hive file goes away; the typed
// name is right, but the switch re-lists the files, refuses, and the Glue
// entry stays byte for byte; the report says why.
func TestMigrateFileRemovedWhileAsked(t *testing.T) {
	mt.FakeAWSEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "hive", "orders")
	mt.WriteHive(t, root, false)
	srv := gluetest.New(t)
	gc, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	mt.RegisterHive(t, ctx, gc, root)
	orig, _ := srv.RawTableInput("sales", "orders")
	victim := filepath.Join(root, "region=us", "order_day=2024-03-01", "part-00001.parquet")
	asked := false
	res, err := flow.Migrate(ctx, flow.MigrateOptions{Workspace: flow.Workspace{Dir: filepath.Join(dir, "ws")}, Glue: "sales.orders", Method: migrate.Rewrite,
		GlueEndpoint: srv.URL(), Confirm: func(_ context.Context, v *migrate.Validation) (string, error) {
			asked = true
			if !v.OK {
				t.Errorf("asked although validation failed")
			}
			return "sales.orders", os.Remove(victim)
		}})
	if !asked || !errors.Is(err, migrate.ErrChanged) {
		t.Fatalf("asked=%v, err=%v", asked, err)
	}
	if raw, _ := srv.RawTableInput("sales", "orders"); !bytes.Equal(raw, orig) || len(srv.Tables("sales")) != 1 {
		t.Fatalf("the refused switch changed Glue: %v", srv.Tables("sales"))
	}
	rep, err := os.ReadFile(filepath.Join(res.ReportDir, "report.json"))
	if err != nil || res.Report.Status != reports.MigrationNotSwitched || !bytes.Contains(rep, []byte(`"status": "not_switched"`)) || !bytes.Contains(rep, []byte("differ from the listing validated")) {
		t.Fatalf("report: %v %s", err, rep)
	}
}
