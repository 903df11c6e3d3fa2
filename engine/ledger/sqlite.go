package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // driver "sqlite", pure Go

	"github.com/lima-lake/lima/internal/fileuri"
)

// SQLiteStore is the embedded Store: one file (the workspace's
// .lima/state.db), WAL, synchronous=FULL, foreign keys on.
type SQLiteStore struct {
	core
	db   *sql.DB
	path string
	w    *rewriter
}

var _ Store = (*SQLiteStore)(nil)

// sqliteBusyTimeout is how long a writer waits for another one.
const sqliteBusyTimeout = 10 * time.Second

// OpenSQLite opens (creating it, 0600 in a 0700 folder, if needed) and
// migrates the state database at path.
func OpenSQLite(path string) (*SQLiteStore, error) { return openSQLite(path, migrations) }

func openSQLite(path string, list []migration) (*SQLiteStore, error) {
	if strings.TrimSpace(path) == "" {
		return nil, invalid("sqlite path is required")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("ledger: state folder: %w", err)
	}
	// Create the file ourselves so that it is 0600 from the first byte;
	// SQLite gives its -wal and -shm files the mode of the database file.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ledger: state database: %w", err)
	}
	f.Close()

	dsn, err := sqliteDSN(abs)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("ledger: open %s: %w", abs, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	s := &SQLiteStore{db: db, path: abs, w: &rewriter{}}
	s.core = core{b: s}
	ctx := context.Background()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger: open %s: %w", abs, err)
	}
	if err := migrate(ctx, s, list); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.backfillIdents(ctx, len(list)); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger: exception identities: %w", err)
	}
	// Refresh the planner's statistics when a table grew a lot since the
	// last ANALYZE (SQLite's heuristic: 25x); a no-op otherwise. Sampled
	// statistics (analysis_limit) are not used: the leading columns of the
	// indexes have few distinct values and sampling misjudges them.
	if err := s.pragmas(ctx, `PRAGMA analysis_limit = 0`, `PRAGMA optimize = 0x10002`); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger: optimize: %w", err)
	}
	return s, nil
}

// sqliteDSN builds the DSN: the path as an escaped file: URI and the
// connection pragmas applied to every connection.
func sqliteDSN(abs string) (string, error) {
	uri, err := fileuri.FromPath(abs)
	if err != nil {
		return "", err
	}
	return uri +
		"?_pragma=busy_timeout(" + fmt.Sprint(sqliteBusyTimeout.Milliseconds()) + ")" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(FULL)" +
		"&_pragma=foreign_keys(1)" +
		"&_txlock=immediate", nil
}

// Path is the database file.
func (s *SQLiteStore) Path() string { return s.path }

func (s *SQLiteStore) pragmas(ctx context.Context, stmts ...string) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, st := range stmts {
		if _, err := conn.ExecContext(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// Optimize refreshes the planner's statistics with a full ANALYZE (after a
// bulk load; about a second per million exceptions).
func (s *SQLiteStore) Optimize(ctx context.Context) error {
	return s.pragmas(ctx, `PRAGMA analysis_limit = 0`, `ANALYZE`)
}

// Close closes the database.
func (s *SQLiteStore) Close() error { return s.db.Close() }

// ---- backend ----

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlQuerier struct {
	w *rewriter
	x interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	}
}

func (q sqlQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.x.ExecContext(ctx, q.w.sql(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	rs, err := q.x.QueryContext(ctx, q.w.sql(query), args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rs}, nil
}

func (s *SQLiteStore) exec(ctx context.Context, query string, args ...any) (int64, error) {
	return sqlQuerier{s.w, s.db}.exec(ctx, query, args...)
}

func (s *SQLiteStore) query(ctx context.Context, query string, args ...any) (rows, error) {
	return sqlQuerier{s.w, s.db}.query(ctx, query, args...)
}

func (s *SQLiteStore) inTx(ctx context.Context, fn func(q querier) error) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return fn(sqlQuerier{s.w, tx}) })
}

func (s *SQLiteStore) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *SQLiteStore) ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func (s *SQLiteStore) bootstrap(ctx context.Context) error {
	_, err := s.exec(ctx, `CREATE TABLE IF NOT EXISTS {schema_migrations} (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT`)
	return err
}

// lockMigrations: the transaction is BEGIN IMMEDIATE, which already holds
// the database's write lock.
func (s *SQLiteStore) lockMigrations(context.Context, querier) error { return nil }

func (s *SQLiteStore) steps(m migration) []string { return m.SQLite }

// ---- backend-specific operations ----

// TryLock takes, renews or takes over (when expired) the named lease.
func (s *SQLiteStore) TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	if err := validLock(name, owner, ttl); err != nil {
		return false, err
	}
	t := time.Now()
	n, err := s.exec(ctx, `INSERT INTO {locks} (name, owner, acquired_at, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET
  acquired_at = CASE WHEN {locks}.owner = excluded.owner THEN {locks}.acquired_at ELSE excluded.acquired_at END,
  owner = excluded.owner, expires_at = excluded.expires_at
WHERE {locks}.owner = excluded.owner OR {locks}.expires_at <= ?`,
		cleanText(name), cleanText(owner), t.UnixMicro(), t.Add(ttl).UnixMicro(), t.UnixMicro())
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// AddPending inserts the batch in one transaction with prepared statements.
func (s *SQLiteStore) AddPending(ctx context.Context, ex []Exception) error {
	if len(ex) == 0 {
		return nil
	}
	batch := slices.Clone(ex)
	idents, err := prepare(batch)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		insE, err := tx.PrepareContext(ctx, s.w.sql(`INSERT INTO {exceptions} (run_id, load_id, table_name, level, file, line, row_num, row_key, raw, encoding,
  failures, owner, deadline, status, state, fixed, created_at, updated_at, replay_load_id, row_values, ident, last_load_id, last_seen_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
		if err != nil {
			return err
		}
		defer insE.Close()
		insR, err := tx.PrepareContext(ctx, s.w.sql(`INSERT INTO {exception_rules} (exception_id, rule, table_name, owner, deadline, status, state)
  VALUES (?, ?, ?, ?, ?, 'open', 'pending')`))
		if err != nil {
			return err
		}
		defer insR.Close()
		for i := range batch {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			e := &batch[i]
			fs, err := jsonText(e.Failures)
			if err != nil {
				return err
			}
			fx, err := mapText(e.Fixed)
			if err != nil {
				return err
			}
			vals, err := mapText(e.Values)
			if err != nil {
				return err
			}
			res, err := insE.ExecContext(ctx, e.RunID, e.LoadID, e.Table, e.Level, e.File, e.Line, e.Row, e.Key, e.Raw, e.Encoding,
				fs, e.Owner, s.ts(e.Deadline), e.Status, e.State, fx, s.ts(e.CreatedAt), s.ts(e.UpdatedAt), "", vals, idents[i], e.LastLoadID, s.ts(e.LastSeenAt))
			if err != nil {
				return err
			}
			if e.ID, err = res.LastInsertId(); err != nil {
				return err
			}
			for _, r := range rulesOf(e.Failures) {
				if _, err := insR.ExecContext(ctx, e.ID, r, e.Table, e.Owner, s.ts(e.Deadline)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: add pending: %w", err)
	}
	copy(ex, batch)
	return nil
}
