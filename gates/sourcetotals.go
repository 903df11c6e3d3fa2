package gates

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
)

// SourceTotals proves a database source's own totals, taken in the read
// snapshot before the first row was read, against the load:
//
//   - source count = rows read from the source (exact);
//   - for each control column, source sum = lake sum + sum of the held-back
//     rows: exact for integers and decimals, within FloatTolerance for
//     doubles.
//
// accepted holds the lake side of each sum (the lake's sum for a full load,
// lakeSide true; else the sum of the rows this load accepted). A sum check
// is a warning, never a pass or a fail, when it cannot be decided honestly:
// held-back rows with a value that is not a number, rows skipped, a read
// that stopped early, or a source sum the database computed inexactly.
func SourceTotals(st *run.SourceTotals, cols []string, types []plan.Type, accepted map[string]string, lakeSide bool) []Finding {
	if st == nil {
		return nil
	}
	var out []Finding
	f := Finding{Name: "source count", Status: Pass,
		Detail: fmt.Sprintf("%s counted %d rows in the read snapshot; %d rows were read from it", st.Unit, st.Rows, st.RowsRead)}
	if st.Rows != st.RowsRead {
		f.Status = Fail
		if st.Incomplete {
			f.Detail += " (the read stopped early: see the unit's exception)"
		}
		f.Fix = "rows were lost or added between the count and the read: rerun the load and inspect the source table"
	}
	out = append(out, f)
	side := "lake"
	if !lakeSide {
		side = "accepted by this load"
	}
	names := make([]string, 0, len(st.Sums))
	for c := range st.Sums {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		i := slices.Index(cols, c)
		if i < 0 || i >= len(types) {
			continue
		}
		out = append(out, sourceSum(st, c, types[i], accepted[c], side))
	}
	return out
}

func sourceSum(st *run.SourceTotals, c string, t plan.Type, lake, side string) Finding {
	src := st.Sums[c]
	held := st.HeldSums[c]
	if held == "" {
		held = "0"
	}
	f := Finding{Name: "source sum(" + c + ")"}
	detail := fmt.Sprintf("source %s over the snapshot; %s %s", src, side, lake)
	if st.RowsHeld > 0 {
		detail += fmt.Sprintf(" + held back %s (%d rows)", held, st.RowsHeld)
	}
	warn := func(why string) Finding {
		f.Status, f.Detail = Warn, detail+"; "+why
		return f
	}
	switch {
	case st.Incomplete:
		return warn("not decided: the read stopped early, so the lake holds part of the snapshot")
	case st.RowsSkipped > 0:
		return warn(fmt.Sprintf("not decided: %d rows were skipped (see rows_skipped_by_reason: below the watermark, superseded in the batch or soft-deleted) and are in the source sum but not in the lake", st.RowsSkipped))
	case slices.Contains(st.Unaccounted, c):
		return warn(fmt.Sprintf("not decided: a held-back row's %s is not a number, so its share of the source sum is unknown", c))
	}
	if t.Kind == plan.Double {
		sv, err1 := strconv.ParseFloat(src, 64)
		lv, err2 := strconv.ParseFloat(lake, 64)
		hv, err3 := strconv.ParseFloat(held, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return warn("not decided: a sum is not a number")
		}
		diff := lv + hv - sv
		den := math.Max(math.Abs(sv), math.Abs(lv+hv))
		f.Detail = detail + fmt.Sprintf(", variance %s (within %g relative)", strconv.FormatFloat(diff, 'g', 6, 64), FloatTolerance)
		f.Status = Pass
		if diff != 0 && (den == 0 || math.Abs(diff)/den > FloatTolerance) {
			f.Status, f.Fix = Fail, "the source and the lake disagree: compare the sample rows and the held-back rows"
		}
		return f
	}
	scale := 0
	if t.Kind == plan.Decimal {
		scale = t.Scale
	}
	sv, ok1 := parseScaled(src, scale)
	lv, ok2 := parseScaled(lake, scale)
	hv, ok3 := parseScaled(held, scale)
	if !ok2 || !ok3 {
		return warn("not decided: a sum is not exact decimal text")
	}
	if !ok1 {
		// SQLite sums decimals as floating point: compare, but only warn.
		fv, err := strconv.ParseFloat(src, 64)
		if err != nil {
			return warn("not decided: the database's sum is not a number")
		}
		want, _ := new(big.Float).SetInt(new(big.Int).Add(lv, hv)).Float64()
		want /= math.Pow10(scale)
		return warn(fmt.Sprintf("not exact: the database summed in floating point (lake + held back = %s, relative difference %.3g)",
			formatScaled(new(big.Int).Add(lv, hv), scale), math.Abs(fv-want)/math.Max(math.Abs(want), 1)))
	}
	diff := new(big.Int).Sub(new(big.Int).Add(lv, hv), sv)
	f.Detail = detail + fmt.Sprintf(", variance %s (exact)", formatScaled(diff, scale))
	f.Status = Pass
	if diff.Sign() != 0 {
		f.Status, f.Fix = Fail, "a value changed between the source and the lake, or a held-back row is unaccounted: compare the sample rows and the exceptions"
	}
	return f
}

