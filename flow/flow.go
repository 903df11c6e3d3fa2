// Package flow is the sequence of one headless run, shared by the CLI and
// the wizard: plan → load (engine) → gate 4 (gates) → report (reports).
package flow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/mart"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/reports"
)

// Errors the CLI maps to exit codes.
var (
	// ErrPrecondition: nothing was written (exit 4).
	ErrPrecondition = errors.New("precondition failed")
	// ErrUsage: the command or plan is wrong (exit 2).
	ErrUsage = errors.New("usage")
)

// Workspace paths.
type Workspace struct {
	Dir string
}

// PlanPath is platform.yaml.
func (w Workspace) PlanPath() string { return filepath.Join(w.Dir, "platform.yaml") }

// StateDir is .lima (0700).
func (w Workspace) StateDir() string { return filepath.Join(w.Dir, ".lima") }

// ReportsDir is reports/.
func (w Workspace) ReportsDir() string { return filepath.Join(w.Dir, "reports") }

// Warehouse resolves the plan's warehouse.
func (w Workspace) Warehouse(p *plan.Plan) string {
	wh := p.Storage.Warehouse
	if wh == "" {
		wh = "lake"
	}
	if filepath.IsAbs(wh) || hasScheme(wh) {
		return wh
	}
	return filepath.Join(w.Dir, wh)
}

// CatalogPath resolves the SQLite catalog file.
func (w Workspace) CatalogPath(p *plan.Plan) string {
	c := p.Storage.CatalogURI
	if c == "" {
		return filepath.Join(w.StateDir(), "catalog.db")
	}
	if filepath.IsAbs(c) {
		return c
	}
	return filepath.Join(w.Dir, c)
}

func hasScheme(s string) bool {
	for i, r := range s {
		if r == ':' {
			return i > 1 && len(s) > i+2 && s[i+1:i+3] == "//"
		}
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+') {
			return false
		}
	}
	return false
}

// NewRunID returns a sortable run id: UTC time plus randomness.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(b[:])
}

// LoadPlan reads and validates platform.yaml.
func LoadPlan(path string) (*plan.Plan, error) {
	p, err := plan.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUsage, path, err)
	}
	return p, nil
}

// CheckApproval refuses a plan without tables (nothing to load, whatever
// its approval says), and one whose data model was approved under another
// hash, or never approved. Every way a plan runs (run, run --watch,
// schedule) asks it first.
func CheckApproval(p *plan.Plan) error {
	if f, empty := gates.EmptyDataModel(p); empty {
		return fmt.Errorf("%w: %s; %s", ErrPrecondition, f.Detail, f.Fix)
	}
	a := p.Gates.DataModel
	if a == nil || a.ApprovedBy == "" {
		return fmt.Errorf("%w: the data model of this plan has not been approved; review it, then run: lima-tui approve --gate data-model --by NAME", ErrPrecondition)
	}
	if a.PlanHash != p.Hash() {
		return fmt.Errorf("%w: the plan changed since %s approved it (approved hash %.12s, now %.12s); review the change, then run: lima-tui approve --gate data-model --by NAME",
			ErrPrecondition, a.ApprovedBy, a.PlanHash, p.Hash())
	}
	return nil
}

// RunOptions of one run.
type RunOptions struct {
	Workspace   Workspace
	Plan        *plan.Plan
	Tables      []string
	FullRefresh bool
	Progress    *run.Progress
	// SinkOptions lets tests inject faults into the sink.
	SinkOptions func(*icesink.Options)
	// OnlyFiles, AppendOnly and FirstSeen make the run one micro-batch of
	// the watcher (see Watch): only these files, appended, with the time
	// each file was first seen (by file name) for the latency report.
	OnlyFiles  map[string][]string
	AppendOnly bool
	FirstSeen  map[string]time.Time
	// LockWait bounds how long a run waits for another run of the same
	// workspace to finish (default 0: fail at once).
	LockWait time.Duration
	// Force runs outside the plan's run window (schedule.window). Without
	// it every run, scheduled or started by hand, is refused outside the
	// window (ErrOutsideWindow, exit 4) before anything is read.
	Force bool
	// ScheduledAt is the fire time when the scheduler started the run; the
	// report's deadline is then the first schedule.deadline after it
	// (reports.DeadlineAfter). Zero for a run started by hand: the deadline
	// counts from the start (reports.Deadline).
	ScheduledAt time.Time
	// Now is the clock of the window check; nil is time.Now.
	Now func() time.Time
}

