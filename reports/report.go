// Package reports writes the run report (report.json and report.md) that
// says, per table, rows in, rows out, control totals and variance, checks,
// normalizations and the exceptions held back with their owners.
package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/internal/textcut"
)

// Run statuses.
const (
	StatusOK                   = "ok"
	StatusFailed               = "failed"
	StatusReconciliationFailed = "reconciliation_failed"
	// StatusInterrupted: the run was cancelled (ctrl+c, SIGTERM) or its
	// process died; recorded in the state store, nothing half-visible.
	StatusInterrupted = "interrupted"
)

// Report is report.json. Field names are stable; more may be added.
type Report struct {
	RunID      string    `json:"run_id"`
	Status     string    `json:"status"`
	PlanHash   string    `json:"plan_hash"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// ScheduledAt is the fire time of a run the scheduler started.
	ScheduledAt *time.Time `json:"scheduled_at,omitempty"`
	Deadline    *time.Time `json:"deadline"`
	DeadlineMet *bool      `json:"deadline_met"`
	DeadlineBy  string     `json:"deadline_margin,omitempty"`
	// Headline is gate 4's one-line verdict of the run. It says "every
	// table reconciles" only when every table of the run was loaded and
	// checked in full; otherwise it says what failed or was not checked.
	Headline string `json:"headline"`
	// NotChecked lists, per table, what gate 4 did not check this run
	// ("table: what"): findings that were skipped or not decided, tables
	// already loaded (not re-checked) or not reconciled.
	NotChecked []string `json:"not_checked,omitempty"`
	// HeldBackMost names the tables that held back more than half of
	// their rows ("orders: 6 of 8 rows held back"): a run can pass gate 4
	// and still have loaded almost nothing of a table.
	HeldBackMost []string      `json:"held_back_most,omitempty"`
	Tables       []TableReport `json:"tables"`
	Exceptions   Exceptions    `json:"exceptions"`
	// Notifications sent to owners after the run.
	Notifications []Notification `json:"notifications,omitempty"`
	// Warnings are problems that did not fail the run.
	Warnings []string `json:"warnings,omitempty"`
	// Marts computed after their base tables, each proved by gate 4.
	Marts []MartReport `json:"marts,omitempty"`
	// Watch is the latency of a micro-batch of lima-tui run --watch.
	Watch *WatchReport `json:"watch,omitempty"`
}

// MartReport is one mart's outcome.
type MartReport struct {
	Name           string          `json:"name"`
	Table          string          `json:"table"`
	Status         string          `json:"status"` // built, already_built, empty, failed
	Error          string          `json:"error,omitempty"`
	LoadID         string          `json:"load_id,omitempty"`
	SnapshotID     int64           `json:"snapshot_id,omitempty"`
	Rows           int64           `json:"rows"`
	FactRows       int64           `json:"fact_rows"`
	Reconciliation string          `json:"reconciliation"`
	Checks         []gates.Finding `json:"checks,omitempty"`
}

// AddMarts records the marts and lets them decide the status: a mart that
// could not be built fails the run, one that fails gate 4 fails the
// reconciliation.
func (r *Report) AddMarts(ms []MartReport) {
	r.Marts = ms
	for _, m := range ms {
		switch {
		case m.Status == "failed":
			r.Status = StatusFailed
		case m.Reconciliation == gates.Fail && r.Status == StatusOK:
			r.Status = StatusReconciliationFailed
		}
	}
	r.SetHeadline()
}

// Headline texts.
const (
	HeadlineAll     = "every table reconciles"
	HeadlineNothing = "nothing new was loaded: gate 4 proved each table when it was loaded (lima-tui reconcile re-checks the lake now)"
)

// SetHeadline (re)computes the headline from the status, the tables and
// NotChecked. Build and AddMarts call it; call it again after changing
// the tables' checks.
func (r *Report) SetHeadline() {
	var failed []string
	loaded := 0
	for _, t := range r.Tables {
		if t.Reconciliation == gates.Fail || t.Error != "" || !t.Balanced {
			failed = append(failed, t.Name)
		}
		if t.Status == run.StatusLoaded {
			loaded++
		}
	}
	for _, m := range r.Marts {
		if m.Status == "failed" || m.Reconciliation == gates.Fail {
			failed = append(failed, "mart "+m.Name)
		}
	}
	switch {
	case r.Status == StatusFailed:
		r.Headline = "the run failed"
		if len(failed) > 0 {
			r.Headline += ": " + strings.Join(failed, ", ")
		}
	case r.Status == StatusReconciliationFailed:
		r.Headline = "loaded, but gate 4 failed for " + strings.Join(failed, ", ")
	case loaded == 0:
		r.Headline = HeadlineNothing
		if len(r.Tables) == 0 {
			r.Headline = "no table in this run"
		}
	case len(r.NotChecked) > 0:
		r.Headline = fmt.Sprintf("loaded; gate 4 passed what it checked, but did not check %d thing(s): %s", len(r.NotChecked), strings.Join(r.NotChecked, "; "))
	default:
		r.Headline = HeadlineAll
	}
}

// notChecked lists what gate 4 did not check for one table of the report.
func notChecked(t TableReport, rec *gates.Reconciliation) []string {
	switch {
	case t.Status == run.StatusAlreadyLoaded:
		return []string{t.Name + ": already loaded, not re-checked this run"}
	case t.Status != run.StatusLoaded:
		return nil // failed: the failure is the headline
	case rec == nil:
		return []string{t.Name + ": not reconciled (the sink cannot read the table back)"}
	}
	var out []string
	for _, f := range rec.Checks {
		switch f.Status {
		case gates.Skip:
			out = append(out, t.Name+": "+f.Name)
		case gates.Warn:
			out = append(out, t.Name+": "+f.Name+" (not decided)")
		}
	}
	return out
}

// Notification is one digest sent (or not) to an owner.
type Notification struct {
	Owner      string `json:"owner"`
	Channel    string `json:"channel"`
	Exceptions int64  `json:"exceptions"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
}

