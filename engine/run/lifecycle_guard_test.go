package run

import (
	"context"
	"strings"
	"testing"
)

type countedStaged struct{ rows int64 }

func (s countedStaged) Rows() int64                   { return s.rows }
func (s countedStaged) Files() int                    { return 1 }
func (s countedStaged) Bytes() int64                  { return 1 }
func (s countedStaged) Discard(context.Context) error { return nil }

// The guard before every commit has two halves, and each refuses on its
// own: the accounting (read = loaded + held + skipped) even when the sink
// staged exactly the accepted rows — a reader or check that drops a row
// from every count but rows read — and the staged rows even when the
// accounting balances. The sink-level tests (conservation_guard_test.go)
// break both at once; these break one at a time.
func TestConservationGuardHalves(t *testing.T) {
	for _, c := range []struct {
		name                              string
		read, loaded, held, skipped, want int64
		staged                            int64
		ok                                bool
	}{
		{"balanced, staged what was accepted", 10, 7, 2, 1, 7, 7, true},
		{"a row lost from the accounting", 10, 7, 1, 1, 7, 7, false},
		{"a row invented in the accounting", 10, 8, 2, 1, 7, 7, false},
		{"the sink staged a row less", 10, 7, 2, 1, 7, 6, false},
		{"the sink staged a row more", 10, 7, 2, 1, 7, 8, false},
		{"nothing read, nothing staged", 0, 0, 0, 0, 0, 0, true},
	} {
		lc := newLifecycle("t", "full", nil)
		lc.tr.RowsRead, lc.tr.RowsLoaded, lc.tr.RowsQuarantined, lc.tr.RowsSkipped = c.read, c.loaded, c.held, c.skipped
		lc.want, lc.staged = c.want, countedStaged{c.staged}
		err := lc.conserved()
		if (err == nil) != c.ok {
			t.Errorf("%s: conserved() = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "nothing committed") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
