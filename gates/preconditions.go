package gates

// Gate 2 — preconditions: everything a run needs is there, checked before
// anything is written to the lake. The checks run concurrently, each
// within a timeout, and each returns its evidence (what was checked, what
// it returned) and, on failure, the fix.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lima-lake/lima/engine/keyset"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/s3x"
)

// StoreState is what opening a catalog or state store returned.
type StoreState struct {
	// Evidence says what was opened and what it returned, without secrets.
	Evidence string
	// Missing: the store does not exist yet; the first run creates it at
	// Path, whose folder gate 2 then probes for writing.
	Missing bool
	Path    string
	// Catalog only: whether the plan's namespace exists, and its tables.
	NamespaceExists bool
	Tables          int
}

// Probe is what gate 2 needs from outside the gates package; flow fills it
// for a workspace (flow.ProbeFor). Zero hooks take the defaults.
type Probe struct {
	// Workspace is the folder holding platform.yaml; relative source paths
	// resolve against it.
	Workspace string
	// Warehouse is the lake: a folder or a file:// URI (other schemes are
	// not probed in this build).
	Warehouse string
	// StateDir is the workspace's .lima folder (state, catalog, quarantine).
	StateDir string
	// Catalog opens the plan's catalog read-only (SQLite) and reports the
	// namespace; not called for glue and rest catalogs.
	Catalog func(ctx context.Context) (StoreState, error)
	// State opens the state store (SQLite or PostgreSQL) and closes it.
	State func(ctx context.Context) (StoreState, error)
	// Owner reads the lake's ownership marker (flow/owner.go); nil: the
	// ownership is not checked.
	Owner func(ctx context.Context) (OwnerState, error)

	// Timeout bounds each check (default 15s).
	Timeout time.Duration
	// Now is the clock (default time.Now); Reference the date the clock
	// must be after (default BuildReference()).
	Now       func() time.Time
	Reference time.Time
	// FreeBytes returns the bytes available to Lima on the file system of
	// path and an id of that file system (default statfs).
	FreeBytes func(path string) (free uint64, fsid uint64, err error)
	// MemInfo is the meminfo file (default /proc/meminfo); MemFloor the
	// memory a run needs available to stream (default 256 MiB), to which
	// the key sets' budget is added (memoryNeed).
	MemInfo  string
	MemFloor uint64
}

// Defaults of the probe.
const (
	DefaultPreconditionTimeout = 15 * time.Second
	DefaultMemFloor            = 256 << 20
	// DiskFactor: a run needs this many times its input free on disk (raw
	// landing, data files, quarantine and their temporary copies).
	DiskFactor = 3
	// probeHeadBytes is how much of each file the readability check reads.
	probeHeadBytes = 1024
)

// referenceDate is the earliest date this build's clock check accepts when
// the binary carries no VCS time: the month this code was written.
var referenceDate = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// BuildReference is the build's reference date: the commit time stamped
// into the binary (vcs.time) or, without one, the month this code was
// written. A system clock before it cannot be right.
func BuildReference() time.Time {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil && t.After(referenceDate) {
					return t
				}
			}
		}
	}
	return referenceDate
}

type preCheck struct {
	name string
	run  func(ctx context.Context) []Finding
}