// TableReport is one table's outcome.
type TableReport struct {
	Name            string                        `json:"name"`
	Mode            string                        `json:"mode"`
	Status          string                        `json:"status"`
	Error           string                        `json:"error,omitempty"`
	LoadID          string                        `json:"load_id"`
	SnapshotID      int64                         `json:"snapshot_id"`
	CommitAttempts  int                           `json:"commit_attempts,omitempty"`
	WatermarkBefore string                        `json:"watermark_before"`
	WatermarkAfter  string                        `json:"watermark_after"`
	RowsRead        int64                         `json:"rows_read"`
	RowsLoaded      int64                         `json:"rows_loaded"`
	RowsQuarantined int64                         `json:"rows_quarantined"`
	RowsSkipped     int64                         `json:"rows_skipped"`
	SkippedBy       map[string]int64              `json:"rows_skipped_by_reason"`
	Balanced        bool                          `json:"balanced"`
	Reconciliation  string                        `json:"reconciliation"`
	ControlTotals   map[string]gates.ControlTotal `json:"control_totals"`
	Checks          []gates.Finding               `json:"checks"`
	Samples         []gates.SamplePair            `json:"samples,omitempty"`
	Normalizations  []Normalization               `json:"normalizations"`
	Files           []run.FileResult              `json:"files"`
	DataFiles       int                           `json:"data_files_written"`
	DataBytes       int64                         `json:"data_bytes_written"`
	InputBytes      int64                         `json:"input_bytes"`
	// Seconds is the table's wall time: its load, start to end, plus its
	// gate 4 (Phases says where it went).
	Seconds    float64         `json:"seconds"`
	Phases     Phases          `json:"phases"`
	Exceptions []ExceptionView `json:"exceptions_sample,omitempty"`
	// Upsert: rows inserted vs updated, late rows the lookback caught,
	// keys deleted at the source (mode upsert only).
	Upsert *run.UpsertResult `json:"upsert,omitempty"`
	// ReadNote: how a database table was read when parallel reads were
	// asked for.
	ReadNote string `json:"read_note,omitempty"`
	// RowsDeleted are the committed rows a change-capture commit removed
	// (the old versions of the keys it changed or deleted).
	RowsDeleted int64 `json:"rows_deleted,omitempty"`
	// ExceptionQueue: what the run did to the table's exception queue
	// (bad rows new, seen again, gone as superseded).
	ExceptionQueue *run.ExceptionCounts `json:"exception_queue,omitempty"`
}

