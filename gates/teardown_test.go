package gates

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handWorkspace lays out, without a catalog or a state store, the files a
// plan "shop" leaves: 2 table files (10 + 20 bytes), raw/ with 1 file (5),
// the state (7), the lock (0) and one run report (3).
func handWorkspace(t *testing.T) (TeardownScope, string) {
	t.Helper()
	ws := t.TempDir()
	files := map[string]string{
		"platform.yaml":                          "plan",
		"data/in/orders.csv":                     "id\n1\n",
		"lake/shop.db/orders/data/a.parquet":     "0123456789",
		"lake/shop.db/orders/metadata/v1.json":   "01234567890123456789",
		"lake/raw/orders/2026-01-01.csv":         "id\n1\n",
		".lima/state.db":                         "1234567",
		".lima/run.lock":                         "",
		"reports/20260101T000000Z-aaaaaa/a.json": "{}\n",
	}
	for p, c := range files {
		full := filepath.Join(ws, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return TeardownScope{Prefix: "shop", Namespace: "shop", Workspace: ws, Warehouse: filepath.Join(ws, "lake"),
		StateDir: filepath.Join(ws, ".lima"), ReportsDir: filepath.Join(ws, "reports"), LockFile: filepath.Join(ws, ".lima", "run.lock"),
		CatalogFile: filepath.Join(ws, ".lima", "catalog.db"), CatalogKind: "sqlite", StateStore: "sqlite", StateWhere: ".lima/state.db",
		PlanTables: []string{"orders"}, Protected: []string{filepath.Join(ws, "platform.yaml"), filepath.Join(ws, "data", "in")}}, ws
}

func paths(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			r, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(r))
		}
		return err
	})
	return out
}

func TestInventoryCountsByHand(t *testing.T) {
	s, _ := handWorkspace(t)
	inv, err := BuildInventory(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	type area struct {
		kind, rel           string
		entries, files, byt int64
	}
	want := []area{
		{AreaNamespace, "shop.db", 1, 2, 30},
		{AreaRaw, "raw", 1, 1, 5},
		{AreaReports, ".", 1, 1, 3},
		{AreaState, "state.db", 0, 1, 7},
	}
	if len(inv.Areas) != len(want) {
		t.Fatalf("areas %+v", inv.Areas)
	}
	for i, w := range want {
		a := inv.Areas[i]
		if a.Kind != w.kind || a.Rel != w.rel || a.Entries != w.entries || a.Files != w.files || a.Bytes != w.byt {
			t.Errorf("area %d = %+v, want %+v", i, a, w)
		}
	}
	if inv.Total.Files != 5 || inv.Total.Bytes != 45 || inv.Blocked() || inv.Empty() {
		t.Errorf("totals %+v blocked %v", inv.Total, inv.Blocked())
	}
	if len(inv.Layers) != 2 || !inv.Layers[0].Exists || inv.Layers[1].Exists {
		t.Errorf("layers %+v", inv.Layers)
	}
}

func TestTeardownNeedsTheExactPrefix(t *testing.T) {
	for _, typed := range []string{"", "SHOP", "shop ", "sho", "shopping", "\u0073hop\u200b"} {
		s, ws := handWorkspace(t)
		inv, err := BuildInventory(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		before := strings.Join(paths(t, ws), "\n")
		res, err := Teardown(context.Background(), inv, typed, s)
		if !errors.Is(err, ErrNotConfirmed) || res.Status != Fail || len(res.Findings) != 1 || res.Findings[0].Fix != "type the project prefix exactly: shop" {
			t.Errorf("%q: err %v, result %+v", typed, err, res)
		}
		if after := strings.Join(paths(t, ws), "\n"); after != before {
			t.Errorf("%q: files changed:\n%s\n---\n%s", typed, before, after)
		}
	}
}

func TestTeardownRefusesATamperedInventory(t *testing.T) {
	cases := []AreaInventory{
		{Kind: AreaRaw, Name: "up", Base: BaseWarehouse, Rel: "../platform.yaml"},
		{Kind: AreaRaw, Name: "abs", Base: BaseWarehouse, Rel: "/etc"},
		{Kind: AreaRaw, Name: "whole lake", Base: BaseWarehouse, Rel: "."},
		{Kind: AreaRaw, Name: "no base", Base: "home", Rel: "x"},
	}
	for _, extra := range cases {
		s, ws := handWorkspace(t)
		inv, err := BuildInventory(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		inv.Areas = append(inv.Areas, extra)
		before := strings.Join(paths(t, ws), "\n")
		if _, err := Teardown(context.Background(), inv, "shop", s); !errors.Is(err, ErrTeardownBlocked) {
			t.Errorf("%s: err %v, want ErrTeardownBlocked", extra.Name, err)
		}
		if after := strings.Join(paths(t, ws), "\n"); after != before {
			t.Errorf("%s: files changed", extra.Name)
		}
	}
}

func TestTeardownByHand(t *testing.T) {
	s, ws := handWorkspace(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "lake", "history")); err != nil {
		t.Fatal(err)
	}
	inv, err := BuildInventory(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	released := 0
	s.Release = func() error { released++; return nil }
	res, err := Teardown(context.Background(), inv, "shop", s)
	if err != nil || res.Status != Pass || released != 1 {
		t.Fatalf("err %v, released %d, result %+v", err, released, res)
	}
	if res.RemovedFiles != 5 || res.RemovedBytes != 45 {
		t.Errorf("removed %d files, %d bytes; want 5, 45", res.RemovedFiles, res.RemovedBytes)
	}
	got := strings.Join(paths(t, ws), " ")
	if want := ". .lima .lima/run.lock data data/in data/in/orders.csv platform.yaml"; got != want {
		t.Errorf("left %q, want %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("the link target was touched: %v", err)
	}
	// Idempotent.
	inv2, err := BuildInventory(context.Background(), s)
	if err != nil || !inv2.Empty() {
		t.Fatalf("second inventory %+v %v", inv2, err)
	}
	if res2, err := Teardown(context.Background(), inv2, "shop", s); err != nil || res2.Status != Pass || res2.RemovedFiles != 0 {
		t.Errorf("second teardown %+v %v", res2, err)
	}
}

func TestHumanBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := HumanBytes(c.n); got != c.want {
			t.Errorf("HumanBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