// Outcome of a run.
type Outcome struct {
	Report     *reports.Report
	ReportPath string
	Result     *run.Result
}

// OpenSink opens the workspace's Iceberg sink.
func OpenSink(ctx context.Context, ws Workspace, p *plan.Plan, tweak func(*icesink.Options)) (*icesink.Sink, error) {
	if err := fsx.MkdirPrivate(ws.StateDir()); err != nil {
		return nil, err
	}
	o := icesink.Options{CatalogPath: ws.CatalogPath(p), Warehouse: ws.Warehouse(p)}
	if tweak != nil {
		tweak(&o)
	}
	return icesink.Open(ctx, o)
}

// Lock takes the workspace's run lock, waiting at most wait.
func Lock(ctx context.Context, ws Workspace, wait time.Duration) (func(), error) {
	if err := fsx.MkdirPrivate(ws.StateDir()); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(ws.StateDir(), "run.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: another run of this workspace is in progress (lock %s)", ErrPrecondition, f.Name())
		}
		if err := SleepContext(ctx, 200*time.Millisecond); err != nil {
			f.Close()
			return nil, fmt.Errorf("waiting for another run of this workspace: %w", err)
		}
	}
}

// Run loads the plan, reconciles every committed table and writes the report.
func Run(ctx context.Context, o RunOptions) (*Outcome, error) {
	// The run window first: outside it nothing is read, not even to check.
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if err := checkWindow(o.Plan, now(), o.Force); err != nil {
		return nil, err
	}
	if err := checkTableWindows(o.Plan, o.Tables, now(), o.Force); err != nil {
		return nil, err
	}
	// Gate 2 first (Preconditions): nothing is written unless every check passes.
	if err := checkPreconditions(ctx, o); err != nil {
		return nil, err
	}
	sess, err := openSession(ctx, o.Workspace, o.Plan, "the run", o.LockWait, o.SinkOptions)
	if err != nil {
		return nil, err
	}
	defer sess.close(ctx)
	sk, st, runID := sess.sink, sess.store, sess.runID
	q := &run.LedgerQuarantine{Store: st}
	land, err := rawLander(ctx, o.Workspace, o.Plan, sess.started) // raw/ (flow/raw.go)
	if err != nil {
		return nil, fmt.Errorf("%w: raw/ landing: %w", ErrPrecondition, err)
	}
	landExtract, err := rawExtractLander(ctx, o.Workspace, o.Plan, sess.started) // raw/ database extracts (flow/raw.go)
	if err != nil {
		return nil, fmt.Errorf("%w: raw/ landing: %w", ErrPrecondition, err)
	}
	// Every table of the run is visible (queued) before the first starts.
	o.Progress.Queue(run.RunOrder(o.Plan, o.Tables)...)
	res, err := run.Load(ctx, run.Options{Workspace: o.Workspace.Dir, Plan: o.Plan, Sink: sk, Quarantine: q, Tables: o.Tables,
		FullRefresh: o.FullRefresh, RunID: runID, Progress: o.Progress, Land: land, LandExtract: landExtract, OnlyFiles: o.OnlyFiles, AppendOnly: o.AppendOnly,
		KnownFixes: func(ctx context.Context, table string) (map[run.FixKey]run.KnownFix, error) {
			return knownFixes(ctx, st, table)
		}})
	if err != nil {
		return nil, err // sess.close records the run as failed or interrupted
	}
	return finishRun(ctx, o, sess, res)
}

