package gates

import (
	"strings"
	"testing"
)

func TestEvolutionFindings(t *testing.T) {
	narrow := []string{"column qty is long in the lake but int in the plan"}
	for _, c := range []struct {
		name   string
		ev     TableEvolution
		status []string
		fix    []string
	}{
		{"compatible changes pass", TableEvolution{Table: "t", Mode: "incremental", Changes: []string{"add column grade string"}}, []string{Pass}, nil},
		{"narrowing on an appending table is refused with the fixes", TableEvolution{Table: "t", Mode: "incremental", Rewrite: narrow}, []string{Fail},
			[]string{"new table", "--rewrite t", "--full-refresh --table t"}},
		{"narrowing on an upsert table is refused", TableEvolution{Table: "t", Mode: "upsert", Changes: []string{"add column g string"}, Rewrite: narrow}, []string{Pass, Fail}, []string{"--full-refresh"}},
		{"narrowing on a mode full table is a rewrite", TableEvolution{Table: "t", Mode: "full", Rewrite: narrow}, []string{Pass}, nil},
		{"an approved rewrite passes", TableEvolution{Table: "t", Mode: "incremental", Rewrite: narrow, RewriteApproved: true}, []string{Pass}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := EvolutionFindings([]TableEvolution{c.ev})
			if len(fs) != len(c.status) {
				t.Fatalf("%d findings, want %d: %+v", len(fs), len(c.status), fs)
			}
			for i, f := range fs {
				if f.Status != c.status[i] {
					t.Errorf("finding %d: %s, want %s: %s", i, f.Status, c.status[i], f.Detail)
				}
			}
			last := fs[len(fs)-1]
			for _, w := range c.fix {
				if !strings.Contains(last.Fix, w) {
					t.Errorf("fix %q does not name %q", last.Fix, w)
				}
			}
			if !strings.Contains(last.Detail, "column") {
				t.Errorf("detail %q does not say what changes", last.Detail)
			}
		})
	}
}
