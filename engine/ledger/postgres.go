package ledger

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresStore is the Store for teams: the same tables in their own
// PostgreSQL schema (default "lima"), all names quoted.
type PostgresStore struct {
	core
	pool   *pgxpool.Pool
	schema string
	w      *rewriter
}

var _ Store = (*PostgresStore)(nil)

// DefaultPostgresSchema is the schema the tables live in unless WithSchema
// says otherwise.
const DefaultPostgresSchema = "lima"

// PostgresOption configures OpenPostgres.
type PostgresOption func(*pgOptions)

type pgOptions struct {
	schema string
}

// WithSchema puts the tables in the named schema (created if missing).
func WithSchema(name string) PostgresOption {
	return func(o *pgOptions) { o.schema = name }
}

// OpenPostgres connects with a pgx DSN (URL or key=value), creates the
// schema if needed and migrates it.
func OpenPostgres(ctx context.Context, dsn string, opts ...PostgresOption) (*PostgresStore, error) {
	return openPostgres(ctx, dsn, migrations, opts...)
}

func openPostgres(ctx context.Context, dsn string, list []migration, opts ...PostgresOption) (*PostgresStore, error) {
	o := pgOptions{schema: DefaultPostgresSchema}
	for _, f := range opts {
		f(&o)
	}
	if strings.TrimSpace(o.schema) == "" || len(o.schema) > 63 || strings.ContainsRune(o.schema, 0) || cleanText(o.schema) != o.schema {
		return nil, invalid("postgres schema name %q (1 to 63 bytes of UTF-8, no NUL)", o.schema)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the DSN (and its password): do not wrap it.
		return nil, invalid("postgres DSN does not parse")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ledger: postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ledger: postgres %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	s := &PostgresStore{pool: pool, schema: o.schema, w: &rewriter{schema: o.schema, dollar: true, forUpdate: "FOR UPDATE"}}
	s.core = core{b: s}
	if err := migrate(ctx, s, list); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.backfillIdents(ctx, len(list)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ledger: exception identities: %w", err)
	}
	return s, nil
}

// Schema is the schema holding the tables.
func (s *PostgresStore) Schema() string { return s.schema }

// Close closes the pool.
func (s *PostgresStore) Close() error {
	s.pool.Close()
	return nil
}

// Optimize vacuums and analyzes the exception tables (after a bulk load):
// fresh statistics for the planner and a visibility map for index-only
// scans. Autovacuum gets there too, later.
func (s *PostgresStore) Optimize(ctx context.Context) error {
	_, err := s.exec(ctx, `VACUUM (ANALYZE) {exceptions}, {exception_rules}, {exception_events}`)
	return err
}

// ---- backend ----

type pgQuerier struct {
	w *rewriter
	x interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	}
}

func (q pgQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.x.Exec(ctx, q.w.sql(query), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q pgQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	return q.x.Query(ctx, q.w.sql(query), args...)
}

func (s *PostgresStore) exec(ctx context.Context, query string, args ...any) (int64, error) {
	return pgQuerier{s.w, s.pool}.exec(ctx, query, args...)
}

func (s *PostgresStore) query(ctx context.Context, query string, args ...any) (rows, error) {
	return pgQuerier{s.w, s.pool}.query(ctx, query, args...)
}

func (s *PostgresStore) inTx(ctx context.Context, fn func(q querier) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(pgQuerier{s.w, tx}) })
}

func (s *PostgresStore) ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func (s *PostgresStore) bootstrap(ctx context.Context) error {
	return s.inTx(ctx, func(q querier) error {
		if err := s.lockMigrations(ctx, q); err != nil {
			return err
		}
		var n int64
		if err := queryRow(ctx, q, `SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = ?`, []any{s.schema}, &n); err != nil {
			return err
		}
		if n == 0 {
			// Only when missing: a user without CREATE on the database can
			// still use a schema an administrator made for it.
			if _, err := q.exec(ctx, `CREATE SCHEMA `+quoteIdent(s.schema)); err != nil {
				return err
			}
		}
		_, err := q.exec(ctx, `CREATE TABLE IF NOT EXISTS {schema_migrations} (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL
)`)
		return err
	})
}

