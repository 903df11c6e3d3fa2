package gates

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// Renames at gate 3: `table.column.name=new` and `table.name=new`. A
// proposed name (a romanized header, a file's base name) is rarely the name
// an analyst keeps, so gate 3 renames in place and every reference moves
// with the name; the source's own name stays beside it.
//
//   - A column rename keeps the source header in source_name (the load
//     still reads the same source column) and renames the column wherever
//     the plan names it: the table's key, watermark, soft-delete column,
//     split_by, partition, join keys, checks (their column and their
//     expressions), grain, sum-safe and control columns; other tables'
//     join keys and references checks; the marts Lima builds (their joins,
//     dimensions and measures); data_quality_issues and owners of that
//     table. When the table is already in the lake (Lake), the lake's
//     column is recorded in renamed_from, so the next commit renames it by
//     Iceberg schema evolution (field id and values kept) instead of adding
//     a new, empty column. A Hive-style table in the lake cannot rename a
//     column (its Parquet files name their columns): refused.
//   - A table rename keeps where its rows come from (source.files or
//     source.table, unchanged) and moves every reference to it: other
//     tables' join keys and references checks, the marts Lima builds (from,
//     joins, dimensions, measures), data_quality_issues and owners. It is
//     refused when the name is not a valid or free table name, when the
//     table (or its history table) is already in the lake — the rows there
//     would stay behind under the old name while the new name loads from
//     nothing: keep the name, or tear the lake down (lima-tui teardown) and
//     load again — and when a mart written outside Lima names the table in
//     its written_by or description (its SQL is not in the plan, so Lima
//     cannot move it: change that SQL, then the declaration, first).

// Lake is what gate 3 knows of the tables already in the lake: each
// existing table's column names, by table name. nil or empty: no table of
// the plan is in the lake.
type Lake map[string][]string

// ApplyEditIn is ApplyEdit knowing the lake's tables, which a rename needs
// (see the package's renames); the other edits ignore it.
func ApplyEditIn(p *plan.Plan, e Edit, lake Lake) (string, error) {
	if e.Field != "name" {
		return ApplyEdit(p, e)
	}
	t := p.Tables[e.Table]
	if t == nil || t.IsMart() {
		return "", fmt.Errorf("%w %s: no base table %q (tables: %s)", ErrEdit, e, e.Table, strings.Join(baseTables(p), ", "))
	}
	if e.Column == "" {
		return renameTable(p, e, lake)
	}
	return renameColumn(p, t, e, lake)
}

// ApplyEditsIn is ApplyEdits knowing the lake's tables.
func ApplyEditsIn(p *plan.Plan, sets []string, lake Lake) ([]string, error) {
	var done []string
	for _, s := range sets {
		e, err := ParseEdit(s)
		if err != nil {
			return done, err
		}
		what, err := ApplyEditIn(p, e, lake)
		if err != nil {
			return done, err
		}
		done = append(done, what)
	}
	return done, nil
}

// HasRename reports whether any of the edits renames (and so needs the
// lake's tables).
func HasRename(sets []string) bool {
	for _, s := range sets {
		if e, err := ParseEdit(s); err == nil && e.Field == "name" {
			return true
		}
	}
	return false
}

// CheckColumnName returns "" when new may name column old of table t (a
// valid name no other column of t has, ignoring case), else why not: the
// edit screen validates as one types.
func CheckColumnName(t *plan.Table, old, new string) string {
	if msg := plan.CheckName(new); msg != "" {
		return msg
	}
	for _, c := range t.Columns {
		if c.Name != old && strings.EqualFold(c.Name, new) {
			return fmt.Sprintf("%q is taken by column %s of the table (names are unique ignoring case)", new, c.Name)
		}
	}
	return ""
}

