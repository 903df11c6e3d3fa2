package hivesink

import (
	"context"
	"fmt"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// HiveType is the Hive (Glue, Athena) type of a plan type.
func HiveType(t plan.Type) string {
	switch t.Kind {
	case plan.Int:
		return "int"
	case plan.Long:
		return "bigint"
	case plan.Double:
		return "double"
	case plan.Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case plan.Date:
		return "date"
	case plan.Timestamp, plan.TimestampTZ:
		return "timestamp"
	case plan.Boolean:
		return "boolean"
	case plan.Binary:
		return "binary"
	}
	return "string"
}

// HiveColumn is a column of a catalog table definition.
type HiveColumn struct {
	Name    string
	Type    string
	Comment string
}

// TableDef is what a catalog learns about a Hive-style table.
type TableDef struct {
	Database    string
	Name        string
	Description string
	// Location is the table folder URI.
	Location string
	// Columns are the data columns (identity partition columns are
	// partition keys only, as Hive wants them disjoint).
	Columns []HiveColumn
	// PartitionKeys: load_date first, then the plan's partition fields.
	PartitionKeys []HiveColumn
	// Parameters are table properties (classification, compression, lima.*).
	Parameters map[string]string
}

// Partition is one partition folder: its values (in PartitionKeys order)
// and its location URI.
type Partition struct {
	Values   []string
	Location string
}

// Registrar registers Hive-style tables and their partitions in a catalog
// (the Glue Data Catalog). Both calls are idempotent: what exists already
// is kept (the table definition is updated when it differs).
type Registrar interface {
	EnsureTable(ctx context.Context, def TableDef) error
	AddPartitions(ctx context.Context, def TableDef, parts []Partition) error
}

// Def is the catalog definition of the table.
func (t *Table) Def() TableDef {
	db := t.s.opts.Database
	if db == "" {
		db = t.spec.Namespace
	}
	def := TableDef{Database: strings.ToLower(db), Name: strings.ToLower(t.spec.Name), Location: t.root,
		Parameters: map[string]string{"classification": "parquet", "parquet.compression": "ZSTD", "EXTERNAL": "TRUE", "lima.managed": "true",
			"lima.layout": "hive: only files listed by _lima/commits manifests are committed"}}
	identity := map[int]bool{}
	def.PartitionKeys = append(def.PartitionKeys, HiveColumn{Name: t.loadKey, Type: "date", Comment: "the day Lima loaded the rows (UTC)"})
	for _, p := range t.parts {
		def.PartitionKeys = append(def.PartitionKeys, HiveColumn{Name: p.key, Type: p.hiveType})
		if p.transform == plan.TransformIdentity {
			identity[p.col] = true
		}
	}
	for i, c := range t.spec.Columns {
		if identity[i] {
			continue
		}
		def.Columns = append(def.Columns, HiveColumn{Name: strings.ToLower(c.Name), Type: HiveType(t.spec.Types[i]), Comment: c.Description})
	}
	return def
}

// partitionOf turns a partition folder (load_date=…/k=v) into its values.
func (t *Table) partitionOf(dir string) Partition {
	segs := strings.Split(dir, "/")
	p := Partition{Location: t.root + "/" + dir}
	for _, s := range segs {
		_, v, _ := strings.Cut(s, "=")
		if u, ok := UnescapeValue(v); ok {
			p.Values = append(p.Values, u)
		} else {
			p.Values = append(p.Values, DefaultPartition)
		}
	}
	return p
}

func (t *Table) register(ctx context.Context, st *staged) error {
	def := t.Def()
	if err := t.s.opts.Registrar.EnsureTable(ctx, def); err != nil {
		return err
	}
	var parts []Partition
	for _, d := range st.Partitions() {
		parts = append(parts, t.partitionOf(d))
	}
	return t.s.opts.Registrar.AddPartitions(ctx, def, parts)
}