// finishRun is everything a run does after its tables' loads, whoever
// loaded them (Run, or the commit of a distributed load, shard.go): the
// watermark mirror and the ledger, the marts, gate 4, the docs and the
// report, and the run's end recorded.
func finishRun(ctx context.Context, o RunOptions, sess *session, res *run.Result) (*Outcome, error) {
	sk, st, runID := sess.sink, sess.store, sess.runID
	for _, tr := range res.Tables {
		if tr.Status == run.StatusLoaded {
			if err := st.SetWatermark(ctx, tr.Name, tr.WatermarkAfter, tr.LoadID, tr.Commit.SnapshotID); err != nil {
				tr.Err = fmt.Errorf("committed, but mirroring the watermark failed: %w", err)
			}
			// Fixed rows that this load carried with their recorded fix are
			// now in the table: they count as replayed by this load.
			var fixedNow []int64
			for _, id := range tr.AppliedFixes {
				if e, err := st.Get(ctx, id); err == nil && e.Status == ledger.StatusFixed {
					fixedNow = append(fixedNow, id)
				}
			}
			if len(fixedNow) > 0 {
				if err := st.MarkReplayed(ctx, fixedNow, tr.LoadID, "lima"); err != nil {
					tr.Err = fmt.Errorf("committed, but marking %d fixed exceptions as replayed failed: %w", len(fixedNow), err)
				}
			}
		}
		settleExceptions(ctx, st, tr, o.FullRefresh) // flow/ledger.go
	}
	marts := buildMarts(ctx, o.Plan, sk, runID, res.Tables, o.Progress)
	ctasErr := writeCTAS(o.Workspace, o.Plan)
	recs := map[string]*gates.Reconciliation{}
	var exps []gates.Expectation
	for _, tr := range res.Tables {
		g4 := time.Now()
		if rec := countOnly(ctx, tr, o.Plan.Tables[tr.Name], st); rec != nil { // dbreconcile.go
			recs[tr.Name] = rec
		}
		if tr.Status != run.StatusLoaded {
			tr.Phases.Gate4 = time.Since(g4)
			continue
		}
		e := gates.Expect(tr)
		exps = append(exps, e)
		scanner, ok := tr.Table.(sink.Scanner)
		if !ok {
			continue
		}
		o.Progress.SetPhase(tr.Name, PhaseReconciling)
		rec, err := gates.Reconcile(ctx, scanner, e, append(cdcHistory(ctx, sk, o.Plan, e), keyMemory(o.Workspace, o.Plan))...)
		if err != nil {
			rec = &gates.Reconciliation{Table: tr.Name, Status: gates.Fail, Checks: []gates.Finding{{Name: "read back", Status: gates.Fail, Detail: err.Error()}}}
		}
		addUpsertCheck(rec, tr)
		addSourceCount(ctx, rec, tr, o.Plan.Tables[tr.Name], st)
		recs[tr.Name] = rec
		o.Progress.SetPhase(tr.Name, PhaseReconciled)
		tr.Phases.Gate4 = time.Since(g4)
	}
	res.Finished = time.Now().UTC()
	rep := reports.Build(o.Plan, res, recs)
	if !o.ScheduledAt.IsZero() {
		rep.SetScheduled(o.Plan, o.ScheduledAt)
	}
	rep.AddMarts(marts)
	rep.Warnings = append(rep.Warnings, sess.recovered()...)
	if o.FirstSeen != nil {
		rep.Watch = watchReport(res, o.FirstSeen)
	}
	if q, err := queueState(ctx, st, time.Now()); err == nil {
		rep.Exceptions.Queue = q
	}
	if digests, err := BuildDigests(ctx, st, o.Plan, runID, res.Tables); err == nil {
		rep.Notifications = Notify(ctx, o.Plan, digests)
	} else {
		rep.Notifications = []reports.Notification{{Owner: "*", Channel: "digest", Status: "failed", Error: err.Error()}}
	}
	// The platform docs follow every run; the data is committed already,
	// so a failure to write them is a warning in the report, not fatal.
	if ctasErr != nil {
		rep.Warnings = append(rep.Warnings, "the Athena CTAS files of the marts were not written: "+ctasErr.Error())
	}
	lake := withLakeMetadata(ctx, o.Workspace, o.Plan, reports.LakeTablesFrom(exps, recs)) // docs describe the metadata (evolve.go)
	for _, m := range marts {
		if m.Status != "built" || m.Reconciliation != gates.Pass {
			continue
		}
		lt := reports.LakeTable{Name: m.Name, Rows: m.Rows, SnapshotID: m.SnapshotID}
		for _, c := range o.Plan.Tables[m.Name].Columns {
			lt.Columns, lt.Types = append(lt.Columns, c.Name), append(lt.Types, c.Type)
		}
		lake = append(lake, lt)
	}
	if err := reports.WriteDocs(o.Workspace.Dir, o.Plan, rep, lake); err != nil {
		rep.Warnings = append(rep.Warnings, "the platform docs (README.md, ARCHITECTURE.md) were not updated: "+err.Error())
	}
	path, err := reports.Write(o.Workspace.ReportsDir(), rep, exps)
	if err != nil {
		return nil, fmt.Errorf("write the report: %w", err)
	}
	summary, _ := json.Marshal(struct {
		Report string `json:"report"`
		Status string `json:"status"`
	}{path, rep.Status})
	if err := sess.finish(ctx, rep.Status, res.Finished, summary); err != nil {
		return nil, fmt.Errorf("record the end of the run: %w", err)
	}
	return &Outcome{Report: rep, ReportPath: path, Result: res}, nil
}

