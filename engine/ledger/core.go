package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The SQL below is written once for both stores: tables as {name} tokens
// and parameters as ?, rewritten by each backend (quoted, schema-qualified
// names and $n placeholders for PostgreSQL). {for_update} locks the row
// where the database supports it (SQLite serializes writers anyway).

// rows is the part of *sql.Rows and pgx.Rows the core uses.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// querier runs statements, in or outside a transaction.
type querier interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	query(ctx context.Context, query string, args ...any) (rows, error)
}

// backend is one database.
type backend interface {
	querier
	// inTx runs fn in a write transaction.
	inTx(ctx context.Context, fn func(q querier) error) error
	// ts converts a time to a query argument (nil for the zero time).
	ts(t time.Time) any
}

// core holds the semantics both stores share.
type core struct {
	b backend
}

var errNoRows = errors.New("no rows")

func queryRow(ctx context.Context, q querier, query string, args []any, dest ...any) error {
	rs, err := q.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return err
		}
		return errNoRows
	}
	if err := rs.Scan(dest...); err != nil {
		return err
	}
	return rs.Err()
}

// dbTime scans a time stored as unix microseconds (SQLite) or timestamptz
// (PostgreSQL); NULL is the zero time.
type dbTime struct{ T time.Time }

func (d *dbTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		d.T = time.Time{}
	case int64:
		d.T = time.UnixMicro(x).UTC()
	case time.Time:
		d.T = x.UTC()
	default:
		return fmt.Errorf("ledger: cannot scan %T as a time", v)
	}
	return nil
}

// ---- runs ----

func (c *core) BeginRun(ctx context.Context, r Run) error {
	if err := required("run id", r.ID); err != nil {
		return err
	}
	if len(r.Summary) > 0 && !json.Valid(r.Summary) {
		return invalid("run summary is not valid JSON")
	}
	status := cleanText(r.Status)
	if status == "" {
		status = "running"
	}
	started := micro(r.Started)
	if started.IsZero() {
		started = now()
	}
	return c.b.inTx(ctx, func(q querier) error {
		var n int64
		if err := queryRow(ctx, q, `SELECT count(*) FROM {runs} WHERE id = ?`, []any{cleanText(r.ID)}, &n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: run %q", ErrExists, r.ID)
		}
		_, err := q.exec(ctx, `INSERT INTO {runs} (id, started_at, finished_at, status, plan_hash, summary) VALUES (?, ?, ?, ?, ?, ?)`,
			cleanText(r.ID), c.b.ts(started), c.b.ts(micro(r.Finished)), status, cleanText(r.PlanHash), nilIfEmpty(r.Summary))
		return err
	})
}

func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

func (c *core) FinishRun(ctx context.Context, runID, status string, finished time.Time, summaryJSON []byte) error {
	if err := required("run id", runID); err != nil {
		return err
	}
	if err := required("run status", status); err != nil {
		return err
	}
	if len(summaryJSON) > 0 && !json.Valid(summaryJSON) {
		return invalid("run summary is not valid JSON")
	}
	finished = micro(finished)
	if finished.IsZero() {
		finished = now()
	}
	return c.b.inTx(ctx, func(q querier) error {
		var fin dbTime
		err := queryRow(ctx, q, `SELECT finished_at FROM {runs} WHERE id = ? {for_update}`, []any{cleanText(runID)}, &fin)
		if errors.Is(err, errNoRows) {
			return fmt.Errorf("%w: run %q", ErrNotFound, runID)
		}
		if err != nil {
			return err
		}
		if !fin.T.IsZero() {
			return fmt.Errorf("%w: run %q already finished", ErrBadTransition, runID)
		}
		_, err = q.exec(ctx, `UPDATE {runs} SET finished_at = ?, status = ?, summary = ? WHERE id = ?`,
			c.b.ts(finished), cleanText(status), nilIfEmpty(summaryJSON), cleanText(runID))
		return err
	})
}

