package gates_test

// Failing-side tests of gate 4 (issue 20): a table is loaded, then changed
// behind Lima's back through iceberg-go directly (an appended data file
// with a crafted row, a row delete), and each of gate 4's checks must fail
// on exactly the change it guards against. The expectation is computed
// here from the generated rows, never by the code under test.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/gates"
)

// tRow is one row of the tamper tests' table: id long (key, required),
// name string (required), amount decimal(10,2) as cents, score double,
// day date (partition month(day)). A nil pointer is NULL.
type tRow struct {
	id     int64
	name   *string
	amount int64 // cents
	score  float64
	day    time.Time
}

var tCols = []string{"id", "name", "amount", "score", "day"}
var tTypes = []string{"long", "string", "decimal(10,2)", "double", "date"}
var tRequired = []bool{true, true, false, false, false}

func strp(s string) *string { return &s }

// tRows are the source rows: ten days of January 2024.
func tRows() []tRow {
	var out []tRow
	for i := int64(1); i <= 10; i++ {
		out = append(out, tRow{id: i, name: strp(fmt.Sprintf("item-%02d", i)), amount: 1000*i + 25*i,
			score: 0.1 * float64(i) * 3, day: time.Date(2024, 1, int(2*i), 0, 0, 0, 0, time.UTC)})
	}
	return out
}

func cents(c int64) string {
	neg := c < 0
	if neg {
		c = -c
	}
	s := fmt.Sprintf("%d.%02d", c/100, c%100)
	if neg {
		return "-" + s
	}
	return s
}

func rowValues(r tRow) map[string]string {
	v := map[string]string{"id": strconv.FormatInt(r.id, 10), "amount": cents(r.amount),
		"score": strconv.FormatFloat(r.score, 'g', -1, 64), "day": r.day.Format("2006-01-02")}
	if r.name != nil {
		v["name"] = *r.name
	} else {
		v["name"] = "NULL"
	}
	return v
}

// expectFor computes gate 4's expectation of a full load of rows by hand:
// count, exact sums of id and amount, the float sum of score (summed in
// row order, as a reader would), the range of day and three samples.
func expectFor(rows []tRow, loadID string) gates.Expectation {
	var ids, amt int64
	var score float64
	lo, hi := rows[0].day, rows[0].day
	for _, r := range rows {
		ids += r.id
		amt += r.amount
		score += r.score
		if r.day.Before(lo) {
			lo = r.day
		}
		if r.day.After(hi) {
			hi = r.day
		}
	}
	e := gates.Expectation{Table: "orders", LoadID: loadID, Rows: int64(len(rows)), Columns: tCols, Types: tTypes,
		Required: tRequired, Keys: []string{"id"}, Mode: "full",
		Sums: map[string]string{"id": strconv.FormatInt(ids, 10), "amount": cents(amt), "score": strconv.FormatFloat(score, 'g', 17, 64)},
		Min:  map[string]string{"day": lo.Format("2006-01-02")}, Max: map[string]string{"day": hi.Format("2006-01-02")}}
	for _, i := range []int{0, 4, 9} {
		if i < len(rows) {
			e.Samples = append(e.Samples, run.Sample{Loc: source.Locator{Unit: "orders.csv", Line: int64(i + 2), Row: int64(i + 2)}, Values: rowValues(rows[i])})
		}
	}
	return e
}

func tSpec() sink.TableSpec {
	spec := sink.TableSpec{Name: "orders", Namespace: "lima", Required: tRequired}
	for i, c := range tCols {
		t, err := plan.ParseType(tTypes[i])
		if err != nil {
			panic(err)
		}
		spec.Columns = append(spec.Columns, plan.Column{Name: c, Type: tTypes[i]})
		spec.Types = append(spec.Types, t)
	}
	pf, err := plan.ParsePartition("month(day)")
	if err != nil {
		panic(err)
	}
	spec.Partition = []plan.PartitionField{pf}
	return spec
}

// record builds an Arrow batch of rows in schema sc.
func record(sc *arrow.Schema, rows []tRow) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		if r.name == nil {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r.name)
		}
		b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(r.amount))
		b.Field(3).(*array.Float64Builder).Append(r.score)
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(r.day))
	}
	return b.NewRecordBatch()
}

