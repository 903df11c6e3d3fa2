package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Values of the enumerated fields; the empty string means the default.
const (
	PatternIceberg = "iceberg" // default
	PatternHive    = "hive"

	CatalogSQLite = "sqlite" // default
	CatalogGlue   = "glue"
	CatalogREST   = "rest"

	SourceFiles    = "files"
	SourcePostgres = "postgres"
	SourceMySQL    = "mysql" // MySQL and MariaDB
	SourceSQLite   = "sqlite"
	// SQL Server (go-mssqldb) and Oracle (go-ora), both pure Go.
	SourceSQLServer = "sqlserver"
	SourceOracle    = "oracle"
	// SnapshotSerializable is the one value of Source.SnapshotFallback.
	SnapshotSerializable = "serializable"

	TableBase = "base" // default
	TableMart = "mart"

	ModeFull        = "full" // default
	ModeIncremental = "incremental"

	RuleNotNull    = "not_null"
	RuleUnique     = "unique"
	RuleRange      = "range"
	RuleRegex      = "regex"
	RuleAllowed    = "allowed"
	RuleMaxLength  = "max_length"
	RuleReferences = "references"
	RuleExpression = "expression"

	DefaultWarehouse  = "lake"
	DefaultCatalogURI = ".lima/catalog.db"
)

// Rules lists the check rules in the order they are documented.
var Rules = []string{RuleNotNull, RuleUnique, RuleRange, RuleRegex, RuleAllowed, RuleMaxLength, RuleReferences, RuleExpression}

// ExceptionRules are the rule ids an exception can carry besides the
// declared checks: a value that does not cast, a row that cannot be split,
// a file that cannot be read, bytes invalid in the file's encoding, a
// record longer than etl.max_record_bytes, a control character in text, a
// number carrying an undeclared currency, and the change-capture rules.
// Owners may route by any of them.
var ExceptionRules = []string{"type", "malformed_row", "unreadable_file", "encoding", "record_too_large", "control_char", "currency",
	"change_invalid", "change_file_seen_twice", "change_sequence_backwards", "change_update_unknown_key",
	"change_delete_unknown_key", "change_delete_before_insert", "change_insert_existing_key"}

// TableNames returns the names of the tables, sorted.
func (p *Plan) TableNames() []string {
	names := make([]string, 0, len(p.Tables))
	for n := range p.Tables {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// SourceNames returns the names of the sources, sorted.
func (p *Plan) SourceNames() []string {
	names := make([]string, 0, len(p.Sources))
	for n := range p.Sources {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Namespace is storage.namespace, or the prefix when that is empty.
func (p *Plan) Namespace() string {
	if p.Storage.Namespace != "" {
		return p.Storage.Namespace
	}
	return p.Platform.Prefix
}

// Pattern is platform.pattern, or PatternIceberg when that is empty.
func (p *Plan) Pattern() string {
	if p.Platform.Pattern == "" {
		return PatternIceberg
	}
	return p.Platform.Pattern
}

// Catalog is platform.catalog, or CatalogSQLite when that is empty.
func (p *Plan) Catalog() string {
	if p.Platform.Catalog == "" {
		return CatalogSQLite
	}
	return p.Platform.Catalog
}

// Warehouse is storage.warehouse, or DefaultWarehouse when that is empty.
func (p *Plan) Warehouse() string {
	if p.Storage.Warehouse == "" {
		return DefaultWarehouse
	}
	return p.Storage.Warehouse
}

// Touch sets platform.updated to now and platform.created too if it is
// empty, both in RFC 3339 UTC. Neither changes the Hash.
func (p *Plan) Touch(now time.Time) {
	ts := now.UTC().Format(time.RFC3339)
	if p.Platform.Created == "" {
		p.Platform.Created = ts
	}
	p.Platform.Updated = ts
}

// ModelApproved reports whether gate 3 was approved for this very plan: an
// approval is recorded and its plan_hash equals Hash().
func (p *Plan) ModelApproved() bool {
	a := p.Gates.DataModel
	return a != nil && a.ApprovedBy != "" && a.PlanHash != "" && a.PlanHash == p.Hash()
}

// Mode is load.mode, or ModeFull when that is empty.
func (t *Table) Mode() string {
	if t.Load.Mode == "" {
		return ModeFull
	}
	return t.Load.Mode
}

// TableType is the table type, or TableBase when that is empty.
func (t *Table) TableType() string {
	if t.Type == "" {
		return TableBase
	}
	return t.Type
}

// IsMart reports whether the table is a mart.
func (t *Table) IsMart() bool { return t.Type == TableMart }

// Column returns the column named name (exact match).
func (t *Table) Column(name string) (*Column, bool) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// KeyColumns returns the declared columns named by load.keys, in key order.
// Keys that name no declared column (columns still to be inferred) are left
// out; Validate reports them when columns are declared.
func (t *Table) KeyColumns() []*Column {
	var out []*Column
	for _, k := range t.Load.Keys {
		if c, ok := t.Column(k); ok {
			out = append(out, c)
		}
	}
	return out
}

// IsKey reports whether name is one of load.keys.
func (t *Table) IsKey(name string) bool { return slices.Contains(t.Load.Keys, name) }

// IsRequired reports whether the column name may not be null: declared
// required or a key.
func (t *Table) IsRequired(name string) bool {
	if t.IsKey(name) {
		return true
	}
	c, ok := t.Column(name)
	return ok && c.Required
}

// RequiredColumns returns the names of the columns that may not be null:
// those declared required and the keys (required is implied for keys), in
// column order, followed by any keys that name no declared column.
func (t *Table) RequiredColumns() []string {
	var out []string
	for _, c := range t.Columns {
		if c.Required || t.IsKey(c.Name) {
			out = append(out, c.Name)
		}
	}
	for _, k := range t.Load.Keys {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// PartitionFields parses Partition; the first bad entry is an error.
func (t *Table) PartitionFields() ([]PartitionField, error) {
	out := make([]PartitionField, 0, len(t.Partition))
	for _, s := range t.Partition {
		f, err := ParsePartition(s)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ParsedType parses the column's type; the zero Type (Kind Unknown) when the
// type is empty, to be inferred.
func (c *Column) ParsedType() (Type, error) {
	if strings.TrimSpace(c.Type) == "" {
		return Type{}, nil
	}
	return ParseType(c.Type)
}

// Header is the name of the column in the source: SourceName, or Name.
func (c *Column) Header() string {
	if c.SourceName != "" {
		return c.SourceName
	}
	return c.Name
}

// Label names a check in reports: its name, or "rule(column)".
func (c *Check) Label() string {
	if c.Name != "" {
		return c.Name
	}
	if c.Column == "" {
		return c.Rule
	}
	return c.Rule + "(" + c.Column + ")"
}

// IsDatabase reports whether the source is a database (postgres, mysql,
// sqlite, sqlserver or oracle): its tables are read by source.table, not
// source.files.
func (s *Source) IsDatabase() bool {
	return s != nil && (s.Kind == SourcePostgres || s.Kind == SourceMySQL || s.Kind == SourceSQLite ||
		s.Kind == SourceSQLServer || s.Kind == SourceOracle)
}

// CheckName returns "" when s may name a table or a column of a plan,
// else what is wrong with it (the rule Validate applies).
func CheckName(s string) string {
	switch {
	case s == "":
		return "empty; " + nameHelp
	case len(s) > maxNameLen:
		return fmt.Sprintf("%q is longer than %d characters", s, maxNameLen)
	case !nameRE.MatchString(s):
		return fmt.Sprintf("%q is not allowed; %s", s, nameHelp)
	}
	return ""
}