// queueState counts the unresolved and overdue exceptions of the ledger.
func queueState(ctx context.Context, st ledger.Store, now time.Time) (*reports.Queue, error) {
	q := &reports.Queue{}
	for _, s := range []string{ledger.StatusOpen, ledger.StatusFixed} {
		n, err := st.Count(ctx, ledger.Filter{Status: s})
		if err != nil {
			return nil, err
		}
		q.Unresolved += n
	}
	var err error
	if q.Overdue, err = st.Count(ctx, ledger.Filter{Overdue: true, Now: now}); err != nil {
		return nil, err
	}
	if q.OverdueByOwner, err = st.CountBy(ctx, ledger.Filter{Overdue: true, Now: now}, ledger.ByOwner); err != nil {
		return nil, err
	}
	return q, nil
}

// writeCTAS writes, for an AWS deployment, the Athena CTAS statement of
// every mart Lima builds to athena/mart_<name>.sql in the workspace. The
// LOCATION names a placeholder bucket: set it to the deployment's.
func writeCTAS(ws Workspace, p *plan.Plan) error {
	for _, name := range p.TableNames() {
		if !p.Tables[name].Built() {
			continue
		}
		loc := "s3://YOUR-BUCKET/lake/" + p.Namespace() + "/" + mart.TableName(name) + "/"
		sql, err := reports.CTAS(p, name, reports.CTASOptions{Database: p.Namespace(), Location: loc})
		if err != nil {
			return err
		}
		body := "-- Athena CTAS for mart " + name + ", generated by Lima from platform.yaml.\n" +
			"-- Replace s3://YOUR-BUCKET/ with the deployment's warehouse before running it.\n" + sql + "\n"
		if err := fsx.WriteFileAtomic(filepath.Join(ws.Dir, "athena", mart.TableName(name)+".sql"), []byte(body)); err != nil {
			return err
		}
	}
	return nil
}

// The phases flow records in run.Progress for the work after a table's
// load: gate 4's re-read of each loaded table and each mart's build.
const (
	PhaseReconciling     = "reconciling"
	PhaseReconciled      = "reconciled"
	PhaseBuildingMart    = "building mart"
	PhaseReconcilingMart = "reconciling mart"
	PhaseMartBuilt       = "mart built"
	PhaseMartSkipped     = "mart skipped"
)

// buildMarts computes every mart whose input tables are loaded (or already
// loaded) in this run, and proves each with gate 4's mart check.
func buildMarts(ctx context.Context, p *plan.Plan, sk sink.Sink, runID string, tables []*run.TableResult, prog *run.Progress) []reports.MartReport {
	byName := map[string]*run.TableResult{}
	for _, tr := range tables {
		byName[tr.Name] = tr
	}
	var out []reports.MartReport
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if !t.Built() {
			continue
		}
		mr := reports.MartReport{Name: name, Reconciliation: gates.Skip}
		inputs := map[string]mart.Input{}
		bases := map[string]sink.Table{}
		ready := true
		for _, from := range t.From {
			tr := byName[from]
			if tr == nil || tr.Err != nil || (tr.Status != run.StatusLoaded && tr.Status != run.StatusAlreadyLoaded) || tr.Table == nil {
				ready = false
				break
			}
			inputs[from] = mart.Input{LoadID: tr.LoadID, Table: tr.Table}
			bases[from] = tr.Table
		}
		if !ready {
			prog.Finish(name, PhaseMartSkipped) // queued, but an input failed
			continue                            // not every input is part of this run
		}
		prog.SetPhase(name, PhaseBuildingMart)
		res, err := mart.Build(ctx, p, sk, name, inputs, mart.Options{RunID: runID})
		if err != nil {
			mr.Status, mr.Error = "failed", err.Error()
			out = append(out, mr)
			prog.Finish(name, run.StatusFailed)
			continue
		}
		mr.Table, mr.Status, mr.LoadID, mr.SnapshotID, mr.Rows, mr.FactRows = res.Table, res.Status, res.LoadID, res.Commit.SnapshotID, res.Rows, res.FactRows
		if res.Status != "empty" && res.Handle != nil {
			prog.SetPhase(name, PhaseReconcilingMart)
			rec, err := gates.ReconcileMart(ctx, p, name, res.Handle, bases)
			if err != nil {
				mr.Reconciliation = gates.Fail
				mr.Checks = []gates.Finding{{Name: "read back", Status: gates.Fail, Detail: err.Error()}}
			} else {
				mr.Reconciliation, mr.Checks = rec.Status, rec.Checks
			}
		}
		prog.Finish(name, PhaseMartBuilt)
		out = append(out, mr)
	}
	return out
}