// lake is a loaded table with handles to tamper with it.
type lake struct {
	t   *testing.T
	ctx context.Context
	sk  *icesink.Sink
	tbl *icesink.Table
}

// loadLake loads rows as Lima's loader would commit them (one snapshot
// carrying the load id).
func loadLake(t *testing.T, rows []tRow, loadID string) *lake {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	st, err := sk.OpenTable(ctx, tSpec())
	if err != nil {
		t.Fatal(err)
	}
	l := &lake{t: t, ctx: ctx, sk: sk, tbl: st.(*icesink.Table)}
	l.commitRows(rows, sink.CommitProps{LoadID: loadID, RunID: "run-" + loadID})
	return l
}

func (l *lake) commitRows(rows []tRow, p sink.CommitProps) sink.Commit {
	l.t.Helper()
	rec := record(l.tbl.Schema(), rows)
	defer rec.Release()
	staged, err := l.tbl.Stage(l.ctx, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
	if err != nil {
		l.t.Fatal(err)
	}
	c, err := l.tbl.Commit(l.ctx, staged, p)
	if err != nil {
		l.t.Fatal(err)
	}
	return c
}

// appendBehind appends rows through iceberg-go directly: a new data file
// in a snapshot Lima did not write.
func (l *lake) appendBehind(rows []tRow, props iceberg.Properties) {
	l.t.Helper()
	tbl, err := l.tbl.Load(l.ctx)
	if err != nil {
		l.t.Fatal(err)
	}
	rec := record(l.tbl.Schema(), rows)
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		l.t.Fatal(err)
	}
	defer rdr.Release()
	tx := tbl.NewTransaction()
	if err := tx.Append(l.ctx, rdr, props); err != nil {
		l.t.Fatalf("append behind Lima's back: %v", err)
	}
	if _, err := tx.Commit(l.ctx); err != nil {
		l.t.Fatalf("commit behind Lima's back: %v", err)
	}
}

// deleteBehind deletes the rows with these ids through iceberg-go.
func (l *lake) deleteBehind(ids ...int64) {
	l.t.Helper()
	tbl, err := l.tbl.Load(l.ctx)
	if err != nil {
		l.t.Fatal(err)
	}
	vals := make([]int64, len(ids))
	copy(vals, ids)
	tx := tbl.NewTransaction()
	if err := tx.Delete(l.ctx, iceberg.IsIn(iceberg.Reference("id"), vals...), nil); err != nil {
		l.t.Fatalf("delete behind Lima's back: %v", err)
	}
	if _, err := tx.Commit(l.ctx); err != nil {
		l.t.Fatalf("commit behind Lima's back: %v", err)
	}
}

// addParquetBehind writes rows into a Parquet file of its own — with the
// name column optional, so a NULL reaches the file whatever the table's
// schema says — and adds the file to the table through iceberg-go.
func (l *lake) addParquetBehind(rows []tRow) {
	l.t.Helper()
	tbl, err := l.tbl.Load(l.ctx)
	if err != nil {
		l.t.Fatal(err)
	}
	fields := slices.Clone(l.tbl.Schema().Fields())
	for i := range fields {
		fields[i].Nullable = true
	}
	sc := arrow.NewSchema(fields, nil)
	rec := record(sc, rows)
	defer rec.Release()
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	path := filepath.Join(loc, "data", "crafted-by-hand.parquet")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		l.t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		l.t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		l.t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		l.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		l.t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		l.t.Fatal(err)
	}
	// The data file entry by hand: partition month(day) (field 1000) as
	// months since 1970, taken from the first row.
	month := (rows[0].day.Year()-1970)*12 + int(rows[0].day.Month()) - 1
	b, err := iceberg.NewDataFileBuilder(tbl.Spec(), iceberg.EntryContentData, "file://"+path, iceberg.ParquetFile,
		map[int]any{1000: int32(month)}, nil, nil, int64(len(rows)), st.Size())
	if err != nil {
		l.t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(l.ctx, []iceberg.DataFile{b.Build()}, nil); err != nil {
		l.t.Fatalf("add a Parquet file behind Lima's back: %v", err)
	}
	if _, err := tx.Commit(l.ctx); err != nil {
		l.t.Fatalf("commit behind Lima's back: %v", err)
	}
}

