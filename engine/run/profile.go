package run

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
)

// TableProfile is the profile of one table's source files.
type TableProfile struct {
	Table   string
	Files   []FileResult
	Rows    int64
	Columns []clean.ColumnProfile
	// Sampled is false when every data row was profiled.
	Sampled bool
}

// Profile reads up to maxRows data rows of a table's files and profiles
// every column: inferred type and confidence, null tokens, formats seen,
// number and date conventions, leading zeros, distinct count, min/max and
// samples. Gate 3 and `lima-tui propose` use it; nothing is written.
func Profile(ctx context.Context, o Options, name string, maxRows int64) (*TableProfile, error) {
	t, ok := o.Plan.Tables[name]
	if !ok {
		return nil, fmt.Errorf("no table %q in the plan", name)
	}
	src, globs, err := o.sourceFor(ctx, t)
	if err != nil {
		return nil, err
	}
	defer closeSource(src)
	units, err := src.List(ctx, globs)
	if err != nil {
		return nil, err
	}
	var cols []string
	for _, c := range t.Columns {
		cols = append(cols, c.Name)
	}
	tp, err := ProfileUnits(ctx, src, units, sourceOptions(o.Plan, t, cols), t.Source.NullTokens, maxRows, nil)
	if err != nil {
		return nil, err
	}
	tp.Table = name
	return tp, nil
}

// ProfileUnits reads up to maxRows data rows of units, in order, and
// profiles every column of the first readable unit's header. onRow, when
// set, sees each data row too: its values by that header, which of them
// the source declared null (or the unit lacks), and the row's index. It is
// the one read loop behind `propose` and gate 3's evidence.
func ProfileUnits(ctx context.Context, src source.Source, units []source.Unit, so source.Options, nullTokens []string, maxRows int64,
	onRow func(vals []string, declaredNull []bool, seen int64)) (*TableProfile, error) {
	tp := &TableProfile{}
	var prof *clean.Profiler
	var header []string
	for _, u := range units {
		fr := FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "read"}
		rd, err := src.Open(ctx, u, so)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			fr.Status, fr.Error = "unreadable", err.Error()
			tp.Files = append(tp.Files, fr)
			continue
		}
		if prof == nil {
			header = rd.Columns()
			prof = clean.NewProfiler(header, nullTokens)
		}
		got := rd.Columns()
		idx := make([]int, len(header))
		for i, h := range header {
			idx[i] = slices.Index(got, h)
		}
		vals := make([]string, len(header))
		nulls := make([]bool, len(header))
		for tp.Rows < maxRows {
			if tp.Rows&1023 == 0 && ctx.Err() != nil {
				rd.Close()
				return nil, ctx.Err()
			}
			row, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fr.Status, fr.Error = "unreadable", err.Error()
				break
			}
			fr.RowsRead++
			if row.Kind != source.Data {
				continue
			}
			for i, j := range idx {
				vals[i], nulls[i] = "", true
				if j >= 0 && j < len(row.Values) && (row.Nulls == nil || !row.Nulls[j]) {
					vals[i], nulls[i] = row.Values[j], false
				}
			}
			prof.Add(vals)
			if onRow != nil {
				onRow(vals, nulls, tp.Rows)
			}
			tp.Rows++
		}
		if tp.Rows >= maxRows {
			tp.Sampled = true
		}
		rd.Close()
		tp.Files = append(tp.Files, fr)
		if tp.Sampled {
			break
		}
	}
	if prof != nil {
		tp.Columns = prof.Profile()
	}
	return tp, nil
}

// ProposeColumns fills a table without declared columns from its profile:
// names, inferred types and the date formats seen. It returns false when
// the table already declares columns.
func ProposeColumns(t *plan.Table, tp *TableProfile) bool {
	if len(t.Columns) > 0 {
		return false
	}
	for _, c := range tp.Columns {
		pc := plan.Column{Name: sanitizeName(c.Name), Type: c.Inferred.Type.String(), Formats: c.Inferred.Formats}
		if pc.Name != c.Name {
			pc.SourceName = c.Name
		}
		if c.NumberStyle.Style.DecimalComma && !c.NumberStyle.Ambiguous {
			pc.Normalize = append(pc.Normalize, "decimal_comma")
		}
		// One currency across the values: declared, so that its symbols
		// are removed rather than held back (mixed ones stay undeclared).
		if code, mixed := c.Currencies.Code(); code != "" && !mixed && c.Inferred.Type.IsNumeric() {
			pc.Currency = code
		}
		t.Columns = append(t.Columns, pc)
	}
	return true
}