// Preconditions is gate 2: the sources are reachable and readable, the
// target is writable, the catalog and the state store open, the lake is
// this workspace's (or unclaimed), there is disk, memory and a plausible
// clock. Findings come in a fixed order: sources, tables, target, catalog
// and namespace, state store, lake ownership, disk, memory, clock, then
// AWS. A check that does not answer within the timeout fails.
func Preconditions(ctx context.Context, p *plan.Plan, pr Probe) []Finding {
	if pr.Timeout <= 0 {
		pr.Timeout = DefaultPreconditionTimeout
	}
	if pr.Now == nil {
		pr.Now = time.Now
	}
	if pr.Reference.IsZero() {
		pr.Reference = BuildReference()
	}
	if pr.FreeBytes == nil {
		pr.FreeBytes = statfsFree
	}
	if pr.MemInfo == "" {
		pr.MemInfo = "/proc/meminfo"
	}
	if pr.MemFloor == 0 {
		pr.MemFloor = DefaultMemFloor
	}
	var checks []preCheck
	for _, name := range p.SourceNames() {
		checks = append(checks, preCheck{"source " + name, func(ctx context.Context) []Finding { return []Finding{pr.checkSource(ctx, p, name)} }})
	}
	for _, name := range p.TableNames() {
		if t := p.Tables[name]; t != nil && t.Source != nil && !t.IsMart() {
			checks = append(checks, preCheck{"table " + name, func(ctx context.Context) []Finding { return []Finding{pr.checkTable(ctx, p, name)} }})
		}
	}
	checks = append(checks,
		preCheck{"target writable", func(ctx context.Context) []Finding { return []Finding{pr.checkTarget(ctx)} }},
		preCheck{"catalog", func(ctx context.Context) []Finding { return pr.checkCatalog(ctx, p) }},
		preCheck{"state store", func(ctx context.Context) []Finding { return []Finding{pr.checkState(ctx, p)} }},
		preCheck{"lake ownership", func(ctx context.Context) []Finding { return []Finding{pr.checkOwner(ctx, p)} }},
		preCheck{"disk space", func(ctx context.Context) []Finding { return []Finding{pr.checkDisk(ctx, p)} }},
		preCheck{"memory", func(ctx context.Context) []Finding { return []Finding{pr.checkMemory(ctx, p)} }},
		preCheck{"clock", func(context.Context) []Finding { return []Finding{pr.checkClock(p)} }},
	)
	if cloud, what := cloudTarget(p); cloud {
		checks = append(checks, preCheck{"AWS identity and region", func(ctx context.Context) []Finding {
			if s3x.IsURI(p.Warehouse()) {
				return pr.awsChecks(ctx, p) // gates/aws.go
			}
			return []Finding{{Name: "AWS identity and region", Status: Skip,
				Detail: what + ": caller identity (STS) and region are not checked in this build (the catalog check above reaches Glue or S3 Tables)"}}
		}})
	}
	checks = append(checks, pr.glueChecks(p)...) // preconditions_glue.go: tables with engine glue
	results := make([][]Finding, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() { results[i] = runWithTimeout(ctx, c, pr.Timeout) })
	}
	wg.Wait()
	var out []Finding
	for _, r := range results {
		out = append(out, r...)
	}
	return out
}

// runWithTimeout runs one check; one that does not return in time fails
// (its goroutine is left to finish on its own: a hung mount cannot hold
// the gate).
func runWithTimeout(ctx context.Context, c preCheck, timeout time.Duration) []Finding {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ch := make(chan []Finding, 1)
	go func() { ch <- c.run(cctx) }()
	select {
	case fs := <-ch:
		return fs
	case <-cctx.Done():
		if ctx.Err() != nil {
			return []Finding{{Name: c.name, Status: Fail, Detail: "not finished: the check was cancelled", Fix: "run lima-tui check again"}}
		}
		return []Finding{{Name: c.name, Status: Fail, Detail: fmt.Sprintf("no answer within %s", timeout),
			Fix: "check that the storage or server answers (a hung network mount, a firewall dropping packets), then run lima-tui check again, with a longer --timeout if it is just slow"}}
	}
}

// sourceRoot resolves a files source's folder against the workspace.
func (pr Probe) sourceRoot(s *plan.Source) string {
	if filepath.IsAbs(s.Path) {
		return s.Path
	}
	return filepath.Join(pr.Workspace, s.Path)
}

