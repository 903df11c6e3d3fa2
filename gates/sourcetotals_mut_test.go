package gates

// Failing-side tests of SourceTotals and SourceCount (issue 20, mutation
// testing): every verdict at its boundary, both directions of a count, the
// float tolerance on both sides and exactly at it, each sum that is not a
// number, and the details that name what was not decided. Every expected
// figure is worked out by hand in the comments.

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
)

func mutTType(t *testing.T, s string) plan.Type {
	t.Helper()
	ty, err := plan.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// mutTFinding returns the finding named name, failing the test without it.
func mutTFinding(t *testing.T, fs []Finding, name string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no finding %q in %+v", name, fs)
	return Finding{}
}

func TestSourceTotalsNil(t *testing.T) {
	if fs := SourceTotals(nil, nil, nil, nil, true); fs != nil {
		t.Fatalf("no totals: %+v", fs)
	}
}

// TestSourceTotalsCountDetail: the count passes only when equal, in both
// directions; "stopped early" is said only of an incomplete read; the
// side of the sums is named.
func TestSourceTotalsCountDetail(t *testing.T) {
	for _, c := range []struct {
		rows, read int64
		incomplete bool
		want       string
	}{{10, 10, false, Pass}, {10, 9, false, Fail}, {10, 11, false, Fail}, {10, 9, true, Fail}} {
		st := &run.SourceTotals{Unit: "s.t", Rows: c.rows, RowsRead: c.read, Incomplete: c.incomplete}
		f := mutTFinding(t, SourceTotals(st, nil, nil, nil, true), "source count")
		if f.Status != c.want || (c.want == Fail) != (f.Fix != "") {
			t.Errorf("%d counted, %d read: %+v, want %s", c.rows, c.read, f, c.want)
		}
		if strings.Contains(f.Detail, "stopped early") != c.incomplete {
			t.Errorf("%d counted, %d read, incomplete %v: %q", c.rows, c.read, c.incomplete, f.Detail)
		}
	}
	long := mutTType(t, "long")
	st := &run.SourceTotals{Rows: 1, RowsRead: 1, Sums: map[string]string{"n": "5"}}
	for _, lakeSide := range []bool{true, false} {
		f := mutTFinding(t, SourceTotals(st, []string{"n"}, []plan.Type{long}, map[string]string{"n": "5"}, lakeSide), "source sum(n)")
		if f.Status != Pass || strings.Contains(f.Detail, "accepted by this load 5") == lakeSide || strings.Contains(f.Detail, "; lake 5") != lakeSide {
			t.Errorf("lake side %v: %+v", lakeSide, f)
		}
		// No held-back rows: the detail does not speak of them.
		if strings.Contains(f.Detail, "held back") {
			t.Errorf("no rows held: %q", f.Detail)
		}
	}
}

// TestSourceTotalsColumns: a sum is checked for the first column too, a
// summed column that is not a column of the table or has no type is left
// out (no finding, no panic).
func TestSourceTotalsColumns(t *testing.T) {
	long := mutTType(t, "long")
	st := &run.SourceTotals{Rows: 1, RowsRead: 1, Sums: map[string]string{"a": "1", "b": "2", "gone": "3"}}
	fs := SourceTotals(st, []string{"a", "b"}, []plan.Type{long}, map[string]string{"a": "1", "b": "2"}, true)
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "source count,source sum(a)" {
		t.Fatalf("findings %q, want source count and sum(a) only", names)
	}
	if fs[1].Status != Pass {
		t.Fatalf("sum(a): %+v", fs[1])
	}
}

// TestSourceTotalsExact: integers and decimals, exact in both directions,
// a missing held sum read as 0, the held-back share added (not
// subtracted).
func TestSourceTotalsExact(t *testing.T) {
	long, dec := mutTType(t, "long"), mutTType(t, "decimal(10,2)")
	cases := []struct {
		name      string
		ty        plan.Type
		src, lake string
		held      map[string]string
		rowsHeld  int64
		want      string
		has       string
	}{
		{"long equal", long, "100", "100", nil, 0, Pass, "variance 0 (exact)"},
		{"long one more in the lake", long, "100", "101", nil, 0, Fail, "variance 1 (exact)"},
		{"long one less in the lake", long, "100", "99", nil, 0, Fail, "variance -1 (exact)"},
		// 90 + 10 = 100; subtracting would give 80.
		{"long held back added", long, "100", "90", map[string]string{"x": "10"}, 2, Pass, "+ held back 10 (2 rows)"},
		// RowsHeld 1 but no held sum: read as 0 (so 100 = 100).
		{"held sum missing is 0", long, "100", "100", nil, 1, Pass, "+ held back 0 (1 rows)"},
		// 12.34 + 0.66 = 13.00; at scale 0 the decimals would not parse.
		{"decimal equal", dec, "13.00", "12.34", map[string]string{"x": "0.66"}, 1, Pass, "variance 0.00 (exact)"},
		{"decimal a cent short", dec, "13.00", "12.33", map[string]string{"x": "0.66"}, 1, Fail, "variance -0.01 (exact)"},
		{"lake not exact text", dec, "13.00", "12.345", nil, 0, Warn, "not exact decimal text"},
		{"held not exact text", dec, "13.00", "12.34", map[string]string{"x": "0.666"}, 1, Warn, "not exact decimal text"},
		{"source not a number", dec, "abc.defg", "12.34", nil, 0, Warn, "the database's sum is not a number"},
		// The database summed in floating point: 101 against 100.50, a
		// relative difference of 0.5/100.5 = 0.004975… ("0.00498").
		{"source summed in floating point", dec, "1.01e2", "100.00", map[string]string{"x": "0.50"}, 1, Warn, "lake + held back = 100.50, relative difference 0.00498"},
	}
	for _, c := range cases {
		st := &run.SourceTotals{Rows: 1, RowsRead: 1, RowsHeld: c.rowsHeld, Sums: map[string]string{"x": c.src}, HeldSums: c.held}
		f := mutTFinding(t, SourceTotals(st, []string{"x"}, []plan.Type{c.ty}, map[string]string{"x": c.lake}, true), "source sum(x)")
		if f.Status != c.want || !strings.Contains(f.Detail, c.has) || (c.want == Fail) != (f.Fix != "") {
			t.Errorf("%s: %+v, want %s with %q", c.name, f, c.want, c.has)
		}
	}
}

// TestSourceTotalsNotDecided: an incomplete read, one skipped row, an
// unaccounted held-back value: each a warning even when the sums agree or
// disagree, never a pass or a fail.
func TestSourceTotalsNotDecided(t *testing.T) {
	long := mutTType(t, "long")
	for _, lake := range []string{"100", "7"} {
		for _, c := range []struct {
			name string
			st   run.SourceTotals
			has  string
		}{
			{"incomplete", run.SourceTotals{Incomplete: true}, "the read stopped early"},
			{"one row skipped", run.SourceTotals{RowsSkipped: 1}, "1 rows were skipped"},
			{"unaccounted", run.SourceTotals{Unaccounted: []string{"y", "x"}}, "a held-back row's x is not a number"},
		} {
			st := c.st
			st.Rows, st.RowsRead, st.Sums = 5, 5, map[string]string{"x": "100"}
			f := mutTFinding(t, SourceTotals(&st, []string{"x"}, []plan.Type{long}, map[string]string{"x": lake}, true), "source sum(x)")
			if f.Status != Warn || !strings.Contains(f.Detail, c.has) {
				t.Errorf("%s, lake %s: %+v", c.name, lake, f)
			}
		}
	}
	// Another column unaccounted: x is decided.
	st := &run.SourceTotals{Rows: 5, RowsRead: 5, Sums: map[string]string{"x": "100"}, Unaccounted: []string{"y"}}
	if f := mutTFinding(t, SourceTotals(st, []string{"x"}, []plan.Type{long}, map[string]string{"x": "7"}, true), "source sum(x)"); f.Status != Fail {
		t.Errorf("y unaccounted, x off by 93: %+v", f)
	}
}

// TestSourceTotalsFloat: doubles within FloatTolerance (1e-9 relative)
// pass, beyond it fail, in both directions; exactly at it passes; the
// denominator is the larger of |source| and |lake + held|; a sum that is
// not a number warns.
func TestSourceTotalsFloat(t *testing.T) {
	dbl := mutTType(t, "double")
	cases := []struct {
		name            string
		src, lake, held string
		want            string
	}{
		{"all zero", "0", "0", "0", Pass},
		{"equal with held", "2.5", "2", "0.5", Pass},
		// 2 + 0.5 = 2.5 vs 1.5 or 3.5 (held subtracted or the source
		// added would give 1.5 - 2.5 or 6).
		{"one less", "3.5", "2", "0.5", Fail},
		{"one more", "1.5", "2", "0.5", Fail},
		// |diff| 1 over 1e9: exactly 1e-9 (1.0/1e9 rounds to the double
		// nearest 1e-9): within, not beyond.
		{"exactly at the tolerance, lake below", "1000000000", "999999999", "0", Pass},
		{"exactly at the tolerance, lake above", "999999999", "1000000000", "0", Pass},
		// 1 over 1e8 = 1e-8: beyond, both sides.
		{"beyond the tolerance, lake below", "100000000", "99999999", "0", Fail},
		{"beyond the tolerance, lake above", "99999999", "100000000", "0", Fail},
		// A diff of about 1e-6 over 1e9, about 1e-15 relative: within,
		// and not zero.
		{"within the tolerance", "1000000000", "1000000000.000001", "0", Pass},
		// lake + held = 1e9 - 999999999.5 = 0.5 vs source 0.25: 0.25 over
		// max(0.25, 0.5) is 0.5 relative, a fail (over |lake - held|,
		// 2e9, it would pass).
		{"denominator is lake plus held", "0.25", "1000000000", "-999999999.5", Fail},
		{"source not a number", "x", "1", "0", Warn},
		{"lake not a number", "1", "x", "0", Warn},
		{"held not a number", "1", "1", "x", Warn},
	}
	for _, c := range cases {
		st := &run.SourceTotals{Rows: 1, RowsRead: 1, RowsHeld: 1, Sums: map[string]string{"r": c.src}, HeldSums: map[string]string{"r": c.held}}
		f := mutTFinding(t, SourceTotals(st, []string{"r"}, []plan.Type{dbl}, map[string]string{"r": c.lake}, true), "source sum(r)")
		if f.Status != c.want || (c.want == Fail) != (f.Fix != "") {
			t.Errorf("%s: source %s, lake %s, held %s: %+v, want %s", c.name, c.src, c.lake, c.held, f, c.want)
		}
	}
}

// TestSourceCountMut: SourceCount at its boundaries (one row either way
// of lake = source - held), for every mode, with the deletes note and the
// fix each case must name.
func TestSourceCountMut(t *testing.T) {
	cases := []struct {
		name string
		in   CountInput
		st   string
		has  []string
		fix  string
	}{
		// want = 10 - 2 = 8.
		{"no mode is full: equal", CountInput{SourceRows: 10, LakeRows: 8, Held: 2}, Pass, []string{"a full load replaces the table"}, ""},
		{"no mode is full: one short", CountInput{SourceRows: 10, LakeRows: 7, Held: 2}, Fail, []string{"1 source row(s) are neither"}, "--full-refresh"},
		// 9 > 10 - 2 but not > 10: explained by neither.
		{"full: one more than source - held", CountInput{Mode: "full", SourceRows: 10, LakeRows: 9, Held: 2}, Fail,
			[]string{"the lake holds 1 row(s) more than the source minus the held-back rows"}, "source's own count"},
		// 10 = source rows, not more than the whole source.
		{"full: as many as the whole source", CountInput{Mode: "full", SourceRows: 10, LakeRows: 10, Held: 2}, Fail,
			[]string{"2 row(s) more than the source minus"}, "source's own count"},
		{"incremental: equal", CountInput{Mode: "incremental", SourceRows: 10, LakeRows: 8, Held: 2}, Pass, []string{"deletes are not detected in mode incremental"}, ""},
		{"incremental: more than source - held", CountInput{Mode: "incremental", SourceRows: 10, LakeRows: 9, Held: 2}, Warn,
			[]string{"1 row(s) more than the source minus", "not decided"}, "--full-refresh"},
		{"incremental: one more than the whole source", CountInput{Mode: "incremental", SourceRows: 10, LakeRows: 11}, Warn,
			[]string{"1 row(s) more than the whole source"}, "load.mode: upsert"},
		{"incremental, keys compared: more than the whole source", CountInput{Mode: "incremental", SourceRows: 10, LakeRows: 11, DeletesCompared: true}, Fail,
			[]string{"every source key was compared"}, "rows written twice"},
		{"upsert: more than the whole source", CountInput{Mode: "upsert", SourceRows: 10, LakeRows: 11}, Warn,
			[]string{"load.detect_deletes: never"}, "set load.detect_deletes"},
		{"upsert, period never compared", CountInput{Mode: "upsert", SourceRows: 10, LakeRows: 8, Held: 2, Detect: "1d"}, Pass,
			[]string{"deletes are checked every 1d; the keys have never been compared yet"}, ""},
		{"upsert, detect never", CountInput{Mode: "upsert", SourceRows: 10, LakeRows: 8, Held: 2, Detect: plan.DetectNever}, Pass,
			[]string{"load.detect_deletes: never"}, ""},
	}
	for _, c := range cases {
		f := SourceCount(c.in)
		if f.Status != c.st || !strings.Contains(f.Fix, c.fix) || (c.fix == "") != (f.Fix == "") {
			t.Errorf("%s: %s %q, want %s with a fix naming %q (%s)", c.name, f.Status, f.Fix, c.st, c.fix, f.Detail)
		}
		for _, h := range c.has {
			if !strings.Contains(f.Detail, h) {
				t.Errorf("%s: %q lacks %q", c.name, f.Detail, h)
			}
		}
	}
}