// SourceCountName is the name of gate 4's whole-table count check.
const SourceCountName = "lake rows = source rows"

// CountInput is what SourceCount compares: the source table's count of
// every row (in the read snapshot), the rows the lake table holds (re-read
// by gate 4), and the source rows known not to be in the lake.
type CountInput struct {
	Mode       string // the table's load mode
	SourceRows int64  // count(*) of the whole source table
	LakeRows   int64
	// Held are the source rows that are not in the lake on purpose: for a
	// full load the rows this load held back or skipped; otherwise the
	// table's unresolved exceptions in the ledger.
	Held     int64
	HeldNote string // where Held comes from
	// DeletesCompared: delete detection compared every source key with
	// the lake this run. Detect is the plan's load.detect_deletes;
	// LastCompared when the keys were last compared ("" never).
	DeletesCompared bool
	Detect          string
	LastCompared    string
}

// SourceCount is gate 4's proof, for every database table and every run,
// that the lake table holds the source table: lake rows = source rows −
// rows held back. Rows deleted at the source stay in the lake of a table
// read incrementally unless delete detection removes them, so they can
// never hide behind a passing incremental check:
//
//   - equal: pass;
//   - the lake holds more rows than the whole source: a fail for a full
//     load or when the keys were compared this run; otherwise a warning
//     that names load.detect_deletes (the plan chose not to look);
//   - otherwise the difference is not explained by the held-back rows: a
//     fail for a full load (the same snapshot was read), a warning for an
//     incremental read (rows may have been written below the watermark
//     or after the read).
func SourceCount(in CountInput) Finding {
	f := Finding{Name: SourceCountName, Status: Pass}
	want := in.SourceRows - in.Held
	f.Detail = fmt.Sprintf("the source table holds %d rows; the lake table %d; held back %d (%s)", in.SourceRows, in.LakeRows, in.Held, in.HeldNote)
	full := in.Mode == "" || in.Mode == plan.ModeFull
	switch {
	case in.LakeRows == want:
		f.Detail += "; " + deletesNote(in)
		return f
	case in.LakeRows > in.SourceRows:
		f.Detail += fmt.Sprintf("; the lake holds %d row(s) more than the whole source: rows deleted at the source, or rows loaded twice", in.LakeRows-in.SourceRows)
		f.Detail += "; " + deletesNote(in)
		if full || in.DeletesCompared {
			f.Status = Fail
			f.Fix = "inspect the table history for rows written twice or outside Lima, then reload with --full-refresh"
			return f
		}
		f.Status = Warn
		if in.Mode == plan.ModeUpsert {
			f.Fix = "set load.detect_deletes: every_run (or a period such as 1d) so keys gone from the source are deleted from the lake; --full-refresh removes them now"
		} else {
			f.Fix = "this mode never removes rows deleted at the source: use load.mode: upsert with load.keys and load.detect_deletes: every_run, or reload with --full-refresh"
		}
		return f
	default:
		if d := want - in.LakeRows; d > 0 {
			f.Detail += fmt.Sprintf("; %d source row(s) are neither in the lake nor held back", d)
		} else {
			f.Detail += fmt.Sprintf("; the lake holds %d row(s) more than the source minus the held-back rows", -d)
		}
		f.Detail += "; " + deletesNote(in)
		if full {
			f.Status = Fail
			f.Fix = "the load and the lake disagree with the source's own count: rerun with --full-refresh and inspect the table history"
			return f
		}
		f.Status = Warn
		f.Detail += "; not decided: rows written below the watermark or after the read, resolved or waived exceptions, or rows deleted at the source and still in the lake"
		f.Fix = "reload with --full-refresh to make the lake equal the source now"
		return f
	}
}

func deletesNote(in CountInput) string {
	full := in.Mode == "" || in.Mode == plan.ModeFull
	switch {
	case full:
		return "a full load replaces the table, so rows deleted at the source are gone"
	case in.DeletesCompared:
		return "deletes: every source key was compared with the lake this run"
	case in.Mode != plan.ModeUpsert:
		return "deletes are not detected in mode " + in.Mode
	case in.Detect == "" || in.Detect == plan.DetectNever:
		return "deletes are not detected (load.detect_deletes: never)"
	case in.LastCompared == "":
		return "deletes are checked every " + in.Detect + "; the keys have never been compared yet"
	}
	return "deletes are checked every " + in.Detect + "; the keys were last compared " + in.LastCompared
}
