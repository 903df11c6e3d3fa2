package ledger_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/ledger/ledgertest"
)

const defaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func postgresDSN() string {
	if dsn := os.Getenv("LIMA_TEST_POSTGRES_DSN"); dsn != "" {
		return dsn
	}
	return defaultPostgresDSN
}

func servicesRequired() bool {
	return os.Getenv("CI") != "" || os.Getenv("LIMA_REQUIRE_SERVICES") == "1"
}

// postgresAdmin connects for setup and cleanup. When PostgreSQL is not
// reachable the test fails under CI (or LIMA_REQUIRE_SERVICES=1) and is
// skipped, loudly, otherwise.
func postgresAdmin(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, postgresDSN())
	if err != nil {
		msg := fmt.Sprintf("PostgreSQL is NOT reachable at %s: %v\n"+
			"    start one with scripts/ensure-postgres.sh, or point LIMA_TEST_POSTGRES_DSN at one", redact(postgresDSN()), err)
		if servicesRequired() {
			t.Fatalf("%s\n    (failing: CI or LIMA_REQUIRE_SERVICES=1 is set)", msg)
		}
		t.Skipf("\n\n    !!! SKIPPING the PostgreSQL ledger tests !!!\n    %s\n    (set LIMA_REQUIRE_SERVICES=1 to make this a failure)\n\n", msg)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// freshSchema returns a schema name no test uses and drops it afterwards.
func freshSchema(t testing.TB, admin *pgx.Conn, prefix string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := prefix + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{name}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("dropping test schema %s: %v", name, err)
		}
	})
	return name
}

func openPostgres(t *testing.T) ledger.Store {
	t.Helper()
	admin := postgresAdmin(t)
	schema := freshSchema(t, admin, "lima_test_")
	s, err := ledger.OpenPostgres(context.Background(), postgresDSN(), ledger.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // runs before the schema is dropped
	return s
}

func TestPostgresConformance(t *testing.T) {
	postgresAdmin(t)
	ledgertest.Run(t, openPostgres)
}

func TestPostgresQuotedSchema(t *testing.T) {
	admin := postgresAdmin(t)
	ctx := context.Background()
	schema := freshSchema(t, admin, `Lima "Team" Queue; `)
	s, err := ledger.OpenPostgres(ctx, postgresDSN(), ledger.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Schema() != schema {
		t.Fatalf("schema %q", s.Schema())
	}
	ex := []ledger.Exception{{Table: "t", LoadID: "l", Failures: []ledger.Failure{{Rule: "r"}}}}
	if err := s.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Publish(ctx, "t", "l"); err != nil || n != 1 {
		t.Fatalf("Publish = %d, %v", n, err)
	}
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema, "exceptions"}.Sanitize()).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows in the quoted schema: %d, %v", n, err)
	}
}

func TestPostgresMigrations(t *testing.T) {
	admin := postgresAdmin(t)
	ctx := context.Background()
	schema := freshSchema(t, admin, "lima_test_mig_")
	// Concurrent first opens all succeed (migrations serialize).
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := ledger.OpenPostgres(ctx, postgresDSN(), ledger.WithSchema(schema))
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent open: %v", err)
		}
	}
	var n, top int
	if err := admin.QueryRow(ctx, `SELECT count(*), max(version) FROM `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&n, &top); err != nil {
		t.Fatal(err)
	}
	if n != ledger.SchemaVersion() || top != ledger.SchemaVersion() {
		t.Fatalf("schema_migrations: %d rows, top %d; want %d", n, top, ledger.SchemaVersion())
	}
	if _, err := admin.Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+
		` (version, name, applied_at) VALUES (99, 'from the future', now())`); err != nil {
		t.Fatal(err)
	}
	_, err := ledger.OpenPostgres(ctx, postgresDSN(), ledger.WithSchema(schema))
	if !errors.Is(err, ledger.ErrSchemaTooNew) {
		t.Fatalf("open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
}

func TestPostgresBadArguments(t *testing.T) {
	ctx := context.Background()
	for _, schema := range []string{"", "x\x00y", string(make([]byte, 64))} {
		if _, err := ledger.OpenPostgres(ctx, postgresDSN(), ledger.WithSchema(schema)); !errors.Is(err, ledger.ErrInvalid) {
			t.Errorf("schema %q: %v, want ErrInvalid", schema, err)
		}
	}
	_, err := ledger.OpenPostgres(ctx, "postgres://u:secret@[::1", ledger.WithSchema("x"))
	if !errors.Is(err, ledger.ErrInvalid) {
		t.Errorf("bad DSN: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// redact hides a password in a URL DSN.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return "LIMA_TEST_POSTGRES_DSN (key=value form)"
}

func TestPostgresUpgrade(t *testing.T) {
	admin := postgresAdmin(t)
	ctx := context.Background()
	schema := freshSchema(t, admin, "lima_test_up_")
	old, err := ledger.OpenPostgresAtVersion(ctx, postgresDSN(), 1, ledger.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	if _, err := admin.Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "exceptions"}.Sanitize()+
		` (run_id, load_id, table_name, level, failures, status, state, created_at, updated_at)
VALUES ('r', 'l', 't', 'row', '[{"rule":"x","reason":"y"}]', 'open', 'committed', now(), now())`); err != nil {
		t.Fatal(err)
	}
	s, err := ledger.OpenPostgres(ctx, postgresDSN(), ledger.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := admin.QueryRow(ctx, `SELECT max(version) FROM `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&v); err != nil || v != ledger.SchemaVersion() {
		t.Fatalf("schema version after upgrade %d, %v; want %d", v, err, ledger.SchemaVersion())
	}
	checkUpgraded(t, s)
}