func (c *core) Runs(ctx context.Context, limit int) ([]Run, error) {
	query := `SELECT id, started_at, finished_at, status, plan_hash, summary FROM {runs} ORDER BY started_at DESC, id DESC`
	var args []any
	if limit > 0 {
		query += ` LIMIT ?`
		args = append(args, limit)
	}
	rs, err := c.b.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []Run
	for rs.Next() {
		var r Run
		var st, fin dbTime
		var sum []byte
		if err := rs.Scan(&r.ID, &st, &fin, &r.Status, &r.PlanHash, &sum); err != nil {
			return nil, err
		}
		r.Started, r.Finished = st.T, fin.T
		if len(sum) > 0 {
			r.Summary = sum
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// ---- stagings ----

func (c *core) BeginStaging(ctx context.Context, s Staging) error {
	for _, f := range [][2]string{{"write id", s.WriteID}, {"table", s.Table}} {
		if err := required(f[0], f[1]); err != nil {
			return err
		}
	}
	started := micro(s.Started)
	if started.IsZero() {
		started = now()
	}
	_, err := c.b.exec(ctx, `INSERT INTO {stagings} (write_id, table_name, load_id, run_id, started_at) VALUES (?, ?, ?, ?, ?)`,
		cleanText(s.WriteID), cleanText(s.Table), cleanText(s.LoadID), cleanText(s.RunID), c.b.ts(started))
	return err
}

func (c *core) EndStaging(ctx context.Context, writeID string) error {
	if err := required("write id", writeID); err != nil {
		return err
	}
	_, err := c.b.exec(ctx, `DELETE FROM {stagings} WHERE write_id = ?`, cleanText(writeID))
	return err
}

func (c *core) Stagings(ctx context.Context) ([]Staging, error) {
	rs, err := c.b.query(ctx, `SELECT write_id, table_name, load_id, run_id, started_at FROM {stagings} ORDER BY started_at, write_id`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []Staging
	for rs.Next() {
		var s Staging
		var st dbTime
		if err := rs.Scan(&s.WriteID, &s.Table, &s.LoadID, &s.RunID, &st); err != nil {
			return nil, err
		}
		s.Started = st.T
		out = append(out, s)
	}
	return out, rs.Err()
}

// ---- watermarks ----

func (c *core) Watermark(ctx context.Context, table string) (WatermarkRecord, bool, error) {
	var w WatermarkRecord
	var up dbTime
	err := queryRow(ctx, c.b, `SELECT table_name, watermark, load_id, snapshot_id, updated_at FROM {watermarks} WHERE table_name = ?`,
		[]any{cleanText(table)}, &w.Table, &w.Watermark, &w.LoadID, &w.SnapshotID, &up)
	if errors.Is(err, errNoRows) {
		return WatermarkRecord{}, false, nil
	}
	if err != nil {
		return WatermarkRecord{}, false, err
	}
	w.UpdatedAt = up.T
	return w, true, nil
}

func (c *core) SetWatermark(ctx context.Context, table, watermark, loadID string, snapshotID int64) error {
	if err := required("table", table); err != nil {
		return err
	}
	_, err := c.b.exec(ctx, `INSERT INTO {watermarks} (table_name, watermark, load_id, snapshot_id, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (table_name) DO UPDATE SET watermark = excluded.watermark, load_id = excluded.load_id,
  snapshot_id = excluded.snapshot_id, updated_at = excluded.updated_at`,
		cleanText(table), cleanText(watermark), cleanText(loadID), snapshotID, c.b.ts(now()))
	return err
}

// ---- locks (TryLock is per backend: it reads the clock of the database) ----

func (c *core) Unlock(ctx context.Context, name, owner string) error {
	if err := required("lock name", name); err != nil {
		return err
	}
	if err := required("lock owner", owner); err != nil {
		return err
	}
	name, owner = cleanText(name), cleanText(owner)
	return c.b.inTx(ctx, func(q querier) error {
		n, err := q.exec(ctx, `DELETE FROM {locks} WHERE name = ? AND owner = ?`, name, owner)
		if err != nil || n > 0 {
			return err
		}
		var holder string
		err = queryRow(ctx, q, `SELECT owner FROM {locks} WHERE name = ?`, []any{name}, &holder)
		if errors.Is(err, errNoRows) {
			return nil // nobody holds it: releasing is a no-op
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: lock %q is held by %q, not %q", ErrLockNotHeld, name, holder, owner)
	})
}

func validLock(name, owner string, ttl time.Duration) error {
	if err := required("lock name", name); err != nil {
		return err
	}
	if err := required("lock owner", owner); err != nil {
		return err
	}
	if ttl <= 0 {
		return invalid("lock ttl must be positive, got %s", ttl)
	}
	return nil
}

// ---- exceptions: writing ----

// prepare validates and normalizes a batch for AddPending and sets the
// fields the store decides.
func prepare(ex []Exception) ([]string, error) {
	t := now()
	idents := make([]string, len(ex))
	for i := range ex {
		e := &ex[i]
		if err := required("table", e.Table); err != nil {
			return nil, fmt.Errorf("exception %d: %w", i, err)
		}
		if err := required("load id", e.LoadID); err != nil {
			return nil, fmt.Errorf("exception %d: %w", i, err)
		}
		switch e.Level {
		case "":
			e.Level = LevelRow
		case LevelRow, LevelFile:
		default:
			return nil, fmt.Errorf("exception %d: %w", i, invalid("level %q (want row or file)", e.Level))
		}
		if err := validFailures(e.Failures); err != nil {
			return nil, fmt.Errorf("exception %d: %w", i, err)
		}
		e.RunID, e.LoadID, e.Table = cleanText(e.RunID), cleanText(e.LoadID), cleanText(e.Table)
		e.File, e.Key, e.Encoding = cleanText(e.File), cleanText(e.Key), cleanText(e.Encoding)
		e.Owner, e.ReplayLoadID = cleanText(e.Owner), ""
		e.Failures = cleanFailures(e.Failures)
		e.Fixed = cleanMap(e.Fixed)
		if len(e.Fixed) == 0 {
			e.Fixed = nil
		}
		e.Values = cleanMap(e.Values)
		if len(e.Values) == 0 {
			e.Values = nil
		}
		e.Deadline = micro(e.Deadline)
		e.Status, e.State = StatusOpen, StatePending
		e.CreatedAt, e.UpdatedAt = t, t
		e.LastLoadID, e.LastSeenAt, e.SupersededBy = e.LoadID, t, ""
		idents[i] = identOf(*e)
	}
	return idents, nil
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func mapText(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	return jsonText(m)
}

func (c *core) DiscardPending(ctx context.Context, table, loadID string) (int64, error) {
	table, loadID = cleanText(table), cleanText(loadID)
	var n int64
	err := c.b.inTx(ctx, func(q querier) error {
		if _, err := q.exec(ctx, `DELETE FROM {exception_rules} WHERE state = 'pending' AND exception_id IN
  (SELECT id FROM {exceptions} WHERE table_name = ? AND load_id = ? AND state = 'pending')`, table, loadID); err != nil {
			return err
		}
		var err error
		n, err = q.exec(ctx, `DELETE FROM {exceptions} WHERE table_name = ? AND load_id = ? AND state = 'pending'`, table, loadID)
		return err
	})
	return n, err
}

func (c *core) PendingLoads(ctx context.Context) ([]LoadRef, error) {
	rs, err := c.b.query(ctx, `SELECT DISTINCT table_name, load_id FROM {exceptions} WHERE state = 'pending' ORDER BY table_name, load_id`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []LoadRef
	for rs.Next() {
		var l LoadRef
		if err := rs.Scan(&l.Table, &l.LoadID); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rs.Err()
}

// ---- exceptions: reading ----

const exCols = `e.id, e.run_id, e.load_id, e.table_name, e.level, e.file, e.line, e.row_num, e.row_key, e.raw, e.encoding,
 e.failures, e.owner, e.deadline, e.status, e.state, e.fixed, e.created_at, e.updated_at, e.replay_load_id, e.row_values,
 e.last_load_id, e.last_seen_at, e.superseded_by`

func scanException(rs rows) (Exception, error) {
	var e Exception
	var failures string
	var fixed, values *string
	var deadline, created, updated, lastSeen dbTime
	if err := rs.Scan(&e.ID, &e.RunID, &e.LoadID, &e.Table, &e.Level, &e.File, &e.Line, &e.Row, &e.Key, &e.Raw, &e.Encoding,
		&failures, &e.Owner, &deadline, &e.Status, &e.State, &fixed, &created, &updated, &e.ReplayLoadID, &values,
		&e.LastLoadID, &lastSeen, &e.SupersededBy); err != nil {
		return e, err
	}
	e.LastSeenAt = lastSeen.T
	if values != nil && *values != "" {
		if err := json.Unmarshal([]byte(*values), &e.Values); err != nil {
			return e, fmt.Errorf("ledger: exception %d: values: %w", e.ID, err)
		}
	}
	if err := json.Unmarshal([]byte(failures), &e.Failures); err != nil {
		return e, fmt.Errorf("ledger: exception %d: failures: %w", e.ID, err)
	}
	if fixed != nil && *fixed != "" {
		if err := json.Unmarshal([]byte(*fixed), &e.Fixed); err != nil {
			return e, fmt.Errorf("ledger: exception %d: fixed values: %w", e.ID, err)
		}
	}
	e.Deadline, e.CreatedAt, e.UpdatedAt = deadline.T, created.T, updated.T
	return e, nil
}

func (c *core) Get(ctx context.Context, id int64) (Exception, error) {
	rs, err := c.b.query(ctx, `SELECT `+exCols+` FROM {exceptions} e WHERE e.id = ?`, id)
	if err != nil {
		return Exception{}, err
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return Exception{}, err
		}
		return Exception{}, fmt.Errorf("%w: exception %d", ErrNotFound, id)
	}
	return scanException(rs)
}

// sel is the FROM and WHERE of a filtered selection of committed
// exceptions.
type sel struct {
	from  string
	where []string
	args  []any
}

func (s *sel) add(cond string, args ...any) {
	s.where = append(s.where, cond)
	s.args = append(s.args, args...)
}

func (s *sel) whereSQL() string {
	return " WHERE " + strings.Join(s.where, " AND ")
}

func validFilter(f Filter) error {
	if f.Status != "" && !validStatus(f.Status) {
		return invalid("status %q (want open, fixed, replayed or waived)", f.Status)
	}
	return nil
}

// conds adds the conditions on the columns that exceptions and
// exception_rules share, for the table alias a.
func (c *core) conds(s *sel, f Filter, a string) {
	if f.Table != "" {
		s.add(a+`.table_name = ?`, cleanText(f.Table))
	}
	if f.Owner != "" {
		s.add(a+`.owner = ?`, cleanText(f.Owner))
	}
	if f.Status != "" {
		s.add(a+`.status = ?`, f.Status)
	}
	if f.Overdue {
		t := f.Now
		if t.IsZero() {
			t = time.Now()
		}
		// Written exactly as the partial index exceptions_c_due is.
		s.add(a+`.deadline < ? AND `+a+`.status IN ('open', 'fixed')`, c.b.ts(micro(t)))
	}
}

// fromE selects from exceptions e (joined with the rule row r when
// filtering by rule).
func (c *core) fromE(f Filter) sel {
	var s sel
	if f.Rule != "" {
		s.from = `{exception_rules} r JOIN {exceptions} e ON e.id = r.exception_id`
		s.add(`r.state = 'committed'`)
		s.add(`r.rule = ?`, cleanText(f.Rule))
	} else {
		s.from = `{exceptions} e`
		s.add(`e.state = 'committed'`)
	}
	c.conds(&s, f, "e")
	if f.LoadID != "" {
		s.add(`(e.load_id = ? OR e.last_load_id = ?)`, cleanText(f.LoadID), cleanText(f.LoadID))
	}
	return s
}

// fromG selects from exception_rules g alone (one row per exception and
// rule; with a rule filter, one row per exception). Only the load id needs
// the exceptions table.
func (c *core) fromG(f Filter) sel {
	s := sel{from: `{exception_rules} g`}
	s.add(`g.state = 'committed'`)
	c.conds(&s, f, "g")
	if f.LoadID != "" {
		s.from += ` JOIN {exceptions} e ON e.id = g.exception_id`
		s.add(`(e.load_id = ? OR e.last_load_id = ?)`, cleanText(f.LoadID), cleanText(f.LoadID))
	}
	return s
}

func (c *core) List(ctx context.Context, f Filter, p Page) ([]Exception, Cursor, error) {
	if err := validFilter(f); err != nil {
		return nil, "", err
	}
	after, err := decodeCursor(p.After)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p.Limit)
	s := c.fromE(f)
	key := "e.id"
	if f.Rule != "" {
		key = "r.exception_id"
	}
	order := " ORDER BY " + key
	if p.Desc {
		order += " DESC"
		if p.After != "" {
			s.add(key+` < ?`, after)
		}
	} else if p.After != "" {
		s.add(key+` > ?`, after)
	}
	rs, err := c.b.query(ctx, `SELECT `+exCols+` FROM `+s.from+s.whereSQL()+order+` LIMIT ?`, append(s.args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rs.Close()
	out := make([]Exception, 0, min(limit, 256))
	more := false
	for rs.Next() {
		if len(out) == limit {
			more = true
			break
		}
		e, err := scanException(rs)
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
	}
	if err := rs.Err(); err != nil {
		return nil, "", err
	}
	var next Cursor
	if more {
		next = encodeCursor(out[len(out)-1].ID)
	}
	return out, next, nil
}

func (c *core) Count(ctx context.Context, f Filter) (int64, error) {
	if err := validFilter(f); err != nil {
		return 0, err
	}
	var s sel
	if f.Rule != "" {
		s = c.fromG(f)
		s.add(`g.rule = ?`, cleanText(f.Rule))
	} else {
		s = c.fromE(f)
	}
	var n int64
	err := queryRow(ctx, c.b, `SELECT count(*) FROM `+s.from+s.whereSQL(), s.args, &n)
	return n, err
}

func (c *core) CountBy(ctx context.Context, f Filter, field string) (map[string]int64, error) {
	if err := validFilter(f); err != nil {
		return nil, err
	}
	var col string
	switch field {
	case ByTable:
		col = "table_name"
	case ByOwner:
		col = "owner"
	case ByStatus:
		col = "status"
	case ByRule:
		col = "rule"
	default:
		return nil, invalid("count by %q (want table, rule, owner or status)", field)
	}
	var s sel
	if field == ByRule && f.Rule != "" {
		// The rules of the exceptions that have f.Rule: x (the rule index)
		// drives; CROSS JOIN keeps that order in SQLite.
		s = c.fromG(f)
		s.from = `{exception_rules} x CROSS JOIN ` + s.from
		s.where = append([]string{`x.state = 'committed'`, `x.rule = ?`, `g.exception_id = x.exception_id`}, s.where...)
		s.args = append([]any{cleanText(f.Rule)}, s.args...)
		col = "g." + col
	} else if field == ByRule {
		s = c.fromG(f)
		col = "g." + col
	} else if f.Rule != "" {
		s = c.fromG(f)
		s.add(`g.rule = ?`, cleanText(f.Rule))
		col = "g." + col
	} else {
		s = c.fromE(f)
		col = "e." + col
	}
	rs, err := c.b.query(ctx, `SELECT `+col+`, count(*) FROM `+s.from+s.whereSQL()+` GROUP BY `+col, s.args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]int64{}
	for rs.Next() {
		var k string
		var n int64
		if err := rs.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rs.Err()
}

// ---- exceptions: transitions ----

type current struct {
	status, state, owner string
	fixed                map[string]string
}

func (c *core) lockRow(ctx context.Context, q querier, id int64) (current, error) {
	var cur current
	var fixed *string
	err := queryRow(ctx, q, `SELECT status, state, owner, fixed FROM {exceptions} WHERE id = ? {for_update}`, []any{id},
		&cur.status, &cur.state, &cur.owner, &fixed)
	if errors.Is(err, errNoRows) {
		return cur, fmt.Errorf("%w: exception %d", ErrNotFound, id)
	}
	if err != nil {
		return cur, err
	}
	if fixed != nil && *fixed != "" {
		if err := json.Unmarshal([]byte(*fixed), &cur.fixed); err != nil {
			return cur, fmt.Errorf("ledger: exception %d: fixed values: %w", id, err)
		}
	}
	if cur.state != StateCommitted {
		return cur, fmt.Errorf("%w: exception %d is pending (its load has not committed)", ErrBadTransition, id)
	}
	return cur, nil
}

func allowed(id int64, action, status string, from ...string) error {
	if slices.Contains(from, status) {
		return nil
	}
	return fmt.Errorf("%w: cannot %s exception %d: it is %s (allowed from %s)", ErrBadTransition, action, id, status, strings.Join(from, " or "))
}

func (c *core) event(ctx context.Context, q querier, id int64, at time.Time, by, action, from, to, note string, fixed map[string]string) error {
	fx, err := mapText(fixed)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `INSERT INTO {exception_events} (exception_id, at, actor, action, from_status, to_status, note, fixed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		id, c.b.ts(at), by, action, from, to, note, fx)
	return err
}

// setStatus updates the status (mirrored in exception_rules).
func (c *core) setStatus(ctx context.Context, q querier, id int64, status string, at time.Time) error {
	if _, err := q.exec(ctx, `UPDATE {exceptions} SET status = ?, updated_at = ? WHERE id = ?`, status, c.b.ts(at), id); err != nil {
		return err
	}
	_, err := q.exec(ctx, `UPDATE {exception_rules} SET status = ? WHERE exception_id = ?`, status, id)
	return err
}

// change runs one status change on each of ids in one transaction: lock
// the row, check its status is one of from (else ErrBadTransition, and
// nothing of the batch is applied), then apply fn at the same instant t.
func (c *core) change(ctx context.Context, ids []int64, action string, from []string, fn func(q querier, id int64, cur current, t time.Time) error) error {
	return c.b.inTx(ctx, func(q querier) error {
		t := now()
		for _, id := range ids {
			cur, err := c.lockRow(ctx, q, id)
			if err != nil {
				return err
			}
			if err := allowed(id, action, cur.status, from...); err != nil {
				return err
			}
			if err := fn(q, id, cur, t); err != nil {
				return err
			}
		}
		return nil
	})
}

func (c *core) Assign(ctx context.Context, ids []int64, owner, by string) error {
	if err := required("by", by); err != nil {
		return err
	}
	owner, by = cleanText(owner), cleanText(by)
	ids = dedupe(ids)
	if len(ids) == 0 {
		return nil
	}
	return c.change(ctx, ids, "assign", []string{StatusOpen, StatusFixed}, func(q querier, id int64, cur current, t time.Time) error {
		if _, err := q.exec(ctx, `UPDATE {exceptions} SET owner = ?, updated_at = ? WHERE id = ?`, owner, c.b.ts(t), id); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE {exception_rules} SET owner = ? WHERE exception_id = ?`, owner, id); err != nil {
			return err
		}
		note := fmt.Sprintf("owner %q → %q", cur.owner, owner)
		return c.event(ctx, q, id, t, by, ActionAssign, cur.status, cur.status, note, nil)
	})
}

func (c *core) Resolve(ctx context.Context, id int64, fixed map[string]string, by, note string) error {
	if err := required("by", by); err != nil {
		return err
	}
	by, note, fixed = cleanText(by), cleanText(note), cleanMap(fixed)
	return c.change(ctx, []int64{id}, "resolve", []string{StatusOpen, StatusFixed}, func(q querier, id int64, cur current, t time.Time) error {
		merged := map[string]string{}
		maps.Copy(merged, cur.fixed)
		maps.Copy(merged, fixed)
		fx, err := mapText(merged)
		if err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE {exceptions} SET fixed = ? WHERE id = ?`, fx, id); err != nil {
			return err
		}
		if err := c.setStatus(ctx, q, id, StatusFixed, t); err != nil {
			return err
		}
		return c.event(ctx, q, id, t, by, ActionResolve, cur.status, StatusFixed, note, fixed)
	})
}

func (c *core) Waive(ctx context.Context, id int64, reason, by string) error {
	if err := required("by", by); err != nil {
		return err
	}
	if err := required("waive reason", reason); err != nil {
		return err
	}
	by, reason = cleanText(by), cleanText(reason)
	return c.change(ctx, []int64{id}, "waive", []string{StatusOpen, StatusFixed}, func(q querier, id int64, cur current, t time.Time) error {
		if err := c.setStatus(ctx, q, id, StatusWaived, t); err != nil {
			return err
		}
		return c.event(ctx, q, id, t, by, ActionWaive, cur.status, StatusWaived, reason, nil)
	})
}

func (c *core) MarkReplayed(ctx context.Context, ids []int64, replayLoadID, by string) error {
	if err := required("by", by); err != nil {
		return err
	}
	if err := required("replay load id", replayLoadID); err != nil {
		return err
	}
	by, replayLoadID = cleanText(by), cleanText(replayLoadID)
	ids = dedupe(ids)
	if len(ids) == 0 {
		return nil
	}
	return c.change(ctx, ids, "mark replayed", []string{StatusFixed}, func(q querier, id int64, cur current, t time.Time) error {
		if _, err := q.exec(ctx, `UPDATE {exceptions} SET replay_load_id = ? WHERE id = ?`, replayLoadID, id); err != nil {
			return err
		}
		if err := c.setStatus(ctx, q, id, StatusReplayed, t); err != nil {
			return err
		}
		return c.event(ctx, q, id, t, by, ActionReplayed, cur.status, StatusReplayed, "replay load "+replayLoadID, nil)
	})
}

func (c *core) Reopen(ctx context.Context, id int64, reasons []Failure, by string) error {
	if err := required("by", by); err != nil {
		return err
	}
	if err := validFailures(reasons); err != nil {
		return err
	}
	by, reasons = cleanText(by), cleanFailures(reasons)
	fs, err := jsonText(reasons)
	if err != nil {
		return err
	}
	return c.change(ctx, []int64{id}, "reopen", []string{StatusFixed}, func(q querier, id int64, cur current, t time.Time) error {
		if _, err := q.exec(ctx, `UPDATE {exceptions} SET failures = ?, status = ?, updated_at = ? WHERE id = ?`, fs, StatusOpen, c.b.ts(t), id); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `DELETE FROM {exception_rules} WHERE exception_id = ?`, id); err != nil {
			return err
		}
		rules := rulesOf(reasons)
		for _, r := range rules {
			if _, err := q.exec(ctx, `INSERT INTO {exception_rules} (exception_id, rule, table_name, owner, deadline, status, state)
  SELECT id, ?, table_name, owner, deadline, status, state FROM {exceptions} WHERE id = ?`, r, id); err != nil {
				return err
			}
		}
		return c.event(ctx, q, id, t, by, ActionReopen, cur.status, StatusOpen, "replay failed: "+strings.Join(rules, ", "), nil)
	})
}

func (c *core) History(ctx context.Context, id int64) ([]Event, error) {
	var runID string
	var created dbTime
	err := queryRow(ctx, c.b, `SELECT run_id, created_at FROM {exceptions} WHERE id = ?`, []any{id}, &runID, &created)
	if errors.Is(err, errNoRows) {
		return nil, fmt.Errorf("%w: exception %d", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	by := "lima"
	if runID != "" {
		by = "run " + runID
	}
	// Creation is not stored as an event row (it would double the writes of
	// a bulk load); it is derived from the exception itself.
	out := []Event{{ExceptionID: id, At: created.T, By: by, Action: ActionCreated, To: StatusOpen}}
	rs, err := c.b.query(ctx, `SELECT at, actor, action, from_status, to_status, note, fixed FROM {exception_events} WHERE exception_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		ev := Event{ExceptionID: id}
		var at dbTime
		var fixed *string
		if err := rs.Scan(&at, &ev.By, &ev.Action, &ev.From, &ev.To, &ev.Note, &fixed); err != nil {
			return nil, err
		}
		ev.At = at.T
		if fixed != nil && *fixed != "" {
			if err := json.Unmarshal([]byte(*fixed), &ev.Fixed); err != nil {
				return nil, fmt.Errorf("ledger: event of exception %d: %w", id, err)
			}
		}
		out = append(out, ev)
	}
	return out, rs.Err()
}
