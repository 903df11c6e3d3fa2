package icesink

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// Plan evolution is Iceberg evolution: the plan's typed fields and
// partition spec are compared with the table's metadata (Diff); what can
// be expressed on the data already in the table is applied with
// iceberg-go's schema and spec updates in the transaction that commits the
// next load's data (Table.evolve), so readers see the new schema and the
// new rows together or neither.
//
//   - A plan column without a lake column of its name is matched to a lake
//     column the plan no longer has, as a rename (field id and values kept),
//     when it says renamed_from: <lake name>, or when its source_name is
//     that lake column's name (the header stayed, the name changed).
//     Otherwise it is added (optional: the rows already in the table have
//     no value for it; the loader still refuses nulls in new rows).
//   - A lake column no plan column claims is dropped (older snapshots
//     still hold its values).
//   - int→long, float→double and decimal(p,s)→decimal(P,s) with P ≥ p are
//     widened in place; a required column the plan makes optional is
//     relaxed. An optional lake column the plan makes required stays
//     optional (existing rows may be null); the loader enforces not-null.
//   - Any other type change (narrowing, another type) cannot be applied to
//     the data in the table: it is refused unless the commit replaces every
//     row (a full refresh). Then the column keeps its field id and takes the
//     new type (an incompatible change iceberg-go allows explicitly): no
//     live data file holds the old type any more, and each older snapshot
//     still names the schema it was written with. (Dropping the column and
//     adding it again under a new id is not possible here: iceberg-go cannot
//     move a column re-added under a deleted column's name, and rows are
//     cast by position, so the plan's order must be kept.)
//   - Columns are reordered to the plan's order, and partition fields are
//     removed and added so the table's default spec is the plan's; files
//     already written keep the spec they were written with.

// ChangeKind names one kind of difference between plan and table.
type ChangeKind string

// The kinds of Change.
const (
	ChangeAdd         ChangeKind = "add column"
	ChangeDrop        ChangeKind = "drop column"
	ChangeRename      ChangeKind = "rename column"
	ChangeWiden       ChangeKind = "widen type"
	ChangeOptional    ChangeKind = "make optional"
	ChangeOrder       ChangeKind = "reorder columns"
	ChangeRepartition ChangeKind = "change partitioning"
	// ChangeIncompatible is a type change only a rewrite can apply.
	ChangeIncompatible ChangeKind = "incompatible type change"
)

// Change is one difference; From and To are the lake's and the plan's side.
type Change struct {
	Kind   ChangeKind
	Column string
	From   string
	To     string
}