// Phases is where a table's Seconds went, in seconds (run.Phases): the
// sequential phases add up to no more than Seconds; write_busy is the
// Parquet writer's time, concurrent with read and cast_check, and not part
// of that sum.
type Phases struct {
	Open       float64 `json:"open"`
	Land       float64 `json:"land"`
	Read       float64 `json:"read"`
	CastCheck  float64 `json:"cast_check"`
	WriteWait  float64 `json:"write_wait"`
	StageOther float64 `json:"stage_other"`
	Commit     float64 `json:"commit"`
	Gate4      float64 `json:"gate4"`
	WriteBusy  float64 `json:"write_busy"`
}

// PhasesOf converts run.Phases to seconds.
func PhasesOf(p run.Phases) Phases {
	return Phases{Open: p.Open.Seconds(), Land: p.Land.Seconds(), Read: p.Read.Seconds(), CastCheck: p.CastCheck.Seconds(),
		WriteWait: p.WriteWait.Seconds(), StageOther: p.StageOther.Seconds(), Commit: p.Commit.Seconds(), Gate4: p.Gate4.Seconds(),
		WriteBusy: p.WriteBusy.Seconds()}
}

// Normalization is one fix with its count.
type Normalization struct {
	Column string `json:"column"`
	Fix    string `json:"fix"`
	Count  int64  `json:"count"`
}

// ExceptionView is a held-back row in the report.
type ExceptionView struct {
	Level    string    `json:"level"`
	Locator  string    `json:"locator"`
	Rules    string    `json:"rules"`
	Reason   string    `json:"reason"`
	Owner    string    `json:"owner"`
	Deadline time.Time `json:"deadline,omitzero"`
}

// Exceptions counts what was held back.
type Exceptions struct {
	Total   int64            `json:"total"`
	Files   int64            `json:"files"`
	ByTable map[string]int64 `json:"by_table"`
	ByRule  map[string]int64 `json:"by_rule"`
	ByOwner map[string]int64 `json:"by_owner"`
	// Queue is the state of the whole exception queue after the run (all
	// runs): open or fixed exceptions, and those past their deadline.
	Queue *Queue `json:"queue,omitempty"`
}

// Queue counts the unresolved exceptions of the ledger.
type Queue struct {
	Unresolved     int64            `json:"unresolved"`
	Overdue        int64            `json:"overdue"`
	OverdueByOwner map[string]int64 `json:"overdue_by_owner"`
}