// knownFixes reads the fixes recorded for a table's rows.
func knownFixes(ctx context.Context, st ledger.Store, table string) (map[run.FixKey]run.KnownFix, error) {
	out := map[run.FixKey]run.KnownFix{}
	for _, status := range []string{ledger.StatusReplayed, ledger.StatusFixed} {
		var after ledger.Cursor
		for {
			page, next, err := st.List(ctx, ledger.Filter{Table: table, Status: status}, ledger.Page{After: after, Limit: ledger.MaxPageSize})
			if err != nil {
				return nil, err
			}
			for _, e := range page {
				if e.Level == ledger.LevelRow && len(e.Raw) > 0 && len(e.Fixed) > 0 {
					out[run.NewFixKey(e.File, e.Raw)] = run.KnownFix{ExceptionID: e.ID, Status: e.Status, Fixed: e.Fixed}
				}
			}
			if next == "" || len(page) == 0 {
				break
			}
			after = next
		}
	}
	return out, nil
}

// session is what every run that writes holds: the workspace lock, the
// sink, the state store, and its run recorded as started.
type session struct {
	unlock  func()
	sink    sink.Sink
	store   ledger.Store
	runID   string
	started time.Time
	// ended: the run's end is recorded (finish); close records one for a
	// run that returned without it.
	ended bool
	// interrupted are the runs an earlier process left "running" (it was
	// killed before it could record its end); openSession recorded them
	// as interrupted.
	interrupted []string
	// removed counts the files of interrupted loads' stagings that
	// openSession removed (flow/ledger.go removeStaged).
	removed int
}

// recovered says, for the report's warnings, what openSession found of
// earlier processes that were killed.
func (s *session) recovered() []string {
	var out []string
	for _, id := range s.interrupted {
		out = append(out, "run "+id+" was interrupted (its process ended before it recorded its end); recorded as interrupted; nothing it had not committed is visible")
	}
	if s.removed > 0 {
		out = append(out, fmt.Sprintf("%d file(s) that an interrupted load, maintain or compaction had written but never committed were removed", s.removed))
	}
	return out
}

// openSession takes the lock, opens the sink and the state store, settles
// the exceptions of an interrupted run and records the new run.
func openSession(ctx context.Context, ws Workspace, p *plan.Plan, verb string, lockWait time.Duration, tweak func(*icesink.Options)) (*session, error) {
	runID := NewRunID(time.Now())
	s, err := openRecovered(ctx, ws, p, verb, lockWait, runID, tweak)
	if err != nil {
		return nil, err
	}
	s.started = time.Now().UTC()
	if err := s.store.BeginRun(ctx, ledger.Run{ID: runID, Started: s.started, Status: "running", PlanHash: p.Hash()}); err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("record the run: %w", err)
	}
	s.runID = runID
	return s, nil
}

// openRecovered takes the lock, opens the sink (its stagings recorded
// under runID) and the state store, and recovers from an earlier process
// that was killed: it settles the exceptions of its loads, removes the
// files its loads staged and never committed, and records its runs as
// interrupted. The session has no run of its own (close records none).
func openRecovered(ctx context.Context, ws Workspace, p *plan.Plan, verb string, lockWait time.Duration, runID string, tweak func(*icesink.Options)) (*session, error) {
	unlock, err := Lock(ctx, ws, lockWait)
	if err != nil {
		return nil, err
	}
	// The lake is this workspace's, or unclaimed and claimed now, before
	// anything is written to it (flow/owner.go).
	if err := checkOwner(ctx, ws, p, verb, true); err != nil {
		unlock()
		return nil, err
	}
	s := &session{unlock: unlock}
	if s.store, err = OpenLedger(ctx, ws, p); err != nil {
		s.close(ctx)
		return nil, err
	}
	// Every staging of this run's loads is recorded in the state store
	// before its first file is written (sink.Inventory).
	withInventory := func(o *icesink.Options) {
		o.Inventory = stagingInventory{st: s.store, runID: runID}
		if tweak != nil {
			tweak(o)
		}
	}
	// Assigned only on success: a failed open returns a typed nil, which
	// in the interface field is not nil and would be closed.
	sk, err := OpenPlanSink(ctx, ws, p, withInventory)
	if err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("%w: open the catalog: %w", ErrPrecondition, err)
	}
	s.sink = sk
	if _, _, err := RecoverPending(ctx, s.store, s.sink, p); err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("settle the exceptions of an interrupted run: %w", err)
	}
	if s.removed, err = removeStaged(ctx, s.store, s.sink); err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("remove the files an interrupted load staged: %w", err)
	}
	if s.interrupted, err = markInterrupted(ctx, s.store); err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("record the runs an earlier process left unfinished: %w", err)
	}
	return s, nil
}

