// Package ledger is Lima's state store: runs, the watermark mirror, run
// locks with a lease, and the exception queue (every row or file that failed
// a check, with an owner, a deadline and a history, replayed once fixed).
//
// Two implementations share one set of semantics and one conformance suite
// (package ledgertest): SQLiteStore (the embedded default, .lima/state.db)
// and PostgresStore (for teams sharing a queue).
//
// Exceptions are written as pending under their load id and become visible
// (List, Count, CountBy) only once Publish flips them to committed, together
// with the table snapshot carrying that load id. Pending rows of a load that
// never committed are removed with DiscardPending.
//
// Status life cycle of a committed exception:
//
//	open ──Resolve──► fixed ──MarkReplayed──► replayed
//	 │                 │  ▲
//	 │                 │  └─Resolve (fixed values merge)
//	 │                 └──Reopen (replay failed again) ──► open
//	 └──Waive──► waived ◄──Waive── fixed
//	open, fixed ──Supersede (row gone from the source)──► superseded
//	superseded ──Publish meets the row again──► open (fixed if it has a fix)
//
// Identity: an exception is one bad row (or file) for its whole life —
// its table, its source position (the file and the record's line and
// bytes; the key of a database row; the file's fingerprint for a whole
// file) and its rules. Publish settles a load's pending exceptions against
// the committed ones: one that is already there is updated (seen again:
// LastLoadID, LastSeenAt) instead of opening another, so a queue counts
// distinct bad rows. Supersede closes what a load that replaced the table
// no longer met.
//
// Every change is recorded as an Event with who did it. Text fields are
// stored as valid UTF-8 without NUL bytes (invalid sequences and NUL become
// U+FFFD, in both stores alike); Exception.Raw keeps the exact bytes. Times
// are kept with microsecond precision, in UTC.
package ledger

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Store is Lima's state: runs, the watermark mirror, run locks and the
// exception queue.
type Store interface {
	// BeginRun records a new run (Status defaults to "running").
	BeginRun(ctx context.Context, r Run) error
	// FinishRun records the end of a run once; ErrNotFound for an unknown
	// run, ErrBadTransition for a run already finished.
	FinishRun(ctx context.Context, runID, status string, finished time.Time, summaryJSON []byte) error
	// Runs returns the newest runs first; limit <= 0 means all.
	Runs(ctx context.Context, limit int) ([]Run, error)

	// BeginStaging records, before a load writes its first data file, the
	// write id its files are named with: the inventory a later run uses to
	// remove the files of a load that was killed before its commit.
	BeginStaging(ctx context.Context, s Staging) error
	// EndStaging forgets a staging once its files are committed or
	// removed; forgetting one that is not recorded is a no-op.
	EndStaging(ctx context.Context, writeID string) error
	// Stagings lists the recorded stagings, oldest first.
	Stagings(ctx context.Context) ([]Staging, error)

	// SetWatermark upserts the mirror of a table's watermark (the table's
	// snapshot is the source of truth).
	SetWatermark(ctx context.Context, table, watermark, loadID string, snapshotID int64) error
	// Watermark returns the mirrored watermark and whether there is one.
	Watermark(ctx context.Context, table string) (WatermarkRecord, bool, error)

	// TryLock takes or renews the named lock for owner for ttl. It returns
	// false when another owner holds a lease that has not expired; an
	// expired lease is taken over.
	TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	// Unlock releases the lock. ErrLockNotHeld when another owner holds it;
	// releasing a lock nobody holds is a no-op.
	Unlock(ctx context.Context, name, owner string) error

	// AddPending inserts a batch (all or nothing) as state pending, status
	// open, and sets ID, Status, State, CreatedAt and UpdatedAt on the
	// slice elements.
	AddPending(ctx context.Context, ex []Exception) error
	// Publish flips the pending exceptions of a load to committed and
	// returns how many.
	Publish(ctx context.Context, table, loadID string) (int64, error)
	// DiscardPending deletes the pending exceptions of a load and returns
	// how many.
	DiscardPending(ctx context.Context, table, loadID string) (int64, error)
	// PendingLoads lists the distinct (table, load id) with pending rows.
	PendingLoads(ctx context.Context) ([]LoadRef, error)
	// Get returns one exception, pending or committed (ErrNotFound).
	Get(ctx context.Context, id int64) (Exception, error)
	// List pages through committed exceptions by id (keyset paging). The
	// returned cursor is empty when there are no more rows.
	List(ctx context.Context, f Filter, p Page) ([]Exception, Cursor, error)
	// Count counts committed exceptions.
	Count(ctx context.Context, f Filter) (int64, error)
	// CountBy counts committed exceptions grouped by field: table, rule,
	// owner or status. With rule, an exception counts once per rule.
	CountBy(ctx context.Context, f Filter, field string) (map[string]int64, error)
	// Assign sets the owner of open or fixed exceptions (all or nothing).
	Assign(ctx context.Context, ids []int64, owner, by string) error
	// Resolve moves open → fixed (or refines a fixed one); fixed values
	// merge into the ones already recorded.
	Resolve(ctx context.Context, id int64, fixed map[string]string, by, note string) error
	// Waive moves open|fixed → waived; reason is required.
	Waive(ctx context.Context, id int64, reason, by string) error
	// Supersede closes, as superseded by loadID, every open or fixed
	// committed exception of table that loadID did not meet (its
	// LastLoadID is another load): loadID replaced the table, and these
	// rows are no longer in the source. met are exceptions the load met
	// without holding them back (a recorded fix applied): they count as
	// seen. It returns how many were closed.
	Supersede(ctx context.Context, table, loadID string, met []int64, by string) (int64, error)
	// LoadCounts says what a load did to the table's queue: exceptions
	// first seen in it, still open (met again, first seen earlier), and
	// closed as superseded by it.
	LoadCounts(ctx context.Context, table, loadID string) (LoadCounts, error)
	// MarkReplayed moves fixed → replayed, recording the replay load id
	// (all or nothing).
	MarkReplayed(ctx context.Context, ids []int64, replayLoadID, by string) error
	// Reopen moves fixed → open with new failure reasons (the replay
	// failed again).
	Reopen(ctx context.Context, id int64, reasons []Failure, by string) error
	// History returns who/when/what for every change, oldest first; the
	// first event is the creation.
	History(ctx context.Context, id int64) ([]Event, error)
	// Close releases the store.
	Close() error
}

