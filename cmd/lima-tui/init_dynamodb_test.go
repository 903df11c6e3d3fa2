package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/dynamotest"
	"github.com/lima-lake/lima/reports"
)

// TestInitFromDynamoDBProposeApproveRun is the path of a user who starts
// from a DynamoDB table: init --source dynamodb:TABLE, propose --write
// (the key from the key schema, the types from the items), both
// approvals, check (the read budget shown), run; gate 4's source count and
// sums are the generator's.
func TestInitFromDynamoDBProposeApproveRun(t *testing.T) {
	noTTY(t)
	cl := dynamotest.Client(t)
	dynamotest.SetEnv(t)
	table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 800})
	items, exp := dynamotest.Generate(41, 1200)
	dynamotest.Seed(t, cl, table, items)

	ws := t.TempDir()
	code, out, errs := call(t, cmdInit, "--source", "dynamodb:"+table, "--dir", ws, "--defaults")
	if code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "dynamodb:"+table+" (") || !strings.Contains(out, "ACTIVE, provisioned 800 read units/s") || !strings.Contains(out, "key [pk sk]") {
		t.Errorf("init does not report the table check:\n%s", out)
	}
	pp := filepath.Join(ws, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	src := p.Sources["dynamodb"]
	if src == nil || src.Kind != plan.SourceDynamoDB || src.DynamoDB == nil || strings.Join(src.DynamoDB.Tables, ",") != table {
		t.Fatalf("sources %+v, want dynamodb: kind dynamodb, tables [%s]", p.Sources, table)
	}
	if failed := gates.FailedFindings(gates.Scope(p)); len(failed) > 0 {
		t.Fatalf("gate 1 refuses the DynamoDB plan: %+v", failed)
	}
	if code, out, errs := runCLI(t, "propose", "--plan", pp, "--write"); code != exitOK {
		t.Fatalf("propose --write: exit %d: %s %s", code, out, errs)
	}
	p, err = plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	name := gates.SnakeName(table, "t")
	tb := p.Tables[name]
	if tb == nil || strings.Join(tb.Load.Keys, ",") != "pk,sk" {
		t.Fatalf("proposed table %s: %+v, want keys pk, sk", name, tb)
	}
	for _, g := range []string{"scope", "data-model"} {
		if code, out, errs := runCLI(t, "approve", "--plan", pp, "--gate", g, "--by", "Analyst A"); code != exitOK {
			t.Fatalf("approve %s: exit %d: %s %s", g, code, out, errs)
		}
	}
	code, out, errs = call(t, cmdCheck, "--plan", pp)
	if code != exitOK {
		t.Fatalf("check: exit %d:\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "within 200 read units/s (25% of the provisioned 800 read units/s)") {
		t.Errorf("check does not show the read budget:\n%s", out)
	}
	code, out, errs = runCLI(t, "run", "--force", "--plan", pp)
	if code != exitOK {
		t.Fatalf("run: exit %d:\n%s\n%s", code, out, errs)
	}
	rep, err := reports.Read(strings.TrimSpace(out))
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Tables[0]
	if tr.Reconciliation != gates.Pass || tr.RowsRead != exp.Items || tr.RowsLoaded != exp.Items {
		t.Fatalf("gate 4 %s, read %d loaded %d, want pass and %d: %+v", tr.Reconciliation, tr.RowsRead, tr.RowsLoaded, exp.Items, tr.Checks)
	}
	for col, want := range map[string]string{"qty": fmt.Sprint(exp.QtySum), "big": exp.BigSum.String()} {
		f, ok := findingNamed(tr.Checks, "source sum("+col+")")
		if !ok || f.Status != gates.Pass || !strings.Contains(f.Detail, "source "+want+" ") || !strings.Contains(f.Detail, "lake "+want) {
			t.Errorf("gate 4 source sum(%s): %+v, want source and lake %s (the generator's)", col, f, want)
		}
	}
	if f, ok := findingNamed(tr.Checks, "source count"); !ok || f.Status != gates.Pass || !strings.Contains(f.Detail, fmt.Sprintf("counted %d rows", exp.Items)) {
		t.Errorf("gate 4 source count: %+v", f)
	}
}

func TestInitDynamoDBSourceRefused(t *testing.T) {
	noTTY(t)
	if _, err := gates.ParseSource("dynamodb:a"); err == nil {
		t.Error("dynamodb:a (2 characters) accepted as a table name")
	}
	if s, err := gates.ParseSource("dynamodb:*"); err != nil || s.Kind != "dynamodb" || s.Table != "*" {
		t.Errorf("dynamodb:* = %+v, %v", s, err)
	}
	code, _, errs := call(t, cmdInit, "--source", "dynamodb:bad/name", "--dir", t.TempDir(), "--defaults")
	if code != exitUsage || !strings.Contains(errs, "is not a DynamoDB table name") {
		t.Errorf("init with a bad table name: exit %d: %s", code, errs)
	}
}
