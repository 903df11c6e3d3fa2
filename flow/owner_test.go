package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/s3test"
)

// ownerPlan is a one-table plan whose lake is warehouse (shared by the
// workspaces of a test).
func ownerPlan(warehouse string) string {
	return `schema_version: 1
platform: {prefix: shared}
storage: {warehouse: '` + warehouse + `'}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: long}
    load: {keys: [id]}
`
}

// lakeFiles is every regular file under dir with its bytes.
func lakeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return out
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if w, ok := after[k]; !ok {
			t.Errorf("%s: %s was removed", what, k)
		} else if w != v {
			t.Errorf("%s: %s changed", what, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s was written", what, k)
		}
	}
}

// refusedBy asserts a precondition failure (exit 4) naming the owner's
// folder and the way out.
func refusedBy(t *testing.T, what string, err error, owner string) {
	t.Helper()
	if !errors.Is(err, flow.ErrPrecondition) {
		t.Fatalf("%s: want a precondition failure (exit 4), got %v", what, err)
	}
	if !strings.Contains(err.Error(), owner) || !strings.Contains(err.Error(), "lima-tui adopt --plan") {
		t.Fatalf("%s: the refusal names neither the owner %s nor lima-tui adopt: %v", what, owner, err)
	}
}

func forceRun(ws flow.Workspace, p *plan.Plan) error {
	_, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true})
	return err
}

func ownership(t *testing.T, ws flow.Workspace, p *plan.Plan) gates.Finding {
	t.Helper()
	for _, f := range flow.Preconditions(context.Background(), ws, p) {
		if f.Name == "lake ownership" {
			return f
		}
	}
	t.Fatal("gate 2 has no lake ownership finding")
	return gates.Finding{}
}

// TestTwoWorkspacesOneLake (issue 17 scope 2): two workspaces on one
// warehouse and prefix. The first run claims the lake; the second
// workspace's run, compaction and teardown are refused with exit 4 and
// write nothing, and the first workspace's lake survives byte for byte.
func TestTwoWorkspacesOneLake(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	ws1, p1 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,10\n2,20\n")}, ownerPlan(lake))
	ws2, p2 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,99\n3,30\n")}, ownerPlan(lake))
	ctx := context.Background()

	if f := ownership(t, ws1, p1); f.Status != gates.Pass || !strings.Contains(f.Detail, "unclaimed") {
		t.Fatalf("gate 2 before the first run: %+v", f)
	}
	runOnce(t, ws1, p1, flow.RunOptions{})
	if f := ownership(t, ws1, p1); f.Status != gates.Pass || !strings.Contains(f.Detail, "owned by this workspace") {
		t.Fatalf("gate 2 of the owner: %+v", f)
	}
	before := lakeFiles(t, lake)
	if _, ok := before[filepath.Join("shared.db", gates.OwnerMarkerName)]; !ok {
		t.Fatalf("no ownership marker after the first run: %v", before)
	}

	f := ownership(t, ws2, p2)
	if f.Status != gates.Fail || !strings.Contains(f.Detail, ws1.Dir) || !strings.Contains(f.Fix, "lima-tui adopt") {
		t.Fatalf("gate 2 of the other workspace: %+v", f)
	}
	refusedBy(t, "the second workspace's run", forceRun(ws2, p2), ws1.Dir)
	sameFiles(t, "after the refused run", before, lakeFiles(t, lake))
	if _, err := os.Stat(ws2.IDPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused workspace got an id: %v", err)
	}
	_, err := flow.Compact(ctx, flow.CompactOptions{Workspace: ws2, Plan: p2})
	refusedBy(t, "the second workspace's compaction", err, ws1.Dir)
	_, err = flow.TeardownInventory(ctx, flow.TeardownOptions{Workspace: ws2, Plan: p2})
	refusedBy(t, "the second workspace's blast radius", err, ws1.Dir)
	_, _, err = flow.Teardown(ctx, flow.TeardownOptions{Workspace: ws2, Plan: p2}, "shared")
	refusedBy(t, "the second workspace's teardown", err, ws1.Dir)
	sameFiles(t, "after the refused teardown", before, lakeFiles(t, lake))
	if got := readLake(t, ws1, p1, "orders").column(t, "id", "amount"); len(got) != 2 || got["1"] != "10" || got["2"] != "20" {
		t.Fatalf("the owner's table after the refusals: %v", got)
	}

	// The owner tears its lake down: the blast radius names the marker,
	// which goes last, with the namespace's folder.
	inv, err := flow.TeardownInventory(ctx, flow.TeardownOptions{Workspace: ws1, Plan: p1})
	if err != nil {
		t.Fatal(err)
	}
	if marker := filepath.Join(lake, "shared.db", gates.OwnerMarkerName); inv.OwnerMarker != marker || !strings.Contains(inv.Summary(), marker+": this workspace's claim on the lake — removed last") {
		t.Fatalf("the owner's blast radius does not name the marker: %q\n%s", inv.OwnerMarker, inv.Summary())
	}
	if _, _, err := flow.Teardown(ctx, flow.TeardownOptions{Workspace: ws1, Plan: p1}, "shared"); err != nil {
		t.Fatal(err)
	}
	if left := lakeFiles(t, lake); len(left) != 0 {
		t.Fatalf("after the owner's teardown: %v", left)
	}
	// The lake is unclaimed again: the second workspace may claim it.
	runOnce(t, ws2, p2, flow.RunOptions{})
	refusedBy(t, "the first workspace's run after the second claimed the lake", forceRun(ws1, p1), ws2.Dir)
}

