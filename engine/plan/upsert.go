package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ModeUpsert loads a database table by key: each run reads the rows at or
// above the previous watermark minus the lookback (every row without a
// watermark), keeps the latest row of each key, and replaces the lake's
// rows of those keys in one atomic commit (position deletes + append).
const ModeUpsert = "upsert"

// Delete detection settings (load.detect_deletes).
const (
	DetectNever    = "never"
	DetectEveryRun = "every_run"
)

// ParseLookback reads load.lookback: a plain whole number is a count (for
// a numeric watermark: re-read ids above max-N); anything else is a
// duration such as 10m, 2h, 1d or 1w (for a date or timestamp watermark).
// Empty is no lookback.
func ParseLookback(s string) (d time.Duration, n int64, isCount bool, err error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, 0, false, nil
	}
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		if v < 0 {
			return 0, 0, false, fmt.Errorf("%q: a lookback cannot be negative", s)
		}
		return 0, v, true, nil
	}
	d, err = parseSpan(t)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%q is neither a count (1000) nor a duration (10m, 2h, 1d, 1w)", s)
	}
	return d, 0, false, nil
}

// DeleteDetection reads load.detect_deletes: off for "" and "never";
// every run for "every_run"; otherwise a period (24h, 7d, 1w) — the keys
// are compared when the last comparison is older than it.
func (l LoadSpec) DeleteDetection() (on bool, period time.Duration, err error) {
	switch t := strings.TrimSpace(l.DetectDeletes); t {
	case "", DetectNever:
		return false, 0, nil
	case DetectEveryRun:
		return true, 0, nil
	default:
		d, err := parseSpan(t)
		if err != nil {
			return false, 0, fmt.Errorf("%q is not never, every_run or a period such as 24h, 7d or 1w", l.DetectDeletes)
		}
		return true, d, nil
	}
}

// upsert checks the fields of mode upsert: keys, a database source, the
// lookback (with a watermark, of the watermark's kind) and detect_deletes.
func (v *validator) upsert(lp string, ti *tableInfo) {
	l := ti.t.Load
	if src := ti.t.Source; src != nil && src.Window != "" {
		if _, _, err := ParseWindow(src.Window); err != nil {
			v.add(strings.TrimSuffix(lp, ".load")+".source.window", "%v", err)
		}
	}
	if src := ti.t.Source; src != nil && src.SplitBy != "" {
		sp := strings.TrimSuffix(lp, ".load") + ".source.split_by"
		if s, ok := v.p.Sources[src.Name]; ok && s != nil && !s.IsDatabase() {
			v.add(sp, "only a database table is read in parallel ranges; remove it")
		} else {
			v.colRef(sp, ti, src.SplitBy, func(t Type) bool { return t.IsIntegral() || t.IsTemporal() },
				"ranges split an integer, date or timestamp column")
		}
	}
	dbIncr := l.Mode == ModeIncremental && ti.t.Source != nil && v.p.Sources[ti.t.Source.Name] != nil && v.p.Sources[ti.t.Source.Name].IsDatabase()
	if l.Mode != ModeUpsert {
		if l.Lookback != "" && !dbIncr {
			v.add(lp+".lookback", "only modes upsert and incremental from a database re-read a lookback window; set mode: upsert or remove it")
		}
		if dbIncr {
			v.lookback(lp, ti)
		}
		if l.DetectDeletes != "" && l.DetectDeletes != DetectNever {
			v.add(lp+".detect_deletes", "only mode upsert deletes rows by key; set mode: upsert or remove it")
		}
		if l.SoftDelete != "" {
			v.add(lp+".soft_delete", "only mode upsert deletes rows by key; set mode: upsert or remove it")
		}
		return
	}
	if l.SoftDelete != "" {
		v.colRef(lp+".soft_delete", ti, l.SoftDelete, func(t Type) bool { return t.Kind == Boolean }, "a soft-delete column is a boolean (true: deleted at the source)")
	}
	if len(l.Keys) == 0 {
		v.add(lp+".keys", "required for mode upsert: the primary key that identifies a row to replace")
	}
	if src := ti.t.Source; src != nil {
		if s, ok := v.p.Sources[src.Name]; ok && s != nil && !s.IsDatabase() {
			v.add(lp+".mode", "upsert reads a database table; for files use mode incremental (append) or full")
		}
	}
	v.lookback(lp, ti)
	if _, _, err := l.DeleteDetection(); err != nil {
		v.add(lp+".detect_deletes", "%v", err)
	}
}

// lookback checks load.lookback: a count or duration of the watermark's kind.
func (v *validator) lookback(lp string, ti *tableInfo) {
	l := ti.t.Load
	if l.Lookback != "" {
		_, _, isCount, err := ParseLookback(l.Lookback)
		switch {
		case err != nil:
			v.add(lp+".lookback", "%v", err)
		case l.Watermark == "":
			v.add(lp+".lookback", "a lookback needs a watermark column: set load.watermark")
		default:
			if typ, ok := ti.types[l.Watermark]; ok && ti.declared {
				if isCount && typ.IsTemporal() {
					v.add(lp+".lookback", "%s is %s: give the lookback as a duration (10m, 2h, 1d)", l.Watermark, typ)
				}
				if !isCount && !typ.IsTemporal() {
					v.add(lp+".lookback", "%s is %s: give the lookback as a count (1000)", l.Watermark, typ)
				}
			}
		}
	}
}
