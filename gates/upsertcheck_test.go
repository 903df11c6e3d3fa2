package gates

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/run"
)

func TestUpsertKeys(t *testing.T) {
	if f := UpsertKeys(nil, 0, 5); f != nil {
		t.Errorf("no upsert: %+v", f)
	}
	if f := UpsertKeys(&run.UpsertResult{}, 0, 5); f != nil {
		t.Errorf("keys not compared: %+v", f)
	}
	for _, c := range []struct {
		keys, held, lake int64
		want             string
	}{{10, 0, 10, Pass}, {10, 0, 11, Fail}, {10, 0, 9, Fail}, {10, 2, 11, Warn}} {
		f := UpsertKeys(&run.UpsertResult{DeletesChecked: true, SourceKeys: c.keys}, c.held, c.lake)
		if f == nil || f.Status != c.want || (c.want == Fail && f.Fix == "") {
			t.Errorf("keys %d held %d lake %d: %+v, want %s", c.keys, c.held, c.lake, f, c.want)
		}
	}
}

// TestUpsertKeysBoundaries: one held-back row is enough to leave it
// undecided even when the counts agree; one key either way fails with a
// fix; the detail gives the figures.
func TestUpsertKeysBoundaries(t *testing.T) {
	for _, c := range []struct {
		keys, held, lake int64
		want             string
	}{{10, 1, 10, Warn}, {10, 1, 9, Warn}, {0, 0, 0, Pass}, {0, 0, 1, Fail}, {1, 0, 0, Fail}} {
		f := UpsertKeys(&run.UpsertResult{DeletesChecked: true, SourceKeys: c.keys, Deleted: 3}, c.held, c.lake)
		if f == nil || f.Status != c.want || (c.want == Fail) != (f.Fix != "") {
			t.Errorf("keys %d held %d lake %d: %+v, want %s", c.keys, c.held, c.lake, f, c.want)
			continue
		}
		want := fmt.Sprintf("the source held %d distinct keys in the read snapshot; the lake snapshot holds %d rows (3 deleted this run)", c.keys, c.lake)
		if !strings.HasPrefix(f.Detail, want) || strings.Contains(f.Detail, "held back") != (c.held > 0) {
			t.Errorf("keys %d held %d lake %d: %q", c.keys, c.held, c.lake, f.Detail)
		}
	}
}
