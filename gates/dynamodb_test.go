package gates

import (
	"context"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/internal/dynamotest"
)

func ddbPlan(t *testing.T, table string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(`schema_version: 1
platform: {prefix: ddb}
sources:
  ddb: {kind: dynamodb, dynamodb: {read_percent: 10, tables: [`+table+`]}}
tables:
  orders:
    source: {name: ddb, table: `+table+`}
`), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPreconditionsDynamoDB: gate 2 describes the table, shows its
// capacity mode, the item count as a hint and the read budget it will
// keep to, and fails a missing table with a fix.
func TestPreconditionsDynamoDB(t *testing.T) {
	cl := dynamotest.Client(t)
	dynamotest.SetEnv(t)
	table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 400})
	items, _ := dynamotest.Generate(5, 50)
	dynamotest.Seed(t, cl, table, items)
	ctx := context.Background()
	p := ddbPlan(t, table)
	pr := Probe{Workspace: t.TempDir()}
	f := pr.checkTable(ctx, p, "orders")
	if f.Status != Pass {
		t.Fatalf("table orders: %s %s (fix %s)", f.Status, f.Detail, f.Fix)
	}
	// 10% of 400 provisioned read units.
	for _, want := range []string{"ACTIVE", "provisioned 400 read units/s", "a hint", "key [pk sk]", "within 40 read units/s", "10% of the provisioned 400"} {
		if !strings.Contains(f.Detail, want) {
			t.Errorf("table evidence lacks %q: %s", want, f.Detail)
		}
	}
	if s := pr.checkSource(ctx, p, "ddb"); s.Status != Pass || !strings.Contains(s.Detail, "10%") {
		t.Errorf("source ddb: %s %s", s.Status, s.Detail)
	}
	p.Tables["orders"].Source.Table = table + "-missing"
	if f := pr.checkTable(ctx, p, "orders"); f.Status != Fail || !strings.Contains(f.Detail, "does not exist") || f.Fix == "" {
		t.Errorf("missing table: %+v", f)
	}
}

// TestProposeDynamoDB: gate 3 profiles the items and proposes the key
// from the table's key schema and a type per attribute.
func TestProposeDynamoDB(t *testing.T) {
	cl := dynamotest.Client(t)
	dynamotest.SetEnv(t)
	table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N"})
	items, _ := dynamotest.Generate(6, 400)
	dynamotest.Seed(t, cl, table, items)
	p := ddbPlan(t, table)
	p.Tables = map[string]*plan.Table{}
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	name := SnakeName(table, "t")
	tb := pr.Plan.Tables[name]
	if tb == nil {
		t.Fatalf("no table %s proposed; findings %+v", name, pr.Findings)
	}
	if got := strings.Join(tb.Load.Keys, ","); got != "pk,sk" {
		t.Errorf("keys %q, want pk,sk (the key schema)", got)
	}
	types := map[string]string{}
	for _, c := range tb.Columns {
		types[c.Name] = c.Type
		if (c.Name == "pk" || c.Name == "sk") != c.Required {
			t.Errorf("column %s: required %v (only the key attributes are always present)", c.Name, c.Required)
		}
	}
	for c, want := range map[string]string{"pk": "string", "sk": "long", "qty": "long", "big": "decimal(20,0)", "blob": "binary", "flag": "boolean", "attrs": "string", "note": "string"} {
		if types[c] != want {
			t.Errorf("column %s: %q, want %q", c, types[c], want)
		}
	}
	if tb.Source.Table != table || tb.Source.Name != "ddb" {
		t.Errorf("source %+v", tb.Source)
	}
	// The proposal is a valid plan.
	p.Tables = pr.Plan.Tables
	if err := p.Validate(); err != nil {
		t.Fatalf("the proposed plan does not validate: %v", err)
	}
}
