package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// migration is one versioned schema step, written for both databases. Steps
// are applied in order, each in its own transaction together with its row in
// schema_migrations. Never edit a released step: append a new one.
type migration struct {
	Version  int
	Name     string
	SQLite   []string
	Postgres []string
}

// SchemaVersion is the schema version this build creates and understands.
func SchemaVersion() int { return len(migrations) }

var migrations = []migration{
	{
		Version: 1,
		Name:    "initial: runs, watermarks, locks, exceptions, rules, events",
		SQLite: []string{
			`CREATE TABLE {runs} (
  id          TEXT PRIMARY KEY,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  status      TEXT NOT NULL,
  plan_hash   TEXT NOT NULL DEFAULT '',
  summary     BLOB
) STRICT`,
			`CREATE INDEX {runs_started} ON {runs} (started_at DESC, id DESC)`,
			`CREATE TABLE {watermarks} (
  table_name  TEXT PRIMARY KEY,
  watermark   TEXT NOT NULL,
  load_id     TEXT NOT NULL,
  snapshot_id INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT`,
			`CREATE TABLE {locks} (
  name        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT`,
			// AUTOINCREMENT: ids of discarded rows are never reused.
			`CREATE TABLE {exceptions} (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id         TEXT NOT NULL,
  load_id        TEXT NOT NULL,
  table_name     TEXT NOT NULL,
  level          TEXT NOT NULL CHECK (level IN ('row', 'file')),
  file           TEXT NOT NULL DEFAULT '',
  line           INTEGER NOT NULL DEFAULT 0,
  row_num        INTEGER NOT NULL DEFAULT 0,
  row_key        TEXT NOT NULL DEFAULT '',
  raw            BLOB,
  encoding       TEXT NOT NULL DEFAULT '',
  failures       TEXT NOT NULL,
  owner          TEXT NOT NULL DEFAULT '',
  deadline       INTEGER,
  status         TEXT NOT NULL CHECK (status IN ('open', 'fixed', 'replayed', 'waived')),
  state          TEXT NOT NULL CHECK (state IN ('pending', 'committed')),
  fixed          TEXT,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  replay_load_id TEXT NOT NULL DEFAULT ''
) STRICT`,
			`CREATE INDEX {exceptions_pending} ON {exceptions} (table_name, load_id) WHERE state = 'pending'`,
			`CREATE INDEX {exceptions_c_owner} ON {exceptions} (owner, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_table} ON {exceptions} (table_name, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_status} ON {exceptions} (status, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_load} ON {exceptions} (load_id, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_due} ON {exceptions} (deadline, id) WHERE state = 'committed' AND status IN ('open', 'fixed')`,
			`CREATE INDEX {exceptions_c_owner_due} ON {exceptions} (owner, deadline) WHERE state = 'committed' AND status IN ('open', 'fixed')`,
			// One row per (exception, distinct rule). table_name, owner,
			// deadline, status and state mirror the exception so that counting
			// by rule, and any count filtered by rule, is answered from this
			// table alone.
			`CREATE TABLE {exception_rules} (
  exception_id INTEGER NOT NULL REFERENCES {exceptions} (id) ON DELETE CASCADE,
  rule         TEXT NOT NULL,
  table_name   TEXT NOT NULL,
  owner        TEXT NOT NULL,
  deadline     INTEGER,
  status       TEXT NOT NULL,
  state        TEXT NOT NULL,
  PRIMARY KEY (exception_id, rule)
) STRICT, WITHOUT ROWID`,
			`CREATE INDEX {exception_rules_c_rule} ON {exception_rules} (rule, exception_id) WHERE state = 'committed'`,
			`CREATE INDEX {exception_rules_c_status} ON {exception_rules} (status, deadline, rule) WHERE state = 'committed'`,
			`CREATE INDEX {exception_rules_c_owner} ON {exception_rules} (owner, rule) WHERE state = 'committed'`,
			`CREATE TABLE {exception_events} (
  id           INTEGER PRIMARY KEY,
  exception_id INTEGER NOT NULL REFERENCES {exceptions} (id) ON DELETE CASCADE,
  at           INTEGER NOT NULL,
  actor        TEXT NOT NULL,
  action       TEXT NOT NULL,
  from_status  TEXT NOT NULL DEFAULT '',
  to_status    TEXT NOT NULL DEFAULT '',
  note         TEXT NOT NULL DEFAULT '',
  fixed        TEXT
) STRICT`,
			`CREATE INDEX {exception_events_ex} ON {exception_events} (exception_id, id)`,
		},
		Postgres: []string{
			`CREATE TABLE {runs} (
  id          text PRIMARY KEY,
  started_at  timestamptz NOT NULL,
  finished_at timestamptz,
  status      text NOT NULL,
  plan_hash   text NOT NULL DEFAULT '',
  summary     bytea
)`,
			`CREATE INDEX {runs_started} ON {runs} (started_at DESC, id DESC)`,
			`CREATE TABLE {watermarks} (
  table_name  text PRIMARY KEY,
  watermark   text NOT NULL,
  load_id     text NOT NULL,
  snapshot_id bigint NOT NULL,
  updated_at  timestamptz NOT NULL
)`,
			`CREATE TABLE {locks} (
  name        text PRIMARY KEY,
  owner       text NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
)`,
			`CREATE TABLE {exceptions} (
  id             bigserial PRIMARY KEY,
  run_id         text NOT NULL,
  load_id        text NOT NULL,
  table_name     text NOT NULL,
  level          text NOT NULL CHECK (level IN ('row', 'file')),
  file           text NOT NULL DEFAULT '',
  line           bigint NOT NULL DEFAULT 0,
  row_num        bigint NOT NULL DEFAULT 0,
  row_key        text NOT NULL DEFAULT '',
  raw            bytea,
  encoding       text NOT NULL DEFAULT '',
  failures       text NOT NULL,
  owner          text NOT NULL DEFAULT '',
  deadline       timestamptz,
  status         text NOT NULL CHECK (status IN ('open', 'fixed', 'replayed', 'waived')),
  state          text NOT NULL CHECK (state IN ('pending', 'committed')),
  fixed          text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  replay_load_id text NOT NULL DEFAULT ''
)`,
			`CREATE INDEX {exceptions_pending} ON {exceptions} (table_name, load_id) WHERE state = 'pending'`,
			`CREATE INDEX {exceptions_c_owner} ON {exceptions} (owner, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_table} ON {exceptions} (table_name, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_status} ON {exceptions} (status, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_load} ON {exceptions} (load_id, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_due} ON {exceptions} (deadline, id) WHERE state = 'committed' AND status IN ('open', 'fixed')`,
			`CREATE INDEX {exceptions_c_owner_due} ON {exceptions} (owner, deadline) WHERE state = 'committed' AND status IN ('open', 'fixed')`,
			`CREATE TABLE {exception_rules} (
  exception_id bigint NOT NULL REFERENCES {exceptions} (id) ON DELETE CASCADE,
  rule         text NOT NULL,
  table_name   text NOT NULL,
  owner        text NOT NULL,
  deadline     timestamptz,
  status       text NOT NULL,
  state        text NOT NULL,
  PRIMARY KEY (exception_id, rule)
)`,
			`CREATE INDEX {exception_rules_c_rule} ON {exception_rules} (rule, exception_id) WHERE state = 'committed'`,
			`CREATE INDEX {exception_rules_c_status} ON {exception_rules} (status, deadline, rule) WHERE state = 'committed'`,
			`CREATE INDEX {exception_rules_c_owner} ON {exception_rules} (owner, rule) WHERE state = 'committed'`,
			`CREATE TABLE {exception_events} (
  id           bigserial PRIMARY KEY,
  exception_id bigint NOT NULL REFERENCES {exceptions} (id) ON DELETE CASCADE,
  at           timestamptz NOT NULL,
  actor        text NOT NULL,
  action       text NOT NULL,
  from_status  text NOT NULL DEFAULT '',
  to_status    text NOT NULL DEFAULT '',
  note         text NOT NULL DEFAULT '',
  fixed        text
)`,
			`CREATE INDEX {exception_events_ex} ON {exception_events} (exception_id, id)`,
		},
	},
	{
		Version:  2,
		Name:     "exceptions.row_values: the row's fields as read",
		SQLite:   []string{`ALTER TABLE {exceptions} ADD COLUMN row_values TEXT`},
		Postgres: []string{`ALTER TABLE {exceptions} ADD COLUMN row_values text`},
	},
	{
		Version: 3,
		Name:    "exception identity: ident, last seen, superseded",
		// SQLite cannot change a CHECK constraint in place: the table is
		// rebuilt (its rules and events are kept aside, since dropping the
		// table cascades to them), keeping ids and the id sequence.
		SQLite: append([]string{
			`CREATE TABLE {exceptions_new} (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id         TEXT NOT NULL,
  load_id        TEXT NOT NULL,
  table_name     TEXT NOT NULL,
  level          TEXT NOT NULL CHECK (level IN ('row', 'file')),
  file           TEXT NOT NULL DEFAULT '',
  line           INTEGER NOT NULL DEFAULT 0,
  row_num        INTEGER NOT NULL DEFAULT 0,
  row_key        TEXT NOT NULL DEFAULT '',
  raw            BLOB,
  encoding       TEXT NOT NULL DEFAULT '',
  failures       TEXT NOT NULL,
  owner          TEXT NOT NULL DEFAULT '',
  deadline       INTEGER,
  status         TEXT NOT NULL CHECK (status IN ('open', 'fixed', 'replayed', 'waived', 'superseded')),
  state          TEXT NOT NULL CHECK (state IN ('pending', 'committed')),
  fixed          TEXT,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  replay_load_id TEXT NOT NULL DEFAULT '',
  row_values     TEXT,
  ident          TEXT NOT NULL DEFAULT '',
  last_load_id   TEXT NOT NULL DEFAULT '',
  last_seen_at   INTEGER,
  superseded_by  TEXT NOT NULL DEFAULT ''
) STRICT`,
			`INSERT INTO {exceptions_new} (id, run_id, load_id, table_name, level, file, line, row_num, row_key, raw, encoding, failures, owner,
  deadline, status, state, fixed, created_at, updated_at, replay_load_id, row_values, last_load_id, last_seen_at)
  SELECT id, run_id, load_id, table_name, level, file, line, row_num, row_key, raw, encoding, failures, owner,
  deadline, status, state, fixed, created_at, updated_at, replay_load_id, row_values, load_id, updated_at FROM {exceptions}`,
			`DELETE FROM sqlite_sequence WHERE name = 'exceptions_new'`,
			`INSERT INTO sqlite_sequence (name, seq) SELECT 'exceptions_new', seq FROM sqlite_sequence WHERE name = 'exceptions'`,
			`CREATE TABLE {exception_rules_keep} AS SELECT * FROM {exception_rules}`,
			`CREATE TABLE {exception_events_keep} AS SELECT * FROM {exception_events}`,
			`DROP TABLE {exceptions}`,
			`ALTER TABLE {exceptions_new} RENAME TO {exceptions}`,
			`INSERT INTO {exception_rules} SELECT * FROM {exception_rules_keep}`,
			`INSERT INTO {exception_events} SELECT * FROM {exception_events_keep}`,
			`DROP TABLE {exception_rules_keep}`,
			`DROP TABLE {exception_events_keep}`,
			`CREATE INDEX {exceptions_pending} ON {exceptions} (table_name, load_id) WHERE state = 'pending'`,
			`CREATE INDEX {exceptions_c_owner} ON {exceptions} (owner, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_table} ON {exceptions} (table_name, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_status} ON {exceptions} (status, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_load} ON {exceptions} (load_id, id) WHERE state = 'committed'`,
			`CREATE INDEX {exceptions_c_due} ON {exceptions} (deadline, id) WHERE state = 'committed' AND status IN ('open', 'fixed')`,
			`CREATE INDEX {exceptions_c_owner_due} ON {exceptions} (owner, deadline) WHERE state = 'committed' AND status IN ('open', 'fixed')`,
		}, identityIndexes...),
		Postgres: append([]string{
			`ALTER TABLE {exceptions} DROP CONSTRAINT IF EXISTS exceptions_status_check`,
			`ALTER TABLE {exceptions} ADD CONSTRAINT exceptions_status_check CHECK (status IN ('open', 'fixed', 'replayed', 'waived', 'superseded'))`,
			`ALTER TABLE {exceptions} ADD COLUMN ident text NOT NULL DEFAULT '', ADD COLUMN last_load_id text NOT NULL DEFAULT '',
  ADD COLUMN last_seen_at timestamptz, ADD COLUMN superseded_by text NOT NULL DEFAULT ''`,
			`UPDATE {exceptions} SET last_load_id = load_id, last_seen_at = updated_at`,
		}, identityIndexes...),
	},
	{
		Version: 4,
		Name:    "stagings: the data files a load is writing, by write id, until its commit is settled",
		SQLite: []string{
			`CREATE TABLE {stagings} (
  write_id    TEXT PRIMARY KEY,
  table_name  TEXT NOT NULL,
  load_id     TEXT NOT NULL,
  run_id      TEXT NOT NULL DEFAULT '',
  started_at  INTEGER NOT NULL
) STRICT`,
		},
		Postgres: []string{
			`CREATE TABLE {stagings} (
  write_id    text PRIMARY KEY,
  table_name  text NOT NULL,
  load_id     text NOT NULL,
  run_id      text NOT NULL DEFAULT '',
  started_at  timestamptz NOT NULL
)`,
		},
	},
}