// lockMigrations takes a transaction-scoped advisory lock per schema.
func (s *PostgresStore) lockMigrations(ctx context.Context, q querier) error {
	_, err := q.exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, "lima.ledger.migrate:"+s.schema)
	return err
}

func (s *PostgresStore) steps(m migration) []string { return m.Postgres }

// ---- backend-specific operations ----

// TryLock takes, renews or takes over (when expired) the named lease. The
// lease is timed by the database server's clock, shared by every host.
func (s *PostgresStore) TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	if err := validLock(name, owner, ttl); err != nil {
		return false, err
	}
	n, err := s.exec(ctx, `INSERT INTO {locks} AS l (name, owner, acquired_at, expires_at)
VALUES (?, ?, clock_timestamp(), clock_timestamp() + ?::float8 * interval '1 microsecond')
ON CONFLICT (name) DO UPDATE SET
  acquired_at = CASE WHEN l.owner = excluded.owner THEN l.acquired_at ELSE excluded.acquired_at END,
  owner = excluded.owner, expires_at = excluded.expires_at
WHERE l.owner = excluded.owner OR l.expires_at <= clock_timestamp()`,
		cleanText(name), cleanText(owner), float64(ttl.Microseconds()))
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

var exceptionColumns = []string{"id", "run_id", "load_id", "table_name", "level", "file", "line", "row_num", "row_key", "raw", "encoding",
	"failures", "owner", "deadline", "status", "state", "fixed", "created_at", "updated_at", "replay_load_id", "row_values",
	"ident", "last_load_id", "last_seen_at"}

// AddPending reserves the ids from the sequence, then COPYs the batch.
func (s *PostgresStore) AddPending(ctx context.Context, ex []Exception) error {
	if len(ex) == 0 {
		return nil
	}
	batch := slices.Clone(ex)
	idents, err := prepare(batch)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		seq := quoteIdent(s.schema) + "." + quoteIdent("exceptions_id_seq")
		rs, err := tx.Query(ctx, `SELECT nextval($1::regclass) FROM generate_series(1, $2)`, seq, len(batch))
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rs, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if len(ids) != len(batch) {
			return fmt.Errorf("reserved %d ids for %d exceptions", len(ids), len(batch))
		}
		slices.Sort(ids)
		type ruleRow struct {
			e    *Exception
			rule string
		}
		var rules []ruleRow
		erows := make([][]any, len(batch))
		for i := range batch {
			e := &batch[i]
			e.ID = ids[i]
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
			erows[i] = []any{e.ID, e.RunID, e.LoadID, e.Table, e.Level, e.File, e.Line, e.Row, e.Key, e.Raw, e.Encoding,
				fs, e.Owner, s.ts(e.Deadline), e.Status, e.State, fx, s.ts(e.CreatedAt), s.ts(e.UpdatedAt), "", vals,
				idents[i], e.LastLoadID, s.ts(e.LastSeenAt)}
			for _, r := range rulesOf(e.Failures) {
				rules = append(rules, ruleRow{e, r})
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{s.schema, "exceptions"}, exceptionColumns, pgx.CopyFromRows(erows)); err != nil {
			return err
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{s.schema, "exception_rules"},
			[]string{"exception_id", "rule", "table_name", "owner", "deadline", "status", "state"},
			pgx.CopyFromSlice(len(rules), func(i int) ([]any, error) {
				e := rules[i].e
				return []any{e.ID, rules[i].rule, e.Table, e.Owner, s.ts(e.Deadline), StatusOpen, StatePending}, nil
			}))
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: add pending: %w", err)
	}
	copy(ex, batch)
	return nil
}
