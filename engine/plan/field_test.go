package plan

import (
	"strings"
	"testing"
)

func TestTableFields(t *testing.T) {
	tb := &Table{
		Columns: []Column{
			{Name: "id", Type: "bigint"},
			{Name: "production_id", Type: "string", SourceName: "saengsanbeonho"},
			{Name: "amount", Type: "decimal(12, 2)", Required: true, RenamedFrom: "amt"},
			{Name: "later"},
		},
		Partition: []string{"month(d)", "bucket(4, id)"},
		Load:      LoadSpec{Keys: []string{"id"}},
	}
	fs, err := tb.Fields()
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{Name: "id", Type: Type{Kind: Long}, Required: true, SourceName: "id"},
		{Name: "production_id", Type: Type{Kind: String}, SourceName: "saengsanbeonho"},
		{Name: "amount", Type: Type{Kind: Decimal, Precision: 12, Scale: 2}, Required: true, SourceName: "amount", RenamedFrom: "amt"},
		{Name: "later", SourceName: "later"},
	}
	if len(fs) != len(want) {
		t.Fatalf("%d fields", len(fs))
	}
	for i := range want {
		if fs[i] != want[i] {
			t.Errorf("field %d: %+v, want %+v", i, fs[i], want[i])
		}
	}
	ps, err := tb.PartitionSpec()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ps.Strings(), "; "); got != "month(d); bucket(4, id)" {
		t.Errorf("partition spec %q", got)
	}
	tb.Columns[0].Type = "bigint2"
	if _, err := tb.Fields(); err == nil {
		t.Error("a bad type was parsed")
	}
}

func TestValidateRenamedFrom(t *testing.T) {
	for _, c := range []struct {
		from, err string
	}{
		{"old_name", ""},
		{"bad name", "renamed_from"},
		{"remark", "own name"},
		{"id", "name of columns[0]"},
	} {
		p, err := Parse([]byte(`schema_version: 1
platform: {prefix: p}
sources: {in: {kind: files, path: in}}
tables:
  t:
    source: {name: in, files: [a.csv]}
    columns:
      - {name: id, type: long}
      - {name: remark, type: string, renamed_from: "`+c.from+`"}
`), "platform.yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = p.Validate()
		if c.err == "" && err != nil {
			t.Errorf("%q: %v", c.from, err)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %v, want an error with %q", c.from, err, c.err)
		}
	}
}
