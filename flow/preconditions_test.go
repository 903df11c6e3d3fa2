package flow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

const preconditionPlan = `schema_version: 1
platform: {prefix: pre}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["orders*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(10,2)"}
    load: {keys: [id]}
`

var preconditionFiles = map[string][]byte{"orders.csv": []byte("id,amount\n1,10.50\n2,7.25\n")}

func findings(fs []gates.Finding) map[string]gates.Finding {
	m := map[string]gates.Finding{}
	for _, f := range fs {
		m[f.Name] = f
	}
	return m
}

// Before the first run nothing exists: every check passes and the check
// itself creates nothing. After a run the real catalog and state store are
// opened and the namespace is found with its table.
func TestPreconditionsAgainstTheRealCatalogAndStateStore(t *testing.T) {
	ws, p := workspace(t, preconditionFiles, preconditionPlan)
	fs := flow.Preconditions(context.Background(), ws, p)
	if failed := gates.FailedFindings(fs); len(failed) > 0 {
		t.Fatalf("fresh workspace: %+v", failed)
	}
	m := findings(fs)
	if d := m["namespace pre"].Detail; d != "namespace pre will be created with the catalog" {
		t.Errorf("namespace before the first run: %q", d)
	}
	for _, name := range []string{".lima", "lake", "reports"} {
		if _, err := os.Stat(filepath.Join(ws.Dir, name)); !os.IsNotExist(err) {
			t.Errorf("gate 2 created %s", name)
		}
	}
	runOnce(t, ws, p, flow.RunOptions{})
	m = findings(flow.Preconditions(context.Background(), ws, p))
	cat := filepath.Join(ws.Dir, ".lima", "catalog.db")
	if f := m["catalog"]; f.Status != gates.Pass || !strings.HasPrefix(f.Detail, "opened the SQLite catalog "+cat+" read-only (") {
		t.Errorf("catalog %+v", f)
	}
	if f := m["namespace pre"]; f.Detail != "namespace pre exists with 1 table(s)" {
		t.Errorf("namespace %+v", f)
	}
	if f := m["state store"]; f.Status != gates.Pass || f.Detail != "opened the SQLite state store "+filepath.Join(ws.Dir, ".lima", "state.db")+" (OpenLedger: schema migrated to the current version)" {
		t.Errorf("state store %+v", f)
	}
	// A catalog file that is not SQLite fails with the driver's word for it.
	if err := os.WriteFile(cat, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if f := findings(flow.Preconditions(context.Background(), ws, p))["catalog"]; f.Status != gates.Fail || !strings.Contains(f.Detail, "not a database") {
		t.Errorf("damaged catalog %+v", f)
	}
}

// Gate 2 against a real PostgreSQL state store: reachable through the DSN
// in the environment variable the plan names, and refused on a port where
// nothing listens — without the DSN (and its password) in the evidence.
func TestPreconditionsPostgresStateStore(t *testing.T) {
	dsn := pgDSN(t)
	if dsn == "" {
		t.Skip("no PostgreSQL (see the log line above)")
	}
	ws, p := workspace(t, preconditionFiles, preconditionPlan)
	const schema = "lima_gate2_test"
	p.Storage.State, p.Storage.StateDSNEnv, p.Storage.StateSchema = "postgres", "LIMA_GATE2_DSN", schema
	t.Cleanup(func() { dropSchema(t, dsn, schema) })

	t.Setenv("LIMA_GATE2_DSN", dsn)
	f := findings(flow.Preconditions(context.Background(), ws, p))["state store"]
	if f.Status != gates.Pass || f.Detail != "connected to the PostgreSQL state store from $LIMA_GATE2_DSN (schema lima_gate2_test; OpenLedger: schema migrated to the current version)" {
		t.Fatalf("reachable: %+v", f)
	}

	t.Setenv("LIMA_GATE2_DSN", "postgres://postgres:hunter2@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=3")
	f = findings(flow.Preconditions(context.Background(), ws, p))["state store"]
	if f.Status != gates.Fail {
		t.Fatalf("refused: %+v", f)
	}
	want := "PostgreSQL state store from $LIMA_GATE2_DSN: open the PostgreSQL state store from $LIMA_GATE2_DSN failed; TCP connect to 127.0.0.1:1: connect: connection refused"
	if f.Detail != want {
		t.Errorf("refused evidence\n got  %s\n want %s", f.Detail, want)
	}
	if !strings.HasPrefix(f.Fix, "export LIMA_GATE2_DSN with a DSN of a running PostgreSQL") {
		t.Errorf("fix %q", f.Fix)
	}
	if strings.Contains(f.Detail+f.Fix, "hunter2") {
		t.Error("the password reached the evidence")
	}

	t.Setenv("LIMA_GATE2_DSN", "")
	f = findings(flow.Preconditions(context.Background(), ws, p))["state store"]
	if f.Status != gates.Fail || f.Detail != "PostgreSQL state store from $LIMA_GATE2_DSN: state: postgres, but the environment variable LIMA_GATE2_DSN is empty; export the DSN there" {
		t.Errorf("unset: %+v", f)
	}
}

// flow.Run calls gate 2 first: a failed precondition is ErrPrecondition
// (exit 4) carrying the failed findings, and nothing is written — no lake,
// no state, no report.
func TestRunStopsAtAFailedPreconditionAndWritesNothing(t *testing.T) {
	ws, p := workspace(t, preconditionFiles, preconditionPlan)
	p.Tables["orders"].Source.Files = []string{"order*.csv", "returns*.csv"}
	_, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true})
	if !errors.Is(err, flow.ErrPrecondition) {
		t.Fatalf("err = %v, want ErrPrecondition", err)
	}
	var pe *flow.PreconditionError
	if !errors.As(err, &pe) || len(pe.Findings) != 1 || pe.Findings[0].Name != "table orders" {
		t.Fatalf("findings %+v", pe)
	}
	in := filepath.Join(ws.Dir, "in")
	want := `precondition failed: gate 2 found 1 problem(s), nothing was written — table orders: "returns*.csv" matched no file in ` + in +
		` (fix: correct tables.orders.source.files[1] in platform.yaml, or put the files in ` + in + `); lima-tui check shows every check`
	if err.Error() != want {
		t.Errorf("error\n got  %s\n want %s", err, want)
	}
	for _, name := range []string{".lima", "lake", "reports"} {
		if _, err := os.Stat(filepath.Join(ws.Dir, name)); !os.IsNotExist(err) {
			t.Errorf("a refused run created %s", name)
		}
	}
	// A run of other tables is not held up by this one.
	cp := *p.Tables["orders"]
	src := *cp.Source
	src.Files = []string{"orders.csv"}
	cp.Source = &src
	p.Tables["fine"] = &cp
	out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Tables: []string{"fine"}, Force: true})
	if err != nil {
		t.Fatalf("run --table fine: %v", err)
	}
	if len(out.Result.Tables) != 1 || out.Result.Tables[0].RowsLoaded != 2 {
		t.Fatalf("loaded %+v", out.Result.Tables)
	}
}