// replaceBehind replaces row id with r (a delete and an append).
func (l *lake) replaceBehind(r tRow) {
	l.deleteBehind(r.id)
	l.appendBehind([]tRow{r}, nil)
}

func (l *lake) reconcile(e gates.Expectation) *gates.Reconciliation {
	l.t.Helper()
	rec, err := gates.Reconcile(l.ctx, l.tbl, e)
	if err != nil {
		l.t.Fatal(err)
	}
	return rec
}

// finding returns the check named name (or whose name starts with it).
func finding(t *testing.T, rec *gates.Reconciliation, name string) gates.Finding {
	t.Helper()
	for _, f := range rec.Checks {
		if f.Name == name {
			return f
		}
	}
	var names []string
	for _, f := range rec.Checks {
		names = append(names, f.Name)
	}
	t.Fatalf("no check %q among %q", name, names)
	return gates.Finding{}
}

func wantStatus(t *testing.T, rec *gates.Reconciliation, name, status string) {
	t.Helper()
	f := finding(t, rec, name)
	if f.Status != status {
		t.Errorf("check %q: status %s, want %s (%s)", name, f.Status, status, f.Detail)
	}
	if status == gates.Fail && rec.Status != gates.Fail {
		t.Errorf("check %q failed but the table's verdict is %s", name, rec.Status)
	}
}

// TestTamperUntouchedPasses is the control: the same expectation passes on
// the lake as loaded, every check named.
func TestTamperUntouchedPasses(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	rec := l.reconcile(expectFor(rows, "L1"))
	if rec.Status != gates.Pass || rec.LakeRows != 10 {
		t.Fatalf("untouched lake: %s, %d rows: %+v", rec.Status, rec.LakeRows, rec.Checks)
	}
	for _, name := range []string{"row count", "sum(id)", "sum(amount)", "sum(score)", "no nulls in id", "no nulls in name",
		"unique key (id)", "range of day", "sample rows side by side"} {
		wantStatus(t, rec, name, gates.Pass)
	}
}

// TestTamperAppendedRowFailsRowCount: one row appended behind Lima's back
// (a new key, values inside the range): the count must fail (kills "=="
// changed to ">=").
func TestTamperAppendedRowFailsRowCount(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	l.appendBehind([]tRow{{id: 11, name: strp("intruder"), amount: 0, score: 0, day: rows[3].day}}, nil)
	rec := l.reconcile(expectFor(rows, "L1"))
	if rec.LakeRows != 11 {
		t.Fatalf("lake rows %d, want 11", rec.LakeRows)
	}
	wantStatus(t, rec, "row count", gates.Fail)
	// amount 0 and score 0 leave those sums unchanged: only the count and
	// sum(id) can see this row.
	wantStatus(t, rec, "sum(amount)", gates.Pass)
	wantStatus(t, rec, "sum(score)", gates.Pass)
}

// TestTamperDeletedRowFailsRowCount: one row deleted behind Lima's back.
func TestTamperDeletedRowFailsRowCount(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	l.deleteBehind(7)
	rec := l.reconcile(expectFor(rows, "L1"))
	if rec.LakeRows != 9 {
		t.Fatalf("lake rows %d, want 9", rec.LakeRows)
	}
	wantStatus(t, rec, "row count", gates.Fail)
	wantStatus(t, rec, "sum(amount)", gates.Fail)
}

// TestTamperDuplicateKeyFails: a second row with key 3 appended, and a row
// deleted so that the count still matches: only the key check can see it.
func TestTamperDuplicateKeyFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	l.deleteBehind(10)
	dup := rows[9] // the deleted row's values under key 3: sums differ, count not
	dup.id = 3
	l.appendBehind([]tRow{dup}, nil)
	rec := l.reconcile(expectFor(rows, "L1"))
	wantStatus(t, rec, "row count", gates.Pass)
	wantStatus(t, rec, "unique key (id)", gates.Fail)
	if f := finding(t, rec, "unique key (id)"); !strings.Contains(f.Detail, "1 duplicate key(s)") {
		t.Errorf("duplicate detail: %s", f.Detail)
	}
}

