package run

import (
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// The load id must not depend on where the plan sits in memory: two parses
// of the same plan (as in two processes) give the same table hash.
func TestTableHashIsStableAcrossParses(t *testing.T) {
	src := []byte(`schema_version: 1
platform: {prefix: x}
sources: {in: {kind: files, path: in}}
tables:
  t:
    source: {name: in, files: ["*.csv"]}
    columns: [{name: a, type: long}]
    checks: [{rule: range, column: a, min: 0, max: 10}]
`)
	p1, err := plan.Parse(src, "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := plan.Parse(src, "b.yaml")
	if tableHash(p1, "t") != tableHash(p2, "t") {
		t.Fatal("the same plan hashed differently")
	}
	max := 11.0
	p2.Tables["t"].Checks[0].Max = &max
	if tableHash(p1, "t") == tableHash(p2, "t") {
		t.Fatal("a changed check did not change the hash")
	}
}

// An optional plan field nobody sets does not take part in the hash: the
// hash of a plan must not change when Lima gains a field it does not use.
func TestTableHashIgnoresUnsetFields(t *testing.T) {
	src := []byte(`schema_version: 1
platform: {prefix: x}
sources: {in: {kind: files, path: in}}
tables:
  t:
    source: {name: in, files: ["*.csv"]}
    columns: [{name: a, type: long}]
`)
	p, err := plan.Parse(src, "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := tableHash(p, "t")
	p.Tables["t"].Source.Encoding = ""
	p.Tables["t"].Source.NullTokens = nil
	if tableHash(p, "t") != before {
		t.Fatal("zero values changed the hash")
	}
	p.Tables["t"].Source.Encoding = "euc-kr"
	if tableHash(p, "t") == before {
		t.Fatal("a set field did not change the hash")
	}
}
