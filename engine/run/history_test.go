package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// A full-load table with history: true keeps every version: after the file
// changes one price and gains a row, the table holds the new state and the
// history both loads' rows, each with its load id and file:line.
func TestHistoryOfOrdinaryLoadsKeepsEveryVersion(t *testing.T) {
	dir := t.TempDir()
	p, err := plan.Parse([]byte(`schema_version: 1
platform: {prefix: cdc}
sources: {in: {kind: files, path: in}}
tables:
  items:
    source: {name: in, files: ["items.csv"]}
    columns: [{name: id, type: long}, {name: price, type: long}]
    load: {keys: [id]}
    history: true
`), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "in"), 0o700)
	sk, err := icesink.Open(context.Background(), icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	e := &cdcEnv{dir: dir, plan: p, sk: sk}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "in", "items.csv"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("id,price\n1,10\n2,20\n3,30\n")
	tr1 := e.run(t)
	write("id,price\n1,10\n2,25\n3,30\n4,40\n")
	tr2 := e.run(t)
	if tr1.LoadID == tr2.LoadID || tr2.Status != StatusLoaded {
		t.Fatalf("second load %s %s", tr2.Status, tr2.LoadID)
	}
	tr3 := e.run(t) // the same input again: nothing new anywhere
	if tr3.Status != StatusAlreadyLoaded {
		t.Fatalf("rerun %s", tr3.Status)
	}
	cur := map[string]string{}
	for _, r := range e.lake(t, "items", nil) {
		cur[r["id"]] = r["price"]
	}
	if fmt.Sprint(cur) != "map[1:10 2:25 3:30 4:40]" {
		t.Fatalf("table %v", cur)
	}
	var versions []string
	for _, r := range e.lake(t, "items_history", nil) {
		load := map[string]string{tr1.LoadID: "L1", tr2.LoadID: "L2"}[r["lima_load_id"]]
		versions = append(versions, fmt.Sprintf("%s=%s %s %s %s", r["id"], r["price"], r["lima_op"], load, r["lima_source"]))
		if r["lima_valid_from"] == "NULL" {
			t.Fatalf("no valid-from: %v", r)
		}
	}
	sort.Strings(versions)
	want := []string{"1=10 load L1 items.csv:2", "1=10 load L2 items.csv:2", "2=20 load L1 items.csv:3", "2=25 load L2 items.csv:3",
		"3=30 load L1 items.csv:4", "3=30 load L2 items.csv:4", "4=40 load L2 items.csv:5"}
	if fmt.Sprint(versions) != fmt.Sprint(want) {
		t.Fatalf("history\n%v\nwant\n%v", versions, want)
	}
}
