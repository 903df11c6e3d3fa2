package migrate_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/engine/sink/icesink"
	mt "github.com/lima-lake/lima/internal/migratetest"
)

// TestRegisterIcebergSQLiteToGlue: an Iceberg table of the embedded
// SQLite catalog registered in the Glue endpoint by its metadata
// location: only after the typed name; read through Glue it is the same
// table (the independent read gives the written truth); the embedded
// catalog cannot be a target (iceberg-go v0.7.0's SQL catalog has no
// RegisterTable).
func TestRegisterIcebergSQLiteToGlue(t *testing.T) {
	e := newEnv(t, false)
	src, l, files, _ := prepare(t, e)
	b, err := migrate.BuildRewrite(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, nil, "migrate-reg-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := icesink.OpenGlue(e.ctx, icesink.Options{}, icesink.AWSOptions{Region: "eu-central-1", GlueEndpoint: e.srv.URL(), Warehouse: filepath.Join(e.dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	from, to := table.Identifier{"sales", "orders"}, table.Identifier{"lake", "orders"}
	if _, err := migrate.RegisterIceberg(e.ctx, e.sk.Catalog(), from, gs.Catalog(), to, "lake.Orders"); !errors.Is(err, migrate.ErrNotConfirmed) {
		t.Fatalf("mistyped: %v", err)
	}
	if _, ok := e.srv.Table("lake", "orders"); ok {
		t.Fatal("registered without the typed name")
	}
	m, err := migrate.RegisterIceberg(e.ctx, e.sk.Catalog(), from, gs.Catalog(), to, "lake.orders")
	if err != nil {
		t.Fatal(err)
	}
	if !m.OK || len(m.Checks) < 6 {
		t.Fatalf("move: %+v", m)
	}
	entry, ok := e.srv.Table("lake", "orders")
	if !ok || entry.Parameters["metadata_location"] != b.Table.MetadataLocation() {
		t.Fatalf("the Glue entry: %v %+v", ok, entry.Parameters)
	}
	mt.SameTruth(t, e.truth, mt.Independent(t, e.ctx, entry.Parameters["metadata_location"]))
	if _, err := migrate.RegisterIceberg(e.ctx, gs.Catalog(), to, e.sk.Catalog(), table.Identifier{"sales", "orders2"}, "sales.orders2"); !errors.Is(err, migrate.ErrCannotRegister) {
		t.Fatalf("into the SQLite catalog: %v", err)
	}
}
