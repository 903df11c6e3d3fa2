package gates

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/internal/dbtest"
)

// pgForGate3 connects to the loopback PostgreSQL, or skips loudly (fails
// under CI or LIMA_REQUIRE_SERVICES=1).
func pgForGate3(t *testing.T) (string, *sql.DB) {
	t.Helper()
	return dbtest.Service(t, sqldb.Postgres, dbtest.PostgresEnv, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
}

// Gate 3 on a PostgreSQL schema with hostile names, a composite key, a
// bare numeric, an unmappable range type and an empty second schema: the
// proposal validates, keeps the database's names in source_name and
// source.table, and reports what it cannot map instead of failing.
func TestProposeDatabaseHostileNames(t *testing.T) {
	base, db := pgForGate3(t)
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	schema := "lima_g3_" + hex.EncodeToString(b)
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE SCHEMA ` + schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	tbl := schema + `."Order Lines""; --"`
	exec(`CREATE TABLE ` + tbl + ` ("Order No" bigint, "Line#" int, "Amount €" numeric, "select" int4range, note text,
		PRIMARY KEY ("Order No", "Line#"))`)
	exec(`INSERT INTO ` + tbl + ` VALUES (1, 1, 10.5, '[1,3)', 'a'), (1, 2, 2.25, NULL, NULL), (2, 1, 7, '[2,9)', 'c')`)

	u, err := url.Parse(base)
	if err != nil {
		t.Skip("LIMA_TEST_POSTGRES_DSN is not a URL")
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Setenv("LIMA_G3_DSN", u.String())
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Prefix: "g3", Catalog: plan.CatalogSQLite},
		Sources: map[string]*plan.Source{"erp": {Kind: plan.SourcePostgres, DSNEnv: "LIMA_G3_DSN"}}, Tables: map[string]*plan.Table{}}
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Plan.Tables) != 1 {
		t.Fatalf("tables %v; findings %+v", pr.Plan.TableNames(), pr.Findings)
	}
	name := pr.Plan.TableNames()[0]
	tb := pr.Plan.Tables[name]
	if tb.Source.Table != `Order Lines"; --` || tb.Source.Schema != schema {
		t.Errorf("source %+v", tb.Source)
	}
	if strings.ContainsAny(name, ` ";-`) {
		t.Errorf("lake table name %q", name)
	}
	byName := map[string]plan.Column{}
	for _, c := range tb.Columns {
		byName[c.SourceName] = c
	}
	for src, typ := range map[string]string{"Order No": "long", "Line#": "int", "Amount €": "string"} {
		c, ok := byName[src]
		if !ok || c.Type != typ || strings.ContainsAny(c.Name, ` #€`) {
			t.Errorf("column from %q: %+v, want type %s and a plain name", src, c, typ)
		}
	}
	if len(tb.Load.Keys) != 2 || tb.Load.Mode != "" {
		t.Errorf("load %+v, want the two-column key, mode full", tb.Load)
	}
	var leftOut, bare bool
	for _, f := range pr.Findings {
		if f.Name == name+": column left out" && strings.Contains(f.Detail, "select (int4range)") {
			leftOut = true
		}
		if strings.HasSuffix(f.Name, ": type") && f.Status == Warn && strings.Contains(f.Detail, "Amount € numeric → string") {
			bare = true
		}
		if f.Name == name+": sample" && (f.Status != Pass || !strings.Contains(f.Detail, "3 rows read")) {
			t.Errorf("sample: %+v", f)
		}
	}
	if !leftOut || !bare {
		t.Errorf("findings lack the range column (%v) or the bare numeric (%v): %+v", leftOut, bare, pr.Findings)
	}
	// The proposal validates as a plan.
	pr.Apply(p)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	// A source whose variable is unset is a failed finding, not an error.
	t.Setenv("LIMA_G3_DSN", "")
	p.Tables = map[string]*plan.Table{}
	pr, err = ProposeDataModel(context.Background(), p, ProposeOptions{})
	if err != nil || len(pr.Plan.Tables) != 0 || len(pr.Findings) == 0 || pr.Findings[0].Status != Fail || !strings.Contains(pr.Findings[0].Detail, "LIMA_G3_DSN") {
		t.Errorf("unset variable: %v %+v", err, pr.Findings)
	}
}
