package run

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// recordingQuarantine keeps every exception handed to Hold, in order —
// what the exception ledger receives — besides the JSONL files.
type recordingQuarantine struct {
	JSONLQuarantine
	mu   sync.Mutex
	held []Exception
}

func (q *recordingQuarantine) Hold(ctx context.Context, ex []Exception) error {
	q.mu.Lock()
	for _, e := range ex {
		e.Errors = append(e.Errors[:0:0], e.Errors...)
		q.held = append(q.held, e)
	}
	q.mu.Unlock()
	return q.JSONLQuarantine.Hold(ctx, ex)
}

const parallelPlan = `schema_version: 1
platform: {prefix: par}
sources: {in: {kind: files, path: in}}
tables:
  items:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long}
      - {name: name, type: string, normalize: [trim]}
      - {name: amount, type: "decimal(12,2)"}
      - {name: qty, type: int}
      - {name: day, type: date}
      - {name: ts, type: timestamp}
      - {name: flag, type: boolean}
    load: {mode: full, keys: [id], watermark: ts}
    checks:
      - {rule: range, column: qty, min: 0, max: 100}
      - {rule: not_null, column: name}
`

// dirtyCSV writes a generated dirty file: bad numbers, bad dates, control
// characters, multi-line quoted cells, null tokens, padded text, blank and
// ragged lines, and keys that repeat earlier keys of any file (so the
// copies fall across chunk boundaries). It returns the records written
// (header, blank and ragged lines included), and how many of them carry
// each kind of dirt.
func dirtyCSV(r *rand.Rand, first, n int, used *[]int64) (string, int64) {
	var b strings.Builder
	b.WriteString("id,name,amount,qty,day,ts,flag\n")
	records := int64(1)
	for i := 0; i < n; i++ {
		records++
		switch p := r.IntN(100); {
		case p < 1:
			b.WriteString("\n") // blank line
			continue
		case p < 2:
			fmt.Fprintf(&b, "%d,ragged,1.00\n", first+i) // malformed
			continue
		}
		id := int64(first + i)
		if len(*used) > 0 && r.IntN(100) < 4 { // a duplicate key
			id = (*used)[r.IntN(len(*used))]
		}
		*used = append(*used, id)
		idText := fmt.Sprint(id)
		if r.IntN(100) < 1 {
			idText = "x" + idText
		}
		name := fmt.Sprintf("name %d", r.IntN(1000))
		switch p := r.IntN(100); {
		case p < 3:
			name = `"first line` + "\n" + `second, line ""quoted"""`
		case p < 5:
			name = "bad\x01char"
		case p < 8:
			name = "  padded  "
		case p < 9:
			name = "" // null: not_null fails
		}
		amount := fmt.Sprintf("%d.%02d", r.IntN(100000), r.IntN(100))
		switch p := r.IntN(100); {
		case p < 2:
			amount = "12.3x"
		case p < 4:
			amount = "1,234.50"
		case p < 5:
			amount = "NULL"
		}
		qty := fmt.Sprint(r.IntN(106)) // above 100 fails the range
		if r.IntN(100) < 2 {
			qty = "seven"
		}
		day := fmt.Sprintf("2024-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))
		switch p := r.IntN(100); {
		case p < 2:
			day = "2024-02-30"
		case p < 4:
			day = fmt.Sprintf("%02d/%02d/2024", 1+r.IntN(28), 1+r.IntN(12))
		}
		ts := fmt.Sprintf("2024-%02d-%02dT%02d:%02d:%02d", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60))
		if r.IntN(100) < 2 {
			ts = "yesterday"
		}
		flag := []string{"true", "false", "yes", "no"}[r.IntN(4)]
		if r.IntN(100) < 2 {
			flag = "maybe"
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s\n", idText, name, amount, qty, day, ts, flag)
	}
	return b.String(), records
}

// parallelRun is one load of the same input and what it left behind.
type parallelRun struct {
	tr   *TableResult
	held []Exception
	lake []string
}

func loadWorkers(t *testing.T, files map[string]string, workers int) parallelRun {
	t.Helper()
	dir := t.TempDir()
	p, err := plan.Parse([]byte(parallelPlan), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.ETL.Parallel = workers
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o700); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // the same load id in both runs
	for name, content := range files {
		path := filepath.Join(dir, "in", name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	q := &recordingQuarantine{JSONLQuarantine: JSONLQuarantine{Dir: filepath.Join(dir, "q")}}
	// Recorded fixes (as from the ledger) for the one-line rows with a bad
	// amount or flag: applied on load, in the order of the rows.
	fixes := map[FixKey]KnownFix{}
	for name, content := range files {
		for i, line := range strings.Split(content, "\n") {
			switch {
			case strings.Contains(line, ",12.3x,"):
				fixes[NewFixKey(name, []byte(line))] = KnownFix{ExceptionID: int64(1000 + i), Status: "fixed", Fixed: map[string]string{"amount": "12.30"}}
			case strings.HasSuffix(line, ",maybe"):
				fixes[NewFixKey(name, []byte(line))] = KnownFix{ExceptionID: int64(5000 + i), Status: "fixed", Fixed: map[string]string{"flag": "true"}}
			}
		}
	}
	known := func(context.Context, string) (map[FixKey]KnownFix, error) { return fixes, nil }
	res, err := Load(ctx, Options{Workspace: dir, Plan: p, Sink: sk, Quarantine: q, RunID: "run-1", BatchRows: 50, KnownFixes: known})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Tables[0]
	if tr.Err != nil {
		t.Fatalf("workers %d: %v", workers, tr.Err)
	}
	lake := lakeRowsInOrder(t, ctx, sk, table.Identifier{"par", "items"})
	normalizeRun(tr, q.held)
	return parallelRun{tr: tr, held: q.held, lake: lake}
}

// The parallel cast is the sequential path, observably: for generated
// dirty inputs (several seeds, several files, one of them without a
// column the plan reads), a load with 1 worker and loads with 2 and 4
// workers casting 7-row chunks leave the same rows in the same order in
// the lake (read back with iceberg-go), hand the ledger the same
// exceptions in the same order (rules, row numbers, raw bytes, values,
// identities), keep the same copy of each duplicate key and report the
// same counts, fixes, control totals, samples and watermark.
func TestParallelCastIsTheSequentialPath(t *testing.T) {
	defer func(n int) { parallelChunkRows = n }(parallelChunkRows)
	parallelChunkRows = 7
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, seed*7919))
			files := map[string]string{}
			var used []int64
			var records int64
			for f, n := range []int{400 + r.IntN(300), 1 + r.IntN(5), 300 + r.IntN(300)} {
				content, recs := dirtyCSV(r, f*10000, n, &used)
				files[fmt.Sprintf("part-%d.csv", f)] = content
				records += recs
			}
			// A file without the qty column: a file exception between the others.
			files["part-1b.csv"] = "id,name,amount,day,ts,flag\n1,a,1.00,2024-01-01,2024-01-01T00:00:00,true\n"
			seq := loadWorkers(t, files, 1)
			if seq.tr.RowsRead != records {
				t.Fatalf("rows read %d, the generator wrote %d records to the readable files", seq.tr.RowsRead, records)
			}
			if !seq.tr.Balanced() || int64(len(seq.lake)) != seq.tr.RowsLoaded {
				t.Fatalf("sequential: read %d = loaded %d + held %d + skipped %d; lake %d rows",
					seq.tr.RowsRead, seq.tr.RowsLoaded, seq.tr.RowsQuarantined, seq.tr.RowsSkipped, len(seq.lake))
			}
			for _, rule := range []string{RuleUnique, RuleMalformed, "type", "range", "control_char", "not_null"} {
				if seq.tr.QuarantinedBy[rule] == 0 {
					t.Errorf("the input has no row held under %s: %v", rule, seq.tr.QuarantinedBy)
				}
			}
			if len(seq.tr.FileExceptions) != 1 || len(seq.tr.Normalizations) == 0 || len(seq.tr.AppliedFixes) == 0 {
				t.Errorf("file exceptions %d, normalizations %v, applied fixes %v", len(seq.tr.FileExceptions), seq.tr.Normalizations, seq.tr.AppliedFixes)
			}
			t.Logf("read %d: loaded %d, held %d %v, skipped %d; %d exceptions, %d normalizations, %d fixes applied", seq.tr.RowsRead, seq.tr.RowsLoaded,
				seq.tr.RowsQuarantined, seq.tr.QuarantinedBy, seq.tr.RowsSkipped, len(seq.held), len(seq.tr.Normalizations), len(seq.tr.AppliedFixes))
			for _, workers := range []int{2, 4} {
				par := loadWorkers(t, files, workers)
				if !reflect.DeepEqual(seq.lake, par.lake) {
					t.Errorf("workers %d: the lake differs: %s", workers, firstDiff(seq.lake, par.lake))
				}
				if len(seq.held) != len(par.held) {
					t.Errorf("workers %d: %d exceptions held, sequential %d", workers, len(par.held), len(seq.held))
				}
				for i := range min(len(seq.held), len(par.held)) {
					if !reflect.DeepEqual(seq.held[i], par.held[i]) {
						t.Errorf("workers %d: exception %d differs:\n seq %+v\n par %+v", workers, i, seq.held[i], par.held[i])
						break
					}
				}
				sv, pv := reflect.ValueOf(*seq.tr), reflect.ValueOf(*par.tr)
				for i := range sv.NumField() {
					if a, b := sv.Field(i).Interface(), pv.Field(i).Interface(); !reflect.DeepEqual(a, b) {
						t.Errorf("workers %d: the table results differ in %s:\n seq %+v\n par %+v", workers, sv.Type().Field(i).Name, a, b)
					}
				}
			}
		})
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("row %d: %q vs %q", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("%d rows vs %d", len(a), len(b))
}

