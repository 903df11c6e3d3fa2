package gates

// Failing-side tests of gate 4's change-capture check (issue 20, mutation
// testing), on an in-memory table and history (mutTCDC) so that every
// edge is cheap: the ordering rules (integers as numbers, else text, then
// file, then position), deletes, markers, a change seen twice, an unknown
// operation, every way the lake can differ from the recomputed state, the
// batch the table has not committed, and every reason the history cannot
// be folded. The expected state is worked out by hand beside each case.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
)

// mutTCDC is an in-memory table: snaps are its snapshots' rows (text, ""
// is NULL, in schema order; snapshot 0 is what a read of the current
// snapshot returns), commits its lineage, newest first.
type mutTCDC struct {
	schema   *arrow.Schema
	snaps    map[int64][][]string
	commits  []sink.Commit
	histErr  error
	scanErr  error
	batchErr error
}

func (s *mutTCDC) Scan(_ context.Context, id int64, _ []string) (iter.Seq2[arrow.RecordBatch, error], error) {
	if s.scanErr != nil {
		return nil, s.scanErr
	}
	rows, ok := s.snaps[id]
	if !ok {
		return nil, fmt.Errorf("no snapshot %d", id)
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		if s.batchErr != nil {
			yield(nil, s.batchErr)
			return
		}
		yield(mutTRecord(s.schema, rows), nil)
	}, nil
}

func (s *mutTCDC) History(context.Context) ([]sink.Commit, error) { return s.commits, s.histErr }

// mutTScanOnly is a table that does not list its commits.
type mutTScanOnly struct{ t *mutTCDC }

func (s mutTScanOnly) Scan(ctx context.Context, id int64, c []string) (iter.Seq2[arrow.RecordBatch, error], error) {
	return s.t.Scan(ctx, id, c)
}

func mutTRecord(sc *arrow.Schema, rows [][]string) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		for i := range sc.Fields() {
			v := r[i]
			fb := b.Field(i)
			if v == "" {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Int64Builder:
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					panic(err)
				}
				fb.Append(n)
			case *array.Int32Builder:
				n, err := strconv.ParseInt(v, 10, 32)
				if err != nil {
					panic(err)
				}
				fb.Append(int32(n))
			case *array.Float64Builder:
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					panic(err)
				}
				fb.Append(f)
			case *array.Decimal128Builder:
				d, err := decimal128.FromString(v, fb.Type().(*arrow.Decimal128Type).Precision, fb.Type().(*arrow.Decimal128Type).Scale)
				if err != nil {
					panic(err)
				}
				fb.Append(d)
			case *array.StringBuilder:
				fb.Append(v)
			default:
				panic(fmt.Sprintf("%T", fb))
			}
		}
	}
	return b.NewRecordBatch()
}

var (
	mutTLakeFields = []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}
	mutTHistFields = []arrow.Field{{Name: histOp, Type: arrow.BinaryTypes.String, Nullable: true}, {Name: histOrdering, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: histSource, Type: arrow.BinaryTypes.String, Nullable: true}}
)

// mutTCDCPair is a change-capture table customers (id key, name, amount)
// committed once by load L1, and its history h (the table's columns,
// lima_op, lima_ordering, lima_source) committed once by L1 at snapshot 7.
func mutTCDCPair(hist, lake [][]string) (*mutTCDC, *mutTCDC) {
	tbl := &mutTCDC{schema: arrow.NewSchema(mutTLakeFields, nil), snaps: map[int64][][]string{0: lake},
		commits: []sink.Commit{{SnapshotID: 1, LoadID: "L1", Props: map[string]string{run.PropCDCFiles: "[]"}}}}
	h := &mutTCDC{schema: arrow.NewSchema(append(append([]arrow.Field{}, mutTLakeFields...), mutTHistFields...), nil),
		snaps: map[int64][][]string{7: hist}, commits: []sink.Commit{{SnapshotID: 7, LoadID: "L1"}}}
	return tbl, h
}