// CheckTableName returns "" when table old may be renamed new, else why
// not (see the package's renames).
func CheckTableName(p *plan.Plan, old, new string, lake Lake) string {
	if msg := plan.CheckName(new); msg != "" {
		return msg
	}
	if new == old {
		return ""
	}
	t := p.Tables[old]
	for _, n := range p.TableNames() {
		switch {
		case n == old:
		case n == new:
			return fmt.Sprintf("table %s already exists in the plan; choose another name", new)
		case p.Tables[n] != nil && p.Tables[n].KeepsHistory() && plan.HistoryTable(n) == new:
			return fmt.Sprintf("%s is the history table of %s; choose another name", new, n)
		case t != nil && t.KeepsHistory() && plan.HistoryTable(new) == n:
			return fmt.Sprintf("%s keeps history in %s, which is the name of a table of the plan; choose another name", old, n)
		}
	}
	for _, n := range []string{old, plan.HistoryTable(old)} {
		if _, in := lake[n]; in {
			return fmt.Sprintf("table %s is already in the lake: renamed in the plan, its rows would stay behind under %s and %s would load from nothing; "+
				"keep the name, or remove the lake (lima-tui teardown) and load it again under the new name", old, n, new)
		}
	}
	if _, in := lake[new]; in {
		return fmt.Sprintf("the lake already has a table %s (not in the plan); choose another name", new)
	}
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(old) + `($|[^A-Za-z0-9_])`)
	for _, n := range p.TableNames() {
		m := p.Tables[n]
		if m == nil || !m.IsMart() || m.Built() {
			continue
		}
		if word.MatchString(m.WrittenBy) || word.MatchString(m.Description) {
			return fmt.Sprintf("mart %s is written outside Lima and names %s (written_by/description): Lima cannot change its SQL; "+
				"rename the table there first and update the mart's declaration, or keep the name", n, old)
		}
	}
	return ""
}

// has reports whether the lake's table has the column.
func (l Lake) has(table, column string) bool {
	cols, ok := l[table]
	return ok && slices.Contains(cols, column)
}

func renameColumn(p *plan.Plan, t *plan.Table, e Edit, lake Lake) (string, error) {
	old, new := e.Column, e.Value
	c, ok := t.Column(old)
	if !ok {
		var names []string
		for _, c := range t.Columns {
			names = append(names, c.Name)
		}
		return "", fmt.Errorf("%w %s: table %s has no column %q (columns: %s)", ErrEdit, e, e.Table, old, strings.Join(names, ", "))
	}
	ref := e.Table + "." + old
	if new == old {
		return ref + ": name unchanged", nil
	}
	if msg := CheckColumnName(t, old, new); msg != "" {
		return "", fmt.Errorf("%w %s: %s", ErrEdit, e, msg)
	}
	// Rewrite the expressions first: the one step that can fail.
	exprs := make([]string, len(t.Checks))
	for i, ck := range t.Checks {
		exprs[i] = ck.Expr
		if ck.Rule == plan.RuleExpression && ck.Expr != "" {
			x, err := plan.RenameExprColumn(ck.Expr, old, new)
			if err != nil {
				return "", fmt.Errorf("%w %s: check %s: %v", ErrEdit, e, ck.Label(), err)
			}
			exprs[i] = x
		}
	}
	parts := slices.Clone(t.Partition)
	for i, s := range parts {
		f, err := plan.ParsePartition(s)
		if err != nil {
			return "", fmt.Errorf("%w %s: partition %s: %v", ErrEdit, e, s, err)
		}
		if f.Column == old {
			f.Column = new
			parts[i] = f.String()
		}
	}

	if _, in := lake[e.Table]; in && p.Pattern() == plan.PatternHive {
		return "", fmt.Errorf("%w %s: table %s is already in the lake as Hive-style Parquet, whose files carry their column names: "+
			"a column cannot be renamed in place; keep the name, or remove the lake (lima-tui teardown) and load it again", ErrEdit, e, e.Table)
	}
	header := c.Header()
	inLake := lake.has(e.Table, old) && c.RenamedFrom == ""
	c.Name = new
	c.SourceName = header
	if c.SourceName == new {
		c.SourceName = ""
	}
	switch {
	case inLake:
		c.RenamedFrom = old
	case strings.EqualFold(c.RenamedFrom, new):
		c.RenamedFrom = "" // back to the lake's name
	}
	for i := range t.Checks {
		t.Checks[i].Expr = exprs[i]
	}
	t.Partition = parts
	renameColumnIn(p, e.Table, old, new)

	what := fmt.Sprintf("%s → %s.%s (source column %s)", ref, e.Table, new, header)
	if c.RenamedFrom != "" {
		what += fmt.Sprintf("; the lake's column %s is renamed %s at the next load (values kept)", c.RenamedFrom, new)
	}
	return what, nil
}

