package flow

// Micro-batch: `lima-tui run --watch` polls the tables' file sources (a
// local folder, or an S3 prefix: see watch_s3.go) for new files and loads
// them in micro-batches, one commit per table per batch. A file is
// identified by its name, size and sha256 (an S3 object by key, size and
// ETag), so it loads once: the identities of the files a batch loaded are
// committed with its rows (run.PropFiles), and the watcher reads them back
// when it starts and after every batch. A file rewritten with other bytes
// under the same name is a new version and loads (appended).
// A file is taken once two polls saw it with the same size and
// modification time (and ETag; a file still being written is left for
// later).
// Batches: every interval the files that are ready are loaded, at most
// BatchRows lines per batch (a bigger backlog becomes several batches, a
// file is never split). On cancel (SIGINT/SIGTERM) the watcher takes the
// files unchanged since its previous poll, commits everything it took, then
// stops.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/internal/s3x"
	"github.com/lima-lake/lima/reports"
)

// WatchedFile is a file a Lister found.
type WatchedFile struct {
	Name    string
	Size    int64
	ModTime time.Time
	// Checksum, when the lister knows it without reading (an S3 object's
	// "etag:…"), is the content part of the file's identity; empty means
	// the watcher reads the file for its sha256.
	Checksum string
}

// Lister is what the watcher polls: a local folder (DirLister) or an S3
// prefix (S3Lister).
type Lister interface {
	List(ctx context.Context, globs []string) ([]WatchedFile, error)
	// Open reads a listed file (for its checksum).
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

// DirLister lists a local folder through the files source, so names are
// the ones the load uses (relative to Root, NFC).
type DirLister struct {
	Root  string
	paths map[string]string
}

// List lists the files matching globs.
func (d *DirLister) List(ctx context.Context, globs []string) ([]WatchedFile, error) {
	units, err := files.New(d.Root).List(ctx, globs)
	if err != nil {
		return nil, err
	}
	if d.paths == nil {
		d.paths = map[string]string{}
	}
	out := make([]WatchedFile, 0, len(units))
	for _, u := range units {
		d.paths[u.Name] = u.Path
		out = append(out, WatchedFile{Name: u.Name, Size: u.Size, ModTime: time.Unix(0, u.ModTime)})
	}
	return out, nil
}

// Open opens a listed file.
func (d *DirLister) Open(_ context.Context, name string) (io.ReadCloser, error) {
	p, ok := d.paths[name]
	if !ok {
		return nil, fmt.Errorf("%s was not listed", name)
	}
	return os.Open(run.UnitFile(p))
}

// WatchOptions configure Watch.
type WatchOptions struct {
	// Run carries the workspace, plan, tables, Force and LockWait of every
	// micro-batch.
	Run RunOptions
	// Interval between polls (and commits); default 10s.
	Interval time.Duration
	// BatchRows caps the lines of one micro-batch (0: no cap).
	BatchRows int64
	// CompactEvery compacts the loaded tables after every N micro-batches
	// (0: never).
	CompactEvery int
	// Lister returns the lister of a file source (default: DefaultLister:
	// S3Lister for an s3:// path, DirLister otherwise).
	Lister func(src *plan.Source, root string) Lister
	// OnBatch is called after every micro-batch.
	OnBatch func(*Outcome)
	// OnCompact is called after every compaction.
	OnCompact func([]CompactResult)
	// OnError is called when a poll or a batch fails; the watcher goes on.
	OnError func(error)
	// OnNotice is called with what the watcher did before its first poll:
	// an interrupted run it recorded, staged files it removed.
	OnNotice func(string)
}

// WatchSummary is what a watch did.
type WatchSummary struct {
	Batches int
	Files   int
	Rows    int64
	// LatencyMS is each loaded file's latency, first seen to visible, in
	// load order (reports.Latency summarises it).
	LatencyMS []int64
}

type pendingFile struct {
	table, name string
	size        int64
	sha         string
	lines       int64
	firstSeen   time.Time
}

type watchedTable struct {
	name   string
	globs  []string
	lister Lister
	cdc    bool
	// obs is the last observation of each name; sums caches checksums by
	// name, size and modification time.
	obs  map[string]WatchedFile
	seen map[string]bool // name\x00size\x00sha256
	// sums caches the sha256 and lines of the S3 objects of a
	// change-capture table by key, size, modification time and ETag, so
	// an object version is read once per watcher, not at every poll.
	sums map[string]fileSum
}

type fileSum struct {
	sha   string
	lines int64
}

func fileID(name string, size int64, sha string) string {
	return fmt.Sprintf("%s\x00%d\x00%s", name, size, sha)
}

// Watch polls and loads until ctx is cancelled; then it commits the files
// it has taken and returns.
func Watch(ctx context.Context, o WatchOptions) (*WatchSummary, error) {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	p := o.Run.Plan
	ws := o.Run.Workspace
	if o.Lister == nil {
		o.Lister = DefaultLister
	}
	var tables []*watchedTable
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if t.Type == plan.TableMart || t.Source == nil || (len(o.Run.Tables) > 0 && !slices.Contains(o.Run.Tables, name)) {
			continue
		}
		src := p.Sources[t.Source.Name]
		if src == nil || src.Kind != plan.SourceFiles {
			continue
		}
		root := src.Path
		if !s3x.IsURI(root) && !filepath.IsAbs(root) {
			root = filepath.Join(ws.Dir, root)
		}
		tables = append(tables, &watchedTable{name: name, globs: t.Source.Files, lister: o.Lister(src, root),
			cdc: t.Load.Mode == plan.ModeCDC, obs: map[string]WatchedFile{}, seen: map[string]bool{}, sums: map[string]fileSum{}})
	}
	if len(tables) == 0 {
		return nil, errors.New("watch: no table of the plan reads a files source")
	}
	// A watcher killed after a batch's commit left its exceptions pending,
	// its run "running" (and, killed before, staged files): settled now,
	// not only once a new file comes and a batch runs.
	// Stopped meanwhile (SIGTERM at start): the final batch's run, if it
	// has files, recovers instead.
	rec, err := openRecovered(ctx, ws, p, "the watcher", o.Run.LockWait, NewRunID(time.Now()), o.Run.SinkOptions)
	switch {
	case err == nil:
		if o.OnNotice != nil {
			for _, n := range rec.recovered() {
				o.OnNotice(n)
			}
		}
		rec.close(ctx)
	case ctx.Err() == nil:
		return nil, err
	}
	if err := loadSeen(ctx, ws, p, tables); err != nil {
		return nil, err
	}
	sum := &WatchSummary{}
	firstSeen := map[string]time.Time{} // table\x00name → first time listed
	var pending []pendingFile
	report := func(err error) {
		if err != nil && o.OnError != nil {
			o.OnError(err)
		}
	}
	poll := func(ctx context.Context) {
		now := time.Now().UTC()
		for _, wt := range tables {
			list, err := wt.lister.List(ctx, wt.globs)
			if ctx.Err() != nil {
				return // stopping: the final look follows
			}
			if err != nil {
				report(fmt.Errorf("watch %s: list: %w", wt.name, err))
				continue
			}
			for _, f := range list {
				k := wt.name + "\x00" + f.Name
				if _, ok := firstSeen[k]; !ok {
					firstSeen[k] = now
				}
				prev, ok := wt.obs[f.Name]
				wt.obs[f.Name] = f
				if !ok || prev.Size != f.Size || !prev.ModTime.Equal(f.ModTime) || prev.Checksum != f.Checksum {
					continue // new or still changing: take it on a later poll
				}
				if slices.ContainsFunc(pending, func(pf pendingFile) bool { return pf.table == wt.name && pf.name == f.Name && pf.size == f.Size }) {
					continue
				}
				sha, lines, err := f.Checksum, int64(0), error(nil)
				switch {
				case sha == "":
					sha, lines, err = checksum(ctx, wt.lister, f.Name)
				case wt.cdc:
					// Change capture identifies a file by name and the
					// sha256 of its bytes (run.PropCDCFiles records no
					// ETag), so an S3 object is read for its sha256: the
					// identity the commits record is the one compared.
					ck := fmt.Sprintf("%s\x00%d\x00%d\x00%s", f.Name, f.Size, f.ModTime.UnixNano(), f.Checksum)
					if c, ok := wt.sums[ck]; ok {
						sha, lines = c.sha, c.lines
					} else if sha, lines, err = checksum(ctx, wt.lister, f.Name); err == nil {
						wt.sums[ck] = fileSum{sha, lines}
					}
				case o.BatchRows > 0: // known identity; read only to count lines
					_, lines, err = checksum(ctx, wt.lister, f.Name)
				}
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					report(fmt.Errorf("watch %s: %s: %w", wt.name, f.Name, err))
					continue
				}
				if wt.seen[fileID(f.Name, f.Size, sha)] {
					continue
				}
				pending = append(pending, pendingFile{table: wt.name, name: f.Name, size: f.Size, sha: sha, lines: lines, firstSeen: firstSeen[k]})
			}
		}
	}
	compactDue := 0
	flush := func(runCtx context.Context) {
		for len(pending) > 0 {
			sort.SliceStable(pending, func(i, j int) bool { return pending[i].firstSeen.Before(pending[j].firstSeen) })
			var batch []pendingFile
			var lines int64
			for _, pf := range pending {
				if len(batch) > 0 && o.BatchRows > 0 && lines+pf.lines > o.BatchRows {
					break
				}
				batch = append(batch, pf)
				lines += pf.lines
			}
			ro := o.Run
			ro.AppendOnly = true
			ro.OnlyFiles = map[string][]string{}
			ro.FirstSeen = map[string]time.Time{}
			var names []string
			for _, pf := range batch {
				if !slices.Contains(names, pf.table) {
					names = append(names, pf.table)
				}
				ro.OnlyFiles[pf.table] = append(ro.OnlyFiles[pf.table], pf.name)
				ro.FirstSeen[pf.name] = pf.firstSeen
			}
			// A change-capture run accounts for every new change file it
			// lists, not only the batch's (its own identities keep each
			// file once): every file the watcher has seen gets a latency.
			for _, wt := range tables {
				if wt.cdc && slices.Contains(names, wt.name) {
					for k, t := range firstSeen {
						if tn, fn, _ := strings.Cut(k, "\x00"); tn == wt.name {
							if _, ok := ro.FirstSeen[fn]; !ok {
								ro.FirstSeen[fn] = t
							}
						}
					}
				}
			}
			ro.Tables = names
			out, err := Run(runCtx, ro)
			if err != nil {
				report(fmt.Errorf("watch: micro-batch: %w", err))
				return // the files stay pending; the next interval retries
			}
			sum.Batches++
			// What the batch committed is what it loaded (a file may have
			// been rewritten since it was checksummed): seen from the commits.
			report(markCommitted(runCtx, ws, p, tables, out.Result))
			done := map[string]bool{}
			cdcDone := map[string]bool{}
			for _, tr := range out.Result.Tables {
				if tr.Status != run.StatusFailed {
					done[tr.Name] = true
					sum.Rows += tr.RowsLoaded
					for _, wt := range tables {
						if wt.name == tr.Name && wt.cdc {
							// The files the run accounted for: applied or
							// held back as seen twice.
							cdcDone[wt.name] = true
							for _, f := range tr.Files {
								if f.Status != cdcAlreadyApplied {
									sum.Files++
								}
							}
						}
					}
				} else {
					report(fmt.Errorf("watch: %s: %v", tr.Name, tr.Err))
				}
			}
			var rest []pendingFile
			for _, pf := range pending {
				inBatch := slices.ContainsFunc(batch, func(b pendingFile) bool { return b == pf })
				if inBatch && done[pf.table] {
					for _, wt := range tables {
						if wt.name == pf.table {
							wt.seen[fileID(pf.name, pf.size, pf.sha)] = true
						}
					}
					if !cdcDone[pf.table] {
						sum.Files++
					}
					continue
				}
				if slices.ContainsFunc(tables, func(wt *watchedTable) bool {
					return wt.name == pf.table && wt.cdc && wt.seen[fileID(pf.name, pf.size, pf.sha)]
				}) {
					continue // applied by a change-capture run of another batch
				}
				rest = append(rest, pf)
			}
			if w := out.Report.Watch; w != nil {
				for _, f := range w.Files {
					sum.LatencyMS = append(sum.LatencyMS, f.LatencyMS)
				}
			}
			if o.OnBatch != nil {
				o.OnBatch(out)
			}
			if len(rest) == len(pending) {
				pending = rest
				return // nothing settled: retry at the next interval
			}
			pending = rest
			compactDue++
			if o.CompactEvery > 0 && compactDue >= o.CompactEvery {
				compactDue = 0
				res, err := Compact(runCtx, CompactOptions{Workspace: ws, Plan: p, Tables: names, LockWait: o.Run.LockWait})
				report(err)
				if o.OnCompact != nil && err == nil {
					o.OnCompact(res)
				}
			}
		}
	}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		poll(ctx)
		// A batch that started commits even when a signal arrives meanwhile.
		flush(context.WithoutCancel(ctx))
		select {
		case <-ctx.Done():
			// Stop: one last look takes the files unchanged since the
			// previous poll, and everything taken is committed.
			poll(context.WithoutCancel(ctx))
			flush(context.WithoutCancel(ctx))
			return sum, nil
		case <-tick.C:
		}
	}
}