// Build assembles the report of a run.
func Build(p *plan.Plan, res *run.Result, recs map[string]*gates.Reconciliation) *Report {
	r := &Report{RunID: res.RunID, PlanHash: p.Hash(), StartedAt: res.Started, FinishedAt: res.Finished, Status: StatusOK,
		Exceptions: Exceptions{ByTable: map[string]int64{}, ByRule: map[string]int64{}, ByOwner: map[string]int64{}}}
	if dl, ok := Deadline(p, res.Started); ok {
		r.setDeadline(dl)
	}
	for _, tr := range res.Tables {
		t := TableReport{Name: tr.Name, Mode: tr.Mode, Status: tr.Status, LoadID: tr.LoadID, SnapshotID: tr.Commit.SnapshotID,
			CommitAttempts: tr.Commit.Attempts, WatermarkBefore: tr.WatermarkBefore, WatermarkAfter: tr.WatermarkAfter,
			RowsRead: tr.RowsRead, RowsLoaded: tr.RowsLoaded, RowsQuarantined: tr.RowsQuarantined, RowsSkipped: tr.RowsSkipped,
			SkippedBy: tr.SkippedBy, Balanced: tr.Balanced(), Files: tr.Files, DataFiles: tr.StagedFiles, DataBytes: tr.StagedBytes,
			InputBytes: tr.InputBytes, Seconds: (tr.Finished.Sub(tr.Started) + tr.Phases.Gate4).Seconds(), Phases: PhasesOf(tr.Phases), ControlTotals: map[string]gates.ControlTotal{},
			Reconciliation: gates.Skip, Normalizations: []Normalization{}, Checks: []gates.Finding{}}
		if tr.Files == nil {
			t.Files = []run.FileResult{}
		}
		t.Upsert, t.ReadNote = tr.Upsert, tr.ReadNote
		if c := tr.ExceptionCounts; c != (run.ExceptionCounts{}) || (tr.Mode != "replay" && (tr.Status == run.StatusLoaded || tr.Status == run.StatusNothingToLoad)) {
			t.ExceptionQueue = &c
		}
		if !tr.Commit.AlreadyCommitted {
			t.RowsDeleted = tr.Commit.Deleted
		}
		if tr.Err != nil {
			t.Error = textcut.Cell(tr.Err.Error(), 0)
			r.Status = StatusFailed
		}
		if !t.Balanced {
			r.Status = StatusFailed
		}
		t.Checks = append(t.Checks, gates.Finding{Name: "conservation", Status: passIf(t.Balanced),
			Detail: fmt.Sprintf("read %d = loaded %d + held back %d + skipped %d", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)})
		r.NotChecked = append(r.NotChecked, notChecked(t, recs[tr.Name])...)
		if rec := recs[tr.Name]; rec != nil {
			t.Reconciliation = rec.Status
			t.ControlTotals = rec.ControlTotals
			t.Checks = append(t.Checks, rec.Checks...)
			t.Samples = cutSamples(rec.Samples)
			if rec.Status == gates.Fail && r.Status == StatusOK {
				r.Status = StatusReconciliationFailed
			}
		} else if tr.Status == run.StatusAlreadyLoaded {
			t.Checks = append(t.Checks, gates.Finding{Name: "already loaded", Status: gates.Skip,
				Detail: fmt.Sprintf("this input was committed before as load %s in snapshot %d; nothing was added", tr.LoadID, tr.Commit.SnapshotID)})
		}
		for _, f := range tr.Findings {
			name := "data convention"
			switch {
			case strings.HasPrefix(f, "files left out: "):
				name = "files left out"
			case strings.Contains(f, " left out: "):
				name = "column left out"
			}
			t.Checks = append(t.Checks, gates.Finding{Name: name, Status: gates.Warn, Detail: f})
		}
		for _, n := range tr.Normalizations {
			t.Normalizations = append(t.Normalizations, Normalization(n))
		}
		all := append(append([]run.Exception{}, tr.FileExceptions...), tr.Exceptions...)
		for _, e := range all {
			var reasons []string
			for _, ce := range e.Errors {
				s := ce.Reason
				if ce.Column != "" {
					s = ce.Column + ": " + s
				}
				reasons = append(reasons, s)
			}
			col := ""
			if len(e.Errors) > 0 {
				col = e.Errors[0].Column
			}
			rules := e.Rules()
			_ = col
			t.Exceptions = append(t.Exceptions, ExceptionView{Level: e.Level, Locator: textcut.Cell(e.Loc.String(), 0), Rules: strings.Join(rules, ","),
				Reason: textcut.Cell(strings.Join(reasons, "; "), 0), Owner: e.Owner, Deadline: e.Deadline})
		}
		r.Exceptions.Total += tr.RowsQuarantined + int64(len(tr.FileExceptions))
		r.Exceptions.Files += int64(len(tr.FileExceptions))
		if n := tr.RowsQuarantined + int64(len(tr.FileExceptions)); n > 0 {
			r.Exceptions.ByTable[tr.Name] += n
		}
		for rule, n := range tr.QuarantinedBy {
			r.Exceptions.ByRule[rule] += n
		}
		if len(tr.FileExceptions) > 0 {
			r.Exceptions.ByRule[run.RuleFile] += int64(len(tr.FileExceptions))
		}
		// Owners: every exception counted once, routed by its first failure.
		for o, n := range tr.HeldByOwner {
			r.Exceptions.ByOwner[o] += n
		}
		t.Checks = cutDetails(t.Checks)
		if h := HeldBackHeadline(t); h != "" {
			r.HeldBackMost = append(r.HeldBackMost, h)
		}
		r.Tables = append(r.Tables, t)
	}
	r.SetHeadline()
	return r
}