// TestTamperRequiredNullFails: a row whose required name is NULL replaces
// row 4 (count, sums and range unchanged).
func TestTamperRequiredNullFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	bad := rows[3]
	bad.name = nil
	l.deleteBehind(bad.id)
	l.addParquetBehind([]tRow{bad})
	rec := l.reconcile(expectFor(rows, "L1"))
	wantStatus(t, rec, "row count", gates.Pass)
	wantStatus(t, rec, "sum(amount)", gates.Pass)
	wantStatus(t, rec, "no nulls in name", gates.Fail)
	wantStatus(t, rec, "no nulls in id", gates.Pass)
}

// TestTamperFloatBeyondToleranceFails: score of row 6 changed by one part
// in a million of the column's sum — far beyond the 1e-9 relative
// tolerance, inside 1e-3 (kills a widened tolerance).
func TestTamperFloatBeyondToleranceFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	e := expectFor(rows, "L1")
	total, _ := strconv.ParseFloat(e.Sums["score"], 64)
	r := rows[5]
	r.score += total * 1e-6
	l.replaceBehind(r)
	rec := l.reconcile(e)
	wantStatus(t, rec, "sum(score)", gates.Fail)
	wantStatus(t, rec, "row count", gates.Pass)
}

// TestTamperFloatWithinTolerancePasses: the same change at one part in
// 1e12 of the sum (a rounding difference) passes, and says it used the
// tolerance.
func TestTamperFloatWithinTolerancePasses(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	e := expectFor(rows, "L1")
	total, _ := strconv.ParseFloat(e.Sums["score"], 64)
	r := rows[5]
	r.score += total * 1e-12
	l.replaceBehind(r)
	rec := l.reconcile(e)
	f := finding(t, rec, "sum(score)")
	if f.Status != gates.Pass || !strings.Contains(f.Detail, "within 1e-09 relative") {
		t.Errorf("sum(score) %s: %s", f.Status, f.Detail)
	}
	if ct := rec.ControlTotals["score"]; ct.Variance == "0" {
		t.Errorf("the change did not reach the lake: variance %s", ct.Variance)
	}
}

// TestTamperRangeLowFails / High: a row moved before the loaded minimum or
// after the loaded maximum of the partition column (count and sums kept).
func TestTamperRangeLowFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	r := rows[4]
	r.day = time.Date(2023, 12, 31, 0, 0, 0, 0, time.UTC)
	l.replaceBehind(r)
	e := expectFor(rows, "L1")
	e.Samples = nil
	rec := l.reconcile(e)
	wantStatus(t, rec, "range of day", gates.Fail)
	wantStatus(t, rec, "row count", gates.Pass)
	wantStatus(t, rec, "sum(amount)", gates.Pass)
}

func TestTamperRangeHighFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	r := rows[4]
	r.day = time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	l.replaceBehind(r)
	e := expectFor(rows, "L1")
	e.Samples = nil
	rec := l.reconcile(e)
	f := finding(t, rec, "range of day")
	if f.Status != gates.Fail || !strings.Contains(f.Detail, "lake 2024-01-02 … 2024-02-01") {
		t.Errorf("range of day %s: %s", f.Status, f.Detail)
	}
	wantStatus(t, rec, "row count", gates.Pass)
}

// TestTamperSampleRowDiffersFails: the lake's row of a sampled key has
// another name (a column with no control sum and no range).
func TestTamperSampleRowDiffersFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	r := rows[4] // sampled
	r.name = strp("item-05 (edited)")
	l.replaceBehind(r)
	rec := l.reconcile(expectFor(rows, "L1"))
	wantStatus(t, rec, "row count", gates.Pass)
	wantStatus(t, rec, "sum(amount)", gates.Pass)
	wantStatus(t, rec, "sample rows side by side", gates.Fail)
	var seen bool
	for _, p := range rec.Samples {
		if p.Source["id"] == "5" {
			seen = true
			if p.Match || p.Lake["name"] != "item-05 (edited)" {
				t.Errorf("sample of id 5: match %v, lake %v", p.Match, p.Lake)
			}
		} else if !p.Match {
			t.Errorf("untouched sample %v does not match %v", p.Source, p.Lake)
		}
	}
	if !seen {
		t.Error("id 5 is not among the samples")
	}
}

