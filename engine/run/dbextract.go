package run

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sqldb"
)

// dbExtract is the raw/ extract of a database table being read: every row
// exactly as the reader yields it (the cell texts before any cleaning or
// casting), streamed to a 0600 temp file as gzip'd CSV (see
// rawland.Extract for the format: every value quoted, NULL an empty
// unquoted field). It is landed after the read succeeded and before the
// commit (Options.LandExtract), so a landed extract always belongs to a
// committed load id.
type dbExtract struct {
	f    *os.File
	gz   *gzip.Writer
	w    *bufio.Writer
	ex   rawland.Extract
	err  error
	done bool
}

// startExtract opens the extract of reader r (unit u) when the run lands
// database extracts; it runs before the first row, in the read's snapshot.
func (l *loader) startExtract(u source.Unit, r *sqldb.Reader) error {
	if l.o.LandExtract == nil || l.extract != nil {
		return nil
	}
	q, args, err := r.Query()
	if err != nil {
		return err
	}
	ex := rawland.Extract{Unit: u.Name, Columns: r.Columns(), Query: q, Isolation: r.Isolation(),
		Snapshot: "the read's own read-only snapshot transaction, the same as the source totals'"}
	for _, a := range args {
		switch v := a.(type) {
		case time.Time:
			ex.Args = append(ex.Args, v.UTC().Format(time.RFC3339Nano))
		default:
			ex.Args = append(ex.Args, fmt.Sprint(v))
		}
	}
	if l.tr.WatermarkBefore != "" {
		ex.WatermarkBefore = l.tr.WatermarkBefore
	}
	f, err := os.CreateTemp("", "lima-extract-*.csv.gz") // 0600
	if err != nil {
		return fmt.Errorf("raw/ extract: %w", err)
	}
	gz, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	e := &dbExtract{f: f, gz: gz, w: newExtractBuffer(gz), ex: ex}
	l.extract = e
	e.writeRecord(ex.Columns, nil)
	return e.err
}

func newExtractBuffer(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64<<10) }

// add writes one row as read.
func (e *dbExtract) add(row source.Row) error {
	if e.err != nil {
		return e.err
	}
	e.writeRecord(row.Values, row.Nulls)
	e.ex.Rows++
	return e.err
}

func (e *dbExtract) writeRecord(vals []string, nulls []bool) {
	for i, v := range vals {
		if i > 0 {
			e.w.WriteByte(',')
		}
		if i < len(nulls) && nulls[i] {
			continue // NULL: an empty unquoted field
		}
		e.w.WriteByte('"')
		e.w.WriteString(strings.ReplaceAll(v, `"`, `""`))
		e.w.WriteByte('"')
	}
	if _, err := e.w.WriteString("\r\n"); err != nil && e.err == nil {
		e.err = fmt.Errorf("raw/ extract: %w", err)
	}
}

// finish closes the file and returns its path and description.
func (e *dbExtract) finish() (string, rawland.Extract, error) {
	if e.err == nil {
		e.err = e.w.Flush()
	}
	if err := e.gz.Close(); e.err == nil {
		e.err = err
	}
	if err := e.f.Sync(); e.err == nil {
		e.err = err
	}
	if err := e.f.Close(); e.err == nil {
		e.err = err
	}
	e.done = true
	if e.err != nil {
		return "", e.ex, fmt.Errorf("raw/ extract: %w", e.err)
	}
	return e.f.Name(), e.ex, nil
}

// discard removes the temp file (idempotent; nil-safe).
func (e *dbExtract) discard() {
	if e == nil {
		return
	}
	if !e.done {
		e.gz.Close()
		e.f.Close()
		e.done = true
	}
	os.Remove(e.f.Name())
}

// landExtract lands the table's extract, if any, under raw/.
func (l *loader) landExtract(ctx context.Context) error {
	if l.extract == nil {
		return nil
	}
	path, ex, err := l.extract.finish()
	if err != nil {
		return err
	}
	if err := l.o.LandExtract(ctx, l.tr.Name, l.tr.LoadID, path, ex); err != nil {
		return fmt.Errorf("raw/ landing: %w", err)
	}
	return nil
}
