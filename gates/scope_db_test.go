package gates

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

func TestDSNKind(t *testing.T) {
	tests := []struct {
		dsn, want string
	}{
		{"postgres://u:secret@db.internal:5432/erp?sslmode=verify-full", plan.SourcePostgres},
		{"postgresql://u@db/erp", plan.SourcePostgres},
		{"POSTGRES://u@db/erp", plan.SourcePostgres},
		{"host=db.internal port=5432 dbname=erp user=u password=secret sslmode=require", plan.SourcePostgres},
		{"  dbname=erp", plan.SourcePostgres},
		{"u:secret@tcp(db.internal:3306)/crm?tls=true", plan.SourceMySQL},
		{"u:secret@unix(/run/mysqld/mysqld.sock)/crm", plan.SourceMySQL},
		{"u@/crm", plan.SourceMySQL},
		{"mysql://u:secret@db.internal/crm", plan.SourceMySQL},
		{"mariadb://u:secret@db.internal:3307/crm", plan.SourceMySQL},
		{"/srv/data/shop.sqlite", plan.SourceSQLite},
		{"shop.db", plan.SourceSQLite},
		{"", ""},
		{"   ", ""},
		{"oracle://u:secret@db/orcl", ""},
		{"sqlserver://u:secret@db?database=erp", ""},
		{"u:secret@tcp(db:3306/crm", ""}, // unbalanced: not a go-sql-driver DSN
		{"just-some-secret-text", ""},
	}
	for _, tt := range tests {
		got, err := DSNKind(tt.dsn)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("DSNKind(%q) = %q, %v; want %q", tt.dsn, got, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("DSNKind(%q): the error quotes the DSN: %v", tt.dsn, err)
		}
	}
}

func TestDSNKindOfNeverQuotesTheValue(t *testing.T) {
	t.Setenv("LIMA_T_DSN", "oracle://sap:hunter2@erp/prod")
	if _, err := DSNKindOf("LIMA_T_DSN"); err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "LIMA_T_DSN") {
		t.Errorf("err = %v", err)
	}
	t.Setenv("LIMA_T_DSN", "")
	if _, err := DSNKindOf("LIMA_T_DSN"); err == nil || !strings.Contains(err.Error(), "LIMA_T_DSN is not set") {
		t.Errorf("unset: err = %v", err)
	}
	t.Setenv("LIMA_T_DSN", "sap:hunter2@tcp(erp:3306)/prod")
	if k, err := DSNKindOf("LIMA_T_DSN"); k != plan.SourceMySQL || err != nil {
		t.Errorf("mysql: %q, %v", k, err)
	}
}

// A plan whose sources are databases named by env:NAME passes gate 1,
// records no DSN, and keeps its sources through AnswersOf → ApplyAnswers.
func TestScopeWithDatabaseSources(t *testing.T) {
	t.Setenv("ERP_DSN", "postgres://sap:hunter2@erp.internal/prod")
	t.Setenv("CRM_DATABASE_URL", "mysql://crm:hunter2@crm.internal/crm")
	a := Defaults()
	a[QSources] = "env:ERP_DSN, env:CRM_DATABASE_URL, data/files"
	a[QPrefix] = "acme"
	if failed := FailedFindings(CheckAnswers(a)); len(failed) > 0 {
		t.Fatalf("gate 1 refuses database sources: %+v", failed)
	}
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Catalog: plan.CatalogSQLite}, Tables: map[string]*plan.Table{}}
	if err := ApplyAnswers(p, a); err != nil {
		t.Fatal(err)
	}
	want := map[string]plan.Source{
		"erp":   {Kind: plan.SourcePostgres, DSNEnv: "ERP_DSN"},
		"crm":   {Kind: plan.SourceMySQL, DSNEnv: "CRM_DATABASE_URL"},
		"files": {Kind: plan.SourceFiles, Path: "data/files"},
	}
	if len(p.Sources) != len(want) {
		t.Fatalf("sources %v", p.SourceNames())
	}
	for n, w := range want {
		if s := p.Sources[n]; s == nil || *s != w {
			t.Errorf("source %s = %+v, want %+v", n, s, w)
		}
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "hunter2") || strings.Contains(string(data), "internal") {
		t.Errorf("platform.yaml holds a DSN:\n%s", data)
	}
	// Gate 1 on the plan: the database sources are answers too.
	if failed := FailedFindings(Scope(p)); len(failed) > 0 {
		t.Fatalf("gate 1 on the plan: %+v", failed)
	}
	got := AnswersOf(p)
	for _, s := range []string{"env:ERP_DSN", "env:CRM_DATABASE_URL", "data/files"} {
		if !strings.Contains(got[QSources], s) {
			t.Errorf("AnswersOf sources = %q, lacks %s", got[QSources], s)
		}
	}
	// A plan whose only source is a database, where the variable is not
	// set (a reviewer's machine): gate 1 still passes, its value is not
	// needed to judge the scope.
	only := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: p.Platform, Scope: p.Scope, Downstream: p.Downstream,
		Sources: map[string]*plan.Source{"erp": {Kind: plan.SourcePostgres, DSNEnv: "LIMA_UNSET_DSN_X"}}}
	if failed := FailedFindings(Scope(only)); len(failed) > 0 {
		t.Fatalf("gate 1 on a database-only plan: %+v", failed)
	}
	// Re-applying keeps the names and settings even with a renamed source.
	p.Sources["warehouse"] = p.Sources["erp"]
	delete(p.Sources, "erp")
	p.Sources["warehouse"].Timezone = "Europe/Berlin"
	t.Setenv("ERP_DSN", "") // not read again for a kept source
	if err := ApplyAnswers(p, got); err != nil {
		t.Fatal(err)
	}
	if s := p.Sources["warehouse"]; s == nil || s.Kind != plan.SourcePostgres || s.Timezone != "Europe/Berlin" || p.Sources["erp"] != nil {
		t.Errorf("after re-applying: %v", p.SourceNames())
	}
	// A new env source whose variable is unset or not a DSN is refused
	// without quoting the value.
	a[QSources] = "env:NEW_DSN"
	t.Setenv("NEW_DSN", "hunter2-not-a-dsn")
	if err := ApplyAnswers(&plan.Plan{}, a); err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "NEW_DSN") {
		t.Errorf("err = %v", err)
	}
	if s := Questions()[1].Recommended(Answers{QSources: "env:ERP_DSN"}); s != "erp" {
		t.Errorf("prefix suggested for env:ERP_DSN: %q, want erp", s)
	}
}