// TestReplayAdjustmentOlderAndNewer: a replay committed before the load
// (whose rows the full load replaced) must not be added to the
// expectation; a replay committed after it must. The lake is built with
// real snapshots: load L0, replay R0 (2 rows), full load L1 (10 rows,
// replacing), replay R1 (2 rows).
func TestReplayAdjustmentOlderAndNewer(t *testing.T) {
	ctx := context.Background()
	old := []tRow{{id: 101, name: strp("old-a"), amount: 500, score: 1, day: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)},
		{id: 102, name: strp("old-b"), amount: 700, score: 2, day: time.Date(2024, 1, 4, 0, 0, 0, 0, time.UTC)}}
	rows := tRows()
	newer := []tRow{{id: 201, name: strp("fixed-a"), amount: 1234, score: 0.5, day: time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC)},
		{id: 202, name: strp("fixed-b"), amount: 4321, score: 0.25, day: time.Date(2024, 1, 6, 0, 0, 0, 0, time.UTC)}}
	replayProps := func(rs []tRow, loadID string) sink.CommitProps {
		var ids, amt int64
		var sc float64
		for _, r := range rs {
			ids, amt, sc = ids+r.id, amt+r.amount, sc+r.score
		}
		return sink.CommitProps{LoadID: loadID, RunID: "replay-" + loadID, Kind: sink.KindReplay, Extra: map[string]string{
			sink.PropRows: strconv.Itoa(len(rs)), sink.PropSumPrefix + "id": strconv.FormatInt(ids, 10),
			sink.PropSumPrefix + "amount": cents(amt), sink.PropSumPrefix + "score": strconv.FormatFloat(sc, 'g', 17, 64)}}
	}
	// History, oldest first: load L0 (the old rows), replay R0 (the same
	// two rows fixed), full load L1 replacing everything, replay R1.
	l := loadLake(t, old, "L0")
	l.commitRows(old, replayProps(old, "R0"))
	l.commitRows(rows, sink.CommitProps{LoadID: "L1", RunID: "run-L1", Replace: true})
	l.commitRows(newer, replayProps(newer, "R1"))

	hist, err := l.tbl.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := expectFor(rows, "L1")
	e.Samples = nil
	adj, n, err := gates.AdjustForReplays(e, hist)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: 10 + 2 rows; sums of L1 plus R1 only.
	var ids, amt int64
	for _, r := range append(append([]tRow{}, rows...), newer...) {
		ids, amt = ids+r.id, amt+r.amount
	}
	if n != 1 || adj.Rows != 12 || adj.Sums["id"] != strconv.FormatInt(ids, 10) || adj.Sums["amount"] != cents(amt) {
		t.Fatalf("adjusted: %d replay(s), %d rows, sums %v; want 1 replay, 12 rows, id %d, amount %s", n, adj.Rows, adj.Sums, ids, cents(amt))
	}
	rec := l.reconcile(adj)
	if rec.Status != gates.Pass || rec.LakeRows != 12 {
		t.Fatalf("after the newer replay: %s, %d rows: %+v", rec.Status, rec.LakeRows, rec.Checks)
	}
	// The table's state is exact: an expectation that also counted R0
	// (the older replay) must fail on the same lake.
	wrong := adj
	wrong.Rows += 2
	wantStatus(t, l.reconcile(wrong), "row count", gates.Fail)
}

