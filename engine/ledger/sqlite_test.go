package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/ledger/ledgertest"
)

func openSQLite(t *testing.T) ledger.Store {
	t.Helper()
	s, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), ".lima", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestSQLiteConformance(t *testing.T) {
	ledgertest.Run(t, openSQLite)
}

func TestSQLiteFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws", ".lima")
	path := filepath.Join(dir, "state.db")
	s, err := ledger.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetWatermark(context.Background(), "t", "1", "l", 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700}, {path, 0o600}, {path + "-wal", 0o600}, {path + "-shm", 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.mode {
			t.Errorf("%s: mode %o, want %o", filepath.Base(c.path), got, c.mode)
		}
	}
}

func TestSQLitePragmas(t *testing.T) {
	s := openSQLite(t).(*ledger.SQLiteStore)
	db := openRaw(t, s.Path())
	defer db.Close()
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestSQLiteReopenAndMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd ?#% name", "state.db")
	ctx := context.Background()
	s, err := ledger.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetWatermark(ctx, "orders", "7", "L1", 70); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at the path given: %v", err)
	}
	// Re-opening is idempotent and keeps the data.
	for range 2 {
		s, err = ledger.OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		w, ok, err := s.Watermark(ctx, "orders")
		if err != nil || !ok || w.Watermark != "7" {
			t.Fatalf("after reopen: %+v %v %v", w, ok, err)
		}
		s.Close()
	}
	// One row per version.
	direct := openRaw(t, path)
	var n, top int
	if err := direct.QueryRow(`SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &top); err != nil {
		t.Fatal(err)
	}
	if n != ledger.SchemaVersion() || top != ledger.SchemaVersion() {
		t.Fatalf("schema_migrations: %d rows, top %d; want %d", n, top, ledger.SchemaVersion())
	}
	// A database from a newer Lima is refused.
	if _, err := direct.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from the future', 0)`); err != nil {
		t.Fatal(err)
	}
	direct.Close()
	_, err = ledger.OpenSQLite(path)
	if !errors.Is(err, ledger.ErrSchemaTooNew) {
		t.Fatalf("open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
	t.Logf("refusal reads: %v", err)
}

func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	db, err := sql.Open("sqlite", "file:"+p+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSQLiteBadPath(t *testing.T) {
	if _, err := ledger.OpenSQLite(""); !errors.Is(err, ledger.ErrInvalid) {
		t.Fatalf("empty path: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.OpenSQLite(filepath.Join(f, "state.db")); err == nil {
		t.Fatal("open below a regular file succeeded")
	}
	// Not a database.
	junk := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(junk, []byte("this is not an sqlite database, not at all, really not"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.OpenSQLite(junk); err == nil {
		t.Fatal("open of a junk file succeeded")
	}
}

// TestSQLiteUpgrade opens a database made by a build that knew only the
// first migration: reopening applies the rest and keeps the data.
func TestSQLiteUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	old, err := ledger.OpenSQLiteAtVersion(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	db := openRaw(t, path)
	if _, err := db.Exec(`INSERT INTO exceptions (run_id, load_id, table_name, level, failures, status, state, created_at, updated_at)
VALUES ('r', 'l', 't', 'row', '[{"rule":"x","reason":"y"}]', 'open', 'committed', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	// Its rule, an event, and a discarded later id: version 3 rebuilds
	// the table and must keep all three (ids are never reused).
	for _, q := range []string{
		`INSERT INTO exception_rules (exception_id, rule, table_name, owner, status, state) VALUES (1, 'x', 't', '', 'open', 'committed')`,
		`INSERT INTO exception_events (exception_id, at, actor, action, from_status, to_status, note) VALUES (1, 2, 'ops', 'assign', 'open', 'open', 'n')`,
		`INSERT INTO exceptions (run_id, load_id, table_name, level, failures, status, state, created_at, updated_at)
VALUES ('r', 'l', 't', 'row', '[{"rule":"x","reason":"y"}]', 'open', 'pending', 1, 1)`,
		`DELETE FROM exceptions WHERE id = 2`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := ledger.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db = openRaw(t, path)
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != ledger.SchemaVersion() {
		t.Fatalf("schema version after upgrade %d, %v; want %d", v, err, ledger.SchemaVersion())
	}
	ctx := context.Background()
	if n, err := s.Count(ctx, ledger.Filter{Rule: "x"}); err != nil || n != 1 {
		t.Fatalf("rules after the rebuild: %d %v, want 1", n, err)
	}
	if h, err := s.History(ctx, 1); err != nil || len(h) != 2 || h[1].Action != "assign" || h[1].Note != "n" {
		t.Fatalf("history after the rebuild: %+v %v", h, err)
	}
	checkUpgraded(t, s)
	var top int64
	if err := db.QueryRow(`SELECT max(id) FROM exceptions`).Scan(&top); err != nil || top <= 2 {
		t.Fatalf("a new exception after upgrade got id %d (%v): the id of a discarded row was reused", top, err)
	}
	var fk int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil || fk != 0 {
		t.Fatalf("foreign key violations after the rebuild: %d %v", fk, err)
	}
}

// checkUpgraded checks the row written at version 1 and that version 2's
// column works.
func checkUpgraded(t *testing.T, s ledger.Store) {
	t.Helper()
	ctx := context.Background()
	es, _, err := s.List(ctx, ledger.Filter{}, ledger.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Table != "t" || es[0].Values != nil || len(es[0].Failures) != 1 || es[0].Failures[0].Rule != "x" {
		t.Fatalf("old rows after upgrade: %+v", es)
	}
	in := []ledger.Exception{{Table: "t", LoadID: "l2", Failures: []ledger.Failure{{Rule: "x"}}, Values: map[string]string{"a": "1"}}}
	if err := s.AddPending(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, in[0].ID)
	if err != nil || got.Values["a"] != "1" || len(got.Values) != 1 {
		t.Fatalf("values after upgrade: %v, %v", got.Values, err)
	}
	// Version 3: the old row was last seen in its own load, and can be
	// superseded.
	if es[0].LastLoadID != "l" {
		t.Fatalf("old row last seen in %q, want l", es[0].LastLoadID)
	}
	if n, err := s.Supersede(ctx, "t", "l9", nil, "lima"); err != nil || n != 1 {
		t.Fatalf("Supersede after upgrade: %d %v", n, err)
	}
	if e, err := s.Get(ctx, es[0].ID); err != nil || e.Status != ledger.StatusSuperseded || e.SupersededBy != "l9" {
		t.Fatalf("old row after Supersede: %+v %v", e, err)
	}
}

// TestSQLiteUpgradeRecognisesOldRows: a bad row written before exceptions
// had an identity (version 3) gets one on the upgrade, so a later load that
// meets the same row again finds it instead of opening another exception.
func TestSQLiteUpgradeRecognisesOldRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	old, err := ledger.OpenSQLiteAtVersion(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	db := openRaw(t, path)
	if _, err := db.Exec(`INSERT INTO exceptions (run_id, load_id, table_name, level, file, line, row_num, raw, failures, status, state, created_at, updated_at)
VALUES ('r', 'l1', 't', 'row', 'a.csv', 3, 2, CAST('1,x' AS BLOB), '[{"rule":"cast","reason":"c"}]', 'open', 'committed', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	// A keyless database row: no bytes, its values are its content.
	if _, err := db.Exec(`INSERT INTO exceptions (run_id, load_id, table_name, level, file, row_num, row_values, failures, status, state, created_at, updated_at)
VALUES ('r', 'l1', 't', 'row', 'erp.t', 4, '{"a":"1","b":"2"}', '[{"rule":"r","reason":"x"}]', 'open', 'committed', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := ledger.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	again := ledger.Exception{RunID: "r2", LoadID: "l2", Table: "t", Level: "row", File: "a.csv", Line: 3, Row: 2, Raw: []byte("1,x"),
		Failures: []ledger.Failure{{Rule: "cast", Reason: "c"}}}
	dbRow := ledger.Exception{RunID: "r2", LoadID: "l2", Table: "t", Level: "row", File: "erp.t", Row: 4, Values: map[string]string{"a": "1", "b": "2"},
		Failures: []ledger.Failure{{Rule: "r", Reason: "x"}}}
	if err := s.AddPending(ctx, []ledger.Exception{again, dbRow}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, "t", "l2"); err != nil {
		t.Fatal(err)
	}
	if lc, err := s.LoadCounts(ctx, "t", "l2"); err != nil || lc != (ledger.LoadCounts{StillOpen: 2}) {
		t.Fatalf("LoadCounts(l2) = %+v %v, want the old rows met again: {StillOpen: 2}", lc, err)
	}
	if n, err := s.Count(ctx, ledger.Filter{Table: "t"}); err != nil || n != 2 {
		t.Fatalf("%d exceptions, want the two old ones only (%v)", n, err)
	}
}
