package plan

import "strings"

// ModeCDC is change capture: the table is kept current from appended change
// files (see Changes).
const ModeCDC = "cdc"

// Changes describes the change files of a load.mode cdc table: every row of
// a change file is one change to the row with the table's key.
//
//	load:
//	  mode: cdc
//	  keys: [customer_id]
//	  changes: {operation: op, ordering: seq, ops: {insert: I, update: U, delete: D}}
//
// Operation and Ordering name columns of the change files (headers); they
// are not columns of the table. Changes apply in the order of the ordering
// value (integers compare as numbers, anything else as text — use ISO
// timestamps), ties broken by file name, then by row position.
type Changes struct {
	Operation string    `yaml:"operation"`
	Ordering  string    `yaml:"ordering"`
	Ops       ChangeOps `yaml:"ops,omitempty"`
}

// ChangeOps are the values of the operation column; defaults I, U, D.
type ChangeOps struct {
	Insert string `yaml:"insert,omitempty"`
	Update string `yaml:"update,omitempty"`
	Delete string `yaml:"delete,omitempty"`
}

// Resolved returns the ops with defaults filled in.
func (o ChangeOps) Resolved() ChangeOps {
	if o.Insert == "" {
		o.Insert = "I"
	}
	if o.Update == "" {
		o.Update = "U"
	}
	if o.Delete == "" {
		o.Delete = "D"
	}
	return o
}

// KeepsHistory reports whether the table appends every row version to its
// <name>_history table: change capture always does, other loads when
// history is switched on.
func (t *Table) KeepsHistory() bool { return t.History || t.Load.Mode == ModeCDC }

// HistoryTable is the name of a table's history table.
func HistoryTable(name string) string { return name + "_history" }

func (v *validator) changes(lp string, ti *tableInfo) {
	l := ti.t.Load
	if ti.t.History && ti.t.Type == TableMart {
		v.add(strings.TrimSuffix(lp, ".load")+".history", "a mart is rebuilt from its base tables; keep history on the base tables")
	}
	if l.Mode != ModeCDC {
		if l.Changes != nil {
			v.add(lp+".changes", "only for mode cdc")
		}
		return
	}
	if len(l.Keys) == 0 {
		v.add(lp+".keys", "required for mode cdc: the key that identifies a row across changes")
	}
	c := l.Changes
	if c == nil {
		v.add(lp+".changes", "required for mode cdc: name the operation and ordering columns, e.g. changes: {operation: op, ordering: seq}")
		return
	}
	if c.Operation == "" {
		v.add(lp+".changes.operation", "required: the column of the change files that says insert, update or delete")
	}
	if c.Ordering == "" {
		v.add(lp+".changes.ordering", "required: the column of the change files that orders the changes (a sequence or commit timestamp)")
	}
	if c.Operation != "" && c.Operation == c.Ordering {
		v.add(lp+".changes.ordering", "must differ from the operation column")
	}
	for _, n := range []string{c.Operation, c.Ordering} {
		if _, ok := ti.byName[n]; ok && n != "" {
			v.add(lp+".changes", "%q is a column of the table; the operation and ordering columns only exist in the change files", n)
		}
	}
	o := c.Ops.Resolved()
	if o.Insert == o.Update || o.Insert == o.Delete || o.Update == o.Delete {
		v.add(lp+".changes.ops", "insert, update and delete need three different values")
	}
}
