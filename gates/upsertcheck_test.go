package gates

import (
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