// lakeRowsInOrder is the table as iceberg-go reads it, row by row in its
// order, each row its values joined by "|" (NULL for a null, dates as
// yyyy-mm-dd).
func lakeRowsInOrder(t *testing.T, ctx context.Context, sk *icesink.Sink, id table.Identifier) []string {
	t.Helper()
	tbl, err := sk.Catalog().LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var lake []string
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			var f []string
			for c := 0; c < int(rec.NumCols()); c++ {
				col := rec.Column(c)
				switch {
				case col.IsNull(r):
					f = append(f, "NULL")
				case col.DataType().ID() == arrow.DATE32:
					f = append(f, col.(*array.Date32).Value(r).FormattedString())
				default:
					f = append(f, col.ValueStr(r))
				}
			}
			lake = append(lake, strings.Join(f, "|"))
		}
		rec.Release()
	}
	return lake
}

// normalizeRun clears what differs by nature between two runs of the same
// load: clocks, deadlines and the snapshot.
func normalizeRun(tr *TableResult, held []Exception) {
	for i := range held {
		held[i].Deadline = time.Time{}
	}
	for _, xs := range [][]Exception{tr.Exceptions, tr.FileExceptions} {
		for i := range xs {
			xs[i].Deadline = time.Time{}
		}
	}
	tr.Started, tr.Finished, tr.Phases, tr.Table, tr.Commit = time.Time{}, time.Time{}, Phases{}, nil, sink.Commit{}
}
