package gates

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// genChanges writes a base export and its change files from a seed, with
// its own ground truth: the operation and ordering headers and spellings,
// and the table after the changes (replayed here: in ordering order onto
// the base rows, the latest change of a key wins, a delete removes it).
type genCDC struct {
	files              map[string]string
	table              string   // the base table's name
	keyHeader          string   // its key's header
	headers            []string // the base file's headers
	opHeader, ordH     string
	ins, upd, del      string // the spellings written
	changeFiles        []string
	want               map[string][]string // key → the row's cells after the changes (headers order)
	baseRows, nChanges int
}

func genChanges(seed uint64, withBase bool) genCDC {
	r := rand.New(rand.NewPCG(seed, seed*104729+3))
	ent := pick(r, [2]string{"order", "orders"}, [2]string{"customer", "customers"}, [2]string{"item", "items"}, [2]string{"account", "accounts"})
	g := genCDC{files: map[string]string{}, table: ent[1], want: map[string][]string{}}
	g.keyHeader = pick(r, ent[0]+"_id", upperFirst(ent[0])+"ID", "id")
	g.headers = []string{g.keyHeader, pick(r, "name", "Name", "label"), pick(r, "qty", "Quantity"), pick(r, "amount", "total")}
	styles := [][3]string{{"I", "U", "D"}, {"insert", "update", "delete"}, {"INSERT", "UPDATE", "DELETE"}, {"i", "u", "d"}}
	st := styles[int(seed)%len(styles)]
	g.ins, g.upd, g.del = st[0], st[1], st[2]
	g.opHeader = []string{"op", "operation", "_op", "Op", "change_type"}[int(seed)%5]
	g.ordH = []string{"seq", "lsn", "changed_at", "_ts"}[int(seed/2)%4]
	row := func(id int) []string {
		return []string{fmt.Sprint(id), fmt.Sprintf("%s %d", ent[0], r.IntN(1000)), fmt.Sprint(1 + r.IntN(90)), fmt.Sprintf("%d.%02d", r.IntN(900), r.IntN(100))}
	}
	// Base rows.
	next := 1000 + r.IntN(1000)
	if withBase {
		g.baseRows = 30 + r.IntN(40)
		var b strings.Builder
		b.WriteString(strings.Join(g.headers, ",") + "\n")
		for i := 0; i < g.baseRows; i++ {
			next += 1 + r.IntN(3)
			rw := row(next)
			g.want[rw[0]] = rw
			b.WriteString(strings.Join(rw, ",") + "\n")
		}
		g.files[g.table+".csv"] = b.String()
	}
	// Changes, in ordering order, over 2 to 4 files.
	ord := int64(1 + r.IntN(500))
	t0 := time.Date(2026, 1, 1+r.IntN(20), 8, 0, 0, 0, time.UTC)
	ordText := func() string {
		switch g.ordH {
		case "changed_at", "_ts":
			return t0.Add(time.Duration(ord) * time.Second).Format(time.RFC3339)
		case "lsn":
			return fmt.Sprint(1_600_000_000 + ord*16)
		}
		return fmt.Sprint(ord)
	}
	nFiles := 2 + r.IntN(3)
	inFolder := r.IntN(2) == 0
	g.nChanges = 40 + r.IntN(40)
	var bodies []*strings.Builder
	for f := 0; f < nFiles; f++ {
		b := &strings.Builder{}
		b.WriteString(strings.Join(append([]string{g.opHeader, g.ordH}, g.headers...), ",") + "\n")
		bodies = append(bodies, b)
	}
	for i := 0; i < g.nChanges; i++ {
		ord += int64(1 + r.IntN(5))
		var keys []string
		for k := range g.want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var line []string
		switch x := r.IntN(10); {
		case x < 3 || len(keys) < 3: // insert a new key
			next += 1 + r.IntN(3)
			rw := row(next)
			g.want[rw[0]] = rw
			line = append([]string{g.ins, ordText()}, rw...)
		case x < 8: // update
			k := keys[r.IntN(len(keys))]
			rw := row(0)
			rw[0] = k
			g.want[k] = rw
			line = append([]string{g.upd, ordText()}, rw...)
		default: // delete: only the key
			k := keys[r.IntN(len(keys))]
			delete(g.want, k)
			line = []string{g.del, ordText(), k, "", "", ""}
		}
		f := i * nFiles / g.nChanges
		bodies[f].WriteString(strings.Join(line, ",") + "\n")
	}
	for f, b := range bodies {
		name := fmt.Sprintf("%s_changes_%03d.csv", g.table, f+1)
		if inFolder {
			name = fmt.Sprintf("changes/%s_%03d.csv", g.table, f+1)
		}
		g.files[name] = b.String()
		g.changeFiles = append(g.changeFiles, name)
	}
	return g
}

// GenChangesForTest exposes the change-file generator to the external
// test package (propose_cdc_e2e_test.go), which may import flow.
func GenChangesForTest(seed uint64) (files map[string]string, table, keyHeader string, headers []string, want map[string][]string) {
	g := genChanges(seed, true)
	return g.files, g.table, g.keyHeader, g.headers, g.want
}

func coveredBy(globs []string, name string) bool {
	for _, gl := range globs {
		if ok, _ := path.Match(gl, name); ok {
			return true
		}
	}
	return false
}

