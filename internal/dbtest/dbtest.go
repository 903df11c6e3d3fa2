// Package dbtest gives integration tests a real database server on
// loopback (PostgreSQL and MariaDB, started by scripts/ensure-postgres.sh
// and scripts/ensure-mariadb.sh): its DSN from an environment variable or
// the local default, and an open, pinged connection closed when the test
// ends. When the server does not answer, the test is skipped loudly — or
// fails under CI or LIMA_REQUIRE_SERVICES=1.
package dbtest

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/source/sqldb"
)

// PostgresEnv names the variable holding the test PostgreSQL's DSN, and
// PostgresDefault is the local server scripts/ensure-postgres.sh starts.
const (
	PostgresEnv     = "LIMA_TEST_POSTGRES_DSN"
	PostgresDefault = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
)

// Service returns the DSN in env (def when unset) and a connection to it.
func Service(t testing.TB, d sqldb.Dialect, env, def string) (string, *sql.DB) {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		dsn = def
	}
	db, err := sqldb.Open(d, dsn)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("LIMA_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s server unreachable (%s): %v", d, env, err)
		}
		t.Skipf("SKIPPING %s INTEGRATION TEST: server unreachable (%s): %v (set CI or LIMA_REQUIRE_SERVICES=1 to make this a failure; scripts/ensure-postgres.sh, scripts/ensure-mariadb.sh start servers)", d, env, err)
	}
	t.Cleanup(func() { db.Close() })
	return dsn, db
}
