package flow_test

// Gate 4 of a change-capture table (issue 13, scope 6): the applied state
// is recomputed from the table's history and compared with the lake — row
// count, control sums (amount: every numeric column but the key, by
// default),
// every row by key. The expected sums come from internal/cdcref, the
// tests' own replay of the change files, never from the code under test.

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/cdcref"
	"github.com/lima-lake/lima/reports"
)

// cdcSums is the reference's row count and sums of id and amount.
func cdcSums(ref *cdcref.Replay) (rows int, ids, amounts int64) {
	for id, v := range ref.Rows {
		a, err := strconv.ParseInt(v[1], 10, 64)
		if err != nil {
			panic(v)
		}
		ids += int64(id)
		amounts += a
	}
	return len(ref.Rows), ids, amounts
}

// checkCDCGate4 asserts gate 4's verdict on customers after a batch: it
// passed, its control totals are the reference's sums (source recomputed
// from the history, target the lake), every row matched, and nothing of
// the table is listed as not checked.
func checkCDCGate4(t *testing.T, step string, r *reports.Report, ref *cdcref.Replay) {
	t.Helper()
	tr := tableReport(t, r, "customers")
	if tr.Reconciliation != gates.Pass {
		t.Fatalf("%s: gate 4 %s: %+v", step, tr.Reconciliation, tr.Checks)
	}
	n, ids, amounts := cdcSums(ref)
	_ = ids // a key column is no control column by default
	for col, want := range map[string]int64{"amount": amounts} {
		ct, ok := tr.ControlTotals[col]
		w := strconv.FormatInt(want, 10)
		if !ok || ct.Source != w || ct.Target != w || ct.Variance != "0" || !ct.Exact || ct.SourceFrom != gates.SourceFromHistory {
			t.Fatalf("%s: control total of %s %+v (present %v), want %s from the history = lake", step, col, ct, ok, w)
		}
	}
	if c := g4check(t, tr, "row count"); !strings.Contains(c.Detail, "leave "+strconv.Itoa(n)+" row(s); the lake holds "+strconv.Itoa(n)) {
		t.Fatalf("%s: row count %+v, want %d", step, c, n)
	}
	if c := g4check(t, tr, gates.CDCStateCheck); c.Status != gates.Pass || !strings.HasPrefix(c.Detail, strconv.Itoa(n)+" of the lake's "+strconv.Itoa(n)+" row(s)") {
		t.Fatalf("%s: %+v", step, c)
	}
	for _, c := range tr.Checks {
		if c.Status == gates.Skip {
			t.Fatalf("%s: skipped %s: %s", step, c.Name, c.Detail)
		}
	}
	for _, s := range r.NotChecked {
		if strings.HasPrefix(s, "customers:") {
			t.Fatalf("%s: not checked: %s", step, s)
		}
	}
}

func writeChanges(t *testing.T, ws flow.Workspace, files map[string]string) {
	t.Helper()
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(ws.Dir, "in", "changes", name), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGate4CDCSumsFromHistory: three batches by hand — inserts, updates,
// deletes, a file whose changes interleave with another file's by
// ordering, a change behind the committed position (held back), a key
// deleted and inserted again — then random streams with every anomaly;
// after every batch gate 4 recomputes the state from the history and its
// totals equal the reference replay's.
func TestGate4CDCSumsFromHistory(t *testing.T) {
	ws, p := newCDCWorkspace(t)
	ref := cdcref.NewReplay()
	files := map[string]string{}
	batches := []map[string]string{
		{"c001.csv": "op,seq,id,name,amount\nI,1,1,a,100\nI,2,2,b,200\nI,3,3,c,300\nI,4,4,d,400\nU,5,2,b2,250\n"},
		// c002 sorts first by name, but its rows are at orderings 9 and 13
		// around c003's 10..12.
		{"c003.csv": "op,seq,id,name,amount\nD,10,1,,\nU,11,3,c2,333\nI,12,5,e,500\n",
			"c002.csv": "op,seq,id,name,amount\nU,13,4,dd,444\nU,9,3,cx,390\n"},
		// seq 3 is behind the committed position 13: held back.
		{"c004.csv": "op,seq,id,name,amount\nU,3,4,zz,999\nD,20,5,,\nI,21,1,a2,111\n"},
	}
	for b, batch := range batches {
		for n, c := range batch {
			files[n] = c
		}
		writeChanges(t, ws, files)
		ref.Apply(files)
		out := runOnce(t, ws, p, flow.RunOptions{})
		checkCDCGate4(t, "batch "+strconv.Itoa(b+1), out.Report, ref)
	}
	// By hand, as a check of the reference itself: 1 a2 111, 2 b2 250,
	// 3 c2 333, 4 dd 444.
	if n, ids, amounts := cdcSums(ref); n != 4 || ids != 10 || amounts != 1138 {
		t.Fatalf("reference: %d rows, sum(id) %d, sum(amount) %d; by hand 4, 10, 1138", n, ids, amounts)
	}

	// A full refresh applies every change file again from an empty table
	// in one batch and replaces the history: the reference is a new
	// replay of all files at once.
	full := cdcref.NewReplay()
	full.Apply(files)
	out := runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	checkCDCGate4(t, "full refresh", out.Report, full)
	// And a batch after it.
	files["c005.csv"] = "op,seq,id,name,amount\nU,30,2,b3,260\nI,31,6,f,600\n"
	writeChanges(t, ws, files)
	full.Apply(files)
	out = runOnce(t, ws, p, flow.RunOptions{})
	checkCDCGate4(t, "batch after the refresh", out.Report, full)

	// Random streams (internal/cdcref), every anomaly included.
	for s := uint64(0); s < 2; s++ {
		ws, p := newCDCWorkspace(t)
		ref := cdcref.NewReplay()
		rng := rand.New(rand.NewPCG(13, s))
		files := map[string]string{}
		nextFile, seq := 0, 100
		for b := 0; b < 4; b++ {
			cdcref.Gen(rng, files, &nextFile, &seq)
			writeChanges(t, ws, files)
			ref.Apply(files)
			out := runOnce(t, ws, p, flow.RunOptions{})
			if tr := tableReport(t, out.Report, "customers"); tr.Status == "nothing_to_load" {
				continue
			}
			checkCDCGate4(t, "stream "+strconv.FormatUint(s, 10)+" batch "+strconv.Itoa(b+1), out.Report, ref)
		}
	}
}

// tamperCustomers changes the lake behind Lima's back with iceberg-go:
// the row of key del is deleted, and rows (id, name, amount) are appended.
func tamperCustomers(t *testing.T, ws flow.Workspace, p *plan.Plan, del int64, rows [][3]string) {
	t.Helper()
	ctx := context.Background()
	_, tbl := loadIceberg(t, ws, p, "customers")
	tx := tbl.NewTransaction()
	if del != 0 {
		if err := tx.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), del), nil); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		id, _ := strconv.ParseInt(r[0], 10, 64)
		am, _ := strconv.ParseInt(r[2], 10, 64)
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(r[1])
		b.Field(2).(*array.Int64Builder).Append(am)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func recCheck(t *testing.T, r *gates.Reconciliation, name string) gates.Finding {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q: %+v", name, r.Checks)
	return gates.Finding{}
}