// identityIndexes serve Publish (the committed exception of an identity),
// Filter.LoadID (last seen), LoadCounts (superseded by) and the backfill of
// identities after migration 3.
var identityIndexes = []string{
	`CREATE INDEX {exceptions_c_ident} ON {exceptions} (table_name, ident) WHERE state = 'committed'`,
	`CREATE INDEX {exceptions_c_last} ON {exceptions} (last_load_id, id) WHERE state = 'committed'`,
	`CREATE INDEX {exceptions_superseded} ON {exceptions} (superseded_by) WHERE superseded_by <> ''`,
	`CREATE INDEX {exceptions_no_ident} ON {exceptions} (id) WHERE ident = ''`,
}

// migrator is what a backend provides to run the migrations.
type migrator interface {
	backend
	// bootstrap creates schema_migrations if needed.
	bootstrap(ctx context.Context) error
	// lockMigrations serializes migrating processes inside q's transaction.
	lockMigrations(ctx context.Context, q querier) error
	// steps returns the statements of m for this database.
	steps(m migration) []string
}

// migrate applies the missing steps and refuses a schema from a newer build.
func migrate(ctx context.Context, m migrator, list []migration) error {
	for i, s := range list {
		if s.Version != i+1 {
			return fmt.Errorf("ledger: migration %d has version %d", i+1, s.Version)
		}
	}
	if err := m.bootstrap(ctx); err != nil {
		return fmt.Errorf("ledger: migrations table: %w", err)
	}
	applied := func(ctx context.Context, q querier) (map[int]string, int, error) {
		rs, err := q.query(ctx, `SELECT version, name FROM {schema_migrations}`)
		if err != nil {
			return nil, 0, err
		}
		defer rs.Close()
		got, top := map[int]string{}, 0
		for rs.Next() {
			var v int
			var name string
			if err := rs.Scan(&v, &name); err != nil {
				return nil, 0, err
			}
			got[v] = name
			top = max(top, v)
		}
		return got, top, rs.Err()
	}
	check := func(got map[int]string, top int) error {
		if top > len(list) {
			return fmt.Errorf("%w: the state database is at schema version %d, this build knows versions up to %d; upgrade Lima (do not downgrade a state database)",
				ErrSchemaTooNew, top, len(list))
		}
		for v, name := range got {
			if want := list[v-1].Name; name != want {
				return fmt.Errorf("ledger: schema version %d is %q in the database but %q in this build", v, name, want)
			}
		}
		return nil
	}
	got, top, err := applied(ctx, m)
	if err != nil {
		return fmt.Errorf("ledger: reading schema version: %w", err)
	}
	if err := check(got, top); err != nil {
		return err
	}
	for _, s := range list {
		if _, ok := got[s.Version]; ok {
			continue
		}
		err := m.inTx(ctx, func(q querier) error {
			if err := m.lockMigrations(ctx, q); err != nil {
				return err
			}
			// Another process may have migrated meanwhile.
			got, top, err := applied(ctx, q)
			if err != nil {
				return err
			}
			if err := check(got, top); err != nil {
				return err
			}
			if _, ok := got[s.Version]; ok {
				return errSkip
			}
			for _, stmt := range m.steps(s) {
				if _, err := q.exec(ctx, stmt); err != nil {
					return err
				}
			}
			_, err = q.exec(ctx, `INSERT INTO {schema_migrations} (version, name, applied_at) VALUES (?, ?, ?)`,
				s.Version, s.Name, m.ts(time.Now().UTC()))
			return err
		})
		if err != nil && !errors.Is(err, errSkip) {
			return fmt.Errorf("ledger: migration %d (%s): %w", s.Version, s.Name, err)
		}
	}
	return nil
}

var errSkip = errors.New("skip")