// mutTCDCExpect sums and compares the range of id and amount.
func mutTCDCExpect() Expectation {
	return Expectation{Table: "customers", LoadID: "L1", Columns: []string{"id", "name", "amount"}, Types: []string{"long", "string", "long"},
		Required: []bool{true, false, false}, Keys: []string{"id"}, Mode: plan.ModeCDC,
		Sums: map[string]string{"id": "", "amount": ""}, Min: map[string]string{"id": "", "amount": ""}, Max: map[string]string{"id": "", "amount": ""}}
}

func mutTCDCReconcile(t *testing.T, tbl, h *mutTCDC, e Expectation) *Reconciliation {
	t.Helper()
	rec, err := Reconcile(context.Background(), tbl, e, WithChangeHistory("h", h))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func mutTCheck(t *testing.T, r *Reconciliation, name string) Finding {
	t.Helper()
	return mutTFinding(t, r.Checks, name)
}

func TestCDCMutCompareOrdering(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"9", "10", -1}, {"10", "9", 1}, {"5", "5", 0}, {"-3", "2", -1},
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0},
		// One integer, one not: as text ("1" < "x").
		{"10", "x", -1}, {"x", "10", 1}, {"9", "10x", 1},
	} {
		if got := compareOrdering(c.a, c.b); got != c.want {
			t.Errorf("compareOrdering(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestCDCMutSplitSource(t *testing.T) {
	for _, c := range []struct {
		s    string
		file string
		pos  int64
	}{
		{"f.csv:12", "f.csv", 12}, {"f.ndjson#3", "f.ndjson", 3}, {"x:1:7", "x:1", 7},
		{"plain", "plain", 0}, {"a:b", "a:b", 0}, {":5", "", 5}, {"", "", 0},
	} {
		if f, p := splitSource(c.s); f != c.file || p != c.pos {
			t.Errorf("splitSource(%q) = %q, %d, want %q, %d", c.s, f, p, c.file, c.pos)
		}
	}
}

func TestCDCMutLater(t *testing.T) {
	r := &foldRow{ord: "5", file: "b.csv", pos: 3}
	for _, c := range []struct {
		ord, file string
		pos       int64
		want      int
	}{
		{"6", "a.csv", 0, 1}, {"4", "z.csv", 9, -1}, {"10", "a.csv", 0, 1},
		{"5", "c.csv", 0, 1}, {"5", "a.csv", 9, -1},
		{"5", "b.csv", 4, 1}, {"5", "b.csv", 2, -1}, {"5", "b.csv", 3, 0},
	} {
		if got := r.later(c.ord, c.file, c.pos); got != c.want {
			t.Errorf("later(%q, %q, %d) = %d, want %d", c.ord, c.file, c.pos, got, c.want)
		}
	}
}

// mutTHist is a history of three batches: 1, 2, 3 inserted; 2 updated, 3
// deleted, 4 inserted, a marker. The state: 1 a 100, 2 b2 250, 4 d 400;
// 3 rows, sum(id) 7, sum(amount) 750, id 1…4, amount 100…400.
var mutTHist = [][]string{
	{"1", "a", "100", "insert", "1", "f1.csv:2"},
	{"2", "b", "200", "insert", "2", "f1.csv:3"},
	{"3", "c", "300", "insert", "3", "f1.csv:4"},
	{"2", "b2", "250", "update", "4", "f2.csv:2"},
	{"3", "", "", "delete", "5", "f2.csv:3"},
	{"4", "d", "400", "insert", "6", "f2.csv:4"},
	{"", "", "", "none", "", ""},
}

var mutTState = [][]string{{"4", "d", "400"}, {"1", "a", "100"}, {"2", "b2", "250"}}

func TestCDCMutStatePasses(t *testing.T) {
	tbl, h := mutTCDCPair(mutTHist, mutTState)
	r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
	if r.Status != Pass {
		t.Fatalf("%s: %+v", r.Status, r.Checks)
	}
	if c := mutTCheck(t, r, "row count"); !strings.HasPrefix(c.Detail, "6 change(s) of h (snapshot 7) folded per key leave 3 row(s); the lake holds 3") || strings.Contains(c.Detail, "left out") {
		t.Errorf("row count: %+v", c)
	}
	if ct := r.ControlTotals["amount"]; ct.Source != "750" || ct.Target != "750" || ct.SourceFrom != SourceFromHistory {
		t.Errorf("amount: %+v", ct)
	}
	if ct := r.ControlTotals["id"]; ct.Source != "7" || ct.Target != "7" {
		t.Errorf("id: %+v", ct)
	}
	if c := mutTCheck(t, r, "range of amount"); !strings.Contains(c.Detail, "recomputed from the history 100 … 400; lake 100 … 400") {
		t.Errorf("range: %+v", c)
	}
	if c := mutTCheck(t, r, "range of id"); !strings.Contains(c.Detail, "recomputed from the history 1 … 4") {
		t.Errorf("range: %+v", c)
	}
	// Nothing twice, no unknown operation, no example: the detail is
	// exactly the counts.
	if c := mutTCheck(t, r, CDCStateCheck); c.Detail != "3 of the lake's 3 row(s) equal the latest change of their key value for value; 0 differ, 0 not in the recomputed state, 0 missing from the lake" {
		t.Errorf("state: %+v", c)
	}
}

// TestCDCMutLatestChangeWins: which of a key's changes is its state, for
// every rule; the lake holds the winner (pass) or the loser (fail).
func TestCDCMutLatestChangeWins(t *testing.T) {
	cases := []struct {
		name        string
		hist        [][]string
		win, lose   []string
		winAmount   string // sum(amount) of the winner's state
		wantChanges int
	}{
		{"integer ordering 10 after 9", [][]string{{"1", "old", "1", "insert", "9", "f.csv:5"}, {"1", "new", "2", "update", "10", "f.csv:1"}},
			[]string{"1", "new", "2"}, []string{"1", "old", "1"}, "2", 2},
		{"text ordering when one is not an integer", [][]string{{"1", "txt", "1", "insert", "x", "f.csv:1"}, {"1", "num", "2", "update", "10", "f.csv:2"}},
			[]string{"1", "txt", "1"}, []string{"1", "num", "2"}, "1", 2},
		{"same ordering: the later file", [][]string{{"1", "fromB", "1", "insert", "5", "b.csv:1"}, {"1", "fromA", "2", "update", "5", "a.csv:9"}},
			[]string{"1", "fromB", "1"}, []string{"1", "fromA", "2"}, "1", 2},
		{"same ordering and file: the later position, as a number", [][]string{{"1", "p10", "1", "insert", "5", "f.csv:10"}, {"1", "p9", "2", "update", "5", "f.csv:9"}},
			[]string{"1", "p10", "1"}, []string{"1", "p9", "2"}, "1", 2},
		{"same ordering and file: the later position last", [][]string{{"1", "p2", "1", "insert", "5", "f.csv:2"}, {"1", "p3", "2", "update", "5", "f.csv:3"}},
			[]string{"1", "p3", "2"}, []string{"1", "p2", "1"}, "2", 2},
		{"a delete then a later insert", [][]string{{"1", "", "", "delete", "2", "f.csv:2"}, {"1", "back", "3", "insert", "3", "f.csv:3"}, {"1", "gone", "9", "insert", "1", "f.csv:1"}},
			[]string{"1", "back", "3"}, []string{"1", "gone", "9"}, "3", 3},
	}
	for _, c := range cases {
		tbl, h := mutTCDCPair(c.hist, [][]string{c.win})
		r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
		if r.Status != Pass || r.ControlTotals["amount"].Source != c.winAmount {
			t.Errorf("%s: lake holds the winner: %s %+v %+v", c.name, r.Status, r.ControlTotals["amount"], r.Checks)
		}
		if d := mutTCheck(t, r, "row count").Detail; !strings.HasPrefix(d, fmt.Sprintf("%d change(s) of h", c.wantChanges)) {
			t.Errorf("%s: %q", c.name, d)
		}
		tbl, h = mutTCDCPair(c.hist, [][]string{c.lose})
		r = mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
		if f := mutTCheck(t, r, CDCStateCheck); f.Status != Fail || r.Status != Fail || !strings.HasPrefix(f.Detail, "0 of the lake's 1 row(s) equal the latest change of their key value for value; 1 differ") {
			t.Errorf("%s: lake holds the loser: %+v", c.name, f)
		}
	}
	// A delete is the latest change: the key is gone.
	tbl, h := mutTCDCPair([][]string{{"1", "a", "1", "insert", "1", "f.csv:1"}, {"1", "", "", "delete", "2", "f.csv:2"}}, nil)
	if r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect()); r.Status != Pass || !strings.Contains(mutTCheck(t, r, "row count").Detail, "leave 0 row(s)") {
		t.Errorf("deleted key, empty lake: %s %+v", r.Status, r.Checks)
	}
}

// TestCDCMutHistoryFaults: a change twice and an unknown operation fail
// the state check, even when the lake matches.
func TestCDCMutHistoryFaults(t *testing.T) {
	tbl, h := mutTCDCPair([][]string{{"1", "a", "1", "insert", "5", "f.csv:3"}, {"1", "a", "1", "insert", "5", "f.csv:3"}}, [][]string{{"1", "a", "1"}})
	r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
	if f := mutTCheck(t, r, CDCStateCheck); f.Status != Fail || !strings.Contains(f.Detail, "the history holds 1 change(s) twice") {
		t.Errorf("twice: %+v", f)
	}
	tbl, h = mutTCDCPair([][]string{{"1", "a", "1", "insert", "1", "f.csv:1"}, {"2", "b", "2", "upsert", "2", "f.csv:2"}, {"3", "c", "3", "upsert", "3", "f.csv:3"}},
		[][]string{{"1", "a", "1"}})
	r = mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
	f := mutTCheck(t, r, CDCStateCheck)
	if f.Status != Fail || !strings.Contains(f.Detail, `history rows of no known operation: 2 with operation "upsert"`) || strings.Contains(f.Detail, "twice") {
		t.Errorf("bad op: %+v", f)
	}
	// The unknown operations are not changes: 1 folded, 1 row left.
	if c := mutTCheck(t, r, "row count"); c.Status != Pass || !strings.HasPrefix(c.Detail, "1 change(s) of h (snapshot 7) folded per key leave 1 row(s)") {
		t.Errorf("bad op row count: %+v", c)
	}
}

// TestCDCMutLakeDiffers: each way the lake can differ from the state
// (mutTState) is counted in its place and fails.
func TestCDCMutLakeDiffers(t *testing.T) {
	cases := []struct {
		name     string
		lake     [][]string
		counts   string // matched, lake rows, differ, extra, missing
		example  string
		rowCount string
	}{
		{"a deleted key still in the lake", append([][]string{{"3", "c", "300"}}, mutTState...),
			"3 of the lake's 4 row(s) equal the latest change of their key value for value; 0 differ, 1 not in the recomputed state, 0 missing", "key 3 is in the lake, not in the recomputed state", Fail},
		{"a key never changed", append([][]string{{"9", "z", "0"}}, mutTState...),
			"3 of the lake's 4 row(s) equal the latest change of their key value for value; 0 differ, 1 not in the recomputed state, 0 missing", "key 9 is in the lake, not in the recomputed state", Fail},
		{"a key twice", append([][]string{{"1", "a", "100"}}, mutTState...),
			"3 of the lake's 4 row(s) equal the latest change of their key value for value; 0 differ, 1 not in the recomputed state, 0 missing", "key 1 is in the lake twice", Fail},
		{"a value differs", [][]string{{"4", "d", "400"}, {"1", "a", "100"}, {"2", "b", "250"}},
			"2 of the lake's 3 row(s) equal the latest change of their key value for value; 1 differ, 0 not in the recomputed state, 0 missing", "key 2 differs from its latest change (4 in f2.csv at 2)", Pass},
		{"a NULL where the state has a value", [][]string{{"4", "d", "400"}, {"1", "", "100"}, {"2", "b2", "250"}},
			"2 of the lake's 3 row(s) equal the latest change of their key value for value; 1 differ", "key 1 differs from its latest change (1 in f1.csv at 2)", Pass},
		{"a key missing", [][]string{{"1", "a", "100"}, {"2", "b2", "250"}},
			"2 of the lake's 2 row(s) equal the latest change of their key value for value; 0 differ, 0 not in the recomputed state, 1 missing", "key 4 is missing from the lake", Fail},
	}
	for _, c := range cases {
		tbl, h := mutTCDCPair(mutTHist, c.lake)
		r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
		f := mutTCheck(t, r, CDCStateCheck)
		if f.Status != Fail || r.Status != Fail || !strings.HasPrefix(f.Detail, c.counts) || !strings.Contains(f.Detail, c.example) {
			t.Errorf("%s: %+v", c.name, f)
		}
		if rc := mutTCheck(t, r, "row count"); rc.Status != c.rowCount {
			t.Errorf("%s: row count %+v, want %s", c.name, rc, c.rowCount)
		}
	}
	// Four keys missing: three examples.
	hist := [][]string{{"1", "a", "1", "insert", "1", "f:1"}, {"2", "b", "2", "insert", "1", "f:2"}, {"3", "c", "3", "insert", "1", "f:3"}, {"4", "d", "4", "insert", "1", "f:4"}}
	tbl, h := mutTCDCPair(hist, nil)
	f := mutTCheck(t, mutTCDCReconcile(t, tbl, h, mutTCDCExpect()), CDCStateCheck)
	if f.Status != Fail || strings.Count(f.Detail, "is missing from the lake") != 3 || !strings.Contains(f.Detail, "4 missing from the lake") {
		t.Errorf("four missing: %+v", f)
	}
}

// TestCDCMutSumsAndRanges: the sums skip deletes and NULLs; the ranges
// compare numbers as numbers and fail when only one end differs.
func TestCDCMutSumsAndRanges(t *testing.T) {
	// State: 1 (9), 2 (100), 3 (10), 5 (NULL); 4 deleted. sum(amount) 119,
	// sum(id) 11, amount 9…100 (as text it would be 10…9), id 1…5.
	hist := [][]string{
		{"1", "a", "9", "insert", "1", "f:1"}, {"2", "b", "100", "insert", "1", "f:2"}, {"3", "c", "10", "insert", "1", "f:3"},
		{"4", "d", "1000", "insert", "1", "f:4"}, {"4", "", "", "delete", "2", "f:5"}, {"5", "e", "", "insert", "1", "f:6"},
	}
	state := [][]string{{"1", "a", "9"}, {"2", "b", "100"}, {"3", "c", "10"}, {"5", "e", ""}}
	tbl, h := mutTCDCPair(hist, state)
	r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
	if r.Status != Pass || r.ControlTotals["amount"].Source != "119" || r.ControlTotals["id"].Source != "11" {
		t.Fatalf("%s %+v %+v", r.Status, r.ControlTotals, r.Checks)
	}
	if d := mutTCheck(t, r, "range of amount").Detail; !strings.Contains(d, "recomputed from the history 9 … 100") {
		t.Errorf("range: %q", d)
	}
	if d := mutTCheck(t, r, "range of id").Detail; !strings.Contains(d, "recomputed from the history 1 … 5") {
		t.Errorf("range: %q", d)
	}
	for _, c := range []struct {
		name string
		lake [][]string
	}{
		{"only the highest differs", [][]string{{"1", "a", "9"}, {"2", "b", "101"}, {"3", "c", "10"}, {"5", "e", ""}}},
		{"only the lowest differs", [][]string{{"1", "a", "8"}, {"2", "b", "100"}, {"3", "c", "10"}, {"5", "e", ""}}},
	} {
		tbl, h := mutTCDCPair(hist, c.lake)
		r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
		if f := mutTCheck(t, r, "range of amount"); f.Status != Fail {
			t.Errorf("%s: %+v", c.name, f)
		}
		if f := mutTCheck(t, r, "sum(amount)"); f.Status != Fail || !strings.Contains(f.Detail, "recomputed from the history 119, lake") || !strings.Contains(f.Detail, "(exact)") {
			t.Errorf("%s: %+v", c.name, f)
		}
	}
}

// TestCDCMutColumnTypes: int, decimal and double columns are summed from
// the history; a column absent from the lake reads as NULL.
func TestCDCMutColumnTypes(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	lakeF := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "q", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "p", Type: dec, Nullable: true}, {Name: "r", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}
	tbl := &mutTCDC{schema: arrow.NewSchema(lakeF, nil),
		commits: []sink.Commit{{SnapshotID: 1, LoadID: "L1", Props: map[string]string{run.PropCDCFiles: "[]"}}}}
	h := &mutTCDC{schema: arrow.NewSchema(append(append([]arrow.Field{}, lakeF...), mutTHistFields...), nil),
		commits: []sink.Commit{{SnapshotID: 7, LoadID: "L1"}}}
	// State: 1 (q 3, p 1.25, r 0.5), 2 (q 4, p 2.25, r 0.25); 3 deleted:
	// sum(q) 7, sum(p) 3.50, sum(r) 0.75.
	h.snaps = map[int64][][]string{7: {
		{"1", "3", "1.25", "0.5", "insert", "1", "f:1"}, {"2", "4", "2.25", "0.25", "insert", "1", "f:2"},
		{"3", "100", "100.00", "100", "insert", "1", "f:3"}, {"3", "", "", "", "delete", "2", "f:4"},
	}}
	tbl.snaps = map[int64][][]string{0: {{"1", "3", "1.25", "0.5"}, {"2", "4", "2.25", "0.25"}}}
	e := Expectation{Table: "t", LoadID: "L1", Columns: []string{"id", "q", "p", "r"}, Types: []string{"long", "int", "decimal(10,2)", "double"},
		Required: []bool{true, false, false, false}, Keys: []string{"id"}, Mode: plan.ModeCDC,
		Sums: map[string]string{"q": "", "p": "", "r": ""}}
	r := mutTCDCReconcile(t, tbl, h, e)
	if r.Status != Pass || r.ControlTotals["q"].Source != "7" || r.ControlTotals["p"].Source != "3.50" || r.ControlTotals["r"].Source != "0.75" {
		t.Fatalf("%s %+v %+v", r.Status, r.ControlTotals, r.Checks)
	}
	if d := mutTCheck(t, r, "sum(r)").Detail; !strings.Contains(d, "within 1e-09 relative") {
		t.Errorf("sum(r): %q", d)
	}
	if d := mutTCheck(t, r, "sum(p)").Detail; !strings.Contains(d, "(exact)") {
		t.Errorf("sum(p): %q", d)
	}
	// The lake without column name; the history has it NULL: equal.
	lake := &mutTCDC{schema: arrow.NewSchema([]arrow.Field{mutTLakeFields[0], mutTLakeFields[2]}, nil), snaps: map[int64][][]string{0: {{"1", "5"}}},
		commits: []sink.Commit{{SnapshotID: 1, LoadID: "L1", Props: map[string]string{run.PropCDCFiles: "[]"}}}}
	_, h = mutTCDCPair([][]string{{"1", "", "5", "insert", "1", "f:1"}}, nil)
	if f := mutTCheck(t, mutTCDCReconcile(t, lake, h, mutTCDCExpect()), CDCStateCheck); f.Status != Pass {
		t.Errorf("lake without name: %+v", f)
	}
}

