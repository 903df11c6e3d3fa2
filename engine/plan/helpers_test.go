package plan

import (
	"slices"
	"testing"
	"time"
)

func TestHelpers(t *testing.T) {
	p := loadFixture(t)
	if got := p.TableNames(); !slices.Equal(got, []string{"inspections", "site_scores", "sites"}) {
		t.Errorf("TableNames = %v", got)
	}
	if got := p.SourceNames(); !slices.Equal(got, []string{"field"}) {
		t.Errorf("SourceNames = %v", got)
	}
	if p.Namespace() != "acme_ops" {
		t.Errorf("Namespace = %q, want the prefix", p.Namespace())
	}
	p.Storage.Namespace = "lake_ns"
	if p.Namespace() != "lake_ns" {
		t.Errorf("Namespace = %q, want storage.namespace", p.Namespace())
	}
	empty := &Plan{}
	if empty.Pattern() != "iceberg" || empty.Catalog() != "sqlite" || empty.Warehouse() != "lake" {
		t.Errorf("defaults: %q %q %q", empty.Pattern(), empty.Catalog(), empty.Warehouse())
	}
	if len(empty.TableNames()) != 0 {
		t.Errorf("TableNames of an empty plan = %v", empty.TableNames())
	}
	empty.Platform.Pattern, empty.Platform.Catalog, empty.Storage.Warehouse = "hive", "glue", "s3://b/w"
	if empty.Pattern() != "hive" || empty.Catalog() != "glue" || empty.Warehouse() != "s3://b/w" {
		t.Errorf("set: %q %q %q", empty.Pattern(), empty.Catalog(), empty.Warehouse())
	}

	ins := p.Tables["inspections"]
	if ins.Mode() != "incremental" || p.Tables["sites"].Mode() != "full" {
		t.Errorf("Mode: %q %q", ins.Mode(), p.Tables["sites"].Mode())
	}
	if ins.TableType() != "base" || p.Tables["site_scores"].TableType() != "mart" || ins.IsMart() || !p.Tables["site_scores"].IsMart() {
		t.Errorf("TableType/IsMart wrong")
	}
	c, ok := ins.Column("score")
	if !ok || c.Type != "decimal(5,2)" {
		t.Errorf("Column(score) = %+v, %v", c, ok)
	}
	c.Description = "changed through the pointer"
	if ins.Columns[3].Description != "changed through the pointer" {
		t.Errorf("Column does not point into the table")
	}
	if _, ok := ins.Column("SCORE"); ok {
		t.Errorf("Column is case-sensitive")
	}
	keys := ins.KeyColumns()
	if len(keys) != 1 || keys[0].Name != "inspection_id" {
		t.Errorf("KeyColumns = %+v", keys)
	}
	if got := ins.RequiredColumns(); !slices.Equal(got, []string{"inspection_id", "defects"}) {
		t.Errorf("RequiredColumns = %v", got)
	}
	if !ins.IsRequired("inspection_id") || !ins.IsRequired("defects") || ins.IsRequired("score") {
		t.Errorf("IsRequired wrong")
	}
	// Keys not declared as columns (columns still to be inferred).
	inferred := &Table{Load: LoadSpec{Keys: []string{"b", "a"}}}
	if got := inferred.RequiredColumns(); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("RequiredColumns of inferred = %v", got)
	}
	if len(inferred.KeyColumns()) != 0 {
		t.Errorf("KeyColumns of inferred = %v", inferred.KeyColumns())
	}

	fields, err := ins.PartitionFields()
	want := []PartitionField{{Column: "inspected_at", Transform: "month"}, {Column: "site_code", Transform: "bucket", Param: 8}}
	if err != nil || !slices.Equal(fields, want) {
		t.Errorf("PartitionFields = %v, %v", fields, err)
	}
	typ, err := ins.Columns[3].ParsedType()
	if err != nil || typ != (Type{Kind: Decimal, Precision: 5, Scale: 2}) {
		t.Errorf("ParsedType = %v, %v", typ, err)
	}
	if typ, err := (&Column{}).ParsedType(); err != nil || typ.Kind != Unknown {
		t.Errorf("ParsedType of empty = %v, %v", typ, err)
	}
	if (&Column{Name: "a", SourceName: "A col"}).Header() != "A col" || (&Column{Name: "a"}).Header() != "a" {
		t.Errorf("Header wrong")
	}
	if (&Check{Rule: "range", Column: "x"}).Label() != "range(x)" || (&Check{Name: "n", Rule: "range"}).Label() != "n" {
		t.Errorf("Label wrong")
	}
}

func TestTouch(t *testing.T) {
	p := &Plan{}
	t1 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	p.Touch(t1)
	if p.Platform.Created != "2025-03-01T11:00:00Z" || p.Platform.Updated != "2025-03-01T11:00:00Z" {
		t.Errorf("first touch: %+v", p.Platform)
	}
	p.Touch(t1.Add(time.Hour))
	if p.Platform.Created != "2025-03-01T11:00:00Z" || p.Platform.Updated != "2025-03-01T12:00:00Z" {
		t.Errorf("second touch: %+v", p.Platform)
	}
}
