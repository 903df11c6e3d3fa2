package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/internal/gluetest"
	mt "github.com/lima-lake/lima/internal/migratetest"
)

// TestMigrateVerb drives lima-tui migrate end to end against the local
// Glue endpoint: no method → the trade-offs and exit 2; in place over
// folder-only keys → refused (exit 4); rewrite without --confirm →
// validated, report written, Glue untouched; a mistyped --confirm →
// nothing switched; the exact name → switched; --rollback → the original
// definition byte for byte; --drop-backup needs the name too.
func TestMigrateVerb(t *testing.T) {
	mt.FakeAWSEnv(t)
	defer func(f func() bool) { migrateInteractive = f }(migrateInteractive)
	migrateInteractive = func() bool { return false }
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
	ws := filepath.Join(dir, "ws")
	base := []string{"migrate", "--dir", ws, "--glue", "sales.orders", "--glue-endpoint", srv.URL()}
	args := func(more ...string) []string { return append(append([]string(nil), base...), more...) }
	untouched := func(what string) {
		t.Helper()
		if raw, _ := srv.RawTableInput("sales", "orders"); !bytes.Equal(raw, orig) {
			t.Fatalf("%s changed the Glue entry", what)
		}
	}

	code, _, errs := mainCLI(args()...)
	if code != exitUsage || !strings.Contains(errs, "in-place:") || !strings.Contains(errs, "rewrite:") || !strings.Contains(errs, "writes no data") {
		t.Fatalf("no method: exit %d\n%s", code, errs)
	}
	code, _, errs = mainCLI(args("--method", "in-place")...)
	if code != exitPrecondition || !strings.Contains(errs, "--method rewrite") {
		t.Fatalf("in place over folder-only keys: exit %d\n%s", code, errs)
	}
	untouched("a refused in-place migration")

	code, out, errs := mainCLI(args("--method", "rewrite", "--partition", "month(order_day)", "--json")...)
	if code != exitOK || !strings.Contains(errs, "Validated; the Glue entry was not touched") {
		t.Fatalf("rewrite without --confirm: exit %d\n%s", code, errs)
	}
	if n := strings.Count(errs, "✓  region="); n != len(mt.Parts) {
		t.Errorf("%d partition lines with ✓, want %d:\n%s", n, len(mt.Parts), errs)
	}
	var rep struct {
		RunID      string `json:"run_id"`
		Status     string `json:"status"`
		Validation struct {
			OK         bool `json:"ok"`
			Partitions []struct {
				OK bool `json:"ok"`
			} `json:"partitions"`
		} `json:"validation"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.Status != "validated" || !rep.Validation.OK || len(rep.Validation.Partitions) != len(mt.Parts) {
		t.Fatalf("report: %+v", rep)
	}
	for _, f := range []string{"report.json", "report.md"} {
		st, err := os.Stat(filepath.Join(ws, "reports", rep.RunID, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, err, st)
		}
	}
	md, _ := os.ReadFile(filepath.Join(ws, "reports", rep.RunID, "report.md"))
	if strings.Count(string(md), "| ✓ | region=") != len(mt.Parts) || !strings.Contains(string(md), "Not checked") {
		t.Errorf("report.md:\n%s", md)
	}
	untouched("validation without --confirm")

	code, _, errs = mainCLI(args("--method", "rewrite", "--confirm", "sales.Orders")...)
	if code != exitError || !strings.Contains(errs, "validating it again") || !strings.Contains(errs, "letter case") {
		t.Fatalf("mistyped confirmation: exit %d\n%s", code, errs)
	}
	untouched("a mistyped confirmation")

	code, _, errs = mainCLI(args("--method", "rewrite", "--confirm", "sales.orders")...)
	if code != exitOK || !strings.Contains(errs, "Switched") {
		t.Fatalf("switch: exit %d\n%s", code, errs)
	}
	if tb, _ := srv.Table("sales", "orders"); tb.Parameters["table_type"] != "ICEBERG" {
		t.Fatalf("after the switch: %+v", tb.Parameters)
	}
	code, _, errs = mainCLI(args("--rollback")...)
	if code != exitOK || !strings.Contains(errs, "Restored") {
		t.Fatalf("rollback: exit %d\n%s", code, errs)
	}
	untouched("switch + rollback")
	code, _, errs = mainCLI(args("--drop-backup")...)
	if code != exitError || !strings.Contains(errs, "no confirmation was typed") || len(srv.Tables("sales")) != 2 {
		t.Fatalf("drop-backup without --confirm: exit %d %v\n%s", code, srv.Tables("sales"), errs)
	}
	code, _, errs = mainCLI(args("--drop-backup", "--confirm", "sales.orders")...)
	if code != exitOK || len(srv.Tables("sales")) != 1 {
		t.Fatalf("drop-backup: exit %d %v\n%s", code, srv.Tables("sales"), errs)
	}
	untouched("drop-backup")

	// On a terminal the name is typed at the prompt, after the validation.
	defer func(r io.Reader) { migrateStdin = r }(migrateStdin)
	migrateInteractive, migrateStdin = func() bool { return true }, strings.NewReader("sales.orders\n")
	code, _, errs = mainCLI(args("--method", "rewrite")...)
	if code != exitOK || !strings.Contains(errs, "type sales.orders") || !strings.Contains(errs, "Switched") {
		t.Fatalf("switch at the prompt: exit %d\n%s", code, errs)
	}
	if tb, _ := srv.Table("sales", "orders"); tb.Parameters["table_type"] != "ICEBERG" {
		t.Fatalf("after the prompted switch: %+v", tb.Parameters)
	}
}

// TestMigrateVerbRegister: a table of the embedded catalog registered in
// Glue by lima-tui migrate --iceberg --register-glue, after the typed name.
func TestMigrateVerbRegister(t *testing.T) {
	mt.FakeAWSEnv(t)
	defer func(f func() bool) { migrateInteractive = f }(migrateInteractive)
	migrateInteractive = func() bool { return false }
	dir := t.TempDir()
	root := filepath.Join(dir, "hive", "orders")
	mt.WriteHive(t, root, false)
	srv := gluetest.New(t)
	ws := filepath.Join(dir, "ws")
	// The embedded table: a folder migrated by rewrite.
	if code, _, errs := mainCLI("migrate", "--dir", ws, "--folder", root, "--method", "rewrite"); code != exitOK {
		t.Fatalf("folder rewrite: exit %d\n%s", code, errs)
	}
	base := []string{"migrate", "--dir", ws, "--iceberg", "migrated.orders", "--register-glue", "lake.orders", "--glue-endpoint", srv.URL(), "--region", "eu-central-1"}
	if code, _, errs := mainCLI(base...); code != exitError || !strings.Contains(errs, "no confirmation was typed") || len(srv.Tables("lake")) != 0 {
		t.Fatalf("without --confirm: exit %d\n%s", code, errs)
	}
	code, _, errs := mainCLI(append(base, "--confirm", "lake.orders")...)
	if code != exitOK || !strings.Contains(errs, "✓  row content hash") || !strings.Contains(errs, "Registered migrated.orders") {
		t.Fatalf("register: exit %d\n%s", code, errs)
	}
	if tb, ok := srv.Table("lake", "orders"); !ok || tb.Parameters["metadata_location"] == "" {
		t.Fatalf("the Glue entry: %v %+v", ok, tb)
	}
}

// TestMigrateVerbValidationFails: the Iceberg table built, then the Hive
// files rewritten with other values: the next run validates the table
// again, shows ✗ per partition and exits 3 with the report saying failed.
func TestMigrateVerbValidationFails(t *testing.T) {
	mt.FakeAWSEnv(t)
	defer func(f func() bool) { migrateInteractive = f }(migrateInteractive)
	migrateInteractive = func() bool { return false }
	dir := t.TempDir()
	root := filepath.Join(dir, "orders")
	mt.WriteHive(t, root, false)
	ws := filepath.Join(dir, "ws")
	args := []string{"migrate", "--dir", ws, "--folder", root, "--method", "rewrite", "--json"}
	if code, _, errs := mainCLI(args...); code != exitOK {
		t.Fatalf("first run: exit %d\n%s", code, errs)
	}
	defer func() { mt.NotePrefix = "n" }()
	mt.NotePrefix = "x"
	mt.WriteHive(t, root, false)
	code, out, errs := mainCLI(args...)
	if code != exitReconcile || strings.Count(errs, "✗  region=") != len(mt.Parts) || !strings.Contains(errs, "row content hash") {
		t.Fatalf("second run: exit %d\n%s", code, errs)
	}
	var rep struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Status != "failed" {
		t.Fatalf("report %v: %s", err, out)
	}
}