func (pr Probe) checkSource(ctx context.Context, p *plan.Plan, name string) Finding {
	f := Finding{Name: "source " + name}
	s := p.Sources[name]
	if s != nil && s.IsDatabase() {
		return pr.checkDatabaseSource(ctx, name, s)
	}
	if s.IsDynamoDB() {
		return pr.checkDynamoSource(ctx, name, s) // gates/dynamodb.go
	}
	if s == nil || s.Kind != plan.SourceFiles {
		f.Status, f.Detail = Skip, "only sources of kind files are checked in this build"
		return f
	}
	if s3x.IsURI(s.Path) {
		return pr.checkS3Source(ctx, name, s.Path) // gates/aws.go
	}
	root := pr.sourceRoot(s)
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Status, f.Detail = Fail, fmt.Sprintf("folder %s does not exist", root)
		f.Fix = fmt.Sprintf("create it and put the files there, or correct sources.%s.path in platform.yaml", name)
		return f
	case err != nil:
		f.Status, f.Detail = Fail, fmt.Sprintf("stat %s: %v", root, gate2Err(err))
		f.Fix = "make the folder reachable by the user running Lima"
		return f
	case !fi.IsDir():
		f.Status, f.Detail = Fail, fmt.Sprintf("%s is a file, not a folder", root)
		f.Fix = fmt.Sprintf("point sources.%s.path at the folder holding the files", name)
		return f
	}
	d, err := os.Open(root)
	if err == nil {
		var entries []os.DirEntry
		entries, err = d.ReadDir(-1)
		d.Close()
		if err == nil {
			nf, nd := 0, 0
			for _, e := range entries {
				if e.IsDir() {
					nd++
				} else {
					nf++
				}
			}
			f.Status, f.Detail = Pass, fmt.Sprintf("listed folder %s: %d file(s), %d folder(s)", root, nf, nd)
			if len(entries) == 0 {
				f.Status, f.Detail = Warn, fmt.Sprintf("listed folder %s: it is empty", root)
				f.Fix = "put the files to land in it"
			}
			return f
		}
	}
	f.Status, f.Detail = Fail, fmt.Sprintf("list %s: %v", root, gate2Err(err))
	f.Fix = fmt.Sprintf("let the user running Lima (uid %d) list the folder, e.g. chmod a+rx on it", os.Getuid())
	return f
}

// listTable lists a table's files, glob by glob.
func (pr Probe) listTable(ctx context.Context, p *plan.Plan, t *plan.Table) (root string, perGlob [][]source.Unit, err error) {
	s := p.Sources[t.Source.Name]
	if s == nil || s.Kind != plan.SourceFiles {
		return "", nil, fmt.Errorf("source %q is not a files source", t.Source.Name)
	}
	root = pr.sourceRoot(s)
	var src source.Source = files.New(root)
	if s3x.IsURI(s.Path) {
		root = s.Path
		if src, err = s3src.Open(ctx, root); err != nil {
			return root, nil, err
		}
	}
	for _, g := range t.Source.Files {
		units, err := src.List(ctx, []string{g})
		if err != nil {
			return root, perGlob, err
		}
		perGlob = append(perGlob, units)
	}
	return root, perGlob, nil
}

func (pr Probe) checkTable(ctx context.Context, p *plan.Plan, name string) Finding {
	t := p.Tables[name]
	f := Finding{Name: "table " + name}
	if s := p.Sources[t.Source.Name]; s.IsDatabase() {
		return pr.checkDatabaseTable(ctx, p, name)
	}
	if p.Sources[t.Source.Name].IsDynamoDB() {
		return pr.checkDynamoTable(ctx, p, name) // gates/dynamodb.go
	}
	if s := p.Sources[t.Source.Name]; s != nil && s3x.IsURI(s.Path) {
		return pr.checkS3Table(ctx, p, name) // gates/aws.go
	}
	root, perGlob, err := pr.listTable(ctx, p, t)
	if err != nil {
		if fi, serr := os.Stat(root); root != "" && (serr != nil || !fi.IsDir()) {
			f.Status, f.Detail = Skip, fmt.Sprintf("not checked: source %s (%s) is not a readable folder; see its finding", t.Source.Name, root)
			return f
		}
		f.Status, f.Detail = Fail, fmt.Sprintf("list %s in %s: %v", strings.Join(t.Source.Files, ", "), root, gate2Err(err))
		f.Fix = "make every file and folder below the source readable by the user running Lima"
		return f
	}
	var parts []string
	var units []source.Unit
	seen := map[string]bool{}
	for i, us := range perGlob {
		g := t.Source.Files[i]
		if len(us) == 0 {
			f.Status = Fail
			f.Detail = fmt.Sprintf("%q matched no file in %s", g, root)
			f.Fix = fmt.Sprintf("correct tables.%s.source.files[%d] in platform.yaml, or put the files in %s", name, i, root)
			return f
		}
		var size int64
		for _, u := range us {
			size += u.Size
			u.Path = unitFile(u.Path)
			if !seen[u.Path] {
				seen[u.Path] = true
				units = append(units, u)
			}
		}
		parts = append(parts, fmt.Sprintf("%q matched %d file(s), %s", g, len(us), gate2Bytes(uint64(size))))
	}
	read, err := readHeads(ctx, units)
	if err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("%s; read %d of %d file(s), then: %v", strings.Join(parts, "; "), read, len(units), gate2Err(err))
		f.Fix = fmt.Sprintf("let the user running Lima (uid %d) read every file the globs match, or remove the unreadable file from the folder", os.Getuid())
		return f
	}
	f.Status = Pass
	f.Detail = fmt.Sprintf("%s; read the first KiB of each of the %d file(s)", strings.Join(parts, "; "), len(units))
	return f
}

