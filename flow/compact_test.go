package flow_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/cdcref"
)

// dataFiles counts the data files and delete files of a table's current
// snapshot, with iceberg-go.
func dataFiles(t *testing.T, ws flow.Workspace, p *plan.Plan, name string) (files, deletes int) {
	t.Helper()
	sk, err := flow.OpenSink(context.Background(), ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(context.Background(), table.Identifier{p.Namespace(), name})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		deletes += len(task.DeleteFiles)
	}
	return len(tasks), deletes
}

// TestCompactionKeepsRowsAndSums: change capture over several batches
// leaves many small files and position deletes; compaction (iceberg-go's
// rewrite) drops the file count and keeps every row and sum, and the next
// change batch still starts from the committed position.
func TestCompactionKeepsRowsAndSums(t *testing.T) {
	ws, p := newCDCWorkspace(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	ref := cdcref.NewReplay()
	files := map[string]string{}
	nextFile, seq := 0, 100
	batch := func() {
		cdcref.Gen(rng, files, &nextFile, &seq)
		for name, c := range files {
			if err := os.WriteFile(filepath.Join(ws.Dir, "in", "changes", name), []byte(c), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ref.Apply(files)
		out := runOnce(t, ws, p, flow.RunOptions{})
		if code := out.Report.ExitCode(); code != 0 {
			t.Fatalf("run exit %d: %+v", code, out.Report.Tables)
		}
	}
	for i := 0; i < 6; i++ {
		batch()
	}
	// Make sure there is something to compact: a few more inserts.
	for i := 0; i < 3; i++ {
		seq++
		nextFile++
		files[fmt.Sprintf("c%04d.csv", nextFile)] = fmt.Sprintf("%s\nI,%d,%d,extra,%d\n", cdcref.Header, seq, 100+i, i)
		batch()
	}
	before, _ := cdcLake(t, ws, p)
	sum := func(m map[int][2]string) (s int64) {
		for _, v := range m {
			n, _ := strconv.ParseInt(v[1], 10, 64)
			s += n
		}
		return s
	}
	fb, db := dataFiles(t, ws, p, "customers")
	hb, _ := dataFiles(t, ws, p, "customers_history")
	res, err := flow.Compact(context.Background(), flow.CompactOptions{Workspace: ws, Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	fa, da := dataFiles(t, ws, p, "customers")
	ha, _ := dataFiles(t, ws, p, "customers_history")
	t.Logf("customers %d files (%d deletes) → %d (%d); history %d → %d; %+v", fb, db, fa, da, hb, ha, res)
	if fa >= fb || ha >= hb {
		t.Fatalf("file count did not drop: table %d → %d, history %d → %d", fb, fa, hb, ha)
	}
	after, versions := cdcLake(t, ws, p)
	if fmt.Sprint(after) != fmt.Sprint(before) || sum(after) != sum(before) || fmt.Sprint(after) != fmt.Sprint(ref.Rows) {
		t.Fatalf("rows changed by compaction:\nbefore %v\nafter  %v", before, after)
	}
	if versions != ref.History {
		t.Fatalf("history %d versions after compaction, reference %d", versions, ref.History)
	}
	// The next batches start from the committed position.
	batch()
	batch()
	got, versions := cdcLake(t, ws, p)
	if fmt.Sprint(got) != fmt.Sprint(ref.Rows) || versions != ref.History {
		t.Fatalf("after compaction and two more batches: lake %v\nreference %v", got, ref.Rows)
	}
}
