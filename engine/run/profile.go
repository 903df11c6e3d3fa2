package run

import (
	"context"
	"fmt"
	"io"

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
	nullTokens := t.Source.NullTokens
	tp := &TableProfile{Table: name}
	var prof *clean.Profiler
	var header []string
	for _, u := range units {
		fr := FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "read"}
		rd, err := src.Open(ctx, u, sourceOptions(o.Plan, t, cols))
		if err != nil {
			fr.Status, fr.Error = "unreadable", err.Error()
			tp.Files = append(tp.Files, fr)
			continue
		}
		if prof == nil {
			header = rd.Columns()
			prof = clean.NewProfiler(header, nullTokens)
		}
		idx := make([]int, len(header))
		got := rd.Columns()
		for i, h := range header {
			idx[i] = -1
			for j, g := range got {
				if g == h {
					idx[i] = j
				}
			}
		}
		vals := make([]string, len(header))
		for tp.Rows < maxRows {
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
				vals[i] = ""
				if j >= 0 && j < len(row.Values) && (row.Nulls == nil || !row.Nulls[j]) {
					vals[i] = row.Values[j]
				}
			}
			prof.Add(vals)
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
		t.Columns = append(t.Columns, pc)
	}
	return true
}