// readHeads opens each file and reads its first KiB, 8 at a time; it
// returns how many were read before the first failure.
func readHeads(ctx context.Context, units []source.Unit) (int, error) {
	var (
		mu    sync.Mutex
		first error
		n     int
		wg    sync.WaitGroup
		sem   = make(chan struct{}, 8)
	)
	for _, u := range units {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := readHead(u.Path)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("%s: %w", u.Name, err)
				}
				return
			}
			n++
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return n, first
}

// unitFile is the file on disk of a unit's Path: a worksheet unit's Path is
// the workbook's with "#Sheet" appended (files.SheetUnit).
func unitFile(p string) string {
	if _, err := os.Lstat(p); err != nil {
		if i := strings.LastIndex(p, "#"); i > 0 {
			if _, err := os.Stat(p[:i]); err == nil {
				return p[:i]
			}
		}
	}
	return p
}

func readHead(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, probeHeadBytes)
	if _, err := io.ReadFull(f, buf); err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return err
	}
	return nil
}

// warehouseDir returns the folder of a warehouse given as a folder or a
// file:// URI; ok is false for other schemes and for a file: URI that
// names no local folder (checkTarget fails on it).
func warehouseDir(wh string) (string, bool) {
	if fileuri.Is(wh) {
		p, err := fileuri.ToPath(wh)
		return p, err == nil
	}
	if i := strings.Index(wh, "://"); i > 0 {
		return "", false
	}
	return wh, true
}

func (pr Probe) checkTarget(ctx context.Context) Finding {
	f := Finding{Name: "target writable"}
	dir, ok := warehouseDir(pr.Warehouse)
	if !ok && s3x.IsURI(pr.Warehouse) {
		f.Status, f.Detail = Skip, fmt.Sprintf("warehouse %s is on S3: see the finding S3 warehouse writable (a probe object put and deleted)", pr.Warehouse)
		return f
	}
	if !ok && fileuri.Is(pr.Warehouse) {
		_, err := fileuri.ToPath(pr.Warehouse)
		f.Status, f.Detail = Fail, fmt.Sprintf("warehouse %s: %v", pr.Warehouse, err)
		f.Fix = "write storage.warehouse in platform.yaml as a folder, or as file:///absolute/folder with %, # and ? written %25, %23 and %3F"
		return f
	}
	if !ok {
		f.Status, f.Detail = Skip, fmt.Sprintf("warehouse %s: only local folders (and file://) are probed in this build", pr.Warehouse)
		return f
	}
	if why := UnsafeLakeFolder(dir); why != "" {
		f.Status, f.Detail, f.Fix = Fail, why+": Lima writes and tears down what is under its warehouse", unsafeLakeFix
		return f
	}
	probe, missing, err := ProbeWrite(dir)
	if err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("warehouse %s: cannot create a file: %v", dir, gate2Err(err))
		f.Fix = writeFix(dir, err, "storage.warehouse")
		return f
	}
	f.Status, f.Detail = Pass, "warehouse "+probeText(dir, probe, missing)
	return f
}

// writeFix says how to make dir writable after ProbeWrite failed.
func writeFix(dir string, err error, field string) string {
	var nf *notFolderError
	if errors.As(err, &nf) {
		return fmt.Sprintf("%s is a file: move it away, or point %s in platform.yaml at a folder", nf.path, field)
	}
	return fmt.Sprintf("let the user running Lima (uid %d) create files in %s (permissions, a read-only mount, quota), or point %s at a writable folder", os.Getuid(), dir, field)
}

