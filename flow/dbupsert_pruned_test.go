package flow_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// TestUpsertReadsOnlyCandidateFiles (SQLite, no server needed; issue 15
// target 5): a generated table written as four data files with disjoint
// key ranges, then an upsert whose changes (updates, soft deletes, new
// keys above every range) touch one or two of them. For several seeds the
// lake by key equals the model kept here, the look-up of the keys read
// opened exactly the files whose key bounds hold a changed key (counted by
// the sink), and gate 4 proves the delta without re-reading the table.
func TestUpsertReadsOnlyCandidateFiles(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { upsertPruned(t, seed) })
	}
}

type prunedRow struct {
	qty  int64
	note string
}

func upsertPruned(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 15))
	file := filepath.Join(t.TempDir(), "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dbExec(t, db, `CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER NOT NULL, note TEXT, is_deleted BOOLEAN NOT NULL, version INTEGER NOT NULL)`)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: upprune}
sources:
  erp: {kind: sqlite, path: `+file+`}
tables:
  items:
    source: {name: erp, table: items}
    load: {mode: upsert, keys: [id], watermark: version, soft_delete: is_deleted}
    control_columns: [qty]
`)
	model := map[int64]prunedRow{}
	// Four runs, each adding the next 100 keys: four data files whose id
	// bounds are disjoint.
	const files, per = 4, 100
	for f := range files {
		for i := range per {
			id := int64(f*per + i + 1)
			r := prunedRow{qty: rng.Int64N(1000), note: fmt.Sprintf("n%d", rng.IntN(50))}
			dbExec(t, db, `INSERT INTO items VALUES (?, ?, ?, 0, ?)`, id, r.qty, r.note, f+1)
			model[id] = r
		}
		out := runOnce(t, ws, p, flow.RunOptions{})
		balanced(t, out.Result.Tables[0])
	}
	// The change: some keys of one or two files updated, one of them
	// soft-deleted, three new keys above every file's range.
	touched := []int{rng.IntN(files)}
	if rng.IntN(2) == 0 {
		touched = append(touched, (touched[0]+1+rng.IntN(files-1))%files)
	}
	slices.Sort(touched)
	var updated, deleted int64
	for _, f := range touched {
		ids := rng.Perm(per)[:5+rng.IntN(10)]
		for j, i := range ids {
			id := int64(f*per + i + 1)
			if j == 0 {
				dbExec(t, db, `UPDATE items SET is_deleted = 1, version = 10 WHERE id = ?`, id)
				delete(model, id)
				deleted++
				continue
			}
			r := prunedRow{qty: 5000 + rng.Int64N(1000), note: "changed"}
			dbExec(t, db, `UPDATE items SET qty = ?, note = ?, version = 10 WHERE id = ?`, r.qty, r.note, id)
			model[id] = r
			updated++
		}
	}
	for i := range 3 {
		id := int64(10000 + i)
		dbExec(t, db, `INSERT INTO items VALUES (?, 7, 'new', 0, 10)`, id)
		model[id] = prunedRow{qty: 7, note: "new"}
	}
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	balanced(t, tr)
	u := tr.Upsert
	if u == nil || u.Updated != updated || u.SoftDeleted != deleted || u.Inserted != 3 || u.RowsRemoved != updated+deleted {
		t.Fatalf("upsert %+v, want %d updated, %d soft-deleted, 3 inserted", u, updated, deleted)
	}
	// Only the files whose key bounds hold a changed key were opened.
	if l := u.LakeLookup; l == nil || l.DataFiles != files || l.FilesOpened != len(touched) {
		t.Fatalf("the look-up of the keys read: %+v, want %d of %d data files opened (files %v touched)", l, len(touched), files, touched)
	}
	kr := tr.Table.(interface{ KeyReads() sink.FindStats }).KeyReads()
	if kr.FilesOpened >= kr.DataFiles {
		t.Fatalf("the run's key look-ups opened %d of the %d data files they considered: no pruning", kr.FilesOpened, kr.DataFiles)
	}
	// The lake by key equals the model.
	lake := prunedLake(t, ws, p, tr)
	if len(lake) != len(model) {
		t.Fatalf("the lake holds %d keys, the model %d", len(lake), len(model))
	}
	for id, want := range model {
		if got, ok := lake[id]; !ok || got != want {
			t.Fatalf("id %d: lake %+v (present %v), model %+v", id, got, ok, want)
		}
	}
	rep := tableReport(t, out.Report, "items")
	t.Logf("files %v touched: look-up %+v; all key reads of the run %+v; gate 4: %s", touched, *u.LakeLookup, kr, check(t, rep, "unique key (id) of the changed keys").Detail)
	if rep.Reconciliation != gates.Pass {
		t.Fatalf("gate 4: %s: %+v", rep.Reconciliation, rep.Checks)
	}
	for _, name := range []string{"delta: live rows from the manifests", "delta: rows removed", "unique key (id) of the changed keys",
		"delta: rows removed are the changed keys' old rows", "sum(qty) of the rows added"} {
		if f := check(t, rep, name); f.Status != gates.Pass {
			t.Fatalf("%s: %+v", name, f)
		}
	}
	if f := check(t, rep, gates.NotChecked+"the rows the change did not touch"); f.Status != gates.Skip {
		t.Fatalf("gate 4 must name what it did not re-read: %+v", f)
	}
	for _, c := range rep.Checks {
		if c.Name == "metadata row count" || c.Name == "unique key (id)" {
			t.Fatalf("the delta gate 4 claims a whole-table check it did not make: %+v", c)
		}
	}
}

// prunedLake reads the current snapshot by key (a key twice fails).
func prunedLake(t *testing.T, ws flow.Workspace, p *plan.Plan, tr *run.TableResult) map[int64]prunedRow {
	t.Helper()
	it, err := openLakeTable(t, ws, p, tr).(sink.Scanner).Scan(context.Background(), 0, []string{"id", "qty", "note"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]prunedRow{}
	intAt := func(a arrow.Array, i int) int64 {
		switch v := a.(type) {
		case *array.Int64:
			return v.Value(i)
		case *array.Int32:
			return int64(v.Value(i))
		}
		t.Fatalf("column type %s", a.DataType())
		return 0
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			id := intAt(rec.Column(0), i)
			if _, dup := out[id]; dup {
				t.Fatalf("id %d twice in the lake", id)
			}
			r := prunedRow{qty: intAt(rec.Column(1), i)}
			if n := rec.Column(2); !n.IsNull(i) {
				r.note = n.(*array.String).Value(i)
			}
			out[id] = r
		}
		rec.Release()
	}
	return out
}