// finish records the end of the run once.
func (s *session) finish(ctx context.Context, status string, finished time.Time, summary []byte) error {
	s.ended = true
	return s.store.FinishRun(ctx, s.runID, status, finished, summary)
}

// close releases the session. A run that began and returns without
// recording its end is recorded as interrupted (its context was cancelled:
// ctrl+c, SIGTERM) or failed, so the state store never keeps it "running".
func (s *session) close(ctx context.Context) {
	if s.store != nil && s.runID != "" && !s.ended {
		status := reports.StatusFailed
		if ctx.Err() != nil {
			status = reports.StatusInterrupted
		}
		_ = s.finish(context.WithoutCancel(ctx), status, time.Now().UTC(), nil)
	}
	if s.store != nil {
		s.store.Close()
	}
	if s.sink != nil {
		s.sink.Close()
	}
	s.unlock()
}

// keyMemory bounds gate 4's duplicate check as the load's key sets are:
// etl.key_memory_mb, spilled to .lima/tmp.
func keyMemory(ws Workspace, p *plan.Plan) gates.Option {
	return gates.WithKeyMemory(p.ETL.KeyMemoryBytes(), filepath.Join(ws.StateDir(), "tmp"))
}

// Reconcile re-runs gate 4 for a past run (runID), or for every table's
// newest load (runID empty), against the tables' current snapshots.
func Reconcile(ctx context.Context, ws Workspace, p *plan.Plan, runID string) ([]*gates.Reconciliation, error) {
	var exps []gates.Expectation
	var err error
	if runID == "" {
		// Each table as its newest load left it: a later rerun that found
		// everything already loaded saved no expectations.
		if exps, err = reports.LatestExpectations(ws.ReportsDir()); err != nil {
			return nil, err
		}
	} else if exps, err = reports.ReadExpectations(ws.ReportsDir(), runID); err != nil {
		return nil, fmt.Errorf("run %s has no saved expectations (only runs that loaded data have): %w", runID, err)
	}
	sk, err := OpenPlanSink(ctx, ws, p, nil)
	if err != nil {
		return nil, err
	}
	defer sk.Close()
	var out []*gates.Reconciliation
	for _, e := range exps {
		spec, err := SpecFromExpectation(p, e)
		if err != nil {
			return nil, err
		}
		tbl, err := sk.OpenTable(ctx, spec)
		if err != nil {
			return nil, err
		}
		replays := 0
		if h, ok := tbl.(sink.Historian); ok {
			hist, err := h.History(ctx)
			if err != nil {
				return nil, err
			}
			if e, replays, err = gates.AdjustForReplays(e, hist); err != nil {
				return nil, err
			}
		}
		rec, err := gates.Reconcile(ctx, tbl.(sink.Scanner), e, append(cdcHistory(ctx, sk, p, e), keyMemory(ws, p))...)
		if err != nil {
			return nil, err
		}
		if replays > 0 {
			rec.Checks = append(rec.Checks, gates.Finding{Name: "replays since the load", Status: gates.Pass,
				Detail: fmt.Sprintf("%d replay snapshot(s) of fixed exceptions are included in the expected rows and sums", replays)})
		}
		out = append(out, rec)
	}
	return out, nil
}

// SpecFromExpectation rebuilds the table spec saved with a run.
func SpecFromExpectation(p *plan.Plan, e gates.Expectation) (sink.TableSpec, error) {
	spec := sink.TableSpec{Name: e.Table, Namespace: p.Namespace(), Required: e.Required}
	for i, c := range e.Columns {
		t, err := plan.ParseType(e.Types[i])
		if err != nil {
			return spec, err
		}
		spec.Types = append(spec.Types, t)
		spec.Columns = append(spec.Columns, plan.Column{Name: c, Type: e.Types[i]})
	}
	if t, ok := p.Tables[e.Table]; ok {
		for _, ps := range t.Partition {
			pf, err := plan.ParsePartition(ps)
			if err != nil {
				return spec, err
			}
			spec.Partition = append(spec.Partition, pf)
		}
	}
	return spec, nil
}
