package flow

// A distributed load (issue 19): a driver (Spark on AWS Glue, or a test)
// splits a table's files into shards and pipes one JSON line per shard to
// `lima-tui worker` processes (Spark's rdd.pipe); each worker runs the one
// file load of engine/run up to the commit — read, clean, cast, check, data
// files staged in the table's warehouse location, invisible — and prints
// one manifest line. `lima-tui commit` then chooses one successful attempt
// per shard, checks every expected shard is there and balances, commits
// every chosen data file in one snapshot carrying the load id, records the
// exceptions in the ledger, removes the losing attempts' files, and runs
// gate 4 and the report as any run does (finishRun).
//
// Names: every file a shard's attempt writes carries its write id
// (ShardWriteID), a UUID whose first 18 characters derive from the load
// id alone and the rest from the shard and the attempt: two attempts
// never collide, and the commit removes exactly the files named with this
// load's marker and no chosen attempt's write id that no snapshot
// references — a killed attempt's half-written file included.

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/redact"
	"github.com/lima-lake/lima/internal/s3x"
)

// ManifestVersion is the version of the manifest line a worker prints.
const ManifestVersion = 1

// Shard is one line the driver gives a worker (and the commit, --expect).
type Shard struct {
	LoadID string `json:"load_id"`
	Table  string `json:"table"`
	Shard  string `json:"shard"`
	// Attempt is the driver's attempt id (Spark's task attempt id); a
	// worker given none draws a random one.
	Attempt string       `json:"attempt,omitempty"`
	Inputs  []ShardInput `json:"inputs"`
}

// ShardInput is a whole file (file:///abs/path) or object (s3://b/key) of
// the table's source. Byte and key ranges are not supported.
type ShardInput struct {
	URI   string          `json:"uri"`
	Range json.RawMessage `json:"range,omitempty"`
}