// TestAdoptMovesOwnership: adopt without the prefix changes nothing; with
// it the marker names this workspace (and the previous owner), whose verbs
// are then refused.
func TestAdoptMovesOwnership(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	ws1, p1 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,10\n")}, ownerPlan(lake))
	ws2, p2 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,10\n")}, ownerPlan(lake))
	ctx := context.Background()
	runOnce(t, ws1, p1, flow.RunOptions{})
	id1, _, err := flow.WorkspaceID(ws1)
	if err != nil || id1 == "" {
		t.Fatalf("workspace id: %q %v", id1, err)
	}
	if fi, err := os.Stat(ws1.IDPath()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the workspace id file: %v %v", fi.Mode(), err)
	}
	before := lakeFiles(t, lake)
	if _, err := flow.Adopt(ctx, ws2, p2, "shard"); !errors.Is(err, gates.ErrNotConfirmed) {
		t.Fatalf("adopt with a mistyped prefix: %v", err)
	}
	sameFiles(t, "after the unconfirmed adopt", before, lakeFiles(t, lake))
	res, err := flow.Adopt(ctx, ws2, p2, "shared")
	if err != nil {
		t.Fatal(err)
	}
	id2, _, _ := flow.WorkspaceID(ws2)
	if !res.Changed || res.Previous == nil || res.Previous.WorkspaceID != id1 || res.Owner.WorkspaceID != id2 || id2 == id1 {
		t.Fatalf("adopt: %+v (ids %s, %s)", res, id1, id2)
	}
	b, err := os.ReadFile(filepath.Join(lake, "shared.db", gates.OwnerMarkerName))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		WorkspaceID string `json:"workspace_id"`
		Workspace   string `json:"workspace"`
		AdoptedFrom struct {
			WorkspaceID string `json:"workspace_id"`
		} `json:"adopted_from"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.WorkspaceID != id2 || m.Workspace != ws2.Dir || m.AdoptedFrom.WorkspaceID != id1 {
		t.Fatalf("the marker after adopt: %s (%v)", b, err)
	}
	// The data files are untouched: only the marker changed.
	after := lakeFiles(t, lake)
	delete(before, filepath.Join("shared.db", gates.OwnerMarkerName))
	delete(after, filepath.Join("shared.db", gates.OwnerMarkerName))
	sameFiles(t, "adopt", before, after)

	refusedBy(t, "the former owner's run", forceRun(ws1, p1), ws2.Dir)
	_, _, err = flow.Teardown(ctx, flow.TeardownOptions{Workspace: ws1, Plan: p1}, "shared")
	refusedBy(t, "the former owner's teardown", err, ws2.Dir)
	if f := ownership(t, ws2, p2); f.Status != gates.Pass || !strings.Contains(f.Detail, "owned by this workspace") {
		t.Fatalf("gate 2 of the adopter: %+v", f)
	}
	if res, err := flow.Adopt(ctx, ws2, p2, "shared"); err != nil || res.Changed {
		t.Fatalf("adopting its own lake again: %+v %v", res, err)
	}
}

// TestTwoWorkspacesOneS3Lake: the same on the loopback S3 server, the
// marker an object at <warehouse>/<namespace>.db/.lima-owner.json.
func TestTwoWorkspacesOneS3Lake(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ctx := context.Background()
	wh := "s3://" + bucket + "/lake"
	ws1, p1 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,10\n2,20\n")}, ownerPlan(wh))
	ws2, p2 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,99\n")}, ownerPlan(wh))
	objects := func() map[string]string {
		t.Helper()
		objs, err := cl.List(ctx, bucket, "")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, o := range objs {
			r, err := cl.Get(ctx, bucket, o.Key)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[o.Key] = string(b)
		}
		return out
	}
	runOnce(t, ws1, p1, flow.RunOptions{})
	before := objects()
	if _, ok := before["lake/shared.db/"+gates.OwnerMarkerName]; !ok {
		t.Fatalf("no ownership marker on S3 after the first run: %d objects", len(before))
	}
	if f := ownership(t, ws2, p2); f.Status != gates.Fail || !strings.Contains(f.Detail, ws1.Dir) {
		t.Fatalf("gate 2 of the other workspace: %+v", f)
	}
	refusedBy(t, "the second workspace's run", forceRun(ws2, p2), ws1.Dir)
	_, _, err := flow.Teardown(ctx, flow.TeardownOptions{Workspace: ws2, Plan: p2}, "shared")
	refusedBy(t, "the second workspace's teardown", err, ws1.Dir)
	sameFiles(t, "S3 after the refused run and teardown", before, objects())

	if _, err := flow.Adopt(ctx, ws2, p2, "shared"); err != nil {
		t.Fatal(err)
	}
	refusedBy(t, "the former owner's run", forceRun(ws1, p1), ws2.Dir)
}

// TestTwoWorkspacesOneHiveLake: Hive-style tables keep the marker in
// <warehouse>/<namespace>/; the second workspace is refused and the
// owner's teardown removes the marker with the rest.
func TestTwoWorkspacesOneHiveLake(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	hive := strings.Replace(ownerPlan(lake), "platform: {prefix: shared}", "platform: {prefix: shared, pattern: hive}", 1)
	ws1, p1 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,10\n")}, hive)
	ws2, p2 := workspace(t, map[string][]byte{"a.csv": []byte("id,amount\n1,99\n")}, hive)
	ctx := context.Background()
	runOnce(t, ws1, p1, flow.RunOptions{})
	before := lakeFiles(t, lake)
	if _, ok := before[filepath.Join("shared", gates.OwnerMarkerName)]; !ok {
		t.Fatalf("no ownership marker in the Hive namespace folder: %v", before)
	}
	refusedBy(t, "the second workspace's run", forceRun(ws2, p2), ws1.Dir)
	_, _, err := flow.Teardown(ctx, flow.TeardownOptions{Workspace: ws2, Plan: p2}, "shared")
	refusedBy(t, "the second workspace's teardown", err, ws1.Dir)
	sameFiles(t, "after the refusals", before, lakeFiles(t, lake))
	if _, _, err := flow.Teardown(ctx, flow.TeardownOptions{Workspace: ws1, Plan: p1}, "shared"); err != nil {
		t.Fatal(err)
	}
	if left := lakeFiles(t, lake); len(left) != 0 {
		t.Fatalf("after the owner's teardown: %v", left)
	}
}