// checksum reads a file once for its sha256 and its line count.
func checksum(ctx context.Context, l Lister, name string) (string, int64, error) {
	rc, err := l.Open(ctx, name)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	h := sha256.New()
	buf := make([]byte, 64<<10)
	var lines int64
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", 0, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), lines, nil
}

// loadSeen reads the identities of the files already loaded from the
// tables' commits (run.PropFiles; for change capture run.PropCDCFiles of
// the table and its history).
func loadSeen(ctx context.Context, ws Workspace, p *plan.Plan, tables []*watchedTable) error {
	sk, err := OpenSink(ctx, ws, p, nil)
	if err != nil {
		return err
	}
	defer sk.Close()
	for _, wt := range tables {
		names := []string{wt.name}
		if wt.cdc {
			names = append(names, plan.HistoryTable(wt.name))
		}
		for _, n := range names {
			tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), n})
			if err != nil {
				continue // not created yet
			}
			for _, s := range tbl.Metadata().Snapshots() {
				if s.Summary == nil {
					continue
				}
				for _, prop := range []string{run.PropFiles, run.PropCDCFiles} {
					fs, err := parseFiles(s.Summary.Properties[prop])
					if err != nil {
						return fmt.Errorf("watch: %s snapshot %d: %w", n, s.SnapshotID, err)
					}
					markFiles(wt, fs)
				}
			}
			// The files of snapshots lima-tui maintain expired.
			r, err := sink.ParseRetired(tbl.Properties()[sink.PropRetired])
			if err != nil {
				return fmt.Errorf("watch: %s: %w", n, err)
			}
			for _, prop := range []string{run.PropFiles, run.PropCDCFiles} {
				fs, err := parseFiles(r.List(prop))
				if err != nil {
					return fmt.Errorf("watch: %s: retired %s: %w", n, prop, err)
				}
				markFiles(wt, fs)
			}
		}
	}
	return nil
}