func (c Change) String() string {
	switch c.Kind {
	case ChangeAdd:
		return fmt.Sprintf("add column %s %s", c.Column, c.To)
	case ChangeDrop:
		return fmt.Sprintf("drop column %s", c.Column)
	case ChangeRename:
		return fmt.Sprintf("rename column %s to %s (field id and values kept)", c.From, c.To)
	case ChangeWiden:
		return fmt.Sprintf("widen column %s from %s to %s", c.Column, c.From, c.To)
	case ChangeOptional:
		return fmt.Sprintf("make column %s optional", c.Column)
	case ChangeOrder:
		return fmt.Sprintf("reorder columns to %s", c.To)
	case ChangeRepartition:
		return fmt.Sprintf("partition by %s instead of %s", orNone(c.To), orNone(c.From))
	case ChangeIncompatible:
		return fmt.Sprintf("column %s is %s in the lake but %s in the plan", c.Column, c.From, c.To)
	}
	return string(c.Kind) + " " + c.Column
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// Evolution is what separates a table's metadata from the plan.
type Evolution struct {
	// Changes can be applied to the table's data as it is.
	Changes []Change
	// Rewrite lists the changes only a commit that replaces every row of
	// the table (a full refresh) can apply.
	Rewrite []Change

	want []plan.Field
	part []plan.PartitionField
	// lakeID maps a plan field (by index) to its lake field id; 0: added.
	lakeID []int
}

func (e *Evolution) reordered() bool {
	for _, c := range e.Changes {
		if c.Kind == ChangeOrder {
			return true
		}
	}
	return false
}

// Empty reports whether the table already is what the plan says.
func (e *Evolution) Empty() bool { return e == nil || len(e.Changes)+len(e.Rewrite) == 0 }

// RewriteError is the refusal of an evolution that needs a rewrite, naming
// the fixes.
func (e *Evolution) RewriteError(table string) error {
	var parts []string
	for _, c := range e.Rewrite {
		parts = append(parts, c.String())
	}
	return fmt.Errorf("%w: table %s: %s; existing rows cannot be converted (narrowing or another type). "+
		"Run it with --full-refresh to rewrite the table under the new schema (every row is read again from the source), "+
		"or load the new schema into a new table (give the table another name in the plan)",
		ErrIncompatibleSchema, table, strings.Join(parts, "; "))
}

// ErrIncompatibleSchema: the plan's schema cannot be applied to the table's
// existing data.
var ErrIncompatibleSchema = errors.New("incompatible schema change")

// FieldsOf is the typed field list of a sink spec (the resolved types).
func FieldsOf(spec sink.TableSpec) []plan.Field {
	out := make([]plan.Field, len(spec.Columns))
	for i, c := range spec.Columns {
		f := plan.Field{Name: c.Name, SourceName: c.SourceName, RenamedFrom: c.RenamedFrom, Doc: c.Description}
		if f.SourceName == "" {
			f.SourceName = c.Name
		}
		if i < len(spec.Types) {
			f.Type = spec.Types[i]
		}
		if i < len(spec.Required) {
			f.Required = spec.Required[i]
		}
		out[i] = f
	}
	return out
}

// promotable reports whether Iceberg widens from into to in place.
func promotable(from, to iceberg.Type) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		t, ok := to.(iceberg.DecimalType)
		return ok && t.Scale() == f.Scale() && t.Precision() >= f.Precision()
	}
	return false
}

// Diff compares a table's schema and default partition spec with the
// plan's fields and partitioning. Fields whose Type is the zero Type keep
// the lake's type.
func Diff(have *iceberg.Schema, haveSpec iceberg.PartitionSpec, want []plan.Field, part []plan.PartitionField) (*Evolution, error) {
	e := &Evolution{want: want, part: part, lakeID: make([]int, len(want))}
	byName := map[string]iceberg.NestedField{}
	for _, f := range have.Fields() {
		byName[f.Name] = f
	}
	inPlan := map[string]bool{}
	for _, f := range want {
		inPlan[f.Name] = true
	}
	claimed := map[int]bool{}
	for i, f := range want {
		if lf, ok := byName[f.Name]; ok {
			e.lakeID[i] = lf.ID
			claimed[lf.ID] = true
		}
	}
	for i, f := range want {
		if e.lakeID[i] != 0 {
			continue
		}
		for _, old := range []string{f.RenamedFrom, f.SourceName} {
			if lf, ok := byName[old]; ok && old != "" && !inPlan[old] && !claimed[lf.ID] {
				e.lakeID[i] = lf.ID
				claimed[lf.ID] = true
				e.Changes = append(e.Changes, Change{Kind: ChangeRename, Column: f.Name, From: old, To: f.Name})
				break
			}
		}
	}
	for _, lf := range have.Fields() {
		if !claimed[lf.ID] {
			e.Changes = append(e.Changes, Change{Kind: ChangeDrop, Column: lf.Name})
		}
	}
	for i, f := range want {
		if e.lakeID[i] == 0 {
			e.Changes = append(e.Changes, Change{Kind: ChangeAdd, Column: f.Name, To: IcebergType(f.Type).String()})
			continue
		}
		lf, _ := have.FindFieldByID(e.lakeID[i])
		if f.Type.Kind != plan.Unknown {
			wt := IcebergType(f.Type)
			switch {
			case lf.Type.Equals(wt):
			case promotable(lf.Type, wt):
				e.Changes = append(e.Changes, Change{Kind: ChangeWiden, Column: f.Name, From: lf.Type.String(), To: wt.String()})
			default:
				e.Rewrite = append(e.Rewrite, Change{Kind: ChangeIncompatible, Column: f.Name, From: lf.Type.String(), To: wt.String()})
			}
		}
		if lf.Required && !f.Required {
			e.Changes = append(e.Changes, Change{Kind: ChangeOptional, Column: f.Name})
		}
	}
	// Order: kept columns stay in lake order, new ones come last.
	var order []string
	for _, lf := range have.Fields() {
		for i, id := range e.lakeID {
			if id == lf.ID {
				order = append(order, want[i].Name)
			}
		}
	}
	for i := range want {
		if e.lakeID[i] == 0 {
			// A new column never has a lake column's name (that one would
			// have matched it), so the schema update resolves it alone.
			order = append(order, want[i].Name)
		}
	}
	if !sameStrings(order, fieldNames(want)) {
		e.Changes = append(e.Changes, Change{Kind: ChangeOrder, From: strings.Join(order, ", "), To: strings.Join(fieldNames(want), ", ")})
	}
	// Partitioning: the lake's spec as (plan column, transform) pairs.
	removes, adds, renames, err := e.specDiff(have, haveSpec)
	if err != nil {
		return nil, err
	}
	if len(removes)+len(adds)+len(renames) > 0 {
		var from []string
		for _, pf := range haveSpec.Fields() {
			col, _ := have.FindColumnName(pf.SourceID())
			from = append(from, describePartition(pf.Transform, col))
		}
		e.Changes = append(e.Changes, Change{Kind: ChangeRepartition, From: strings.Join(from, ", "), To: strings.Join(plan.PartitionSpec(part).Strings(), ", ")})
	}
	return e, nil
}

