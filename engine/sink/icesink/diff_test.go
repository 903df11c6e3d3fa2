package icesink_test

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// The lake table every case starts from: id long required, qty int,
// amount decimal(9,2), note string, code string; partitioned by
// identity(code).
func diffLake() (*iceberg.Schema, iceberg.PartitionSpec) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 4, Name: "note", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "code", Type: iceberg.PrimitiveTypes.String, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{5}, FieldID: 1000, Name: "code", Transform: iceberg.IdentityTransform{}})
	return sc, spec
}

func f(name, typ string, required bool) plan.Field {
	t, err := plan.ParseType(typ)
	if err != nil {
		panic(err)
	}
	return plan.Field{Name: name, Type: t, Required: required, SourceName: name}
}

func TestDiff(t *testing.T) {
	base := []plan.Field{f("id", "long", true), f("qty", "int", false), f("amount", "decimal(9,2)", false), f("note", "string", false), f("code", "string", true)}
	part := []plan.PartitionField{{Column: "code", Transform: "identity"}}
	with := func(i int, fl plan.Field) []plan.Field {
		out := append([]plan.Field(nil), base...)
		out[i] = fl
		return out
	}
	renamedBySource := f("remark", "string", false)
	renamedBySource.SourceName = "note"
	renamedFrom := f("remark", "string", false)
	renamedFrom.RenamedFrom = "note"
	headed := f("grade", "string", false)
	headed.SourceName = "Grade (A-F)"
	region := f("region", "string", true)
	region.RenamedFrom = "code"
	for _, c := range []struct {
		name    string
		want    []plan.Field
		part    []plan.PartitionField
		changes string // Change.String()s joined by "; "
		rewrite string
	}{
		{"same", base, part, "", ""},
		{"add at the end", append(append([]plan.Field(nil), base...), f("grade", "string", false)), part, "add column grade string", ""},
		{"add in the middle", append(append(append([]plan.Field(nil), base[:1]...), f("grade", "string", true)), base[1:]...), part,
			"add column grade string; reorder columns to id, grade, qty, amount, note, code", ""},
		{"drop", append(append([]plan.Field(nil), base[:3]...), base[4]), part, "drop column note", ""},
		{"rename by source_name", with(3, renamedBySource), part, "rename column note to remark (field id and values kept)", ""},
		{"rename by renamed_from", with(3, renamedFrom), part, "rename column note to remark (field id and values kept)", ""},
		{"a new name alone is drop and add", with(3, f("remark", "string", false)), part,
			"drop column note; add column remark string; reorder columns to id, qty, amount, remark, code", ""},
		{"renamed_from naming a column the plan keeps is no rename", append(append([]plan.Field(nil), base...), renamedFrom), part, "add column remark string", ""},
		{"int to long", with(1, f("qty", "long", false)), part, "widen column qty from int to long", ""},
		{"decimal precision up", with(2, f("amount", "decimal(18,2)", false)), part, "widen column amount from decimal(9, 2) to decimal(18, 2)", ""},
		{"decimal scale change", with(2, f("amount", "decimal(18,3)", false)), part, "", "column amount is decimal(9, 2) in the lake but decimal(18, 3) in the plan"},
		{"decimal precision down", with(2, f("amount", "decimal(7,2)", false)), part, "", "column amount is decimal(9, 2) in the lake but decimal(7, 2) in the plan"},
		{"long to int", with(0, f("id", "int", true)), part, "", "column id is long in the lake but int in the plan"},
		{"string to long", with(3, f("note", "long", false)), part, "", "column note is string in the lake but long in the plan"},
		{"required to optional", with(4, f("code", "string", false)), part, "make column code optional", ""},
		{"optional to required stays optional", with(1, f("qty", "int", true)), part, "", ""},
		{"repartition", base, []plan.PartitionField{{Column: "note", Transform: "truncate", Param: 2}}, "change partitioning: partition by truncate(2, note) instead of code", ""},
		{"unpartition", base, nil, "change partitioning: partition by nothing instead of code", ""},
		{"a change and a rewrite", append(with(1, f("qty", "string", false)), f("grade", "string", false)), part,
			"add column grade string", "column qty is int in the lake but string in the plan"},
		{"a new column with its own header is only added", append(append([]plan.Field(nil), base...), headed), part, "add column grade string", ""},
		{"renaming the partition column renames its partition field", with(4, region), []plan.PartitionField{{Column: "region", Transform: "identity"}},
			"rename column code to region (field id and values kept); change partitioning: partition by region instead of code", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, spec := diffLake()
			ev, err := icesink.Diff(sc, spec, c.want, c.part)
			if err != nil {
				t.Fatal(err)
			}
			var ch, rw []string
			for _, x := range ev.Changes {
				s := x.String()
				if x.Kind == icesink.ChangeRepartition {
					s = "change partitioning: " + s
				}
				ch = append(ch, s)
			}
			for _, x := range ev.Rewrite {
				rw = append(rw, x.String())
			}
			if got := strings.Join(ch, "; "); got != c.changes {
				t.Errorf("changes:\n got %q\nwant %q", got, c.changes)
			}
			if got := strings.Join(rw, "; "); got != c.rewrite {
				t.Errorf("rewrite:\n got %q\nwant %q", got, c.rewrite)
			}
			if ev.Empty() != (c.changes == "" && c.rewrite == "") {
				t.Errorf("Empty() = %v", ev.Empty())
			}
		})
	}
}
