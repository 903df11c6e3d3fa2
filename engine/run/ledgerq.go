package run

import (
	"context"
	"strings"

	"github.com/lima-lake/lima/engine/ledger"
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
		Raw: []byte(e.Raw), Encoding: e.Encoding, Owner: e.Owner, Deadline: e.Deadline, Values: e.Values, Key: e.Key}
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