// watchReport is the latency of each file of a micro-batch: first seen to
// the end of its table's commit.
func watchReport(res *run.Result, firstSeen map[string]time.Time) *reports.WatchReport {
	w := &reports.WatchReport{}
	for _, tr := range res.Tables {
		if tr.Status != run.StatusLoaded && tr.Status != run.StatusAlreadyLoaded && tr.Status != run.StatusNothingToLoad {
			continue
		}
		for _, f := range tr.Files {
			if f.Status == cdcAlreadyApplied {
				continue // a change file an earlier batch applied
			}
			fs, ok := firstSeen[f.Name]
			if !ok {
				continue
			}
			lat := tr.Finished.Sub(fs).Milliseconds()
			w.Files = append(w.Files, reports.WatchFile{Table: tr.Name, Name: f.Name, FirstSeen: fs, VisibleAt: tr.Finished, LatencyMS: lat})
		}
	}
	w.Summarize()
	return w
}

// cdcAlreadyApplied is the status (run.FileResult) of a change file an
// earlier run applied.
const cdcAlreadyApplied = "already applied"

// DefaultLister is the lister of a file source: S3Lister for an s3://
// path, DirLister for a local folder.
func DefaultLister(src *plan.Source, root string) Lister {
	if src != nil && s3x.IsURI(src.Path) {
		return NewS3Lister(src.Path)
	}
	return &DirLister{Root: root}
}

