package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/cdcref"
)

// cdcPlan is a change-capture table: customers(id long key, name, amount)
// fed by changes/*.csv with columns op, seq, id, name, amount.
const cdcPlan = `schema_version: 1
platform: {prefix: cdc}
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
      changes: {operation: op, ordering: seq, ops: {insert: I, update: U, delete: D}}
`

type cdcEnv struct {
	dir  string
	plan *plan.Plan
	sk   *icesink.Sink
	runs int
}

func newCDCEnv(t testing.TB) *cdcEnv {
	t.Helper()
	dir := t.TempDir()
	p, err := plan.Parse([]byte(cdcPlan), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "in", "changes"), 0o700); err != nil {
		t.Fatal(err)
	}
	sk, err := icesink.Open(context.Background(), icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	return &cdcEnv{dir: dir, plan: p, sk: sk}
}

func (e *cdcEnv) write(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, "in", "changes", name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *cdcEnv) run(t testing.TB) *TableResult {
	t.Helper()
	e.runs++
	res, err := Load(context.Background(), Options{Workspace: e.dir, Plan: e.plan, Sink: e.sk,
		Quarantine: &JSONLQuarantine{Dir: filepath.Join(e.dir, "q")}, RunID: fmt.Sprintf("run-%d", e.runs), BatchRows: 7})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Tables[0]
	if tr.Err != nil {
		t.Fatalf("run %d: %v", e.runs, tr.Err)
	}
	return tr
}

// lake reads a table back: id → "name|amount".
func (e *cdcEnv) lake(t testing.TB, name string, cols []string) []map[string]string {
	t.Helper()
	// Read with iceberg-go itself, not the sink's scan.
	tbl, err := e.sk.Catalog().LoadTable(context.Background(), table.Identifier{"cdc", name})
	if err != nil {
		if strings.Contains(err.Error(), "not") {
			return nil
		}
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	var opts []table.ScanOption
	if len(cols) > 0 {
		opts = append(opts, table.WithSelectedFields(cols...))
	}
	_, it, err := tbl.Scan(opts...).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			row := map[string]string{}
			for c, f := range rec.Schema().Fields() {
				a := rec.Column(c)
				if a.IsNull(r) {
					row[f.Name] = "NULL"
				} else {
					row[f.Name] = a.(interface{ ValueStr(int) string }).ValueStr(r)
				}
			}
			out = append(out, row)
		}
		rec.Release()
	}
	return out
}

