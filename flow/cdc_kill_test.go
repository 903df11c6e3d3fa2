package flow_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/cdcref"
)

const cdcWorkspacePlan = `schema_version: 1
platform: {prefix: cdck}
sources: {in: {kind: files, path: in}}
tables:
  customers:
    source: {name: in, files: ["changes/*.csv"], format: csv, csv: {header: "yes"}}
    columns:
      - {name: id, type: long}
      - {name: name, type: string}
      - {name: amount, type: long}
    load:
      mode: cdc
      keys: [id]
      changes: {operation: op, ordering: seq}
`

// newCDCWorkspace writes an approved change-capture plan into a new folder.
func newCDCWorkspace(t *testing.T) (flow.Workspace, *plan.Plan) {
	t.Helper()
	dir := t.TempDir()
	p, err := plan.Parse([]byte(cdcWorkspacePlan), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: time.Now().UTC().Format(time.RFC3339), PlanHash: p.Hash()}
	ws := flow.Workspace{Dir: dir}
	if err := p.Write(ws.PlanPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "in", "changes"), 0o700); err != nil {
		t.Fatal(err)
	}
	return ws, p
}

// cdcLake reads the table (id → name, amount) and counts the history's
// versions, with iceberg-go directly.
func cdcLake(t *testing.T, ws flow.Workspace, p *plan.Plan) (map[int][2]string, int) {
	t.Helper()
	out := map[int][2]string{}
	sk, err := flow.OpenSink(context.Background(), ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	read := func(name string, fn func(row map[string]string)) {
		tbl, err := sk.Catalog().LoadTable(context.Background(), []string{p.Namespace(), name})
		if err != nil || tbl.CurrentSnapshot() == nil {
			return
		}
		_, it, err := tbl.Scan().ToArrowRecords(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			for r := 0; r < int(rec.NumRows()); r++ {
				row := map[string]string{}
				for c, f := range rec.Schema().Fields() {
					row[f.Name] = rec.Column(c).ValueStr(r)
				}
				fn(row)
			}
			rec.Release()
		}
	}
	read("customers", func(row map[string]string) {
		id, _ := strconv.Atoi(row["id"])
		if _, dup := out[id]; dup {
			t.Fatalf("key %d twice in the lake", id)
		}
		out[id] = [2]string{row["name"], row["amount"]}
	})
	versions := 0
	read("customers_history", func(row map[string]string) {
		if row["lima_op"] != "none" {
			versions++
		}
	})
	return out, versions
}

// TestCDCKillAndRestart runs the built lima-tui on random change streams
// and interrupts runs at random: SIGKILL after a random delay, or at the
// before-commit (history committed, table not) and after-commit fault
// points. After a restart the lake, its history and the exception ledger
// equal the reference replay.
func TestCDCKillAndRestart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lima-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/lima-tui").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	streams := 3
	if os.Getenv("LIMA_SOAK") == "1" {
		streams = 25
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LIMA_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (LIMA_SEED reproduces)", seed)
	kills := map[string]int{}
	for s := 0; s < streams; s++ {
		rng := rand.New(rand.NewPCG(seed, uint64(s)))
		ws, p := newCDCWorkspace(t)
		ref := cdcref.NewReplay()
		files := map[string]string{}
		nextFile, seq := 0, 100
		var wantExceptions int64
		wantByRule := map[string]int64{}
		for b := 0; b < 4; b++ {
			cdcref.Gen(rng, files, &nextFile, &seq)
			for name, c := range files {
				if err := os.WriteFile(filepath.Join(ws.Dir, "in", "changes", name), []byte(c), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want := ref.Apply(files)
			wantExceptions += want.Quarantined + want.Rules["change_file_seen_twice"]
			for r, n := range want.Rules {
				wantByRule[r] += n
			}
			mode := []string{"none", "sigkill", "before-commit", "after-commit"}[rng.IntN(4)]
			cmd := exec.Command(bin, "run", "--force", "--plan", ws.PlanPath(), "--json")
			cmd.Env = os.Environ()
			switch mode {
			case "before-commit", "after-commit":
				cmd.Env = append(cmd.Env, "LIMA_FAULTPOINT="+mode)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if mode == "sigkill" {
				time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
				_ = cmd.Process.Kill()
			}
			err := cmd.Wait()
			killed := false
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == -1 {
				killed = true
				kills[mode]++
			} else if err != nil {
				t.Fatalf("stream %d batch %d (%s): %v", s, b, mode, err)
			}
			if killed {
				// Restart with the same files: it must complete the batch.
				out, err := exec.Command(bin, "run", "--force", "--plan", ws.PlanPath(), "--json").CombinedOutput()
				if err != nil {
					t.Fatalf("stream %d batch %d: restart after %s: %v\n%s", s, b, mode, err, out)
				}
			}
			lake, versions := cdcLake(t, ws, p)
			if fmt.Sprint(lake) != fmt.Sprint(ref.Rows) {
				t.Fatalf("stream %d batch %d (%s, killed %v): lake %v\nreference %v", s, b, mode, killed, lake, ref.Rows)
			}
			if versions != ref.History {
				t.Fatalf("stream %d batch %d (%s, killed %v): history %d versions, reference %d", s, b, mode, killed, versions, ref.History)
			}
			st, err := flow.OpenLedger(context.Background(), ws, p)
			if err != nil {
				t.Fatal(err)
			}
			n, err := st.Count(context.Background(), ledger.Filter{Table: "customers"})
			pend, _ := st.PendingLoads(context.Background())
			byRule, rerr := st.CountBy(context.Background(), ledger.Filter{Table: "customers"}, ledger.ByRule)
			if rerr != nil || fmt.Sprint(byRule) != fmt.Sprint(wantByRule) {
				st.Close()
				t.Fatalf("stream %d batch %d (%s, killed %v): ledger by rule %v (%v), reference %v", s, b, mode, killed, byRule, rerr, wantByRule)
			}
			st.Close()
			if err != nil || n != wantExceptions || len(pend) != 0 {
				t.Fatalf("stream %d batch %d (%s, killed %v): ledger holds %d exceptions (%v), reference %d; pending %v", s, b, mode, killed, n, err, wantExceptions, pend)
			}
		}
	}
	t.Logf("%d streams; interrupted runs by kind: %v", streams, kills)
	if kills["before-commit"]+kills["after-commit"] == 0 && streams >= 3 {
		t.Log("no fault point fired in this seed")
	}
}
