package flow

// Gate 5 wiring: the workspace's paths, catalog and state store handed to
// gates.BuildInventory and gates.Teardown, under the workspace run lock.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/lima-lake/lima/engine/mart"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fileuri"
)

// TeardownOptions say whose lake to tear down.
type TeardownOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	// PlanPath is the plan file (never removed); default Workspace.PlanPath().
	PlanPath string
	// LockWait bounds the wait for a run in progress (default 0: fail at once).
	LockWait time.Duration
	// Shown is the inventory the person saw before typing the prefix
	// (optional). When the fresh inventory would remove a table or a folder
	// that was not shown, the teardown is refused and nothing is removed.
	Shown *gates.Inventory
}

// lockFileName is the run lock's file in the state folder (see Lock).
const lockFileName = "run.lock"

// TeardownInventory builds gate 5's blast radius under the run lock. It
// reads only.
func TeardownInventory(ctx context.Context, o TeardownOptions) (*gates.Inventory, error) {
	unlock, err := Lock(ctx, o.Workspace, o.LockWait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := checkOwner(ctx, o.Workspace, o.Plan, "the teardown", false); err != nil {
		return nil, err
	}
	scope, release := teardownScope(ctx, o)
	defer release()
	inv, err := gates.BuildInventory(ctx, scope)
	if err == nil {
		if c, _ := readOwnClaim(ctx, o.Workspace, o.Plan); c != nil {
			inv.OwnerMarker = c.store.location()
		}
	}
	return inv, err
}

// Teardown takes the run lock, takes a fresh inventory and removes what it
// lists when confirm is the plan's prefix, typed exactly. It returns the
// inventory and what was done; errors wrap gates.ErrNotConfirmed (nothing
// removed, exit 2), gates.ErrTeardownBlocked (nothing removed, exit 4),
// gates.ErrTeardownIncomplete (exit 1) or ErrPrecondition (the lock).
func Teardown(ctx context.Context, o TeardownOptions, confirm string) (*gates.Inventory, *gates.TeardownResult, error) {
	unlock, err := Lock(ctx, o.Workspace, o.LockWait)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	// A lake another workspace owns is never torn down from here.
	if err := checkOwner(ctx, o.Workspace, o.Plan, "the teardown", false); err != nil {
		return nil, nil, err
	}
	scope, release := teardownScope(ctx, o)
	defer release()
	inv, err := gates.BuildInventory(ctx, scope)
	if err != nil {
		return nil, nil, err
	}
	if o.Shown != nil && confirm == scope.Prefix {
		if grew := BlastRadiusGrew(o.Shown, inv); len(grew) > 0 {
			detail := "nothing was removed: since the blast radius was shown, more appeared: " + strings.Join(grew, ", ")
			res := &gates.TeardownResult{Status: gates.Fail, Kept: inv.Kept, Findings: []gates.Finding{{Name: "typed confirmation", Status: gates.Fail,
				Detail: detail, Fix: "look at the new blast radius, then type the prefix again"}}}
			return inv, res, fmt.Errorf("%w: %s", gates.ErrNotConfirmed, detail)
		}
	}
	claim, _ := readOwnClaim(ctx, o.Workspace, o.Plan)
	if claim != nil {
		inv.OwnerMarker = claim.store.location()
	}
	res, err := gates.Teardown(ctx, inv, confirm, scope)
	settleClaim(ctx, o.Workspace, o.Plan, claim, err == nil, res)
	return inv, res, err
}

// ownClaim is this workspace's marker as it was before a teardown.
type ownClaim struct {
	store markerStore
	b     []byte
}

// readOwnClaim returns this workspace's marker (nil when the lake is
// unclaimed or has no marker).
func readOwnClaim(ctx context.Context, ws Workspace, p *plan.Plan) (*ownClaim, error) {
	st, store, err := ownerState(ctx, ws, p)
	if err != nil || store == nil || !st.Ours {
		return nil, err
	}
	b, ok, err := store.read(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return &ownClaim{store: store, b: b}, nil
}

// settleClaim removes the marker last, after everything else of the lake
// went (done); when the teardown did not finish the claim stays — and is
// written again if the removal of the namespace's folder took it while
// other files of the lake remain.
func settleClaim(ctx context.Context, ws Workspace, p *plan.Plan, c *ownClaim, done bool, res *gates.TeardownResult) {
	if c == nil {
		return
	}
	if done {
		if err := c.store.remove(ctx); err != nil && res != nil {
			res.Findings = append(res.Findings, gates.Finding{Name: "ownership marker", Status: gates.Fail,
				Detail: fmt.Sprintf("removing the marker %s failed: %v", c.store.location(), err), Fix: "remove it by hand"})
			return
		}
		if lm, ok := c.store.(localMarker); ok {
			_ = os.Remove(filepath.Dir(string(lm))) // the namespace folder, when empty now
		}
		return
	}
	if st, _, err := ownerState(ctx, ws, p); err == nil && !st.Claimed && namespaceHasFiles(ctx, c.store) {
		_, _ = c.store.create(ctx, c.b)
	}
}

// namespaceHasFiles reports whether anything but the marker is left in the
// marker's folder (prefix).
func namespaceHasFiles(ctx context.Context, m markerStore) bool {
	switch m := m.(type) {
	case localMarker:
		es, err := os.ReadDir(filepath.Dir(string(m)))
		return err == nil && len(es) > 0
	case s3Marker:
		objs, err := m.c.List(ctx, m.u.Bucket, strings.TrimSuffix(m.u.Key, gates.OwnerMarkerName))
		return err == nil && len(objs) > 0
	}
	return false
}

// BlastRadiusGrew lists the tables and folders that fresh would remove and
// shown did not list.
func BlastRadiusGrew(shown, fresh *gates.Inventory) []string {
	var out []string
	for _, t := range fresh.Tables {
		if !t.Drop {
			continue
		}
		if !slices.ContainsFunc(shown.Tables, func(s gates.TableInventory) bool { return s.Drop && s.Name == t.Name }) {
			out = append(out, "table "+t.Name)
		}
	}
	for _, a := range fresh.Areas {
		if !slices.ContainsFunc(shown.Areas, func(s gates.AreaInventory) bool { return s.Base == a.Base && s.Rel == a.Rel }) {
			out = append(out, a.Path)
		}
	}
	for _, p := range fresh.Prefixes {
		i := slices.IndexFunc(shown.Prefixes, func(s gates.PrefixInventory) bool { return s.URI == p.URI })
		if i < 0 {
			out = append(out, p.URI)
			continue
		}
		known := map[string]bool{}
		for _, k := range shown.Prefixes[i].Keys {
			known[k] = true
		}
		n := 0
		for _, k := range p.Keys {
			if !known[k] {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d new object(s) under %s", n, p.URI))
		}
	}
	if fresh.Catalog.DropNamespace && !shown.Catalog.DropNamespace {
		out = append(out, "namespace "+fresh.Namespace)
	}
	return out
}

// teardownScope describes the workspace to gate 5 and opens the catalog
// and the state store when they exist (never creating them, nor the lake).
// release closes what was opened; it is safe to call more than once.
func teardownScope(ctx context.Context, o TeardownOptions) (gates.TeardownScope, func()) {
	ws, p := o.Workspace, o.Plan
	planPath := o.PlanPath
	if planPath == "" {
		planPath = ws.PlanPath()
	}
	s := gates.TeardownScope{
		Prefix:      p.Platform.Prefix,
		Namespace:   p.Namespace(),
		Workspace:   ws.Dir,
		Warehouse:   ws.Warehouse(p),
		StateDir:    ws.StateDir(),
		ReportsDir:  ws.ReportsDir(),
		LockFile:    filepath.Join(ws.StateDir(), lockFileName),
		CatalogFile: ws.CatalogPath(p),
		CatalogKind: p.Catalog(),
		StateStore:  p.Storage.State,
		PlanTables:  lakeTableNames(p),
		Protected:   []string{planPath, filepath.Join(ws.Dir, "README.md"), filepath.Join(ws.Dir, "ARCHITECTURE.md")},
	}
	if s.StateStore == "" {
		s.StateStore = "sqlite"
	}
	for _, name := range p.SourceNames() {
		if src := p.Sources[name]; src != nil && src.Path != "" {
			sp := src.Path
			if !filepath.IsAbs(sp) && !hasScheme(sp) {
				sp = filepath.Join(ws.Dir, sp)
			}
			if !hasScheme(sp) {
				s.Protected = append(s.Protected, sp)
			} else {
				s.ProtectedURIs = append(s.ProtectedURIs, sp)
			}
		}
	}

	var closers []func() error
	awsCatalog := awsTeardownScope(ctx, p, &s)
	if awsCatalog {
		// Hive-style tables in Glue: no Iceberg catalog to open.
	} else if s.CatalogKind != plan.CatalogSQLite && s.Layout != gates.LayoutHive {
		s.CatalogErr = fmt.Errorf("a %s catalog cannot be torn down by this build (only the embedded SQLite catalog and Glue)", s.CatalogKind)
	} else if fi, err := os.Stat(s.CatalogFile); err == nil && fi.Mode().IsRegular() {
		cat, db, err := openCatalogNoCreate(s.CatalogFile, s.Warehouse)
		if err != nil {
			s.CatalogErr = err
		} else {
			s.Catalog = cat
			closers = append(closers, db.Close)
		}
	}
	if s.StateStore == "postgres" {
		s.StateWhere = "PostgreSQL ($" + p.Storage.StateDSNEnv + ")"
		st, err := OpenLedger(ctx, ws, p)
		if err != nil {
			s.StateErr = err
		} else {
			s.State = st
			closers = append(closers, st.Close)
		}
	} else {
		s.StateWhere = filepath.Join(".lima", "state.db")
		if fi, err := os.Stat(ws.StatePath()); err == nil && fi.Mode().IsRegular() {
			st, err := ledger.OpenSQLite(ws.StatePath())
			if err != nil {
				s.StateErr = err
			} else {
				s.State = st
				closers = append(closers, st.Close)
			}
		}
	}
	var once sync.Once
	var relErr error
	release := func() error {
		once.Do(func() {
			var errs []error
			for _, c := range closers {
				errs = append(errs, c())
			}
			relErr = errors.Join(errs...)
		})
		return relErr
	}
	s.Release = release
	return s, func() { _ = release() }
}

// openCatalogNoCreate opens an existing SQLite catalog the way icesink
// does, without creating the lake folder.
func openCatalogNoCreate(path, warehouse string) (*sqlcat.Catalog, *sql.DB, error) {
	if !strings.Contains(warehouse, "://") {
		abs, err := filepath.Abs(warehouse)
		if err != nil {
			return nil, nil, err
		}
		if warehouse, err = fileuri.FromPath(abs); err != nil {
			return nil, nil, err
		}
	}
	catalogURI, err := fileuri.FromPath(path)
	if err != nil {
		return nil, nil, err
	}
	dsn := catalogURI + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	// "lima" is the catalog name icesink registers its tables under.
	cat, err := sqlcat.NewCatalog("lima", db, sqlcat.SQLite, iceberg.Properties{"warehouse": warehouse})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return cat, db, nil
}

// lakeTableNames are the names the plan's tables have in the lake: base
// tables by their name, marts Lima builds as mart_<name>.
func lakeTableNames(p *plan.Plan) []string {
	var out []string
	for _, n := range p.TableNames() {
		if t := p.Tables[n]; t != nil && t.Built() {
			out = append(out, mart.TableName(n))
			continue
		}
		out = append(out, n)
	}
	return out
}

// RecordTeardown writes who confirmed the teardown (gate 5), and when, to
// the plan (gates.teardown), which the teardown keeps.
func RecordTeardown(planPath, by string, now time.Time) (*plan.Approval, error) {
	p, err := plan.Load(planPath)
	if err != nil {
		return nil, err
	}
	ts := now.UTC().Format(time.RFC3339)
	p.Gates.Teardown = &plan.Approval{ApprovedBy: by, ApprovedAt: ts, PlanHash: p.Hash()}
	p.Platform.Updated = ts
	if err := p.Write(planPath); err != nil {
		return nil, err
	}
	return p.Gates.Teardown, nil
}