func TestCDCUpdateDeleteAndHistory(t *testing.T) {
	e := newCDCEnv(t)
	e.write(t, "c001.csv", "op,seq,id,name,amount\nI,1,1,ann,10\nI,2,2,bob,20\nI,3,3,cy,30\nU,4,1,ann,11\n")
	tr := e.run(t)
	// 4 read: keys 1,2,3 applied (3 loaded), the insert of 1 superseded by its update.
	if tr.RowsRead != 5 || tr.RowsLoaded != 3 || tr.SkippedBy[SkipSuperseded] != 1 || tr.SkippedBy[SkipHeader] != 1 || tr.RowsQuarantined != 0 {
		t.Fatalf("first run: read %d loaded %d skipped %v quarantined %d", tr.RowsRead, tr.RowsLoaded, tr.SkippedBy, tr.RowsQuarantined)
	}
	e.write(t, "c002.csv", "op,seq,id,name,amount\nU,5,2,bob,25\nD,6,3,,\nU,7,9,nobody,1\nI,8,1,dup,1\nD,9,4,,\nI,10,4,dee,40\n")
	tr = e.run(t)
	if tr.RowsLoaded != 3 || tr.RowsQuarantined != 3 || tr.QuarantinedBy[RuleCDCUpdateUnknown] != 1 ||
		tr.QuarantinedBy[RuleCDCInsertExisting] != 1 || tr.QuarantinedBy[RuleCDCDeleteBeforeInsert] != 1 {
		t.Fatalf("second run: loaded %d quarantined %d %v", tr.RowsLoaded, tr.RowsQuarantined, tr.QuarantinedBy)
	}
	if tr.Commit.Deleted != 2 {
		t.Fatalf("deleted %d rows, want 2 (old 2 and 3)", tr.Commit.Deleted)
	}
	got := map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	want := map[string]string{"1": "ann|11", "2": "bob|25", "4": "dee|40"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake %v, want %v", got, want)
	}
	// History holds every version: 1 inserted then updated, 2 inserted then
	// updated, 3 inserted then deleted, 4 inserted.
	var versions []string
	for _, r := range e.lake(t, "customers_history", nil) {
		versions = append(versions, r["id"]+":"+r["lima_op"]+":"+r["amount"]+":"+r["lima_ordering"])
		if !strings.HasPrefix(r["lima_source"], "changes/c00") || r["lima_load_id"] == "" || r["lima_valid_from"] == "NULL" {
			t.Fatalf("history row without lineage: %v", r)
		}
	}
	sort.Strings(versions)
	wantV := []string{"1:insert:10:1", "1:update:11:4", "2:insert:20:2", "2:update:25:5", "3:delete:NULL:6", "3:insert:30:3", "4:insert:40:10"}
	if fmt.Sprint(versions) != fmt.Sprint(wantV) {
		t.Fatalf("history %v\nwant %v", versions, wantV)
	}
	// A rerun reads nothing and changes nothing.
	tr = e.run(t)
	if tr.Status != StatusNothingToLoad || tr.RowsRead != 0 {
		t.Fatalf("rerun: %s read %d", tr.Status, tr.RowsRead)
	}
	// The same content under another name is seen twice; a backwards
	// sequence is held back.
	e.write(t, "c003.csv", "op,seq,id,name,amount\nU,5,2,bob,25\nD,6,3,,\nU,7,9,nobody,1\nI,8,1,dup,1\nD,9,4,,\nI,10,4,dee,40\n")
	e.write(t, "c004.csv", "op,seq,id,name,amount\nU,3,1,old,1\nU,11,1,new,12\n")
	tr = e.run(t)
	if tr.QuarantinedBy[RuleCDCFileSeenTwice] != 1 || tr.QuarantinedBy[RuleCDCBackwards] != 1 || tr.RowsLoaded != 1 || !tr.Balanced() {
		t.Fatalf("third run: %v loaded %d balanced %v", tr.QuarantinedBy, tr.RowsLoaded, tr.Balanced())
	}
}

// runStreams applies n random change streams and compares the lake with
// the reference replay after every run.
func runStreams(t *testing.T, n int, seed uint64) {
	total := map[string]int64{}
	for s := 0; s < n; s++ {
		rng := rand.New(rand.NewPCG(seed, uint64(s)))
		e := newCDCEnv(t)
		ref := cdcref.NewReplay()
		files := map[string]string{}
		nextFile, seq := 0, 100
		batches := 2 + rng.IntN(3)
		for b := 0; b < batches; b++ {
			cdcref.Gen(rng, files, &nextFile, &seq)
			for name, c := range files {
				e.write(t, name, c)
			}
			want := ref.Apply(files)
			tr := e.run(t)
			got := cdcref.Counts{Read: tr.RowsRead, Loaded: tr.RowsLoaded, Skipped: tr.RowsSkipped, Quarantined: tr.RowsQuarantined, Rules: tr.QuarantinedBy}
			if os.Getenv("CDC_DEBUG") != "" {
				t.Logf("stream %d batch %d status %s commit %+v", s, b, tr.Status, tr.Commit)
			}
			if !tr.Balanced() {
				t.Fatalf("stream %d batch %d: unbalanced %+v", s, b, got)
			}
			if got.Read != want.Read || got.Loaded != want.Loaded || got.Skipped != want.Skipped || got.Quarantined != want.Quarantined {
				t.Fatalf("stream %d batch %d: counts %+v, reference %+v", s, b, got, want)
			}
			for rule, n := range want.Rules {
				if tr.QuarantinedBy[rule] != n {
					t.Fatalf("stream %d batch %d: %s %d, reference %d (all: %v vs %v)", s, b, rule, tr.QuarantinedBy[rule], n, tr.QuarantinedBy, want.Rules)
				}
				total[rule] += n
			}
			lake := map[int][2]string{}
			for _, r := range e.lake(t, "customers", nil) {
				id, _ := strconv.Atoi(r["id"])
				if _, dup := lake[id]; dup {
					t.Fatalf("stream %d batch %d: key %d twice in the lake", s, b, id)
				}
				lake[id] = [2]string{r["name"], r["amount"]}
			}
			if fmt.Sprint(lake) != fmt.Sprint(ref.Rows) {
				t.Fatalf("stream %d batch %d: lake %v\nreference %v", s, b, lake, ref.Rows)
			}
			h := 0
			for _, r := range e.lake(t, "customers_history", []string{"id", "lima_op"}) {
				if r["lima_op"] != "none" { // "none" marks a batch that applied nothing
					h++
				}
			}
			if h != ref.History {
				t.Fatalf("stream %d batch %d: history holds %d versions, reference %d", s, b, h, ref.History)
			}
		}
	}
	// Every anomaly occurred somewhere.
	for _, rule := range []string{RuleCDCInvalid, RuleCDCFileSeenTwice, RuleCDCBackwards, RuleCDCUpdateUnknown, RuleCDCDeleteUnknown, RuleCDCDeleteBeforeInsert, RuleCDCInsertExisting} {
		if total[rule] == 0 && n >= 20 {
			t.Errorf("no stream produced %s", rule)
		}
	}
	t.Logf("%d streams; anomalies %v", n, total)
}

