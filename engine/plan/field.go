package plan

import "fmt"

// Field is one column of a table as typed values: the approved plan parsed
// once, instead of the parallel Columns/Types/Required slices and the type
// strings each consumer re-parses. Type is the zero Type when the plan
// leaves it to inference.
type Field struct {
	Name     string
	Type     Type
	Required bool
	// SourceName is the column's name in the source (the header, or the
	// database column): Column.SourceName, else Name.
	SourceName string
	// RenamedFrom is Column.RenamedFrom: the column's previous lake name.
	RenamedFrom string
	Doc         string
}

// PartitionSpec is a table's partitioning as typed values, in plan order.
type PartitionSpec []PartitionField

// Fields parses the table's declared columns once. Required is true for
// columns declared required and for keys.
func (t *Table) Fields() ([]Field, error) {
	out := make([]Field, 0, len(t.Columns))
	for _, c := range t.Columns {
		f := Field{Name: c.Name, Required: t.IsRequired(c.Name), SourceName: c.SourceName, RenamedFrom: c.RenamedFrom, Doc: c.Description}
		if f.SourceName == "" {
			f.SourceName = c.Name
		}
		if c.Type != "" {
			typ, err := ParseType(c.Type)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			f.Type = typ
		}
		out = append(out, f)
	}
	return out, nil
}

// PartitionSpec parses the table's partition entries once.
func (t *Table) PartitionSpec() (PartitionSpec, error) {
	out := make(PartitionSpec, 0, len(t.Partition))
	for _, s := range t.Partition {
		pf, err := ParsePartition(s)
		if err != nil {
			return nil, err
		}
		out = append(out, pf)
	}
	return out, nil
}

// Strings is the spec in the plan's spelling ("month(col)", …).
func (ps PartitionSpec) Strings() []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
