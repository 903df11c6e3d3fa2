package run

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/source"
)

// Exception is a row (or a whole file) held back from the lake.
type Exception struct {
	RunID  string            `json:"run_id"`
	LoadID string            `json:"load_id"`
	Table  string            `json:"table"`
	Level  string            `json:"level"` // row or file
	Loc    source.Locator    `json:"locator"`
	Raw    string            `json:"raw,omitempty"`
	Errors []clean.CellError `json:"errors"`
	// Values are the row's fields by column name as read (before casting),
	// so a fixed row can be replayed without re-parsing Raw.
	Values map[string]string `json:"values,omitempty"`
	// Key is the row's primary key as text, when the table has one.
	Key string `json:"key,omitempty"`
	// Encoding of Raw when it is not UTF-8.
	Encoding string `json:"encoding,omitempty"`
	// Fingerprint identifies the file of a file-level exception (see
	// UnitFingerprint): part of the exception's identity in the ledger.
	Fingerprint string    `json:"fingerprint,omitempty"`
	Owner       string    `json:"owner"`
	Deadline    time.Time `json:"deadline,omitzero"`
}

// Rules are the rule ids of the exception, deduplicated, in order.
func (e Exception) Rules() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range e.Errors {
		if !seen[c.Rule] {
			seen[c.Rule] = true
			out = append(out, c.Rule)
		}
	}
	return out
}

// Quarantine receives held-back rows. The exception ledger implements it;
// JSONLQuarantine is the simple file-backed one.
type Quarantine interface {
	// Hold records exceptions as pending under their load id.
	Hold(ctx context.Context, ex []Exception) error
	// Publish marks the pending exceptions of a load as committed, once the
	// snapshot carrying that load id exists.
	Publish(ctx context.Context, table, loadID string) error
	// Discard drops the pending exceptions of a load that did not commit.
	Discard(ctx context.Context, table, loadID string) error
}

// JSONLQuarantine keeps exceptions as JSON lines, one file per run and
// table: pending files are renamed to their final name on Publish.
type JSONLQuarantine struct {
	Dir string
	mu  sync.Mutex
	fs  map[string]*qfile
}

type qfile struct {
	f *os.File
	w *bufio.Writer
}

func (q *JSONLQuarantine) path(table, loadID string, pending bool) string {
	name := fmt.Sprintf("%s.%s.jsonl", table, loadID)
	if pending {
		name += ".pending"
	}
	return filepath.Join(q.Dir, name)
}

// Hold appends exceptions to the pending file of their table and load.
func (q *JSONLQuarantine) Hold(_ context.Context, ex []Exception) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fs == nil {
		q.fs = map[string]*qfile{}
	}
	for _, e := range ex {
		key := e.Table + "\x00" + e.LoadID
		f := q.fs[key]
		if f == nil {
			if err := os.MkdirAll(q.Dir, 0o700); err != nil {
				return err
			}
			fh, err := os.OpenFile(q.path(e.Table, e.LoadID, true), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			f = &qfile{f: fh, w: bufio.NewWriter(fh)}
			q.fs[key] = f
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		f.w.Write(b)
		f.w.WriteByte('\n')
	}
	return nil
}

func (q *JSONLQuarantine) close(table, loadID string) error {
	key := table + "\x00" + loadID
	f := q.fs[key]
	if f == nil {
		return nil
	}
	delete(q.fs, key)
	if err := f.w.Flush(); err != nil {
		f.f.Close()
		return err
	}
	if err := f.f.Sync(); err != nil {
		f.f.Close()
		return err
	}
	return f.f.Close()
}

// Publish makes a load's exceptions final.
func (q *JSONLQuarantine) Publish(_ context.Context, table, loadID string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.close(table, loadID); err != nil {
		return err
	}
	err := os.Rename(q.path(table, loadID, true), q.path(table, loadID, false))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// Discard removes a load's pending exceptions.
func (q *JSONLQuarantine) Discard(_ context.Context, table, loadID string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	_ = q.close(table, loadID)
	err := os.Remove(q.path(table, loadID, true))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}
