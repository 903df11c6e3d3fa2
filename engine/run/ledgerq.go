package run

import (
	"context"
	"strconv"
	"strings"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/source"
)

// LedgerQuarantine keeps held-back rows in the exception ledger: pending
// under their load id until the snapshot carrying that load id exists.
type LedgerQuarantine struct {
	Store ledger.Store
}

var _ Quarantine = (*LedgerQuarantine)(nil)

// ToLedger converts an exception to the ledger's record.
func ToLedger(e Exception) ledger.Exception {
	le := ledger.Exception{RunID: e.RunID, LoadID: e.LoadID, Table: e.Table, Level: e.Level, File: e.Loc.Unit, Line: e.Loc.Line, Row: e.Loc.Row,
		Raw: []byte(e.Raw), Encoding: e.Encoding, Owner: e.Owner, Deadline: e.Deadline, Values: e.Values, Key: e.Key, Fingerprint: e.Fingerprint}
	if le.Level == "" {
		le.Level = ledger.LevelRow
	}
	for _, c := range e.Errors {
		le.Failures = append(le.Failures, ledger.Failure{Column: c.Column, Value: c.Value, Rule: c.Rule, Reason: c.Reason})
	}
	return le
}

// Hold records exceptions as pending.
func (q *LedgerQuarantine) Hold(ctx context.Context, ex []Exception) error {
	out := make([]ledger.Exception, len(ex))
	for i, e := range ex {
		out[i] = ToLedger(e)
	}
	return q.Store.AddPending(ctx, out)
}

// Publish makes a committed load's exceptions visible.
func (q *LedgerQuarantine) Publish(ctx context.Context, table, loadID string) error {
	_, err := q.Store.Publish(ctx, table, loadID)
	return err
}

// Discard drops the exceptions of a load that did not commit.
func (q *LedgerQuarantine) Discard(ctx context.Context, table, loadID string) error {
	_, err := q.Store.DiscardPending(ctx, table, loadID)
	return err
}

// keyText renders a row's key for the ledger ("col=value, …").
func keyText(cols []string, vals map[string]string) string {
	var parts []string
	for _, c := range cols {
		parts = append(parts, c+"="+vals[c])
	}
	return strings.Join(parts, ", ")
}

// ExceptionCounts is what a load or a replay did to its table's exception
// queue. A bad row is one exception for its whole life (identity: table,
// source position, rules): a load that meets it again updates it.
type ExceptionCounts struct {
	// ExceptionsNew counts bad rows (and files) met for the first time.
	ExceptionsNew int64 `json:"new"`
	// ExceptionsStillOpen counts exceptions this load met again that are
	// still open (or fixed, waiting for a replay), first seen earlier.
	ExceptionsStillOpen int64 `json:"still_open"`
	// ExceptionsGone counts exceptions closed as superseded: their rows
	// are no longer in the source this load replaced the table with.
	ExceptionsGone int64 `json:"gone"`
	// ReplaysRecovered counts fixed exceptions an earlier replay had
	// committed without marking them: marked replayed, committed nothing.
	ReplaysRecovered int64 `json:"replays_recovered,omitempty"`
}

// UnitFingerprint identifies a file's version for a file-level exception:
// its size and its ETag (an object) or modification time.
func UnitFingerprint(u source.Unit) string {
	if u.ETag != "" {
		return strconv.FormatInt(u.Size, 10) + ";etag:" + u.ETag
	}
	return strconv.FormatInt(u.Size, 10) + ";mtime:" + strconv.FormatInt(u.ModTime, 10)
}