// describePartition spells a lake partition field as the plan would.
func describePartition(tr iceberg.Transform, col string) string {
	switch t := tr.(type) {
	case iceberg.IdentityTransform:
		return col
	case iceberg.BucketTransform:
		return fmt.Sprintf("bucket(%d, %s)", t.NumBuckets, col)
	case iceberg.TruncateTransform:
		return fmt.Sprintf("truncate(%d, %s)", t.Width, col)
	}
	return tr.String() + "(" + col + ")"
}

// specDiff lists the lake partition fields to remove (by name), the plan
// entries to add, and the lake partition fields to rename [old, new].
func (e *Evolution) specDiff(have *iceberg.Schema, haveSpec iceberg.PartitionSpec) (removes []string, adds []plan.PartitionField, renames [][2]string, err error) {
	planName := map[int]string{} // lake field id → plan column name
	for i, id := range e.lakeID {
		if id != 0 {
			planName[id] = e.want[i].Name
		}
	}
	matched := make([]bool, len(e.part))
	for _, pf := range haveSpec.Fields() {
		col, kept := planName[pf.SourceID()]
		found := -1
		if kept {
			for j, p := range e.part {
				tr, err := transformOf(p)
				if err != nil {
					return nil, nil, nil, err
				}
				if !matched[j] && p.Column == col && tr.String() == pf.Transform.String() {
					found = j
					break
				}
			}
		}
		if found < 0 {
			removes = append(removes, pf.Name)
			continue
		}
		matched[found] = true
		if n := partitionName(e.part[found]); n != pf.Name {
			renames = append(renames, [2]string{pf.Name, n})
		}
	}
	for j, p := range e.part {
		if !matched[j] {
			adds = append(adds, p)
		}
	}
	return removes, adds, renames, nil
}