type notFolderError struct{ path string }

func (e *notFolderError) Error() string { return e.path + " is a file, not a folder" }

// ProbeWrite proves that files can be created in dir: it writes a small
// probe file there, syncs it and removes it. When dir does not exist yet
// it probes the nearest existing folder above it (where the run will
// create dir; missing is true), so the probe leaves nothing behind. It
// returns the path of the probe file it wrote and removed.
func ProbeWrite(dir string) (probe string, missing bool, err error) {
	at := dir
	for {
		fi, err := os.Stat(at)
		if err == nil {
			if !fi.IsDir() {
				return "", missing, &notFolderError{path: at}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", missing, err
		}
		parent := filepath.Dir(at)
		if parent == at {
			return "", missing, err
		}
		at, missing = parent, true
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := filepath.Join(at, ".lima-probe-"+hex.EncodeToString(rnd[:]))
	pf, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", missing, err
	}
	_, werr := pf.WriteString(probePayload)
	serr := pf.Sync()
	cerr := pf.Close()
	rerr := os.Remove(name)
	if err := errors.Join(werr, serr, cerr); err != nil {
		return "", missing, err
	}
	if rerr != nil {
		return "", missing, fmt.Errorf("wrote %s but could not remove it: %w", name, rerr)
	}
	return name, missing, nil
}

const probePayload = "lima write probe\n"

// probeText is the evidence of a successful ProbeWrite of dir.
func probeText(dir, probe string, missing bool) string {
	if missing {
		return fmt.Sprintf("%s does not exist yet: wrote, synced and removed %s (%d bytes) in %s, where the run creates it", dir, probe, len(probePayload), filepath.Dir(probe))
	}
	return fmt.Sprintf("%s: wrote, synced and removed %s (%d bytes)", dir, filepath.Base(probe), len(probePayload))
}

func (pr Probe) checkCatalog(ctx context.Context, p *plan.Plan) []Finding {
	if c := p.Catalog(); c == plan.CatalogGlue || c == plan.CatalogS3Tables {
		return pr.checkAWSCatalog(ctx, p)
	} else if c == plan.CatalogSQLite && p.Pattern() == plan.PatternHive {
		return hiveWithoutCatalog(p)
	}
	if c := p.Catalog(); c != plan.CatalogSQLite {
		return []Finding{{Name: "catalog", Status: Skip, Detail: fmt.Sprintf("catalog %s: reaching it (and the namespace) is an AWS check, not in this build", c)}}
	}
	f := Finding{Name: "catalog"}
	if pr.Catalog == nil {
		f.Status, f.Detail = Skip, "no catalog probe wired"
		return []Finding{f}
	}
	ns := p.Namespace()
	st, err := pr.Catalog(ctx)
	if err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("open the SQLite catalog %s: %v", st.Path, gate2Err(err))
		f.Fix = "if another program holds the catalog, stop it; if the file is damaged, restore .lima/catalog.db from a backup (the lake's metadata files are intact)"
		return []Finding{f}
	}
	nsf := Finding{Name: "namespace " + ns, Status: Pass}
	if st.Missing {
		probe, _, err := ProbeWrite(filepath.Dir(st.Path))
		if err != nil {
			f.Status, f.Detail = Fail, fmt.Sprintf("the SQLite catalog %s does not exist yet and cannot be created: %v", st.Path, gate2Err(err))
			f.Fix = writeFix(filepath.Dir(st.Path), err, "storage.catalog_uri")
			return []Finding{f}
		}
		f.Status, f.Detail = Pass, fmt.Sprintf("the SQLite catalog %s does not exist yet; the first run creates it (wrote, synced and removed %s)", st.Path, probe)
		nsf.Detail = fmt.Sprintf("namespace %s will be created with the catalog", ns)
		return []Finding{f, nsf}
	}
	f.Status, f.Detail = Pass, st.Evidence
	if st.NamespaceExists {
		nsf.Detail = fmt.Sprintf("namespace %s exists with %d table(s)", ns, st.Tables)
	} else {
		nsf.Detail = fmt.Sprintf("namespace %s does not exist yet; the first run creates it", ns)
	}
	return []Finding{f, nsf}
}