// Manifest is the one line a worker prints per shard.
type Manifest struct {
	Version int    `json:"version"`
	LoadID  string `json:"load_id"`
	Table   string `json:"table"`
	Shard   string `json:"shard"`
	Attempt string `json:"attempt"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	// Status is the shard's life: staged, already_loaded (the load is in
	// the table already: nothing staged) or failed.
	Status   string `json:"status"`
	PlanHash string `json:"plan_hash"`
	// WriteID is in the name of every data file of this attempt.
	WriteID string `json:"write_id"`
	// Inputs are the shard's input URIs as given.
	Inputs    []string        `json:"inputs"`
	DataFiles []sink.DataFile `json:"data_files"`
	// Exceptions are the rows (and files) held back, inline.
	Exceptions    []run.Exception `json:"exceptions"`
	Accounting    Accounting      `json:"accounting"`
	ControlTotals run.Totals      `json:"control_totals"`
	// Files is what happened to each input (rows read, bytes, status).
	Files          []run.FileResult      `json:"files,omitempty"`
	Normalizations []clean.Normalization `json:"normalizations,omitempty"`
	Findings       []string              `json:"findings,omitempty"`
	Schema         ManifestSchema        `json:"schema"`
	// Casting fingerprints how the shard cleaned and cast its rows; the
	// commit refuses shards that disagree.
	Casting string `json:"casting"`
}

// Accounting is a shard's conservation: rows_read = rows_loaded +
// rows_quarantined + rows_skipped.
type Accounting struct {
	RowsRead        int64            `json:"rows_read"`
	RowsLoaded      int64            `json:"rows_loaded"`
	RowsQuarantined int64            `json:"rows_quarantined"`
	RowsSkipped     int64            `json:"rows_skipped"`
	SkippedBy       map[string]int64 `json:"skipped_by,omitempty"`
	QuarantinedBy   map[string]int64 `json:"quarantined_by,omitempty"`
	HeldByOwner     map[string]int64 `json:"held_by_owner,omitempty"`
}

// ManifestSchema is the schema a shard staged its files under.
type ManifestSchema struct {
	Columns  []string `json:"columns"`
	Types    []string `json:"types"`
	Required []bool   `json:"required"`
}

// ShardWriteID is the write id of an attempt of a shard of a load.
func ShardWriteID(loadID, shard, attempt string) string {
	a := sha256.Sum256([]byte("lima-load\x00" + loadID))
	b := sha256.Sum256([]byte("lima-shard\x00" + shard + "\x00" + attempt))
	var u uuid.UUID
	copy(u[:8], a[:8])
	copy(u[8:], b[:8])
	u[6] = u[6]&0x0f | 0x80 // version 8: custom
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

// LoadMarker is the part of every write id of a load's shards that
// derives from the load id alone ("xxxxxxxx-xxxx-8xxx").
func LoadMarker(loadID string) string { return ShardWriteID(loadID, "", "")[:18] }

// WorkerOptions of a worker process.
type WorkerOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	// Log receives progress lines (stderr); never stdout.
	Log io.Writer
}

// Worker reads shard lines from in and prints one manifest line per line
// to out. It returns an error only when in cannot be read (or out cannot
// be written): a failed shard is a manifest with ok false.
func Worker(ctx context.Context, o WorkerOptions, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		m := workShard(ctx, o, line)
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("write the manifest of shard %s: %w", m.Shard, err)
		}
		if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
			return fmt.Errorf("write the manifest of shard %s: %w", m.Shard, err)
		}
		if o.Log != nil {
			state := "staged"
			if !m.OK {
				state = "failed: " + m.Error
			}
			fmt.Fprintf(o.Log, "lima: worker: table %s shard %s attempt %s: %s (%d read, %d loaded in %d files, %d held back, %d skipped)\n",
				m.Table, m.Shard, m.Attempt, state, m.Accounting.RowsRead, m.Accounting.RowsLoaded, len(m.DataFiles), m.Accounting.RowsQuarantined, m.Accounting.RowsSkipped)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the shards from stdin: %w", err)
	}
	return nil
}

// RefuseShards answers every line of in with a failed manifest carrying
// err (an unapproved plan: no shard is worked), and reports whether in
// could be read.
func RefuseShards(in io.Reader, out io.Writer, refusal error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var s Shard
		_ = json.Unmarshal([]byte(line), &s)
		b, _ := json.Marshal(failedManifest(s, "", refusal))
		if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
			return err
		}
	}
	return sc.Err()
}

func failedManifest(s Shard, planHash string, err error) Manifest {
	m := Manifest{Version: ManifestVersion, LoadID: s.LoadID, Table: s.Table, Shard: s.Shard, Attempt: s.Attempt, Status: run.StatusFailed,
		PlanHash: planHash, Error: redact.Scrub(err.Error()), DataFiles: []sink.DataFile{}, Exceptions: []run.Exception{}}
	for _, in := range s.Inputs {
		m.Inputs = append(m.Inputs, redact.Scrub(in.URI)) // a refused input may carry anything
	}
	return m
}

// workShard stages one shard and describes it.
func workShard(ctx context.Context, o WorkerOptions, line string) Manifest {
	var s Shard
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return failedManifest(s, o.Plan.Hash(), fmt.Errorf("%w: a shard line is a JSON object {load_id, table, shard, attempt, inputs:[{uri}]}: %w", ErrUsage, err))
	}
	if s.Attempt == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		s.Attempt = "w-" + hex.EncodeToString(b[:])
	}
	m, err := stageShard(ctx, o, s)
	if err != nil {
		return failedManifest(s, o.Plan.Hash(), err)
	}
	return m
}

func stageShard(ctx context.Context, o WorkerOptions, s Shard) (Manifest, error) {
	p := o.Plan
	if s.LoadID == "" || s.Shard == "" || s.Table == "" {
		return Manifest{}, fmt.Errorf("%w: a shard needs load_id, table and shard", ErrUsage)
	}
	t := p.Tables[s.Table]
	if t == nil {
		return Manifest{}, fmt.Errorf("%w: no table %q in the plan (tables: %s)", ErrUsage, s.Table, strings.Join(p.TableNames(), ", "))
	}
	if err := run.ShardSupported(p, t); err != nil {
		return Manifest{}, err
	}
	if len(s.Inputs) == 0 {
		return Manifest{}, fmt.Errorf("%w: shard %s has no inputs", ErrUsage, s.Shard)
	}
	var names []string
	for _, in := range s.Inputs {
		if len(in.Range) > 0 {
			return Manifest{}, fmt.Errorf("%w: input %s: ranges are not supported; give whole files or objects", ErrUsage, in.URI)
		}
		name, err := unitName(o.Workspace, p.Sources[t.Source.Name], in.URI)
		if err != nil {
			return Manifest{}, err
		}
		if slices.Contains(names, name) {
			return Manifest{}, fmt.Errorf("%w: input %s is given twice", ErrUsage, in.URI)
		}
		names = append(names, name)
	}
	writeID := ShardWriteID(s.LoadID, s.Shard, s.Attempt)
	// No inventory: a worker writes nothing to the workspace's state store.
	sk, err := OpenPlanSink(ctx, o.Workspace, p, func(io *icesink.Options) { io.WriteID = writeID })
	if err != nil {
		return Manifest{}, fmt.Errorf("open the catalog: %w", err)
	}
	defer sk.Close()
	q := &run.CollectQuarantine{}
	// raw/: each shard lands its files in its own folder, <load id>-shard-<shard>
	// (the landing's manifest is per folder); a retried or speculative
	// attempt lands the same bytes under the same names again.
	var land func(ctx context.Context, table, loadID string, src source.Source, units []source.Unit) error
	if rl, err := rawLander(ctx, o.Workspace, p, time.Now()); err != nil {
		return Manifest{}, fmt.Errorf("%w: raw/ landing: %w", ErrPrecondition, err)
	} else if rl != nil {
		land = func(ctx context.Context, table, loadID string, src source.Source, units []source.Unit) error {
			return rl(ctx, table, loadID+"-shard-"+s.Shard, src, units)
		}
	}
	res, err := run.Load(ctx, run.Options{Workspace: o.Workspace.Dir, Plan: p, Sink: sk, Quarantine: q, Tables: []string{s.Table}, Land: land,
		RunID: "shard-" + s.Shard + "-" + s.Attempt, LoadID: s.LoadID, StageOnly: true, OnlyFiles: map[string][]string{s.Table: names}})
	if err != nil {
		return Manifest{}, err
	}
	if len(res.Tables) != 1 {
		return Manifest{}, fmt.Errorf("shard %s: the load ran %d tables", s.Shard, len(res.Tables))
	}
	tr := res.Tables[0]
	discard := func() {
		if tr.Staged != nil {
			_ = tr.Staged.Discard(context.WithoutCancel(ctx))
		}
	}
	if tr.Err != nil {
		discard()
		return Manifest{}, tr.Err
	}
	m := Manifest{Version: ManifestVersion, LoadID: s.LoadID, Table: s.Table, Shard: s.Shard, Attempt: s.Attempt, OK: true, Status: tr.Status,
		PlanHash: p.Hash(), WriteID: writeID, DataFiles: []sink.DataFile{}, Exceptions: q.Held, Files: tr.Files, Findings: tr.Findings,
		Accounting: Accounting{RowsRead: tr.RowsRead, RowsLoaded: tr.RowsLoaded, RowsQuarantined: tr.RowsQuarantined, RowsSkipped: tr.RowsSkipped,
			SkippedBy: tr.SkippedBy, QuarantinedBy: tr.QuarantinedBy, HeldByOwner: tr.HeldByOwner},
		ControlTotals: run.TotalsOf(tr.Source), Casting: tr.Casting}
	if m.Exceptions == nil {
		m.Exceptions = []run.Exception{}
	}
	for _, in := range s.Inputs {
		m.Inputs = append(m.Inputs, in.URI)
	}
	m.Schema.Columns, m.Schema.Required = tr.Columns, tr.Required
	for _, typ := range tr.Types {
		m.Schema.Types = append(m.Schema.Types, typ.String())
	}
	m.Normalizations = tr.Normalizations
	if tr.Status == run.StatusAlreadyLoaded {
		return m, nil // the load is in the table: nothing staged
	}
	// Every input is a file of the table (its globs select it) and was read.
	read := map[string]bool{}
	for _, f := range tr.Files {
		read[f.Name] = true
	}
	for i, n := range names {
		if !read[n] {
			discard()
			return Manifest{}, fmt.Errorf("%w: input %s is not a file of table %s (its source's files: %s)", ErrUsage, s.Inputs[i].URI, s.Table, strings.Join(t.Source.Files, ", "))
		}
	}
	if fl, ok := tr.Staged.(sink.FileLister); ok {
		m.DataFiles = fl.DataFiles()
	} else if tr.Staged != nil && tr.Staged.Files() > 0 {
		discard()
		return Manifest{}, fmt.Errorf("%w: the sink cannot list its staged files", run.ErrShardUnsupported)
	}
	return m, nil
}

// unitName is the name the table's source gives the input: its path below
// the source's folder or prefix, as the source lists it.
func unitName(ws Workspace, src *plan.Source, uri string) (string, error) {
	if s3x.IsURI(src.Path) {
		root := strings.TrimSuffix(src.Path, "/") + "/"
		if !strings.HasPrefix(uri, root) || len(uri) == len(root) {
			return "", fmt.Errorf("%w: input %s is not below the source %s", ErrUsage, uri, src.Path)
		}
		return norm.NFC.String(uri[len(root):]), nil
	}
	if !fileuri.Is(uri) {
		return "", fmt.Errorf("%w: input %s: a file of a local source is a file:// URI", ErrUsage, uri)
	}
	path, err := fileuri.ToPath(uri)
	if err != nil {
		return "", fmt.Errorf("%w: input %s: %w", ErrUsage, uri, err)
	}
	root := src.Path
	if !filepath.IsAbs(root) {
		root = filepath.Join(ws.Dir, root)
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(rootAbs, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: input %s is not below the source folder %s", ErrUsage, uri, rootAbs)
	}
	return norm.NFC.String(filepath.ToSlash(rel)), nil
}

// CommitOptions of a distributed load's commit.
type CommitOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	LoadID    string
	// Expect are the shard lines the driver gave the workers.
	Expect io.Reader
	// Manifests are the workers' outputs, read in order.
	Manifests []io.Reader
	Progress  *run.Progress
	// SinkOptions lets tests inject faults into the sink.
	SinkOptions func(*icesink.Options)
}

// CommitOutcome is a commit's outcome: the run's, and the attempts chosen
// and the files of the others removed.
type CommitOutcome struct {
	*Outcome
	Chosen  map[string]string // shard → attempt
	Removed int
}

// ErrShards marks a commit refused for its shards: one is missing, one
// does not balance, one was staged under another plan. Nothing committed.
var ErrShards = errors.New("the shards of the load cannot be committed")

// Commit commits a distributed load (see the top of this file).
func Commit(ctx context.Context, o CommitOptions) (*CommitOutcome, error) {
	if err := CheckApproval(o.Plan); err != nil {
		return nil, err
	}
	if o.LoadID == "" {
		return nil, fmt.Errorf("%w: commit needs --load-id", ErrUsage)
	}
	table, expect, err := readExpect(o.Expect, o.LoadID)
	if err != nil {
		return nil, err
	}
	t := o.Plan.Tables[table]
	if t == nil {
		return nil, fmt.Errorf("%w: no table %q in the plan", ErrUsage, table)
	}
	if err := run.ShardSupported(o.Plan, t); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	byShard, err := readManifests(o.Manifests, o.LoadID, table, o.Plan.Hash(), expect)
	if err != nil {
		return nil, err
	}
	if err := checkPreconditions(ctx, RunOptions{Workspace: o.Workspace, Plan: o.Plan, Tables: []string{table}}); err != nil {
		return nil, err
	}
	sess, err := openSession(ctx, o.Workspace, o.Plan, "the commit", 0, o.SinkOptions)
	if err != nil {
		return nil, err
	}
	defer sess.close(ctx)
	parts, chosen, keep, err := chooseAttempts(ctx, sess.sink, o.Plan, table, expect, byShard)
	if err != nil {
		return nil, err
	}
	res := &run.Result{RunID: sess.runID, Started: sess.started}
	o.Progress.Queue(table)
	tr, err := run.CommitShards(ctx, run.Options{Workspace: o.Workspace.Dir, Plan: o.Plan, Sink: sess.sink, Quarantine: &run.LedgerQuarantine{Store: sess.store},
		RunID: sess.runID, LoadID: o.LoadID, Progress: o.Progress}, table, parts)
	if err != nil {
		return nil, err
	}
	res.Tables = append(res.Tables, tr)
	out := &CommitOutcome{Chosen: chosen}
	// The losing and killed attempts' files go once the load is in the
	// table (committed now or before); a failed commit keeps every file.
	if tr.Err == nil && (tr.Status == run.StatusLoaded || tr.Status == run.StatusAlreadyLoaded) {
		if rm, ok := sess.sink.(sink.LoadFileRemover); ok {
			n, err := rm.RemoveLoadFiles(ctx, o.Plan.Namespace()+"."+table, LoadMarker(o.LoadID), keep)
			out.Removed = n
			if err != nil {
				tr.Err = fmt.Errorf("committed, but removing the files of the losing attempts failed: %w", err)
			}
		}
	}
	ro := RunOptions{Workspace: o.Workspace, Plan: o.Plan, Tables: []string{table}, Progress: o.Progress}
	oc, err := finishRun(ctx, ro, sess, res)
	if err != nil {
		return nil, err
	}
	out.Outcome = oc
	if out.Removed > 0 {
		oc.Report.Warnings = append(oc.Report.Warnings, fmt.Sprintf("%d data file(s) of losing or interrupted attempts of load %s were removed", out.Removed, o.LoadID))
	}
	return out, nil
}

// readExpect reads the expected shards: one table, one load, each shard
// once.
func readExpect(r io.Reader, loadID string) (string, map[string]Shard, error) {
	if r == nil {
		return "", nil, fmt.Errorf("%w: commit needs --expect SHARDS.jsonl", ErrUsage)
	}
	out := map[string]Shard{}
	table := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var s Shard
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return "", nil, fmt.Errorf("%w: --expect line %d: %w", ErrUsage, n, err)
		}
		switch {
		case s.LoadID != loadID:
			return "", nil, fmt.Errorf("%w: --expect line %d is of load %q, not %q", ErrUsage, n, s.LoadID, loadID)
		case s.Shard == "" || s.Table == "":
			return "", nil, fmt.Errorf("%w: --expect line %d has no shard or table", ErrUsage, n)
		case table != "" && s.Table != table:
			return "", nil, fmt.Errorf("%w: --expect names tables %s and %s; one commit is one table's load", ErrUsage, table, s.Table)
		}
		if _, dup := out[s.Shard]; dup {
			return "", nil, fmt.Errorf("%w: --expect names shard %s twice", ErrUsage, s.Shard)
		}
		table = s.Table
		out[s.Shard] = s
	}
	if err := sc.Err(); err != nil {
		return "", nil, fmt.Errorf("read --expect: %w", err)
	}
	if len(out) == 0 {
		return "", nil, fmt.Errorf("%w: --expect names no shard", ErrUsage)
	}
	return table, out, nil
}

// readManifests collects the manifests of the load by shard; every
// successful one must balance, come from the approved plan and name its
// expected shard's inputs, or nothing is committed.
func readManifests(rs []io.Reader, loadID, table, planHash string, expect map[string]Shard) (map[string][]Manifest, error) {
	out := map[string][]Manifest{}
	for i, r := range rs {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 256<<20)
		n := 0
		for sc.Scan() {
			n++
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var m Manifest
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				return nil, fmt.Errorf("%w: manifests %d, line %d is not a manifest: %w", ErrShards, i+1, n, err)
			}
			if m.LoadID != loadID {
				continue // another load's
			}
			if m.Version != ManifestVersion {
				return nil, fmt.Errorf("%w: shard %s attempt %s: manifest version %d, this Lima reads %d", ErrShards, m.Shard, m.Attempt, m.Version, ManifestVersion)
			}
			e, ok := expect[m.Shard]
			if !ok || m.Table != table {
				return nil, fmt.Errorf("%w: a manifest of shard %s (table %s) is not an expected shard of load %s", ErrShards, m.Shard, m.Table, loadID)
			}
			if !m.OK {
				out[m.Shard] = append(out[m.Shard], m)
				continue
			}
			if m.PlanHash != planHash {
				return nil, fmt.Errorf("%w: shard %s attempt %s was staged under plan %.12s, not the approved %.12s; nothing committed", ErrShards, m.Shard, m.Attempt, m.PlanHash, planHash)
			}
			var want []string
			for _, in := range e.Inputs {
				want = append(want, in.URI)
			}
			if !slices.Equal(m.Inputs, want) {
				return nil, fmt.Errorf("%w: shard %s attempt %s read %v, not the expected %v; nothing committed", ErrShards, m.Shard, m.Attempt, m.Inputs, want)
			}
			if m.WriteID != ShardWriteID(loadID, m.Shard, m.Attempt) {
				return nil, fmt.Errorf("%w: shard %s attempt %s: write id %s is not the attempt's", ErrShards, m.Shard, m.Attempt, m.WriteID)
			}
			for _, f := range m.DataFiles {
				if !strings.Contains(filepath.Base(f.Path), m.WriteID) {
					return nil, fmt.Errorf("%w: shard %s attempt %s: data file %s is not named with its write id", ErrShards, m.Shard, m.Attempt, f.Path)
				}
			}
			if err := partOf(m).Balanced(); err != nil {
				return nil, fmt.Errorf("%w: %w; nothing committed", ErrShards, err)
			}
			out[m.Shard] = append(out[m.Shard], m)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read manifests %d: %w", i+1, err)
		}
	}
	return out, nil
}

// chooseAttempts picks, for every expected shard, the first successful
// attempt (in attempt order) whose data files all exist with the stated
// sizes; a shard without one refuses the commit. keep are the chosen
// attempts' write ids.
func chooseAttempts(ctx context.Context, sk sink.Sink, p *plan.Plan, table string, expect map[string]Shard, byShard map[string][]Manifest) ([]run.Part, map[string]string, []string, error) {
	var checker sink.Adopter
	var tbl sink.Table
	shards := slices.Sorted(maps.Keys(expect))
	chosen := map[string]string{}
	var parts []run.Part
	var keep, missing []string
	for _, shard := range shards {
		ms := byShard[shard]
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].Attempt < ms[j].Attempt })
		var why []string
		found := false
		for _, m := range ms {
			if !m.OK {
				why = append(why, fmt.Sprintf("attempt %s failed: %s", m.Attempt, m.Error))
				continue
			}
			if len(m.DataFiles) > 0 {
				if tbl == nil {
					var err error
					if tbl, err = openShardTable(ctx, sk, p, table, m); err != nil {
						return nil, nil, nil, err
					}
					var ok bool
					if checker, ok = tbl.(sink.Adopter); !ok {
						return nil, nil, nil, fmt.Errorf("%w: the sink of %s cannot adopt staged files", run.ErrShardUnsupported, table)
					}
				}
				if _, err := checker.Adopt(ctx, m.DataFiles); err != nil {
					why = append(why, fmt.Sprintf("attempt %s: %s", m.Attempt, err))
					continue
				}
			}
			chosen[shard] = m.Attempt
			keep = append(keep, m.WriteID)
			parts = append(parts, partOf(m))
			found = true
			break
		}
		if !found {
			d := "no manifest"
			if len(why) > 0 {
				d = strings.Join(why, "; ")
			}
			missing = append(missing, shard+" ("+d+")")
		}
	}
	if len(missing) > 0 {
		return nil, nil, nil, fmt.Errorf("%w: %d of %d expected shard(s) have no usable attempt: %s; nothing committed",
			ErrShards, len(missing), len(expect), strings.Join(missing, ", "))
	}
	return parts, chosen, keep, nil
}

// openShardTable opens the table under the schema a shard staged with.
func openShardTable(ctx context.Context, sk sink.Sink, p *plan.Plan, table string, m Manifest) (sink.Table, error) {
	spec := sink.TableSpec{Name: table, Namespace: p.Namespace(), Required: m.Schema.Required}
	for i, c := range m.Schema.Columns {
		if i >= len(m.Schema.Types) {
			return nil, fmt.Errorf("%w: shard %s: %d columns, %d types", ErrShards, m.Shard, len(m.Schema.Columns), len(m.Schema.Types))
		}
		typ, err := plan.ParseType(m.Schema.Types[i])
		if err != nil {
			return nil, err
		}
		pc := plan.Column{Name: c, Type: m.Schema.Types[i]}
		if col, _ := p.Tables[table].Column(c); col != nil {
			pc = *col
			pc.Type = m.Schema.Types[i]
		}
		spec.Columns, spec.Types = append(spec.Columns, pc), append(spec.Types, typ)
	}
	for _, ps := range p.Tables[table].Partition {
		pf, err := plan.ParsePartition(ps)
		if err != nil {
			return nil, err
		}
		spec.Partition = append(spec.Partition, pf)
	}
	return sk.OpenTable(ctx, spec)
}

// partOf is a manifest as the engine's commit takes it.
func partOf(m Manifest) run.Part {
	p := run.Part{Shard: m.Shard, Attempt: m.Attempt, Files: m.DataFiles,
		RowsRead: m.Accounting.RowsRead, RowsLoaded: m.Accounting.RowsLoaded, RowsHeld: m.Accounting.RowsQuarantined, RowsSkipped: m.Accounting.RowsSkipped,
		SkippedBy: m.Accounting.SkippedBy, HeldBy: m.Accounting.QuarantinedBy, HeldByOwner: m.Accounting.HeldByOwner,
		Inputs: m.Files, Exceptions: m.Exceptions, Totals: m.ControlTotals, Findings: m.Findings,
		Columns: m.Schema.Columns, Types: m.Schema.Types, Required: m.Schema.Required, Normalizations: m.Normalizations, Casting: m.Casting}
	return p
}

// OpenLines opens JSON lines the commit reads (--expect, --manifests) on
// S3: one object, or — when the URI ends with "/" — every object below the
// prefix in key order (as Spark's saveAsTextFile writes part-00000…),
// skipping names that start with "_" or "." (_SUCCESS). Objects are read
// one after the other, each ending a line.
func OpenLines(ctx context.Context, uri string) (io.ReadCloser, error) {
	u, err := s3x.ParseURI(uri)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	cl, err := s3x.New(ctx, s3x.FromEnv())
	if err != nil {
		return nil, err
	}
	keys := []string{u.Key}
	if u.Key == "" || strings.HasSuffix(u.Key, "/") {
		objs, err := cl.List(ctx, u.Bucket, u.Key)
		if err != nil {
			return nil, err
		}
		keys = keys[:0]
		for _, o := range objs {
			base := o.Key[strings.LastIndex(o.Key, "/")+1:]
			if base == "" || strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".") {
				continue
			}
			keys = append(keys, o.Key)
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("%w: no object below %s", ErrUsage, uri)
		}
	}
	return &objectLines{ctx: ctx, cl: cl, bucket: u.Bucket, keys: keys}, nil
}

// objectLines reads objects one after the other, a newline after each.
type objectLines struct {
	ctx    context.Context
	cl     *s3x.Client
	bucket string
	keys   []string
	cur    io.ReadCloser
	sep    bool
}

func (o *objectLines) Read(p []byte) (int, error) {
	for {
		if o.sep {
			if len(p) == 0 {
				return 0, nil
			}
			o.sep = false
			p[0] = '\n'
			return 1, nil
		}
		if o.cur == nil {
			if len(o.keys) == 0 {
				return 0, io.EOF
			}
			body, err := o.cl.Get(o.ctx, o.bucket, o.keys[0])
			if err != nil {
				return 0, fmt.Errorf("read s3://%s/%s: %w", o.bucket, o.keys[0], err)
			}
			o.cur, o.keys = body, o.keys[1:]
		}
		n, err := o.cur.Read(p)
		if err == io.EOF {
			o.cur.Close()
			o.cur, o.sep = nil, true
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (o *objectLines) Close() error {
	if o.cur != nil {
		return o.cur.Close()
	}
	return nil
}