// HeldBackHeadline is the warning for a table that held back most of its
// rows (more than half of the rows read that were not skipped, the
// threshold of gates.HoldsBackMost); "" when it did not.
func HeldBackHeadline(t TableReport) string {
	rows := t.RowsRead - t.RowsSkipped
	if !gates.HoldsBackMost(t.RowsQuarantined, rows) {
		return ""
	}
	return fmt.Sprintf("%s: %d of %d rows held back", t.Name, t.RowsQuarantined, rows)
}

func passIf(ok bool) string {
	if ok {
		return gates.Pass
	}
	return gates.Fail
}

// OwnerFor routes an exception: the first owner whose table, column and
// rule (each optional) match, else the default owner.
func OwnerFor(p *plan.Plan, table, column, rule string) string {
	o, _ := run.NewRouter(p).Route(table, column, rule, time.Now())
	return o
}

// Deadline is the first occurrence of the schedule's deadline (HH:MM in the
// schedule's time zone) at or after the run's start: a nightly run that
// starts at 02:00 with a 06:00 deadline must finish by 06:00 that morning.
func Deadline(p *plan.Plan, started time.Time) (time.Time, bool) {
	if p.Schedule.Deadline == "" {
		return time.Time{}, false
	}
	loc := time.UTC
	if p.Schedule.Timezone != "" {
		l, err := time.LoadLocation(p.Schedule.Timezone)
		if err != nil {
			return time.Time{}, false
		}
		loc = l
	}
	hm, err := time.Parse("15:04", p.Schedule.Deadline)
	if err != nil {
		return time.Time{}, false
	}
	s := started.In(loc)
	d := time.Date(s.Year(), s.Month(), s.Day(), hm.Hour(), hm.Minute(), 0, 0, loc)
	if d.Before(s) {
		d = time.Date(s.Year(), s.Month(), s.Day()+1, hm.Hour(), hm.Minute(), 0, 0, loc)
	}
	return d, true
}

// SetScheduled records that the scheduler fired the run at fire, and moves
// the deadline to the first schedule.deadline after the fire time: a run
// fired at 02:00 that waited for the lock until 07:00 still had to finish
// by 06:00 (missed), where Deadline would count from its start.
func (r *Report) SetScheduled(p *plan.Plan, fire time.Time) {
	f := fire.UTC()
	r.ScheduledAt = &f
	if dl, ok := DeadlineAfter(p, fire); ok {
		r.setDeadline(dl)
	}
}

func (r *Report) setDeadline(dl time.Time) {
	r.Deadline = &dl
	met := !r.FinishedAt.After(dl)
	r.DeadlineMet = &met
	if met {
		r.DeadlineBy = "met with " + dl.Sub(r.FinishedAt).Round(time.Second).String() + " to spare"
	} else {
		r.DeadlineBy = "missed by " + r.FinishedAt.Sub(dl).Round(time.Second).String()
	}
}

// DeadlineAfter is the first occurrence of the schedule's deadline strictly
// after a scheduled fire time: cron 02:00 with deadline 06:00 gives 06:00
// the same morning; cron 06:00 with deadline 06:00 gives 06:00 the next day.
func DeadlineAfter(p *plan.Plan, fire time.Time) (time.Time, bool) {
	dl, ok := Deadline(p, fire)
	if ok && !dl.After(fire) {
		dl, ok = Deadline(p, fire.Add(time.Minute))
	}
	return dl, ok
}

// ExitCode is the process exit code the report implies.
func (r *Report) ExitCode() int {
	switch r.Status {
	case StatusOK:
		return 0
	case StatusReconciliationFailed:
		return 3
	}
	return 1
}

// Write writes report.json and report.md under dir/<run-id>/ atomically and
// returns the JSON path.
func Write(dir string, r *Report, exp []gates.Expectation) (string, error) {
	d := filepath.Join(dir, r.RunID)
	if err := fsx.MkdirPrivate(d); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	jp := filepath.Join(d, "report.json")
	if err := fsx.WriteFileAtomic(jp, append(b, '\n')); err != nil {
		return "", err
	}
	if exp != nil {
		eb, err := json.MarshalIndent(exp, "", "  ")
		if err != nil {
			return "", err
		}
		if err := fsx.WriteFileAtomic(filepath.Join(d, "expected.json"), append(eb, '\n')); err != nil {
			return "", err
		}
	}
	if err := fsx.WriteFileAtomic(filepath.Join(d, "report.md"), []byte(Markdown(r))); err != nil {
		return "", err
	}
	return jp, nil
}

