package sqldb

import (
	"context"
	"errors"
	"fmt"
)

// TableCount counts every row of the reader's table in the reader's
// snapshot, ignoring the read range: gate 4 compares it with the rows the
// lake table holds, so rows deleted at the source (or appended twice to the
// lake) cannot hide behind an incremental read. Like Totals it must run
// before the first Next.
func (r *Reader) TableCount(ctx context.Context) (int64, error) {
	if r.closed {
		return 0, errors.New("sqldb: TableCount on a closed reader")
	}
	if r.started {
		return 0, errors.New("sqldb: TableCount must run before the first Next (one statement at a time per snapshot connection)")
	}
	schema := r.info.Schema
	if r.d == SQLite {
		schema = ""
	}
	q, err := QuoteQualified(r.d, schema, r.info.Name)
	if err != nil {
		return 0, err
	}
	count := "count(*)"
	if r.d == SQLServer {
		count = "COUNT_BIG(*)"
	}
	var n int64
	if err := r.sess().QueryRowContext(ctx, "SELECT "+count+" FROM "+q).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqldb: count of %s: %w", r.unit, err)
	}
	return n, nil
}

// HasRange reports whether the reader reads part of the table (a bound on
// the watermark column), so that Totals counts less than the whole table.
func (r *Reader) HasRange() bool {
	return r.rng != nil && (r.rng.After != "" || r.rng.From != nil)
}