// TestProposeRecognisesChangeFiles: a base export and its change files
// (names, spellings and layout varying with the seed) are proposed as one
// change-capture table on the base table's key, with the change files'
// operation and ordering columns and spellings, and no table of their own.
func TestProposeRecognisesChangeFiles(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		g := genChanges(seed, true)
		t.Run(fmt.Sprintf("seed%d_%s_%s_%s_%s", seed, g.table, g.opHeader, g.ordH, g.ins), func(t *testing.T) {
			dir, p := writeExport(t, g.files)
			pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
			if err != nil {
				t.Fatal(err)
			}
			all := findingsText(pr.Findings)
			var bases []string
			for n, tb := range pr.Plan.Tables {
				if tb.Type != plan.TableMart {
					bases = append(bases, n)
				}
			}
			if !slices.Equal(bases, []string{g.table}) {
				t.Fatalf("base tables %v, want only %s\n%s", bases, g.table, all)
			}
			tb := pr.Plan.Tables[g.table]
			if tb.Load.Mode != plan.ModeCDC || tb.Load.Changes == nil {
				t.Fatalf("%s load %+v, want mode cdc\n%s", g.table, tb.Load, all)
			}
			want := plan.Changes{Operation: g.opHeader, Ordering: g.ordH, Ops: plan.ChangeOps{Insert: g.ins, Update: g.upd, Delete: g.del}}
			if *tb.Load.Changes != want {
				t.Errorf("changes %+v, want %+v", *tb.Load.Changes, want)
			}
			if k := colByHeader(t, tb, g.keyHeader); !slices.Equal(tb.Load.Keys, []string{k}) {
				t.Errorf("keys %v, want [%s]", tb.Load.Keys, k)
			}
			var cols []string
			for _, c := range tb.Columns {
				cols = append(cols, c.Name)
			}
			if len(cols) != len(g.headers) {
				t.Errorf("columns %v, want the base file's %v", cols, g.headers)
			}
			for _, f := range append([]string{g.table + ".csv"}, g.changeFiles...) {
				if !coveredBy(tb.Source.Files, f) {
					t.Errorf("%s not in the table's files %v", f, tb.Source.Files)
				}
			}
			f := finding(t, pr.Findings, g.table+": change capture")
			for _, w := range []string{"operation column " + g.opHeader, "ordering column " + g.ordH, fmt.Sprintf("%d files", len(g.changeFiles))} {
				if !strings.Contains(f.Detail, w) {
					t.Errorf("the finding does not say %q: %s", w, f.Detail)
				}
			}
			pr.Apply(p)
			if err := p.Validate(); err != nil {
				t.Errorf("the proposal does not validate: %v", err)
			}
		})
	}
}

// TestProposeChangeFilesNotRecognised: an operation-named column whose
// values are not insert/update/delete proposes nothing special, and the
// finding says why; change files without a base export become a
// change-capture table on their own key.
func TestProposeChangeFilesNotRecognised(t *testing.T) {
	g := genChanges(3, true)
	files := map[string]string{}
	for n, b := range g.files {
		if n != g.table+".csv" {
			for _, s := range []string{g.ins, g.upd, g.del} {
				b = strings.ReplaceAll(b, "\n"+s+",", "\nX"+s+",")
			}
		}
		files[n] = b
	}
	dir, p := writeExport(t, files)
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	for n, tb := range pr.Plan.Tables {
		if tb.Load.Mode == plan.ModeCDC {
			t.Errorf("%s proposed as cdc from unrecognisable operations", n)
		}
	}
	if len(pr.Plan.Tables) < 2 {
		t.Errorf("tables %v: the change files should stay a table of their own", pr.Plan.TableNames())
	}
	var found bool
	for _, f := range pr.Findings {
		if strings.HasSuffix(f.Name, ": change files") && strings.Contains(f.Detail, "are not insert/update/delete") && strings.Contains(f.Detail, "X"+g.ins) {
			found = true
		}
	}
	if !found {
		t.Errorf("no finding says why the change files were not recognised:\n%s", findingsText(pr.Findings))
	}

	// Without a base export.
	g = genChanges(5, false)
	dir, p = writeExport(t, g.files)
	pr, err = ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	var cdc []string
	for n, tb := range pr.Plan.Tables {
		if tb.Load.Mode == plan.ModeCDC {
			cdc = append(cdc, n)
			if k := colByHeader(t, tb, g.keyHeader); !slices.Equal(tb.Load.Keys, []string{k}) {
				t.Errorf("%s keys %v, want [%s]", n, tb.Load.Keys, k)
			}
			if len(tb.Columns) != len(g.headers) {
				t.Errorf("%s columns %+v, want %v (the operation and ordering are not columns)", n, tb.Columns, g.headers)
			}
			if tb.Load.Changes.Operation != g.opHeader || tb.Load.Changes.Ordering != g.ordH {
				t.Errorf("%s changes %+v, want %s and %s", n, tb.Load.Changes, g.opHeader, g.ordH)
			}
		}
	}
	if len(cdc) != 1 {
		t.Fatalf("cdc tables %v of %v, want one\n%s", cdc, pr.Plan.TableNames(), findingsText(pr.Findings))
	}
	pr.Apply(p)
	if err := p.Validate(); err != nil {
		t.Errorf("the proposal does not validate: %v", err)
	}
}