// renameColumnIn renames every reference to column old of table tn.
func renameColumnIn(p *plan.Plan, tn, old, new string) {
	one := func(s *string) {
		if *s == old {
			*s = new
		}
	}
	list := func(l []string) {
		for i := range l {
			one(&l[i])
		}
	}
	qualified := func(s *string) {
		if *s == tn+"."+old {
			*s = tn + "." + new
		}
	}
	t := p.Tables[tn]
	list(t.Load.Keys)
	one(&t.Load.Watermark)
	one(&t.Load.SoftDelete)
	if t.Source != nil {
		one(&t.Source.SplitBy)
	}
	list(t.Grain)
	list(t.SumSafeColumns)
	list(t.ControlColumns)
	for i := range t.JoinKeys {
		one(&t.JoinKeys[i].Column)
	}
	for i := range t.Checks {
		one(&t.Checks[i].Column)
	}
	for _, n := range p.TableNames() {
		o := p.Tables[n]
		if o == nil {
			continue
		}
		for i := range o.JoinKeys {
			qualified(&o.JoinKeys[i].References)
		}
		for i := range o.Checks {
			qualified(&o.Checks[i].References)
		}
		if !o.Built() {
			continue
		}
		// A mart's column references: table.col, or col of From[0].
		mart := func(s *string) {
			if o.From[0] == tn {
				one(s)
			}
			qualified(s)
		}
		for i := range o.Joins {
			mart(&o.Joins[i].Column)
			mart(&o.Joins[i].References)
		}
		for i := range o.Dimensions {
			mart(&o.Dimensions[i].Column)
		}
		for i := range o.Measures {
			mart(&o.Measures[i].Column)
		}
	}
	for i := range p.DataQualityIssues {
		if q := &p.DataQualityIssues[i]; q.Table == tn {
			one(&q.Column)
		}
	}
	for i := range p.Owners {
		if o := &p.Owners[i]; o.Table == tn {
			one(&o.Column)
		}
	}
}

func renameTable(p *plan.Plan, e Edit, lake Lake) (string, error) {
	old, new := e.Table, e.Value
	if new == old {
		return old + ": name unchanged", nil
	}
	if msg := CheckTableName(p, old, new, lake); msg != "" {
		return "", fmt.Errorf("%w %s: %s", ErrEdit, e, msg)
	}
	t := p.Tables[old]
	delete(p.Tables, old)
	p.Tables[new] = t
	qualified := func(s *string) {
		if tb, col, ok := strings.Cut(*s, "."); ok && tb == old {
			*s = new + "." + col
		}
	}
	one := func(s *string) {
		if *s == old {
			*s = new
		}
	}
	for _, n := range p.TableNames() {
		o := p.Tables[n]
		if o == nil {
			continue
		}
		for i := range o.JoinKeys {
			qualified(&o.JoinKeys[i].References)
		}
		for i := range o.Checks {
			qualified(&o.Checks[i].References)
		}
		if !o.Built() {
			continue
		}
		for i := range o.From {
			one(&o.From[i])
		}
		for i := range o.Joins {
			qualified(&o.Joins[i].Column)
			qualified(&o.Joins[i].References)
		}
		for i := range o.Dimensions {
			qualified(&o.Dimensions[i].Column)
		}
		for i := range o.Measures {
			qualified(&o.Measures[i].Column)
		}
	}
	for i := range p.DataQualityIssues {
		one(&p.DataQualityIssues[i].Table)
	}
	for i := range p.Owners {
		one(&p.Owners[i].Table)
	}
	return fmt.Sprintf("table %s → %s (rows still from %s)", old, new, SourceOf(t)), nil
}

// SourceOf says where a base table's rows come from: its source and files
// or source table, as the plan names them.
func SourceOf(t *plan.Table) string {
	s := t.Source
	switch {
	case s == nil:
		return "no source"
	case s.Table != "" && s.Schema != "":
		return s.Name + " table " + s.Schema + "." + s.Table
	case s.Table != "":
		return s.Name + " table " + s.Table
	}
	return s.Name + " files " + strings.Join(s.Files, ", ")
}

// ApplyEdits applies --set edits to the proposed model; a table rename
// moves the table's evidence (its sample) and its issues with it.
func (pr *Proposal) ApplyEdits(sets []string, lake Lake) ([]string, error) {
	var done []string
	for _, s := range sets {
		e, err := ParseEdit(s)
		if err != nil {
			return done, err
		}
		// The proposal's issues are renamed as the plan's would be.
		kept := pr.Plan.DataQualityIssues
		pr.Plan.DataQualityIssues = append(slices.Clone(kept), pr.Issues...)
		what, err := ApplyEditIn(pr.Plan, e, lake)
		all := pr.Plan.DataQualityIssues
		pr.Issues = slices.Clone(all[len(kept):])
		pr.Plan.DataQualityIssues = kept
		if len(kept) > 0 {
			pr.Plan.DataQualityIssues = all[:len(kept):len(kept)]
		}
		if err != nil {
			return done, err
		}
		if e.Field == "name" && e.Column == "" && e.Value != e.Table {
			if ev, ok := pr.Evidence[e.Table]; ok {
				delete(pr.Evidence, e.Table)
				pr.Evidence[e.Value] = ev
			}
		}
		done = append(done, what)
	}
	return done, nil
}
