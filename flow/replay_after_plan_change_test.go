package flow_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/flow"
)

// TestReplayAfterAPlanChangeReadsTheRowAsItWas: a row held back under one
// plan (and met again under the next) and replayed after a column was added (a header the old plan did not
// read) and another renamed lands with both values — the replay found the
// added column's value nowhere and the renamed one under its old name only,
// and landed NULLs (TestLifecycle, seeds 11 and 23: replay after add-column
// or rename).
func TestReplayAfterAPlanChangeReadsTheRowAsItWas(t *testing.T) {
	ctx := context.Background()
	const head = `schema_version: 1
platform: {prefix: rp}
sources:
  in: {kind: files, path: in}
tables:
  t:
    source: {name: in, files: ["*.csv"]}
    load: {keys: [id]}
    columns:
      - {name: id, type: long, required: true}
      - {name: qty, type: long}
`
	planA := head + "      - {name: station, type: string}\n"
	planB := head + "      - {name: site, type: string, source_name: station}\n      - {name: note, type: string}\n"
	ws, pa := workspace(t, map[string][]byte{"p.csv": []byte("id,qty,station,note\n1,10,north,n1\n2,x,south,n2\n")}, planA)
	runOnce(t, ws, pa, flow.RunOptions{})
	st := openLedger(t, ws, pa)
	open, _, err := st.List(ctx, ledger.Filter{Table: "t", Status: ledger.StatusOpen}, ledger.Page{Limit: 10})
	if err != nil || len(open) != 1 {
		t.Fatalf("open %v (%v), want the row with qty x", open, err)
	}
	pb := reparse(t, planB)
	runOnce(t, ws, pb, flow.RunOptions{}) // the plan change: site renamed from station, note added; the row is met again
	if err := st.Resolve(ctx, open[0].ID, map[string]string{"qty": "20"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: pb, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	_, tbl := loadIceberg(t, ws, pb, "t")
	_, it, err := tbl.Scan(table.WithSelectedFields("id", "qty", "site", "note")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			cell := func(c int) string {
				if rec.Column(c).IsNull(i) {
					return "∅"
				}
				return rec.Column(c).ValueStr(i)
			}
			got = append(got, fmt.Sprintf("%s|%s|%s|%s", cell(0), cell(1), cell(2), cell(3)))
		}
		rec.Release()
	}
	slices.Sort(got)
	// By hand: row 1 as read under plan B; row 2 with its fix and the
	// values of its line.
	want := []string{"1|10|north|n1", "2|20|south|n2"}
	if !slices.Equal(got, want) {
		t.Fatalf("lake %v, want %v", got, want)
	}
}
