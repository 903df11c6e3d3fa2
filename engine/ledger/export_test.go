package ledger

import "context"

// OpenSQLiteAtVersion opens a state database as a build that knew only the
// first v migrations would.
func OpenSQLiteAtVersion(path string, v int) (*SQLiteStore, error) {
	return openSQLite(path, migrations[:v])
}

// OpenPostgresAtVersion is OpenSQLiteAtVersion for PostgreSQL.
func OpenPostgresAtVersion(ctx context.Context, dsn string, v int, opts ...PostgresOption) (*PostgresStore, error) {
	return openPostgres(ctx, dsn, migrations[:v], opts...)
}