// Levels of an exception.
const (
	LevelRow  = "row"
	LevelFile = "file"
)

// Statuses of an exception.
const (
	StatusOpen     = "open"
	StatusFixed    = "fixed"
	StatusReplayed = "replayed"
	StatusWaived   = "waived"
	// StatusSuperseded: the row is no longer in the source (a load that
	// replaced the table did not meet it); SupersededBy names that load.
	StatusSuperseded = "superseded"
)

// States of an exception: pending until the load's snapshot is committed.
const (
	StatePending   = "pending"
	StateCommitted = "committed"
)

// Event actions.
const (
	ActionCreated  = "created"
	ActionAssign   = "assign"
	ActionResolve  = "resolve"
	ActionWaive    = "waive"
	ActionReplayed = "replayed"
	ActionReopen   = "reopen"
	// ActionSupersede closes an exception whose row left the source.
	ActionSupersede = "supersede"
)

// CountBy fields.
const (
	ByTable  = "table"
	ByRule   = "rule"
	ByOwner  = "owner"
	ByStatus = "status"
)

// Sentinel errors, wrapped with %w.
var (
	ErrNotFound      = errors.New("ledger: not found")
	ErrBadTransition = errors.New("ledger: transition not allowed")
	ErrInvalid       = errors.New("ledger: invalid argument")
	ErrExists        = errors.New("ledger: already exists")
	ErrLockNotHeld   = errors.New("ledger: lock held by another owner")
	ErrSchemaTooNew  = errors.New("ledger: state schema is newer than this Lima")
)