// TestCDCRandomStreams: 30 streams in make test, 300 under LIMA_SOAK=1
// (make soak). Every stream runs 2–4 batches; after each the lake, the
// history and the counts must equal the reference replay.
func TestCDCRandomStreams(t *testing.T) {
	n := 30
	if os.Getenv("LIMA_SOAK") == "1" {
		n = 300
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LIMA_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (LIMA_SEED=%d reproduces)", seed, seed)
	runStreams(t, n, seed)
}

// Change files in NDJSON are read through the same reader as any load.
// Keys 1 (insert, update) and 2 (insert, delete) are touched: two applied
// changes reach the table state, two are superseded within the batch.
func TestCDCFromNDJSON(t *testing.T) {
	e := newCDCEnv(t)
	p, err := plan.Parse([]byte(strings.Replace(strings.Replace(cdcPlan, `changes/*.csv`, `changes/*.ndjson`, 1), `format: csv, csv: {header: "yes"}`, `format: ndjson`, 1)), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.plan = p
	e.write(t, "a.ndjson", `{"op":"I","seq":1,"id":1,"name":"ann","amount":10}
{"op":"I","seq":2,"id":2,"name":"bob","amount":20}
{"op":"U","seq":3,"id":1,"name":"ann","amount":15}
`)
	e.write(t, "b.ndjson", `{"op":"D","seq":4,"id":2}
{"op":"U","seq":5,"id":3,"name":"x","amount":1}
`)
	tr := e.run(t)
	if tr.RowsRead != 5 || tr.RowsLoaded != 2 || tr.SkippedBy[SkipSuperseded] != 2 || tr.QuarantinedBy[RuleCDCUpdateUnknown] != 1 || !tr.Balanced() {
		t.Fatalf("read %d loaded %d skipped %v held %v", tr.RowsRead, tr.RowsLoaded, tr.SkippedBy, tr.QuarantinedBy)
	}
	got := map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	if fmt.Sprint(got) != "map[1:ann|15]" {
		t.Fatalf("lake %v", got)
	}
}

// Change files in Parquet (as DMS writes them): typed columns, the same
// semantics.
func TestCDCFromParquet(t *testing.T) {
	e := newCDCEnv(t)
	p, err := plan.Parse([]byte(strings.Replace(strings.Replace(cdcPlan, `changes/*.csv`, `changes/*.parquet`, 1), `format: csv, csv: {header: "yes"}`, `format: parquet`, 1)), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.plan = p
	sc := arrow.NewSchema([]arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String}, {Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	write := func(name string, rows [][]any) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for _, r := range rows {
			b.Field(0).(*array.StringBuilder).Append(r[0].(string))
			b.Field(1).(*array.Int64Builder).Append(int64(r[1].(int)))
			b.Field(2).(*array.Int64Builder).Append(int64(r[2].(int)))
			if r[3] == nil {
				b.Field(3).AppendNull()
				b.Field(4).AppendNull()
			} else {
				b.Field(3).(*array.StringBuilder).Append(r[3].(string))
				b.Field(4).(*array.Int64Builder).Append(int64(r[4].(int)))
			}
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		f, err := os.Create(filepath.Join(e.dir, "in", "changes", name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	write("a.parquet", [][]any{{"I", 1, 1, "ann", 10}, {"I", 2, 2, "bob", 20}, {"I", 3, 3, "cy", 30}})
	if tr := e.run(t); tr.RowsLoaded != 3 {
		t.Fatalf("first batch loaded %d", tr.RowsLoaded)
	}
	write("b.parquet", [][]any{{"U", 4, 2, "bob", 21}, {"D", 5, 3, nil, nil}, {"I", 6, 1, "again", 1}})
	tr := e.run(t)
	if tr.RowsLoaded != 2 || tr.QuarantinedBy[RuleCDCInsertExisting] != 1 || tr.Commit.Deleted != 2 || !tr.Balanced() {
		t.Fatalf("second batch loaded %d held %v deleted %d", tr.RowsLoaded, tr.QuarantinedBy, tr.Commit.Deleted)
	}
	got := map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	if fmt.Sprint(got) != "map[1:ann|10 2:bob|21]" {
		t.Fatalf("lake %v", got)
	}
}

// failDelta makes the table's CommitDelta fail after the history commit:
// the state a crash between the two commits leaves.
type failDelta struct {
	sink.Sink
}

type failDeltaTable struct{ *icesink.Table }

func (failDeltaTable) CommitDelta(context.Context, sink.Staged, sink.CommitProps, sink.Keys) (sink.Commit, error) {
	return sink.Commit{}, errors.New("injected: the table commit did not happen")
}

func (f failDelta) OpenTable(ctx context.Context, spec sink.TableSpec) (sink.Table, error) {
	t, err := f.Sink.OpenTable(ctx, spec)
	if err != nil || spec.Name != "customers" {
		return t, err
	}
	return failDeltaTable{t.(*icesink.Table)}, nil
}

// A batch whose history committed but whose table did not is completed
// first, exactly as it was, even when new files arrived meanwhile; the new
// files follow in the next run. The result equals the reference applying
// the two batches one after the other.
func TestCDCCompletesABatchCommittedOnlyToHistory(t *testing.T) {
	e := newCDCEnv(t)
	ref := cdcref.NewReplay()
	files := map[string]string{
		"c0001.csv": cdcref.Header + "\nI,10,1,a,1\nI,11,2,b,2\nI,12,3,c,3\n",
		"c0002.csv": cdcref.Header + "\nU,13,1,a2,10\nD,14,2,,\n",
	}
	for n, c := range files {
		e.write(t, n, c)
	}
	ref.Apply(files)
	res, err := Load(context.Background(), Options{Workspace: e.dir, Plan: e.plan, Sink: failDelta{e.sk},
		Quarantine: &JSONLQuarantine{Dir: filepath.Join(e.dir, "q")}, RunID: "crashed"})
	if err != nil || res.Tables[0].Err == nil {
		t.Fatalf("the injected failure did not fail the load: %v", err)
	}
	if lake := e.lake(t, "customers", nil); len(lake) != 0 {
		t.Fatalf("the table has rows after the failed commit: %v", lake)
	}
	// Meanwhile a new file arrives; it sorts before the pending ones by
	// ordering, which must not change how the pending batch is applied.
	files["c0003.csv"] = cdcref.Header + "\nU,5,3,early,5\nI,20,4,d,4\n"
	e.write(t, "c0003.csv", files["c0003.csv"])
	tr := e.run(t)
	if tr.RowsRead != 7 || len(tr.Files) != 2 {
		t.Fatalf("the completing run read %d rows of %v, want the 2 pending files (7 rows with headers)", tr.RowsRead, tr.Files)
	}
	tr = e.run(t)
	want := ref.Apply(files)
	if tr.RowsRead != want.Read || tr.QuarantinedBy["change_sequence_backwards"] != want.Rules["change_sequence_backwards"] {
		t.Fatalf("the next run: read %d held %v; reference %+v", tr.RowsRead, tr.QuarantinedBy, want)
	}
	lake := map[int][2]string{}
	for _, r := range e.lake(t, "customers", nil) {
		id, _ := strconv.Atoi(r["id"])
		lake[id] = [2]string{r["name"], r["amount"]}
	}
	if fmt.Sprint(lake) != fmt.Sprint(ref.Rows) {
		t.Fatalf("lake %v\nreference %v", lake, ref.Rows)
	}
	versions := 0
	for _, r := range e.lake(t, "customers_history", []string{"lima_op"}) {
		if r["lima_op"] != "none" {
			versions++
		}
	}
	if versions != ref.History {
		t.Fatalf("history %d versions, reference %d", versions, ref.History)
	}
}

// TestCDCMicroBatchAppliesOnlyItsFiles: a watcher's micro-batch (OnlyFiles)
// applies its own change files; the others wait for the next run, and the
// end state equals applying everything at once.
func TestCDCMicroBatchAppliesOnlyItsFiles(t *testing.T) {
	e := newCDCEnv(t)
	e.write(t, "c001.csv", "op,seq,id,name,amount\nI,1,1,ann,10\nI,2,2,bob,20\n")
	e.write(t, "c002.csv", "op,seq,id,name,amount\nU,3,1,ann,11\n")
	e.write(t, "c003.csv", "op,seq,id,name,amount\nD,4,2,,\nI,5,3,cy,30\n")
	e.runs++
	res, err := Load(context.Background(), Options{Workspace: e.dir, Plan: e.plan, Sink: e.sk,
		Quarantine: &JSONLQuarantine{Dir: filepath.Join(e.dir, "q")}, RunID: "mb-1", BatchRows: 7,
		OnlyFiles: map[string][]string{"customers": {"changes/c001.csv"}}})
	if err != nil || res.Tables[0].Err != nil {
		t.Fatal(err, res.Tables[0].Err)
	}
	if tr := res.Tables[0]; tr.RowsRead != 3 || tr.RowsLoaded != 2 {
		t.Fatalf("micro-batch of c001: read %d loaded %d, want 3 and 2", tr.RowsRead, tr.RowsLoaded)
	}
	got := map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	if fmt.Sprint(got) != fmt.Sprint(map[string]string{"1": "ann|10", "2": "bob|20"}) {
		t.Fatalf("after c001 only: %v", got)
	}
	tr := e.run(t)
	if tr.RowsLoaded != 3 || !tr.Balanced() {
		t.Fatalf("the rest: loaded %d balanced %v", tr.RowsLoaded, tr.Balanced())
	}
	got = map[string]string{}
	for _, r := range e.lake(t, "customers", nil) {
		got[r["id"]] = r["name"] + "|" + r["amount"]
	}
	// By hand: 1 updated to 11, 2 deleted, 3 inserted.
	if fmt.Sprint(got) != fmt.Sprint(map[string]string{"1": "ann|11", "3": "cy|30"}) {
		t.Fatalf("after all: %v", got)
	}
}

// TestCDCLandsItsChangeFiles: with raw/ on, each batch lands exactly the
// change files it applies (never an already applied one again).
func TestCDCLandsItsChangeFiles(t *testing.T) {
	e := newCDCEnv(t)
	var landed [][]string
	load := func(id string) *TableResult {
		res, err := Load(context.Background(), Options{Workspace: e.dir, Plan: e.plan, Sink: e.sk,
			Quarantine: &JSONLQuarantine{Dir: filepath.Join(e.dir, "q")}, RunID: id, BatchRows: 7,
			Land: func(_ context.Context, table, loadID string, _ source.Source, units []source.Unit) error {
				var names []string
				for _, u := range units {
					names = append(names, table+":"+u.Name)
				}
				landed = append(landed, names)
				return nil
			}})
		if err != nil || res.Tables[0].Err != nil {
			t.Fatal(err, res.Tables[0].Err)
		}
		return res.Tables[0]
	}
	e.write(t, "c001.csv", "op,seq,id,name,amount\nI,1,1,ann,10\n")
	load("r1")
	e.write(t, "c002.csv", "op,seq,id,name,amount\nU,2,1,ann,11\n")
	load("r2")
	if tr := load("r3"); tr.Status != StatusNothingToLoad {
		t.Fatalf("third run: %s", tr.Status)
	}
	want := "[[customers:changes/c001.csv] [customers:changes/c002.csv]]"
	if fmt.Sprint(landed) != want {
		t.Fatalf("landed %v, want %v", landed, want)
	}
}