func (pr Probe) checkState(ctx context.Context, p *plan.Plan) Finding {
	f := Finding{Name: "state store"}
	if pr.State == nil {
		f.Status, f.Detail = Skip, "no state store probe wired"
		return f
	}
	st, err := pr.State(ctx)
	if err != nil {
		f.Status = Fail
		if p.Storage.State == "postgres" {
			f.Detail = fmt.Sprintf("PostgreSQL state store from $%s: %v", p.Storage.StateDSNEnv, gate2Err(err))
			f.Fix = fmt.Sprintf("export %s with a DSN of a running PostgreSQL the user can connect to (psql \"$%s\" -c 'select 1' shows the server's own message)", p.Storage.StateDSNEnv, p.Storage.StateDSNEnv)
		} else {
			f.Detail = fmt.Sprintf("SQLite state store %s: %v", st.Path, gate2Err(err))
			f.Fix = "if another program holds the file, stop it; if it is damaged, move it away (the lake is unaffected; the exception queue restarts empty)"
		}
		return f
	}
	if st.Missing {
		probe, _, err := ProbeWrite(filepath.Dir(st.Path))
		if err != nil {
			f.Status, f.Detail = Fail, fmt.Sprintf("the SQLite state store %s does not exist yet and cannot be created: %v", st.Path, gate2Err(err))
			f.Fix = writeFix(filepath.Dir(st.Path), err, "the workspace")
			return f
		}
		f.Status, f.Detail = Pass, fmt.Sprintf("the SQLite state store %s does not exist yet; the first run creates it (wrote, synced and removed %s)", st.Path, probe)
		return f
	}
	f.Status, f.Detail = Pass, st.Evidence
	return f
}