// markFiles records the identities of committed files as seen.
func markFiles(wt *watchedTable, fs []run.ChangeFile) {
	for _, f := range fs {
		sum := f.SHA256
		if f.ETag != "" {
			sum = etagID(f.ETag)
		}
		wt.seen[fileID(f.Name, f.Size, sum)] = true
	}
}

// markCommitted records as seen the files of the snapshot every table of a
// micro-batch committed (its commit's properties, else the table's current
// snapshot).
func markCommitted(ctx context.Context, ws Workspace, p *plan.Plan, tables []*watchedTable, res *run.Result) (err error) {
	if res == nil {
		return nil
	}
	var sk interface {
		Catalog() catalog.Catalog
		Close() error
	}
	var cdc []*watchedTable
	defer func() {
		if len(cdc) > 0 && err == nil {
			err = loadSeen(ctx, ws, p, cdc)
		}
	}()
	for _, tr := range res.Tables {
		if tr.Status == run.StatusFailed {
			continue
		}
		if tr.Status != run.StatusLoaded && !slices.ContainsFunc(tables, func(wt *watchedTable) bool { return wt.name == tr.Name && wt.cdc }) {
			continue
		}
		for _, wt := range tables {
			if wt.name != tr.Name {
				continue
			}
			if wt.cdc {
				// A batch that changes no row commits to the history
				// alone: read both tables' commits back.
				cdc = append(cdc, wt)
				continue
			}
			if props := tr.Commit.Props; props[run.PropFiles] != "" || props[run.PropCDCFiles] != "" {
				for _, prop := range []string{run.PropFiles, run.PropCDCFiles} {
					fs, err := parseFiles(props[prop])
					if err != nil {
						return fmt.Errorf("watch: %s snapshot %d: %w", wt.name, tr.Commit.SnapshotID, err)
					}
					markFiles(wt, fs)
				}
				continue
			}
			if sk == nil {
				s, err := OpenSink(ctx, ws, p, nil)
				if err != nil {
					return err
				}
				defer s.Close()
				sk = s
			}
			tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), wt.name})
			if err != nil {
				return fmt.Errorf("watch: %s: %w", wt.name, err)
			}
			if s := tbl.CurrentSnapshot(); s != nil && s.Summary != nil {
				for _, prop := range []string{run.PropFiles, run.PropCDCFiles} {
					fs, err := parseFiles(s.Summary.Properties[prop])
					if err != nil {
						return fmt.Errorf("watch: %s snapshot %d: %w", wt.name, s.SnapshotID, err)
					}
					markFiles(wt, fs)
				}
			}
		}
	}
	return nil
}

func parseFiles(s string) ([]run.ChangeFile, error) {
	if s == "" {
		return nil, nil
	}
	var fs []run.ChangeFile
	err := json.Unmarshal([]byte(s), &fs)
	return fs, err
}
