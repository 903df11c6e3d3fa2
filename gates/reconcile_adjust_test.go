package gates_test

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/gates"
)

// AdjustForReplays over a lineage written by hand, newest first: the two
// replays after the full load L1 add their rows and sums (integer, decimal
// and double), the replay before L1 and the other load's commits are not
// counted, the range is dropped. Other modes, a lineage without L1 or
// without replays after it are left as they are; a replay without a row
// count, or with a sum that is not a number, is an error.
func TestAdjustForReplaysByHand(t *testing.T) {
	e := gates.Expectation{Table: "orders", LoadID: "L1", Rows: 10, Mode: "full",
		Columns: []string{"id", "amount", "score", "name"}, Types: []string{"long", "decimal(10,2)", "double", "string"},
		Sums: map[string]string{"id": "55", "amount": "102.50", "score": "1.5"},
		Min:  map[string]string{"id": "1"}, Max: map[string]string{"id": "10"}}
	rp := func(id int64, props map[string]string) sink.Commit {
		return sink.Commit{SnapshotID: id, LoadID: "rp-" + string(rune('a'+id)), Kind: sink.KindReplay, Props: props}
	}
	history := []sink.Commit{
		rp(5, map[string]string{sink.PropRows: "2", sink.PropSumPrefix + "id": "23", sink.PropSumPrefix + "amount": "0.5", sink.PropSumPrefix + "score": "0.25"}),
		{SnapshotID: 4, LoadID: "L2-other", Kind: sink.KindLoad, Props: map[string]string{sink.PropRows: "100"}},
		rp(3, map[string]string{sink.PropRows: "1", sink.PropSumPrefix + "id": "-11"}),
		{SnapshotID: 2, LoadID: "L1", Kind: sink.KindLoad, Props: map[string]string{sink.PropRows: "10"}},
		rp(1, map[string]string{sink.PropRows: "5", sink.PropSumPrefix + "id": "1000"}),
	}
	out, n, err := gates.AdjustForReplays(e, history)
	if err != nil || n != 2 {
		t.Fatalf("adjust: %d replays, %v; want 2", n, err)
	}
	// 10 + 2 + 1 rows; id 55 + 23 - 11; amount 102.50 + 0.50; score 1.5 + 0.25.
	if out.Rows != 13 || out.Sums["id"] != "67" || out.Sums["amount"] != "103.00" || out.Sums["score"] != "1.75" || out.Min != nil || out.Max != nil {
		t.Errorf("adjusted: rows %d, sums %v, min %v, max %v; want 13, id 67, amount 103.00, score 1.75, no range", out.Rows, out.Sums, out.Min, out.Max)
	}
	if e.Sums["id"] != "55" || e.Rows != 10 || e.Min == nil {
		t.Errorf("the expectation given was changed: %+v", e)
	}
	for _, c := range []struct {
		name string
		e    gates.Expectation
		h    []sink.Commit
	}{
		{"incremental", func() gates.Expectation { x := e; x.Mode = "incremental"; return x }(), history},
		{"no L1 in the lineage", e, history[:3]},
		{"no replay after L1", e, history[3:]},
	} {
		got, n, err := gates.AdjustForReplays(c.e, c.h)
		if err != nil || n != 0 || got.Rows != c.e.Rows || got.Sums["id"] != "55" || got.Min == nil {
			t.Errorf("%s: %d replays, rows %d, sums %v, min %v, %v; want it unchanged", c.name, n, got.Rows, got.Sums, got.Min, err)
		}
	}
	empty := e
	empty.Mode = ""
	if _, n, err := gates.AdjustForReplays(empty, history); err != nil || n != 2 {
		t.Errorf("mode empty (full): %d replays, %v; want 2", n, err)
	}
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{sink.PropSumPrefix + "id": "1"}, "replay snapshot 9 has no row count"},
		{map[string]string{sink.PropRows: "1", sink.PropSumPrefix + "amount": "1.234"}, "replay snapshot 9: sum of amount is not a number"},
	} {
		h := append([]sink.Commit{rp(9, c.props)}, history[3:]...)
		if _, _, err := gates.AdjustForReplays(e, h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
	}
}