// TestGate4CDCSumsCatchTampering: the lake of a change-capture table is
// changed behind Lima's back — one value rewritten (key 3's amount 333 →
// 334), then a row appended — and gate 4 (lima-tui reconcile) fails on the
// sum of the column, naming both values and the variance, and on the row
// by key; the appended row fails the row count.
func TestGate4CDCSumsCatchTampering(t *testing.T) {
	ws, p := newCDCWorkspace(t)
	files := map[string]string{
		"c001.csv": "op,seq,id,name,amount\nI,1,1,a,100\nI,2,2,b,200\nI,3,3,c,300\n",
		"c002.csv": "op,seq,id,name,amount\nU,4,3,c2,333\nD,5,1,,\n",
	}
	writeChanges(t, ws, files)
	ref := cdcref.NewReplay()
	ref.Apply(files)
	out := runOnce(t, ws, p, flow.RunOptions{})
	checkCDCGate4(t, "load", out.Report, ref) // 2 b 200, 3 c2 333

	tamperCustomers(t, ws, p, 3, [][3]string{{"3", "c2", "334"}})
	recs, err := flow.Reconcile(context.Background(), ws, p, "")
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if r.Status != gates.Fail {
		t.Fatalf("gate 4 passed a rewritten amount: %+v", r.Checks)
	}
	c := recCheck(t, r, "sum(amount)")
	if c.Status != gates.Fail || !strings.Contains(c.Detail, "recomputed from the history 533, lake 534, variance 1 (exact)") {
		t.Fatalf("sum(amount): %+v", c)
	}
	if ct := r.ControlTotals["amount"]; ct.Source != "533" || ct.Target != "534" || ct.Variance != "1" {
		t.Fatalf("control total %+v", ct)
	}
	if c := recCheck(t, r, gates.CDCStateCheck); c.Status != gates.Fail || !strings.Contains(c.Detail, "key 3 differs") {
		t.Fatalf("%s: %+v", gates.CDCStateCheck, c)
	}
	if c := recCheck(t, r, "row count"); c.Status != gates.Pass {
		t.Fatalf("row count: %+v", c)
	}

	tamperCustomers(t, ws, p, 0, [][3]string{{"9", "z", "7"}})
	recs, err = flow.Reconcile(context.Background(), ws, p, "")
	if err != nil {
		t.Fatal(err)
	}
	r = recs[0]
	if c := recCheck(t, r, "row count"); c.Status != gates.Fail || !strings.Contains(c.Detail, "leave 2 row(s); the lake holds 3") {
		t.Fatalf("row count: %+v", c)
	}
	if c := recCheck(t, r, "sum(amount)"); c.Status != gates.Fail || !strings.Contains(c.Detail, "recomputed from the history 533, lake 541, variance 8") {
		t.Fatalf("sum(amount): %+v", c)
	}
	if c := recCheck(t, r, gates.CDCStateCheck); c.Status != gates.Fail || !strings.Contains(c.Detail, "key 9 is in the lake, not in the recomputed state") {
		t.Fatalf("%s: %+v", gates.CDCStateCheck, c)
	}
}