// TestTamperKeylessDuplicateFails: a keyless table is compared by whole
// row. The load accepted no repeated row; a copy of row 2 appended behind
// Lima's back (and row 10 deleted, so the count still matches) must fail
// the whole-row check.
func TestTamperKeylessDuplicateFails(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	e := expectFor(rows, "L1")
	e.Keys, e.Samples, e.Sums = nil, nil, map[string]string{}
	zero := int64(0)
	e.DuplicateRows = &zero
	wantStatus(t, l.reconcile(e), gates.NoKeyCheck, gates.Pass)
	l.deleteBehind(10)
	l.appendBehind([]tRow{rows[1]}, nil)
	rec := l.reconcile(e)
	wantStatus(t, rec, "row count", gates.Pass)
	f := finding(t, rec, gates.NoKeyCheck)
	if f.Status != gates.Fail || !strings.Contains(f.Detail, "the load accepted 0 row(s) repeating another row whole; the lake holds 1 in 10 rows") {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
	// Appended to an incremental table the same repeat cannot be decided:
	// a warning, never a pass.
	e.Mode = "incremental"
	wantStatus(t, l.reconcile(e), gates.NoKeyCheck, gates.Warn)
}

// TestNotCheckedIsNamed: an incremental load says which whole-table
// checks it did not make (a Skip finding), a full load has none.
func TestNotCheckedIsNamed(t *testing.T) {
	rows := tRows()
	l := loadLake(t, rows, "L1")
	e := expectFor(rows, "L1")
	for _, f := range l.reconcile(e).Checks {
		if f.Status == gates.Skip {
			t.Errorf("full load: skipped %s", f.Name)
		}
	}
	e.Mode = "incremental"
	f := finding(t, l.reconcile(e), gates.NotChecked+"the lake's control sums (amount, id, score) and the range of day")
	if f.Status != gates.Skip || !strings.Contains(f.Detail, "mode incremental") {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}

// TestSourceCount: the whole-table count check's verdicts, by hand.
func TestSourceCount(t *testing.T) {
	cases := []struct {
		name string
		in   gates.CountInput
		st   string
		has  []string
	}{
		{"full, equal", gates.CountInput{Mode: "full", SourceRows: 10, LakeRows: 8, Held: 2, HeldNote: "x"}, gates.Pass, []string{"a full load replaces the table"}},
		{"full, a row lost", gates.CountInput{Mode: "full", SourceRows: 10, LakeRows: 7, Held: 2}, gates.Fail, []string{"1 source row(s) are neither in the lake nor held back"}},
		{"full, extra rows", gates.CountInput{Mode: "full", SourceRows: 10, LakeRows: 11}, gates.Fail, []string{"1 row(s) more than the whole source"}},
		{"incremental, deleted rows kept", gates.CountInput{Mode: "incremental", SourceRows: 9, LakeRows: 11}, gates.Warn,
			[]string{"2 row(s) more than the whole source", "deletes are not detected in mode incremental"}},
		{"upsert, never", gates.CountInput{Mode: "upsert", SourceRows: 9, LakeRows: 10, Detect: "never"}, gates.Warn, []string{"load.detect_deletes: never"}},
		{"upsert, period", gates.CountInput{Mode: "upsert", SourceRows: 9, LakeRows: 10, Detect: "7d", LastCompared: "2026-11-30T02:00:00Z"}, gates.Warn,
			[]string{"deletes are checked every 7d; the keys were last compared 2026-11-30T02:00:00Z"}},
		{"upsert, compared this run", gates.CountInput{Mode: "upsert", SourceRows: 9, LakeRows: 10, DeletesCompared: true, Detect: "every_run"}, gates.Fail, nil},
		{"incremental, held rows explain it", gates.CountInput{Mode: "incremental", SourceRows: 12, LakeRows: 10, Held: 2}, gates.Pass, nil},
		{"incremental, rows unexplained", gates.CountInput{Mode: "incremental", SourceRows: 12, LakeRows: 9, Held: 2}, gates.Warn, []string{"not decided"}},
	}
	for _, c := range cases {
		f := gates.SourceCount(c.in)
		if f.Status != c.st {
			t.Errorf("%s: %s, want %s (%s)", c.name, f.Status, c.st, f.Detail)
		}
		for _, h := range c.has {
			if !strings.Contains(f.Detail, h) {
				t.Errorf("%s: %q lacks %q", c.name, f.Detail, h)
			}
		}
		if f.Status == gates.Warn && strings.Contains(f.Detail, "more than the whole source") && !strings.Contains(f.Fix, "detect_deletes") {
			t.Errorf("%s: the fix does not name detect_deletes: %s", c.name, f.Fix)
		}
	}
}
