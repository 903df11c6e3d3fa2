package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// identOf is an exception's identity within its table: its source position
// and its rules. A row of a text file is its file, its bytes and their
// occurrence in the file (the loader's occ:N fingerprint: rows added or
// removed above it leave it the same), or without an occurrence its line,
// record number and bytes (the same bad record, however often it is read); a
// row without a line that has a key (a database row, a Parquet record) is
// its unit and key; a whole file is its name and fingerprint. An exception
// without any position has nothing to be recognised by: it is unique.
func identOf(e Exception) string {
	h := sha256.New()
	w := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	w(e.Level)
	w(e.File)
	if e.Level == LevelFile {
		w("file")
		w(e.Fingerprint)
	} else if e.Line == 0 && e.Key != "" {
		w("key")
		w(e.Key)
	} else if e.File == "" && e.Line == 0 && e.Row == 0 && len(e.Raw) == 0 && e.Key == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		return "u-" + hex.EncodeToString(b[:])
	} else if len(e.Raw) > 0 && strings.HasPrefix(e.Fingerprint, "occ:") {
		// A row of a file: its bytes and their occurrence in the file, so
		// rows added or removed above it leave it the same exception.
		w("bytes")
		w(e.Fingerprint)
		h.Write(e.Raw)
		h.Write([]byte{0})
	} else {
		w("rec")
		w(strconv.FormatInt(e.Line, 10))
		w(strconv.FormatInt(e.Row, 10))
		h.Write(e.Raw)
		h.Write([]byte{0})
		if len(e.Raw) == 0 {
			// A database row has no bytes as read: its values are its
			// content (another row at the same record number is another
			// row).
			keys := slices.Sorted(maps.Keys(e.Values))
			for _, k := range keys {
				w(k)
				w(e.Values[k])
			}
		}
	}
	rules := rulesOf(e.Failures)
	slices.Sort(rules)
	w("rules")
	for _, r := range rules {
		w(r)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Publish settles the pending exceptions of a load against the committed
// ones of its table, in one transaction: a bad row already in the queue
// (same identity) is updated — seen again in this load, and reopened if it
// had been superseded — and its pending copy dropped; the others become
// committed. It returns how many pending exceptions were settled.
func (c *core) Publish(ctx context.Context, table, loadID string) (int64, error) {
	table, loadID = cleanText(table), cleanText(loadID)
	var n int64
	err := c.b.inTx(ctx, func(q querier) error {
		t := now()
		if err := queryRow(ctx, q, `SELECT count(*) FROM {exceptions} WHERE table_name = ? AND load_id = ? AND state = 'pending'`,
			[]any{table, loadID}, &n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		// One exception per identity within the load: the first.
		dup := `table_name = ? AND load_id = ? AND state = 'pending' AND id NOT IN
  (SELECT min(id) FROM {exceptions} WHERE table_name = ? AND load_id = ? AND state = 'pending' GROUP BY ident)`
		dupArgs := []any{table, loadID, table, loadID}
		if _, err := q.exec(ctx, `DELETE FROM {exception_rules} WHERE exception_id IN (SELECT id FROM {exceptions} WHERE `+dup+`)`, dupArgs...); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `DELETE FROM {exceptions} WHERE `+dup, dupArgs...); err != nil {
			return err
		}
		met := `table_name = ? AND state = 'committed' AND ident IN
  (SELECT p.ident FROM {exceptions} p WHERE p.table_name = ? AND p.load_id = ? AND p.state = 'pending')`
		metArgs := []any{table, table, loadID}
		// Superseded rows that are back in the source are reopened.
		type back struct {
			id    int64
			fixed bool
		}
		var backs []back
		rs, err := q.query(ctx, `SELECT id, fixed FROM {exceptions} WHERE status = 'superseded' AND `+met, metArgs...)
		if err != nil {
			return err
		}
		for rs.Next() {
			var b back
			var fx *string
			if err := rs.Scan(&b.id, &fx); err != nil {
				rs.Close()
				return err
			}
			b.fixed = fx != nil && *fx != "" && *fx != "{}"
			backs = append(backs, b)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		for _, b := range backs {
			to := StatusOpen
			if b.fixed {
				to = StatusFixed
			}
			if err := c.setStatus(ctx, q, b.id, to, t); err != nil {
				return err
			}
			if _, err := q.exec(ctx, `UPDATE {exceptions} SET superseded_by = '' WHERE id = ?`, b.id); err != nil {
				return err
			}
			if err := c.event(ctx, q, b.id, t, "lima", ActionReopen, StatusSuperseded, to, "seen again in load "+loadID, nil); err != nil {
				return err
			}
		}
		if _, err := q.exec(ctx, `UPDATE {exceptions} SET last_load_id = ?, last_seen_at = ? WHERE `+met,
			append([]any{loadID, c.b.ts(t)}, metArgs...)...); err != nil {
			return err
		}
		seen := `table_name = ? AND load_id = ? AND state = 'pending' AND ident IN
  (SELECT c.ident FROM {exceptions} c WHERE c.last_load_id = ? AND c.table_name = ? AND c.state = 'committed')`
		seenArgs := []any{table, loadID, loadID, table}
		if _, err := q.exec(ctx, `DELETE FROM {exception_rules} WHERE exception_id IN (SELECT id FROM {exceptions} WHERE `+seen+`)`, seenArgs...); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `DELETE FROM {exceptions} WHERE `+seen, seenArgs...); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE {exception_rules} SET state = 'committed' WHERE state = 'pending' AND exception_id IN
  (SELECT id FROM {exceptions} WHERE table_name = ? AND load_id = ? AND state = 'pending')`, table, loadID); err != nil {
			return err
		}
		_, err = q.exec(ctx, `UPDATE {exceptions} SET state = 'committed', updated_at = ?, last_seen_at = ? WHERE table_name = ? AND load_id = ? AND state = 'pending'`,
			c.b.ts(t), c.b.ts(t), table, loadID)
		return err
	})
	return n, err
}

// Supersede closes what a load that replaced the table did not meet.
func (c *core) Supersede(ctx context.Context, table, loadID string, met []int64, by string) (int64, error) {
	if err := required("table", table); err != nil {
		return 0, err
	}
	if err := required("load id", loadID); err != nil {
		return 0, err
	}
	if err := required("by", by); err != nil {
		return 0, err
	}
	table, loadID, by = cleanText(table), cleanText(loadID), cleanText(by)
	met = dedupe(met)
	var n int64
	err := c.b.inTx(ctx, func(q querier) error {
		t := now()
		for chunk := range slices.Chunk(met, 500) {
			args := []any{loadID, c.b.ts(t), table}
			for _, id := range chunk {
				args = append(args, id)
			}
			if _, err := q.exec(ctx, `UPDATE {exceptions} SET last_load_id = ?, last_seen_at = ? WHERE table_name = ? AND state = 'committed'
  AND status IN ('open', 'fixed') AND id IN (`+
				strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")+`)`, args...); err != nil {
				return err
			}
		}
		gone := `table_name = ? AND state = 'committed' AND status IN ('open', 'fixed') AND last_load_id <> ?`
		note := "superseded: not in the source that load " + loadID + " replaced the table with"
		if _, err := q.exec(ctx, `INSERT INTO {exception_events} (exception_id, at, actor, action, from_status, to_status, note)
  SELECT id, ?, ?, ?, status, ?, ? FROM {exceptions} WHERE `+gone,
			c.b.ts(t), by, ActionSupersede, StatusSuperseded, note, table, loadID); err != nil {
			return err
		}
		var err error
		if n, err = q.exec(ctx, `UPDATE {exceptions} SET status = ?, superseded_by = ?, updated_at = ? WHERE `+gone,
			StatusSuperseded, loadID, c.b.ts(t), table, loadID); err != nil {
			return err
		}
		_, err = q.exec(ctx, `UPDATE {exception_rules} SET status = ? WHERE status <> ? AND exception_id IN
  (SELECT id FROM {exceptions} WHERE superseded_by = ? AND table_name = ? AND status = ?)`,
			StatusSuperseded, StatusSuperseded, loadID, table, StatusSuperseded)
		return err
	})
	return n, err
}

// LoadCounts counts what one load did to its table's queue.
func (c *core) LoadCounts(ctx context.Context, table, loadID string) (LoadCounts, error) {
	table, loadID = cleanText(table), cleanText(loadID)
	var lc LoadCounts
	if err := queryRow(ctx, c.b, `SELECT count(*) FROM {exceptions} WHERE load_id = ? AND table_name = ? AND state = 'committed'`,
		[]any{loadID, table}, &lc.New); err != nil {
		return lc, err
	}
	if err := queryRow(ctx, c.b, `SELECT count(*) FROM {exceptions} WHERE last_load_id = ? AND table_name = ? AND state = 'committed' AND load_id <> ?
  AND status IN ('open', 'fixed')`,
		[]any{loadID, table, loadID}, &lc.StillOpen); err != nil {
		return lc, err
	}
	err := queryRow(ctx, c.b, `SELECT count(*) FROM {exceptions} WHERE superseded_by = ? AND table_name = ?`,
		[]any{loadID, table}, &lc.Gone)
	return lc, err
}

// backfillIdents gives the exceptions written before schema version 3
// their identity (once: afterwards none is left without one). A whole
// file's fingerprint was not kept then, so such an exception is
// recognised by its file name and rules.
func (c *core) backfillIdents(ctx context.Context, version int) error {
	if version < 3 {
		return nil // a test opening the database as an older build
	}
	for {
		rs, err := c.b.query(ctx, `SELECT id, level, file, line, row_num, row_key, raw, failures, row_values FROM {exceptions} WHERE ident = '' ORDER BY id LIMIT 1000`)
		if err != nil {
			return err
		}
		type fill struct {
			id    int64
			ident string
		}
		var fills []fill
		for rs.Next() {
			var e Exception
			var failures string
			var values *string
			if err := rs.Scan(&e.ID, &e.Level, &e.File, &e.Line, &e.Row, &e.Key, &e.Raw, &failures, &values); err != nil {
				rs.Close()
				return err
			}
			if values != nil && *values != "" {
				if err := json.Unmarshal([]byte(*values), &e.Values); err != nil {
					rs.Close()
					return err
				}
			}
			if err := json.Unmarshal([]byte(failures), &e.Failures); err != nil {
				rs.Close()
				return err
			}
			fills = append(fills, fill{e.ID, identOf(e)})
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		if len(fills) == 0 {
			return nil
		}
		if err := c.b.inTx(ctx, func(q querier) error {
			for _, f := range fills {
				if _, err := q.exec(ctx, `UPDATE {exceptions} SET ident = ? WHERE id = ?`, f.ident, f.id); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
}