// TestCDCMutHistorySnapshot: the history's newest batch the table has
// not committed is left out; a marker batch (no change) and a commit
// without a load id are folded; a compaction is passed over.
func TestCDCMutHistorySnapshot(t *testing.T) {
	base := [][]string{{"1", "a", "1", "insert", "1", "f:1"}}
	updated := append(append([][]string{}, base...), []string{"1", "z", "9", "update", "2", "g:1"})
	cases := []struct {
		name    string
		commits []sink.Commit
		lake    [][]string
		ahead   string
		snap    int64
	}{
		{"a batch ahead", []sink.Commit{{SnapshotID: 9, LoadID: "L2"}, {SnapshotID: 7, LoadID: "L1"}}, [][]string{{"1", "a", "1"}}, "1 batch(es) the table has not committed left out", 7},
		{"two ahead, a compaction", []sink.Commit{{SnapshotID: 10, LoadID: "L3"}, {SnapshotID: 11, Kind: run.KindCompaction}, {SnapshotID: 9, LoadID: "L2"}, {SnapshotID: 7, LoadID: "L1"}},
			[][]string{{"1", "a", "1"}}, "2 batch(es)", 7},
		{"a marker batch", []sink.Commit{{SnapshotID: 9, LoadID: "L2", Props: map[string]string{run.PropCDCNoop: "true"}}, {SnapshotID: 7, LoadID: "L1"}},
			[][]string{{"1", "z", "9"}}, "", 9},
		{"a commit without a load id", []sink.Commit{{SnapshotID: 9}, {SnapshotID: 7, LoadID: "L1"}}, [][]string{{"1", "z", "9"}}, "", 9},
		{"the table's own batch", []sink.Commit{{SnapshotID: 9, LoadID: "L1"}, {SnapshotID: 7, LoadID: "L0"}}, [][]string{{"1", "z", "9"}}, "", 9},
		{"nothing of the table's", []sink.Commit{{SnapshotID: 9, LoadID: "L2"}}, nil, "1 batch(es)", 0},
	}
	for _, c := range cases {
		tbl, h := mutTCDCPair(nil, c.lake)
		h.snaps = map[int64][][]string{7: base, 9: updated, 10: {{"1", "", "", "delete", "9", "h:1"}}, 11: {{"1", "", "", "delete", "9", "h:1"}}}
		h.commits = c.commits
		r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
		d := mutTCheck(t, r, "row count").Detail
		if r.Status != Pass || !strings.Contains(d, fmt.Sprintf("(snapshot %d)", c.snap)) || strings.Contains(d, "left out") != (c.ahead != "") || !strings.Contains(d, c.ahead) {
			t.Errorf("%s: %s %q %+v", c.name, r.Status, d, r.Checks)
		}
	}
	// Nothing of the table's, and the lake has a row: it fails.
	tbl, h := mutTCDCPair(nil, [][]string{{"1", "a", "1"}})
	h.commits = []sink.Commit{{SnapshotID: 9, LoadID: "L2"}}
	if r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect()); r.Status != Fail || mutTCheck(t, r, "row count").Status != Fail {
		t.Errorf("empty state, a row in the lake: %s %+v", r.Status, r.Checks)
	}
}

