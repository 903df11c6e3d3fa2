package flow_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDSN returns the DSN of the test PostgreSQL, or "" (with a loud skip
// message) when none is reachable. Under CI or LIMA_REQUIRE_SERVICES=1 an
// unreachable server fails the test instead.
func pgDSN(t *testing.T) string {
	dsn := os.Getenv("LIMA_TEST_POSTGRES_DSN")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		conn.Close(ctx)
		return dsn
	}
	if os.Getenv("CI") != "" || os.Getenv("LIMA_REQUIRE_SERVICES") == "1" {
		t.Fatalf("PostgreSQL is required here but unreachable: %v (run scripts/ensure-postgres.sh)", err)
	}
	t.Logf("!!! SKIPPING the PostgreSQL state store: no server at %s (%v) — run scripts/ensure-postgres.sh", "127.0.0.1:5432", err)
	return ""
}

func dropSchema(t *testing.T, dsn, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Logf("drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Logf("drop schema %s: %v", schema, err)
	}
}