func fieldNames(fs []plan.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Apply stages the evolution on tx (whose table is the one Diff read):
// schema first, then the column order, then the partition spec. With
// rewrite false, an evolution that needs a rewrite is refused.
func (e *Evolution) Apply(tx *table.Transaction, tableName string, rewrite bool) error {
	if e.Empty() {
		return nil
	}
	if len(e.Rewrite) > 0 && !rewrite {
		return e.RewriteError(tableName)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return err
	}
	have := staged.Schema()
	haveSpec := staged.Spec()
	// One schema update (iceberg-go asserts the base schema id once per
	// transaction): renames, type and nullability changes, drops, adds and
	// the moves that give the plan's order.
	us := tx.UpdateSchema(true, rewrite && len(e.Rewrite) > 0)
	changed := false
	for i, f := range e.want {
		id := e.lakeID[i]
		if id == 0 {
			continue
		}
		lf, _ := have.FindFieldByID(id)
		var cu table.ColumnUpdate
		if lf.Name != f.Name {
			cu.Name = iceberg.Optional[string]{Valid: true, Val: f.Name}
		}
		if f.Type.Kind != plan.Unknown {
			if wt := IcebergType(f.Type); !lf.Type.Equals(wt) {
				cu.FieldType = iceberg.Optional[iceberg.Type]{Valid: true, Val: wt}
			}
		}
		if lf.Required && !f.Required {
			cu.Required = iceberg.Optional[bool]{Valid: true, Val: false}
		}
		if cu.Name.Valid || cu.FieldType.Valid || cu.Required.Valid {
			us.UpdateColumn([]string{lf.Name}, cu)
			changed = true
		}
	}
	for _, lf := range have.Fields() {
		if !containsInt(e.lakeID, lf.ID) {
			us.DeleteColumn([]string{lf.Name})
			changed = true
		}
	}
	for i, f := range e.want {
		if e.lakeID[i] == 0 {
			us.AddColumn([]string{f.Name}, IcebergType(f.Type), f.Doc, false, nil)
			changed = true
		}
	}
	if e.reordered() {
		// Moves name a column as the update knows it: a kept column by its
		// current lake name, a new one by its own.
		moveName := func(i int) []string {
			if id := e.lakeID[i]; id != 0 {
				lf, _ := have.FindFieldByID(id)
				return []string{lf.Name}
			}
			return []string{e.want[i].Name}
		}
		us.MoveFirst(moveName(0))
		for i := 1; i < len(e.want); i++ {
			us.MoveAfter(moveName(i), moveName(i-1))
		}
		changed = true
	}
	if changed {
		if err := us.Commit(); err != nil {
			return fmt.Errorf("evolve the schema of %s: %w", tableName, err)
		}
	}
	removes, adds, renames, err := e.specDiff(have, haveSpec)
	if err != nil {
		return err
	}
	if len(removes)+len(adds)+len(renames) > 0 {
		sp := tx.UpdateSpec(true)
		for _, n := range removes {
			sp.RemoveField(n)
		}
		for _, r := range renames {
			sp.RenameField(r[0], r[1])
		}
		for _, p := range adds {
			tr, err := transformOf(p)
			if err != nil {
				return err
			}
			sp.AddField(p.Column, tr, partitionName(p))
		}
		if err := sp.Commit(); err != nil {
			return fmt.Errorf("evolve the partitioning of %s: %w", tableName, err)
		}
	}
	return nil
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TypeName spells an Iceberg type as the plan does (long, decimal(18,2),
// …); float, which the plan has no name for, is "float".
func TypeName(t iceberg.Type) string {
	switch tt := t.(type) {
	case iceberg.Int32Type:
		return "int"
	case iceberg.Int64Type:
		return "long"
	case iceberg.Float32Type:
		return "float"
	case iceberg.Float64Type:
		return "double"
	case iceberg.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", tt.Precision(), tt.Scale())
	case iceberg.DateType:
		return "date"
	case iceberg.TimestampType:
		return "timestamp"
	case iceberg.TimestampTzType:
		return "timestamptz"
	case iceberg.BooleanType:
		return "boolean"
	case iceberg.BinaryType, iceberg.FixedType:
		return "binary"
	case iceberg.StringType:
		return "string"
	}
	return t.String()
}

// Described is a table as its metadata says: current schema and default
// partition spec, in the plan's spelling.
type Described struct {
	Columns   []string
	Types     []string
	Required  []bool
	Partition []string
}

// Describe reads a table's current schema and default partition spec.
func Describe(tbl *table.Table) Described {
	var d Described
	sc := tbl.Schema()
	for _, f := range sc.Fields() {
		d.Columns = append(d.Columns, f.Name)
		d.Types = append(d.Types, TypeName(f.Type))
		d.Required = append(d.Required, f.Required)
	}
	spec := tbl.Spec()
	for _, pf := range spec.Fields() {
		col, _ := sc.FindColumnName(pf.SourceID())
		d.Partition = append(d.Partition, describePartition(pf.Transform, col))
	}
	return d
}