// Read loads a report.json.
func Read(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// ReadExpectations loads the expectations saved with a run.
func ReadExpectations(dir, runID string) ([]gates.Expectation, error) {
	rd, err := RunDir(dir, runID)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(rd, "expected.json"))
	if err != nil {
		return nil, err
	}
	var es []gates.Expectation
	if err := json.Unmarshal(b, &es); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", filepath.Join(rd, "expected.json"), err)
	}
	if es == nil {
		// JSON null: Lima writes a list (the file is absent when there is
		// nothing to expect), so null proves nothing and is no pass.
		return nil, fmt.Errorf("%s is damaged: null instead of a list of expectations", filepath.Join(rd, "expected.json"))
	}
	for i, e := range es {
		if e.Table == "" || len(e.Types) != len(e.Columns) || (len(e.Required) != 0 && len(e.Required) != len(e.Columns)) {
			return nil, fmt.Errorf("%s is damaged: expectation %d (table %q) has %d columns, %d types and %d required flags",
				filepath.Join(rd, "expected.json"), i+1, e.Table, len(e.Columns), len(e.Types), len(e.Required))
		}
	}
	return es, nil
}

// RunDir is the folder of run runID under the reports folder dir. A run id
// is one plain name as NewRunID makes it — never a path: "../..", "/etc"
// or "a/b" are refused, so a --run flag cannot read outside dir.
func RunDir(dir, runID string) (string, error) {
	if runID == "" || runID == "." || runID == ".." || strings.ContainsAny(runID, `/\`) || filepath.Base(runID) != runID {
		return "", fmt.Errorf("%q is not a run id (a run id is one name under %s, such as 20260101T120000.000000Z-a1b2c3)", runID, dir)
	}
	for _, r := range runID {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%q is not a run id (control character)", runID)
		}
	}
	return filepath.Join(dir, runID), nil
}

// Latest returns the id of the newest run under dir.
func Latest(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "report.json")); err == nil {
				ids = append(ids, e.Name())
			}
		}
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("no run reports in %s", dir)
	}
	sort.Strings(ids)
	return ids[len(ids)-1], nil
}

// LatestExpectations are, for every table, the expectations of the newest
// run that loaded it (a rerun that loaded nothing, or a run of other
// tables, saves none for it): what the table's current snapshots must
// still prove. Tables are in the order the newest runs listed them.
func LatestExpectations(dir string) ([]gates.Expectation, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "expected.json")); err == nil {
				ids = append(ids, e.Name())
			}
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no run in %s saved expectations (only runs that loaded data do)", dir)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	var out []gates.Expectation
	seen := map[string]bool{}
	for _, id := range ids {
		es, err := ReadExpectations(dir, id)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		for _, e := range es {
			if !seen[e.Table] {
				seen[e.Table] = true
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// cutSamples returns the sample pairs with every value longer than
// textcut.MaxCell cut, its full length stated; Match stays as gate 4
// decided it on the whole values. The pairs given are not changed.
func cutSamples(in []gates.SamplePair) []gates.SamplePair {
	if in == nil {
		return nil
	}
	out := make([]gates.SamplePair, len(in))
	cut := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		c := make(map[string]string, len(m))
		for k, v := range m {
			c[k] = textcut.Cell(v, 0)
		}
		return c
	}
	for i, p := range in {
		out[i] = gates.SamplePair{Locator: textcut.Cell(p.Locator, 0), Source: cut(p.Source), Raw: cut(p.Raw), Lake: cut(p.Lake), Match: p.Match}
	}
	return out
}

// cutDetails cuts the detail of each finding to textcut.MaxCell (a detail
// may quote values: a range, a key).
func cutDetails(fs []gates.Finding) []gates.Finding {
	for i := range fs {
		fs[i].Detail = textcut.Cell(fs[i].Detail, 0)
	}
	return fs
}