// inputBytes sums the sizes of the files the tables read (each file once);
// with no tables, of every file below the sources.
func (pr Probe) inputBytes(ctx context.Context, p *plan.Plan) (uint64, int, error) {
	seen := map[string]bool{}
	var total uint64
	var errs []error
	add := func(units []source.Unit) {
		for _, u := range units {
			if f := unitFile(u.Path); !seen[f] {
				seen[f] = true
				total += uint64(max(u.Size, 0))
			}
		}
	}
	tables := 0
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if t == nil || t.Source == nil || t.IsMart() || p.Sources[t.Source.Name].IsDatabase() || p.Sources[t.Source.Name].IsDynamoDB() {
			continue
		}
		tables++
		if t.EngineOf() == plan.EngineGlue {
			continue // read by the Glue job's workers, not on this machine's disk
		}
		_, perGlob, err := pr.listTable(ctx, p, t)
		for _, us := range perGlob {
			add(us)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if tables == 0 {
		for _, name := range p.SourceNames() {
			if s := p.Sources[name]; s != nil && s.Kind == plan.SourceFiles {
				units, err := files.New(pr.sourceRoot(s)).List(ctx, []string{"**"})
				add(units)
				if err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return total, len(seen), errors.Join(errs...)
}

func (pr Probe) checkDisk(ctx context.Context, p *plan.Plan) Finding {
	f := Finding{Name: "disk space"}
	in, nfiles, lerr := pr.inputBytes(ctx, p)
	need := in * DiskFactor
	type place struct{ what, path string }
	places := []place{{"workspace", pr.Workspace}}
	if pr.StateDir != "" {
		places[0] = place{"workspace", pr.StateDir}
	}
	if dir, ok := warehouseDir(pr.Warehouse); ok {
		places = append([]place{{"warehouse", dir}}, places...)
	}
	var parts []string
	seenFS := map[uint64]string{}
	f.Status = Pass
	for _, pl := range places {
		at := nearestExisting(pl.path)
		free, fsid, err := pr.FreeBytes(at)
		if err != nil {
			f.Status = Fail
			parts = append(parts, fmt.Sprintf("%s %s: statfs failed: %v", pl.what, at, gate2Err(err)))
			f.Fix = "make the folder reachable by the user running Lima"
			continue
		}
		if other, same := seenFS[fsid]; same {
			parts = append(parts, fmt.Sprintf("%s %s: same file system as the %s", pl.what, at, other))
			continue
		}
		seenFS[fsid] = pl.what
		parts = append(parts, fmt.Sprintf("%s %s: %s free", pl.what, at, gate2Bytes(free)))
		if free < need {
			f.Status = Fail
			f.Fix = fmt.Sprintf("free at least %s on the file system of %s, or point it at a larger disk", gate2Bytes(need-free), at)
		}
	}
	f.Detail = fmt.Sprintf("%s; needed %d × %s input (%d file(s)) = %s", strings.Join(parts, "; "), DiskFactor, gate2Bytes(in), nfiles, gate2Bytes(need))
	if lerr != nil {
		f.Detail += "; some files could not be listed, so the input may be larger"
	}
	return f
}

func nearestExisting(p string) string {
	for {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

func statfsFree(path string) (uint64, uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	var fsid uint64
	if fi, err := os.Stat(path); err == nil {
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			fsid = uint64(sys.Dev)
		}
	}
	return uint64(st.Bavail) * uint64(st.Bsize), fsid, nil
}

func (pr Probe) checkMemory(ctx context.Context, p *plan.Plan) Finding {
	f := Finding{Name: "memory"}
	avail, err := memAvailable(pr.MemInfo)
	if err != nil {
		f.Status, f.Detail = Skip, fmt.Sprintf("available memory not measured: %v", gate2Err(err))
		return f
	}
	need, why := pr.memoryNeed(ctx, p)
	f.Detail = fmt.Sprintf("MemAvailable %s in %s; a run needs %s (%s)", gate2Bytes(avail), pr.MemInfo, gate2Bytes(need), why)
	if avail < need {
		f.Status = Fail
		f.Fix = fmt.Sprintf("free at least %s of memory (stop other programs), run on a machine with more, or lower etl.key_memory_mb (key sets spill to disk beyond it)", gate2Bytes(need-avail))
		return f
	}
	f.Status = Pass
	return f
}

// keySets names the key sets a table's load keeps at once, each within
// etl.key_memory_mb (engine/run: the load's keys; the lake's keys of an
// incremental or change-capture load; an upsert's lake versions and, with
// delete detection, the source's keys). Gate 4's duplicate check, after
// the load, keeps one more, alone.
func keySets(t *plan.Table) []string {
	keyed := len(t.Load.Keys) > 0
	for _, c := range t.Checks {
		keyed = keyed || c.Rule == "unique"
	}
	var sets []string
	if keyed {
		sets = append(sets, "the load's keys")
	}
	switch t.Mode() {
	case plan.ModeIncremental:
		if keyed {
			sets = append(sets, "the lake's keys")
		}
	case plan.ModeCDC:
		sets = append(sets, "the lake's keys")
	case plan.ModeUpsert:
		sets = append(sets, "the lake's keys and versions")
		if on, _, _ := t.Load.DeleteDetection(); on {
			sets = append(sets, "the source's keys")
		}
	}
	return sets
}

// memoryNeed is gate 2's memory figure: the floor a run needs to stream,
// plus etl.key_memory_mb for each key set of the table that keeps the most
// at once (tables load one after another). It says, for each table with a
// key whose rows it can estimate (local text files: their size over the
// size of a row in the first file's head), whether its keys fit in memory
// or will spill.
func (pr Probe) memoryNeed(ctx context.Context, p *plan.Plan) (uint64, string) {
	budget := keyset.Budget(p.ETL.KeyMemoryBytes())
	inMem := keyset.InMemoryKeys(budget)
	most, mostTable, mostSets := 0, "", []string(nil)
	var notes []string
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if t == nil || t.Source == nil || t.IsMart() {
			continue
		}
		sets := keySets(t)
		n := max(len(sets), 1) // gate 4's set (keys, or whole rows without a key)
		if n > most {
			most, mostTable, mostSets = n, name, sets
		}
		if len(sets) == 0 {
			continue
		}
		if s := p.Sources[t.Source.Name]; s == nil || s.Kind != plan.SourceFiles || s3x.IsURI(s.Path) {
			continue
		}
		rows, size, perRow, ok := pr.estimateRows(ctx, p, t)
		switch {
		case !ok:
			notes = append(notes, fmt.Sprintf("table %s: rows not estimated (not a text file); its key sets spill beyond %d keys", name, inMem))
		case rows > inMem:
			notes = append(notes, fmt.Sprintf("table %s: about %d rows (%s at ~%d B a row), more than the %d keys a key set holds in memory: its keys will spill to disk (more time, not more memory)", name, rows, gate2Bytes(size), perRow, inMem))
		default:
			notes = append(notes, fmt.Sprintf("table %s: about %d rows: its keys fit in memory", name, rows))
		}
	}
	if most == 0 {
		return pr.MemFloor, "it streams: the need does not grow with the input"
	}
	need := pr.MemFloor + uint64(most)*uint64(budget)
	what := "gate 4's duplicate check"
	if len(mostSets) > 0 {
		what = strings.Join(mostSets, ", ")
	}
	tmp := filepath.Join(pr.StateDir, "tmp")
	if pr.StateDir == "" {
		tmp = "the temp folder"
	}
	why := fmt.Sprintf("%s to stream, plus etl.key_memory_mb %s for each of the %d key set(s) table %s keeps at once (%s); a key set holds %d keys in memory and spills the rest to %s, so the need does not grow with the input",
		gate2Bytes(pr.MemFloor), gate2Bytes(uint64(budget)), most, mostTable, what, inMem, tmp)
	if len(notes) > 0 {
		why += "; " + strings.Join(notes, "; ")
	}
	return need, why
}

// estimateRows estimates a local text table's rows: the size of its files
// over the average row of the first file's first 64 KiB. ok is false when
// the files cannot be listed or are not line-delimited text.
func (pr Probe) estimateRows(ctx context.Context, p *plan.Plan, t *plan.Table) (rows int64, size uint64, perRow int64, ok bool) {
	_, perGlob, err := pr.listTable(ctx, p, t)
	if err != nil {
		return 0, 0, 0, false
	}
	var first string
	seen := map[string]bool{}
	for _, us := range perGlob {
		for _, u := range us {
			if f := unitFile(u.Path); !seen[f] {
				seen[f] = true
				size += uint64(max(u.Size, 0))
				if first == "" {
					first = f
				}
			}
		}
	}
	if first == "" {
		return 0, 0, 0, false
	}
	fh, err := os.Open(first)
	if err != nil {
		return 0, 0, 0, false
	}
	defer fh.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(fh, head)
	head = head[:n]
	lines := int64(bytes.Count(head, []byte{'\n'}))
	if lines == 0 || bytes.IndexByte(head, 0) >= 0 || strings.HasSuffix(first, ".gz") {
		return 0, size, 0, false
	}
	perRow = max(int64(n)/lines, 1)
	return int64(size) / perRow, size, perRow, true
}

// memAvailable reads MemAvailable (kB) from a meminfo file.
func memAvailable(path string) (uint64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: MemAvailable %q is not a number", path, fields[0])
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no MemAvailable line", path)
}

func (pr Probe) checkClock(p *plan.Plan) Finding {
	f := Finding{Name: "clock"}
	now := pr.Now().UTC()
	ref := pr.Reference.UTC()
	f.Detail = fmt.Sprintf("system time %s; this build's reference date %s", now.Format(time.RFC3339), ref.Format(time.DateOnly))
	switch {
	case now.Before(ref):
		f.Status = Fail
		f.Detail += ": the clock is before the build was made, so it is wrong"
		f.Fix = "set the system clock (timedatectl set-ntp true, or date -s) — snapshot times, deadlines and exception ages depend on it"
		return f
	case now.After(ref.AddDate(30, 0, 0)):
		f.Status = Warn
		f.Detail += ": more than 30 years later; check the clock"
		f.Fix = "set the system clock (timedatectl set-ntp true)"
		return f
	}
	f.Status = Pass
	if cloud, _ := cloudTarget(p); cloud {
		f.Detail += "; AWS rejects requests signed more than 15 minutes off its time: skew against AWS is not measured in this build"
	}
	return f
}

// gate2Err is an error's message, "" for nil.
func gate2Err(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// gate2Bytes formats a byte count as B, KiB, MiB, GiB or TiB.
func gate2Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n) / unit
	i := 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}