// TestCDCMutNotFolded: every reason the history cannot be folded, and the
// table commits that do not stop it.
func TestCDCMutNotFolded(t *testing.T) {
	cdc := map[string]string{run.PropCDCFiles: "[]"}
	types := []plan.Type{mutTType(t, "long"), mutTType(t, "string"), mutTType(t, "long")}
	cases := []struct {
		name string
		prep func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation)
		why  string // "" folds
	}{
		{"no history", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) { return tbl, options{}, mutTCDCExpect() },
			"the history table was not given to gate 4"},
		{"no history, said why", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			return tbl, options{historyWhy: "no table h"}, mutTCDCExpect()
		}, "no table h"},
		{"no key", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			e := mutTCDCExpect()
			e.Keys = nil
			return tbl, options{history: h, historyName: "h"}, e
		}, "the table has no key"},
		{"key not a column", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			e := mutTCDCExpect()
			e.Keys = []string{"nope"}
			return tbl, options{history: h, historyName: "h"}, e
		}, "the key column nope is not a column of the table"},
		{"table lists no commits", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			return mutTScanOnly{tbl}, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "the sink does not list the table's commits"},
		{"table commits unreadable", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			tbl.histErr = errors.New("boom1")
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "the table's commits could not be listed: boom1"},
		{"history commits unreadable", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			h.histErr = errors.New("boom2")
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "the commits of h could not be listed: boom2"},
		{"history unreadable", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			h.scanErr = errors.New("boom3")
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "h could not be read at snapshot 7: boom3"},
		{"history batch unreadable", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			h.batchErr = errors.New("boom4")
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "h could not be read at snapshot 7: boom4"},
		{"history without lima_ordering", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			h.schema = arrow.NewSchema(append(append([]arrow.Field{}, mutTLakeFields[:2]...), mutTHistFields[0], mutTHistFields[2]), nil)
			h.snaps[7] = [][]string{{"1", "a", "insert", "f:1"}}
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "h has no column amount, lima_ordering"},
		{"a replay", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			tbl.commits = append([]sink.Commit{{SnapshotID: 2, LoadID: "R1", Kind: sink.KindReplay, Props: cdc}}, tbl.commits...)
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "snapshot 2 replayed fixed exceptions"},
		{"a load of another mode", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			tbl.commits = append([]sink.Commit{{SnapshotID: 2, LoadID: "F1"}}, tbl.commits...)
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, "snapshot 2 (load F1) was not written by change capture"},
		{"a load of another mode under a replacing cdc commit", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			tbl.commits = []sink.Commit{{SnapshotID: 3, LoadID: "L1", Props: map[string]string{run.PropCDCFiles: "[]", sink.PropReplace: "true"}},
				{SnapshotID: 2, LoadID: "F1"}, {SnapshotID: 1, LoadID: "R0", Kind: sink.KindReplay}}
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, ""},
		{"a commit outside Lima and a compaction", func(tbl, h *mutTCDC) (sink.Scanner, options, Expectation) {
			tbl.commits = append([]sink.Commit{{SnapshotID: 3}, {SnapshotID: 2, LoadID: "C1", Kind: run.KindCompaction}}, tbl.commits...)
			return tbl, options{history: h, historyName: "h"}, mutTCDCExpect()
		}, ""},
	}
	for _, c := range cases {
		tbl, h := mutTCDCPair(mutTHist, mutTState)
		sc, o, e := c.prep(tbl, h)
		f, why := foldHistory(context.Background(), sc, o, e, types)
		if c.why == "" {
			if f == nil || why != "" || f.live != 3 {
				t.Errorf("%s: %v %q", c.name, f, why)
			}
			continue
		}
		if f != nil || !strings.Contains(why, c.why) {
			t.Errorf("%s: %v %q, want %q", c.name, f, why, c.why)
		}
	}
}