// Exception is a row (or a whole file) held back from the lake.
type Exception struct {
	ID     int64  `json:"id"`
	RunID  string `json:"run_id"`
	LoadID string `json:"load_id"`
	Table  string `json:"table"`
	Level  string `json:"level"` // row or file
	File   string `json:"file"`
	Line   int64  `json:"line,omitempty"`
	Row    int64  `json:"row,omitempty"`
	// Key is the primary key text of the row, if known.
	Key string `json:"key,omitempty"`
	// Raw is the row as read, byte for byte.
	Raw []byte `json:"raw,omitempty"`
	// Encoding is the character encoding of Raw.
	Encoding string `json:"encoding,omitempty"`
	// Values are the row's fields by column name as read (before casting),
	// when the reader could split the row; replay starts from them.
	Values       map[string]string `json:"values,omitempty"`
	Failures     []Failure         `json:"failures"`
	Owner        string            `json:"owner"`
	Deadline     time.Time         `json:"deadline,omitzero"`
	Status       string            `json:"status"`
	State        string            `json:"state"`
	Fixed        map[string]string `json:"fixed,omitempty"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
	ReplayLoadID string            `json:"replay_load_id,omitempty"`
	// LastLoadID is the newest load that met this row (LoadID is the
	// first); LastSeenAt when. Set by the store.
	LastLoadID string    `json:"last_load_id,omitempty"`
	LastSeenAt time.Time `json:"last_seen_at,omitzero"`
	// SupersededBy is the load that replaced the table without this row.
	SupersededBy string `json:"superseded_by,omitempty"`
	// Fingerprint identifies the file of a file-level exception (its
	// size and modification time or ETag): part of its identity, not
	// stored on its own.
	Fingerprint string `json:"-"`
}

// LoadCounts is what one load did to its table's exception queue.
type LoadCounts struct {
	// New: first seen in this load.
	New int64 `json:"new"`
	// StillOpen: first seen in an earlier load, met again by this one,
	// and still open or fixed (waived and replayed ones are closed).
	StillOpen int64 `json:"still_open"`
	// Gone: closed as superseded by this load.
	Gone int64 `json:"gone"`
}

// Rules returns the distinct rules of the failures, in order.
func (e Exception) Rules() []string { return rulesOf(e.Failures) }

// Overdue reports whether the deadline has passed while the exception is
// still open or fixed (a zero deadline is never overdue).
func (e Exception) Overdue(now time.Time) bool {
	return !e.Deadline.IsZero() && e.Deadline.Before(now) && (e.Status == StatusOpen || e.Status == StatusFixed)
}

// Failure is one failed check of an exception.
type Failure struct {
	Column string `json:"column,omitempty"`
	Value  string `json:"value,omitempty"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// Filter selects committed exceptions; empty fields match everything.
type Filter struct {
	Table  string `json:"table,omitempty"`
	Owner  string `json:"owner,omitempty"`
	Rule   string `json:"rule,omitempty"` // any failure has this rule
	Status string `json:"status,omitempty"`
	// Overdue selects Deadline < Now with status open or fixed.
	Overdue bool `json:"overdue,omitempty"`
	// Now is the reference time of Overdue; zero means time.Now().
	Now time.Time `json:"now,omitzero"`
	// LoadID selects the exceptions that load met: first seen in it, or
	// seen again in it (last seen).
	LoadID string `json:"load_id,omitempty"`
}

// Page asks for one page of List, ordered by id.
type Page struct {
	// After is the cursor returned by the previous page; empty for the first.
	After Cursor `json:"after,omitempty"`
	// Limit is the page size: 0 means DefaultPageSize, at most MaxPageSize.
	Limit int `json:"limit,omitempty"`
	// Desc pages from the newest id down.
	Desc bool `json:"desc,omitempty"`
}

// Page sizes.
const (
	DefaultPageSize = 50
	MaxPageSize     = 5000
)

// Cursor is an opaque position in a List.
type Cursor string

// Event is one change of an exception: who, when, what.
type Event struct {
	ExceptionID int64     `json:"exception_id"`
	At          time.Time `json:"at"`
	By          string    `json:"by"`
	Action      string    `json:"action"`
	Note        string    `json:"note,omitempty"`
	From        string    `json:"from,omitempty"` // status before
	To          string    `json:"to,omitempty"`   // status after
	// Fixed holds the values set by a resolve.
	Fixed map[string]string `json:"fixed,omitempty"`
}

// Run is one run of a plan.
type Run struct {
	ID       string          `json:"id"`
	Started  time.Time       `json:"started_at"`
	Finished time.Time       `json:"finished_at,omitzero"`
	Status   string          `json:"status"`
	PlanHash string          `json:"plan_hash,omitempty"`
	Summary  json.RawMessage `json:"summary,omitempty"`
}

// Staging is a load's data files being written: every file name carries
// WriteID. A staging still recorded when a run starts belongs to a load
// that never settled.
type Staging struct {
	WriteID string    `json:"write_id"`
	Table   string    `json:"table"`
	LoadID  string    `json:"load_id,omitempty"` // when the writer knows it
	RunID   string    `json:"run_id,omitempty"`
	Started time.Time `json:"started_at"`
}

// WatermarkRecord mirrors the watermark committed with a table's snapshot.
type WatermarkRecord struct {
	Table      string    `json:"table"`
	Watermark  string    `json:"watermark"`
	LoadID     string    `json:"load_id"`
	SnapshotID int64     `json:"snapshot_id"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// LoadRef names one load of one table.
type LoadRef struct {
	Table  string `json:"table"`
	LoadID string `json:"load_id"`
}

// Optimizer is an optional capability: refresh the query planner's
// statistics (after a bulk load).
type Optimizer interface {
	Optimize(ctx context.Context) error
}

// ---- helpers shared by the stores ----

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
}

// cleanText makes s valid UTF-8 without NUL: what both stores can hold.
func cleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func cleanFailures(fs []Failure) []Failure {
	out := make([]Failure, len(fs))
	for i, f := range fs {
		out[i] = Failure{Column: cleanText(f.Column), Value: cleanText(f.Value), Rule: cleanText(f.Rule), Reason: cleanText(f.Reason)}
	}
	return out
}

func cleanMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[cleanText(k)] = cleanText(v)
	}
	return out
}

func rulesOf(fs []Failure) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			out = append(out, f.Rule)
		}
	}
	return out
}

func validFailures(fs []Failure) error {
	if len(fs) == 0 {
		return invalid("at least one failure is required")
	}
	for i, f := range fs {
		if strings.TrimSpace(f.Rule) == "" {
			return invalid("failure %d has no rule", i)
		}
	}
	return nil
}

func validStatus(s string) bool {
	switch s {
	case StatusOpen, StatusFixed, StatusReplayed, StatusWaived, StatusSuperseded:
		return true
	}
	return false
}

func required(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid("%s is required", name)
	}
	return nil
}

// now is the store clock: UTC, microsecond precision (what both stores keep).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func micro(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

const cursorPrefix = "k1."

func encodeCursor(id int64) Cursor {
	return Cursor(base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(id, 10))))
}

func decodeCursor(c Cursor) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(string(c))
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return 0, invalid("bad cursor")
	}
	id, err := strconv.ParseInt(string(b[len(cursorPrefix):]), 10, 64)
	if err != nil || id < 0 {
		return 0, invalid("bad cursor")
	}
	return id, nil
}

func pageLimit(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	return min(n, MaxPageSize)
}

func dedupe(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