// TestCDCMutHistoryColumnOrder: the history's own columns may come first
// (lima_op at index 0); they are found by name wherever they are.
func TestCDCMutHistoryColumnOrder(t *testing.T) {
	tbl, h := mutTCDCPair(nil, [][]string{{"1", "a", "5"}})
	h.schema = arrow.NewSchema(append(append([]arrow.Field{}, mutTHistFields...), mutTLakeFields...), nil)
	h.snaps[7] = [][]string{{"insert", "1", "f:1", "1", "a", "5"}}
	r := mutTCDCReconcile(t, tbl, h, mutTCDCExpect())
	if r.Status != Pass || r.ControlTotals["amount"].Source != "5" {
		t.Fatalf("%s %+v %+v", r.Status, r.ControlTotals, r.Checks)
	}
}

// TestCDCMutAddCell: a NULL is no value, whatever its (undefined) value
// slot holds — here 42 under slot 1's null bit; a missing column is none.
func TestCDCMutAddCell(t *testing.T) {
	vals := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes([]int64{7, 42}))
	valid := memory.NewBufferBytes([]byte{0x01}) // slot 0 valid, slot 1 NULL
	a := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, 2, []*memory.Buffer{valid, vals}, nil, 1, 0))
	defer a.Release()
	var c foldCell
	if !addCell(&c, a, 0) || c.exact.Int64() != 7 {
		t.Errorf("slot 0: %v", c.exact.String())
	}
	var d foldCell
	if addCell(&d, a, 1) || d.exact.Sign() != 0 {
		t.Errorf("slot 1 is NULL: %v", d.exact.String())
	}
	if addCell(&d, nil, 0) {
		t.Error("no column: a value")
	}
	s := array.NewStringBuilder(memory.DefaultAllocator)
	s.Append("12")
	sa := s.NewArray()
	defer sa.Release()
	if addCell(&d, sa, 0) {
		t.Error("a string is not summed")
	}
}
