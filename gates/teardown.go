package gates

// Gate 5, teardown: an inventory of everything a plan created (its blast
// radius), and its removal once a person typed the project prefix.
//
// The gate knows nothing of the workspace layout or of how the catalog and
// the state store are opened: the caller (flow) describes both in a
// TeardownScope. Every removal happens through an os.Root opened on one of
// three folders — the warehouse, the state folder (.lima) and the reports
// folder — so nothing outside them is touched and no symbolic link is
// followed out of them: a link is removed as a link, its target survives.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/typed"
)

// Teardown errors.
var (
	// ErrNotConfirmed: the typed text was not the project prefix; nothing
	// was removed (exit 2).
	ErrNotConfirmed = errors.New("teardown not confirmed")
	// ErrTeardownBlocked: the inventory found something that makes removal
	// unsafe (a blocking finding); nothing was removed (exit 4).
	ErrTeardownBlocked = errors.New("teardown blocked")
	// ErrTeardownIncomplete: removal started but something the inventory
	// listed is still there (exit 1). A second teardown continues.
	ErrTeardownIncomplete = errors.New("teardown incomplete")
)

// Bases of the areas a teardown may remove. Nothing outside them is touched.
const (
	BaseWarehouse = "warehouse"
	BaseState     = "state"
	BaseReports   = "reports"
)

// Area kinds.
const (
	AreaTable     = "table"
	AreaNamespace = "namespace"
	AreaRaw       = "raw"
	AreaHistory   = "history"
	AreaReports   = "reports"
	AreaState     = "state"
)

// TeardownCatalog is the part of an Iceberg catalog gate 5 uses; every
// iceberg-go catalog.Catalog satisfies it.
type TeardownCatalog interface {
	CheckNamespaceExists(ctx context.Context, ns table.Identifier) (bool, error)
	ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error)
	ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error]
	LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error)
	DropTable(ctx context.Context, ident table.Identifier) error
	DropNamespace(ctx context.Context, ns table.Identifier) error
}

// TeardownState is the part of the state store gate 5 counts; every
// ledger.Store satisfies it.
type TeardownState interface {
	Runs(ctx context.Context, limit int) ([]ledger.Run, error)
	Watermark(ctx context.Context, table string) (ledger.WatermarkRecord, bool, error)
	CountBy(ctx context.Context, f ledger.Filter, field string) (map[string]int64, error)
	PendingLoads(ctx context.Context) ([]ledger.LoadRef, error)
}

// TeardownScope describes where a plan's things live. The caller fills it
// from the workspace; paths are absolute or relative to the process.
type TeardownScope struct {
	// Prefix is platform.prefix: what the person must type.
	Prefix    string
	Namespace string
	// Workspace is the folder holding the plan.
	Workspace string
	// Warehouse is the local lake folder (a file:// URI is accepted).
	Warehouse string
	// StateDir is the private state folder (.lima); ReportsDir reports/.
	StateDir   string
	ReportsDir string
	// LockFile is the run lock held during teardown, inside StateDir; it
	// is kept.
	LockFile string
	// CatalogFile is the SQLite catalog. Its entries for Namespace are
	// dropped; the file itself is removed only when it lies inside
	// StateDir and holds nothing else.
	CatalogFile string
	// CatalogKind names the catalog for people ("sqlite").
	CatalogKind string
	// StateStore is "sqlite" (the rows go with the state files) or
	// "postgres" (shared: rows are counted, not removed); StateWhere says
	// where it lives for people.
	StateStore string
	StateWhere string
	// PlanTables are the tables of the plan.
	PlanTables []string
	// Protected are paths never removed, whatever the layout: the plan,
	// README.md, ARCHITECTURE.md, the source data.
	Protected []string
	// Catalog and State are open handles; nil when there is none (no
	// catalog or state file yet). CatalogErr and StateErr say why one
	// could not be opened: that blocks the teardown.
	Catalog    TeardownCatalog
	State      TeardownState
	CatalogErr error
	StateErr   error
	// Release closes Catalog and State; Teardown calls it once, after the
	// catalog changes and before any file is removed.
	Release func() error

	// Layout is LayoutHive for Hive-style tables (folders
	// <warehouse>/<namespace>/<table>/); empty for Iceberg.
	Layout string
	// Objects reaches an S3 warehouse (s3://bucket/prefix); nil: the
	// warehouse must be a local folder.
	Objects TeardownObjects
	// Glue reaches the Glue Data Catalog of Hive-style tables; nil: none.
	// GlueDatabase is their database (default: the namespace, lowercased).
	Glue         TeardownGlue
	GlueDatabase string
	// ProtectedURIs are s3:// sources never deleted.
	ProtectedURIs []string
	// ObjectsErr says why the S3 warehouse could not be reached: that
	// blocks the teardown.
	ObjectsErr error
}

// Inventory is gate 5's blast radius: what a teardown removes, and what it
// keeps.
type Inventory struct {
	Prefix    string           `json:"prefix"`
	Namespace string           `json:"namespace"`
	Workspace string           `json:"workspace"`
	Warehouse string           `json:"warehouse"`
	Catalog   CatalogInventory `json:"catalog"`
	Tables    []TableInventory `json:"tables"`
	// Areas are the folders and files removed, each inside one base.
	Areas []AreaInventory `json:"areas"`
	// Layers are raw/ and history/ under the warehouse, looked for even
	// when absent (then with Exists false and zero counts).
	Layers []AreaInventory `json:"layers"`
	// Prefixes are the S3 prefixes whose listed objects are deleted (a
	// warehouse on S3).
	Prefixes []PrefixInventory `json:"prefixes,omitempty"`
	State    StateInventory    `json:"state"`
	// OwnerMarker is this workspace's ownership marker of the lake (path or
	// s3:// URI), removed last, after everything else went; empty when the
	// lake has none.
	OwnerMarker string          `json:"owner_marker,omitempty"`
	Kept        []KeptItem      `json:"kept"`
	Total       InventoryTotals `json:"total"`
	// Findings: a failed one blocks the teardown; a warning says what is
	// kept and why.
	Findings []Finding `json:"findings"`
}

// CatalogInventory is the catalog's part of the blast radius.
type CatalogInventory struct {
	Kind            string   `json:"kind"`
	File            string   `json:"file"`
	NamespaceExists bool     `json:"namespace_exists"`
	DropNamespace   bool     `json:"drop_namespace"`
	DropTables      int      `json:"drop_tables"`
	OtherNamespaces []string `json:"other_namespaces,omitempty"`
	RemoveFile      bool     `json:"remove_file"`
	// Database is the Glue database (catalog glue of Hive-style tables);
	// DatabaseManaged: Lima created it.
	Database        string `json:"database,omitempty"`
	DatabaseManaged bool   `json:"database_managed,omitempty"`
}

// TableInventory is one table of the namespace.
type TableInventory struct {
	Name      string `json:"name"`
	InPlan    bool   `json:"in_plan"`
	Managed   bool   `json:"managed"`
	Drop      bool   `json:"drop"`
	Snapshots int    `json:"snapshots"`
	// Rows of the current snapshot (total-records); -1 when unknown.
	Rows          int64  `json:"rows"`
	Location      string `json:"location"`
	DataFiles     int64  `json:"data_files"`
	DataBytes     int64  `json:"data_bytes"`
	MetadataFiles int64  `json:"metadata_files"`
	MetadataBytes int64  `json:"metadata_bytes"`
	OtherFiles    int64  `json:"other_files"`
	OtherBytes    int64  `json:"other_bytes"`
	Symlinks      int64  `json:"symlinks"`
	RemoveFiles   bool   `json:"remove_files"`
	Note          string `json:"note,omitempty"`
	// InCatalog: a Hive-style table registered in Glue, with Partitions.
	InCatalog  bool `json:"in_catalog,omitempty"`
	Partitions int  `json:"partitions,omitempty"`
}

// AreaInventory is one folder or file to remove: Rel inside Base.
type AreaInventory struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Base string `json:"base"`
	Rel  string `json:"rel"`
	Path string `json:"path"`
	// Exists is false for an area looked for but absent (raw/, history/).
	Exists bool `json:"exists"`
	// Entries counts the folder's direct children (run folders of reports/).
	Entries  int64 `json:"entries"`
	Files    int64 `json:"files"`
	Dirs     int64 `json:"dirs"`
	Bytes    int64 `json:"bytes"`
	Symlinks int64 `json:"symlinks"`
}

// StateInventory counts the state store's rows of the plan.
type StateInventory struct {
	Store              string           `json:"store"`
	Where              string           `json:"where"`
	Open               bool             `json:"open"`
	Runs               int64            `json:"runs"`
	Watermarks         int64            `json:"watermarks"`
	Exceptions         int64            `json:"exceptions"`
	ExceptionsByStatus map[string]int64 `json:"exceptions_by_status,omitempty"`
	PendingLoads       int64            `json:"pending_loads"`
	// RowsRemoved: the rows go with the state files (SQLite).
	RowsRemoved bool `json:"rows_removed"`
}

// KeptItem is something a teardown does not remove, with the reason.
type KeptItem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// InventoryTotals sum the removable areas.
type InventoryTotals struct {
	Tables   int   `json:"tables"`
	Files    int64 `json:"files"`
	Bytes    int64 `json:"bytes"`
	Symlinks int64 `json:"symlinks"`
}

// Blocked reports whether a failed finding blocks the teardown.
func (inv *Inventory) Blocked() bool {
	for _, f := range inv.Findings {
		if f.Status == Fail {
			return true
		}
	}
	return false
}

// Empty reports whether there is nothing left to remove.
func (inv *Inventory) Empty() bool {
	if inv.Catalog.DropTables > 0 || inv.Catalog.DropNamespace || len(inv.Areas) > 0 || len(inv.Prefixes) > 0 || inv.OwnerMarker != "" {
		return false
	}
	return true
}

// BuildInventory lists everything the plan created: the catalog's tables
// and namespace, the files under each table location, raw/ and history/
// under the warehouse, the state files and the reports. It reads only.
func BuildInventory(ctx context.Context, s TeardownScope) (*Inventory, error) {
	b, err := newBases(s)
	if err != nil {
		return nil, err
	}
	inv := &Inventory{Prefix: s.Prefix, Namespace: s.Namespace, Workspace: b.workspace, Warehouse: b.show(b.warehouseShown),
		Catalog: CatalogInventory{Kind: s.CatalogKind, File: b.show(s.CatalogFile)}, Tables: []TableInventory{}, Areas: []AreaInventory{}, Layers: []AreaInventory{},
		Kept: []KeptItem{}, Findings: []Finding{}}
	block := func(name, detail, fix string) {
		inv.Findings = append(inv.Findings, Finding{Name: name, Status: Fail, Detail: detail, Fix: fix})
	}
	warn := func(name, detail string) {
		inv.Findings = append(inv.Findings, Finding{Name: name, Status: Warn, Detail: detail})
	}
	if s.Prefix == "" {
		block("project prefix", "the plan has no platform.prefix, so there is nothing a person could type to confirm", "set platform.prefix in the plan")
	}
	if s.Namespace == "" {
		block("namespace", "the plan names no namespace", "set platform.prefix (or storage.namespace) in the plan")
	}
	if b.warehouseErr != "" {
		block("warehouse", b.warehouseErr, b.warehouseFix)
	}
	if s.ObjectsErr != nil {
		block("warehouse", fmt.Sprintf("the S3 warehouse %s cannot be reached: %v", s.Warehouse, s.ObjectsErr), "check the AWS credentials, region and endpoint, then run the teardown again")
	}
	var listing []StoreObject
	if b.s3 != nil {
		inv.Warehouse = s.Warehouse
		if listing, err = s.Objects.List(ctx, b.s3.bucket, dirPrefix(b.s3.key)); err != nil {
			return nil, fmt.Errorf("gate 5: list the warehouse %s: %w", s.Warehouse, err)
		}
	}
	for _, guard := range []struct{ name, dir string }{{"warehouse", b.warehouse}, {"state folder", b.state}, {"reports folder", b.reports}} {
		if guard.dir != "" && (within(guard.dir, b.workspaceReal) || guard.dir == b.workspaceReal) {
			block(guard.name, fmt.Sprintf("the %s %s is the workspace folder or one of its parents; removing inside it could reach your own files", guard.name, guard.dir),
				"give the "+guard.name+" its own folder inside the workspace")
		}
	}
	if s.CatalogErr != nil {
		block("catalog", fmt.Sprintf("the catalog %s cannot be opened: %v", s.CatalogFile, s.CatalogErr),
			"repair the catalog file, or remove it by hand if the tables it lists are no longer needed")
	}
	if s.StateErr != nil {
		block("state store", fmt.Sprintf("the state store (%s) cannot be opened: %v", s.StateWhere, s.StateErr), "make the state store reachable, then run the teardown again")
	}

	// The catalog: tables of the namespace, other namespaces.
	keptTableInNamespace := false
	if s.Catalog != nil && s.Namespace != "" {
		ns := table.Identifier{s.Namespace}
		exists, err := s.Catalog.CheckNamespaceExists(ctx, ns)
		if err != nil {
			return nil, fmt.Errorf("gate 5: catalog: %w", err)
		}
		inv.Catalog.NamespaceExists = exists
		if exists {
			var idents []table.Identifier
			for id, err := range s.Catalog.ListTables(ctx, ns) {
				if err != nil {
					return nil, fmt.Errorf("gate 5: list the tables of %s: %w", s.Namespace, err)
				}
				idents = append(idents, id)
			}
			sort.Slice(idents, func(i, j int) bool { return strings.Join(idents[i], ".") < strings.Join(idents[j], ".") })
			for _, id := range idents {
				ti, area, kept := b.tableInventory(ctx, s, id, warn)
				inv.Tables = append(inv.Tables, ti)
				if ti.Drop {
					inv.Catalog.DropTables++
				} else {
					keptTableInNamespace = true
					inv.Kept = append(inv.Kept, KeptItem{Path: s.Namespace + "." + ti.Name, Reason: "a table in the namespace that this plan did not create (not in the plan, no lima.managed property)"})
					warn("table "+ti.Name, fmt.Sprintf("%s.%s was not created by Lima: it is kept, and so is the namespace", s.Namespace, ti.Name))
				}
				if area != nil {
					inv.Areas = append(inv.Areas, *area)
				}
				if kept != nil {
					inv.Kept = append(inv.Kept, *kept)
				}
			}
			inv.Catalog.DropNamespace = !keptTableInNamespace
		}
		all, err := s.Catalog.ListNamespaces(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("gate 5: list the catalog's namespaces: %w", err)
		}
		for _, n := range all {
			if name := strings.Join(n, "."); name != s.Namespace {
				inv.Catalog.OtherNamespaces = append(inv.Catalog.OtherNamespaces, name)
			}
		}
		sort.Strings(inv.Catalog.OtherNamespaces)
	}
	catalogInState := s.CatalogFile != "" && b.state != "" && within(b.state, realPath(s.CatalogFile))
	inv.Catalog.RemoveFile = catalogInState && fileExists(s.CatalogFile) && s.CatalogErr == nil && len(inv.Catalog.OtherNamespaces) == 0 && !keptTableInNamespace
	if s.CatalogFile != "" && fileExists(s.CatalogFile) && !inv.Catalog.RemoveFile {
		reason := "the catalog also holds other namespaces (" + strings.Join(inv.Catalog.OtherNamespaces, ", ") + "); only this plan's entries are dropped"
		switch {
		case !catalogInState && b.stateLink != "" && within(realPath(b.stateShown), realPath(s.CatalogFile)):
			reason = "the state folder is a symbolic link, which a teardown does not follow; only this plan's entries are dropped"
		case !catalogInState:
			reason = "the catalog file lies outside .lima; only this plan's entries are dropped"
		case keptTableInNamespace:
			reason = "the catalog still lists tables Lima did not create"
		case s.CatalogErr != nil:
			reason = "the catalog cannot be opened"
		}
		inv.Kept = append(inv.Kept, KeptItem{Path: b.show(s.CatalogFile), Reason: reason})
	}

	// The warehouse: the namespace folder (what is not under a table
	// location), raw/ and history/.
	nsRel := s.Namespace + ".db"
	var hiveRels []string
	if s.Layout == LayoutHive && s.Namespace != "" && filepath.IsLocal(s.Namespace) && !strings.ContainsAny(s.Namespace, "/\\") {
		nsRel = s.Namespace
		kept, rels, err := b.hiveInventory(ctx, s, inv, listing, warn)
		if err != nil {
			return nil, err
		}
		keptTableInNamespace = keptTableInNamespace || kept
		hiveRels = rels
	}
	if b.s3 != nil {
		b.s3Inventory(s, inv, listing, nsRel, keptTableInNamespace)
	} else if b.warehouse == "" {
		for _, l := range []string{AreaRaw, AreaHistory} {
			inv.Layers = append(inv.Layers, AreaInventory{Kind: l, Name: l + "/", Base: BaseWarehouse, Rel: l, Path: filepath.Join(inv.Warehouse, l)})
		}
	} else {
		tableRels := hiveRels
		for _, a := range inv.Areas {
			if a.Kind == AreaTable && !slices.Contains(tableRels, a.Rel) {
				tableRels = append(tableRels, a.Rel)
			}
		}
		if s.Namespace != "" && filepath.IsLocal(nsRel) {
			if keptTableInNamespace {
				if a := b.area(AreaNamespace, "namespace folder", BaseWarehouse, nsRel, nil); a.Exists {
					inv.Kept = append(inv.Kept, KeptItem{Path: a.Path, Reason: "it holds tables Lima did not create"})
				}
			} else if a := b.area(AreaNamespace, "namespace folder "+nsRel, BaseWarehouse, nsRel, tableRels); a.Exists {
				inv.Areas = append(inv.Areas, a)
			}
		}
		for _, layer := range []struct{ kind, rel string }{{AreaRaw, "raw"}, {AreaHistory, "history"}} {
			a := b.area(layer.kind, layer.rel+"/", BaseWarehouse, layer.rel, nil)
			inv.Layers = append(inv.Layers, a) // shown even when absent (0 files)
			if a.Exists {
				inv.Areas = append(inv.Areas, a)
			}
		}
		if others := b.otherWarehouseEntries(nsRel); len(others) > 0 {
			inv.Kept = append(inv.Kept, KeptItem{Path: b.show(b.warehouse), Reason: fmt.Sprintf("%d other entr%s in the warehouse that this plan did not create (%s)",
				len(others), plural(len(others), "y", "ies"), strings.Join(others, ", "))})
		}
	}

	// A linked state folder or reports/ is kept with what it points to.
	for _, l := range []struct{ shown, target, what string }{{b.stateShown, b.stateLink, "the state folder"}, {b.reportsShown, b.reportsLink, "the reports folder"}} {
		if l.target == "" {
			continue
		}
		inv.Kept = append(inv.Kept, KeptItem{Path: b.show(l.shown), Reason: fmt.Sprintf("%s is a symbolic link to %s: a teardown does not follow links, so the link and everything it points to are kept", l.what, l.target)})
		warn(l.what, fmt.Sprintf("%s %s is a symbolic link to %s; nothing in it is removed (remove what Lima wrote there by hand)", l.what, b.show(l.shown), l.target))
	}

	// Reports.
	if b.reports != "" {
		if a := b.area(AreaReports, "run reports", BaseReports, ".", nil); a.Exists && (a.Files > 0 || a.Dirs > 0 || a.Symlinks > 0) {
			inv.Areas = append(inv.Areas, a)
		}
	}

	// State: every entry of the state folder but the lock (and the catalog
	// when it stays).
	inv.State = StateInventory{Store: s.StateStore, Where: s.StateWhere, RowsRemoved: s.StateStore != "postgres" && b.stateLink == ""}
	if inv.State.Store == "" {
		inv.State.Store = "sqlite"
	}
	if s.State != nil {
		if err := countState(ctx, s, inv); err != nil {
			return nil, fmt.Errorf("gate 5: count the state: %w", err)
		}
	}
	if s.StateStore == "postgres" && inv.State.Open {
		inv.Kept = append(inv.Kept, KeptItem{Path: s.StateWhere, Reason: fmt.Sprintf("the shared %s state store: its %d run(s) and %d exception(s) are not removed by a teardown", s.StateStore, inv.State.Runs, inv.State.Exceptions)})
		warn("state store", fmt.Sprintf("the state lives in a shared %s store (%s); teardown leaves its rows (%d runs, %d exceptions) for its administrator", s.StateStore, s.StateWhere, inv.State.Runs, inv.State.Exceptions))
	}
	if b.state != "" {
		for _, e := range b.stateEntries() {
			full := filepath.Join(b.state, e)
			switch {
			case s.LockFile != "" && full == b.lockFile:
				inv.Kept = append(inv.Kept, KeptItem{Path: b.show(filepath.Join(b.stateShown, e)), Reason: "the run lock, held while tearing down (an empty file)"})
				continue
			case !inv.Catalog.RemoveFile && s.CatalogFile != "" && isCatalogEntry(full, realPath(s.CatalogFile)):
				continue // listed as kept above
			}
			inv.Areas = append(inv.Areas, b.area(AreaState, e, BaseState, e, nil))
		}
	}

	// What is never removed.
	for _, p := range s.Protected {
		if fileExists(p) {
			inv.Kept = append(inv.Kept, KeptItem{Path: b.show(p), Reason: protectedReason(p)})
		}
	}
	// A protected path must not be inside anything to be removed.
	for _, a := range inv.Areas {
		if _, err := b.checkArea(a); err != nil {
			block("safety", err.Error(), "move the lake, .lima or reports/ away from the plan, its docs and the source data")
		}
	}
	for _, p := range inv.Prefixes {
		if err := b.checkPrefix(p, s.ProtectedURIs); err != nil {
			block("safety", err.Error(), "keep the warehouse prefix apart from the source data")
		}
	}
	for _, a := range inv.Areas {
		inv.Total.Files += a.Files
		inv.Total.Bytes += a.Bytes
		inv.Total.Symlinks += a.Symlinks
	}
	for _, p := range inv.Prefixes {
		inv.Total.Files += p.Objects
		inv.Total.Bytes += p.Bytes
	}
	inv.Total.Tables = inv.Catalog.DropTables
	if s.Layout == LayoutHive {
		inv.Total.Tables = 0
		for _, t := range inv.Tables {
			if t.Drop {
				inv.Total.Tables++
			}
		}
	}
	return inv, nil
}

// TeardownResult says what a teardown did.
type TeardownResult struct {
	Status           string     `json:"status"`
	DroppedTables    []string   `json:"dropped_tables"`
	DroppedNamespace bool       `json:"dropped_namespace"`
	Removed          []string   `json:"removed"`
	RemovedFiles     int64      `json:"removed_files"`
	RemovedBytes     int64      `json:"removed_bytes"`
	Kept             []KeptItem `json:"kept"`
	Findings         []Finding  `json:"findings"`
}

// Teardown removes what the inventory lists, after checking that confirm
// is the project prefix, typed exactly. It refuses, removing nothing, when
// the text differs, when the inventory is blocked, or when any area would
// reach outside its base or over a protected path. Tables are dropped from
// the catalog first (so no reader sees a table without files), then the
// namespace when empty; then the handles are released and the files
// removed. An inventory with nothing in it succeeds: teardown is
// idempotent.
func Teardown(ctx context.Context, inv *Inventory, confirm string, s TeardownScope) (*TeardownResult, error) {
	res := &TeardownResult{Status: Fail, DroppedTables: []string{}, Removed: []string{}, Kept: inv.Kept, Findings: []Finding{}}
	fail := func(name, detail, fix string) {
		res.Findings = append(res.Findings, Finding{Name: name, Status: Fail, Detail: detail, Fix: fix})
	}
	if s.Prefix == "" || inv.Prefix != s.Prefix || typed.Check(s.Prefix, confirm) != typed.Exact {
		detail := "nothing was removed: a teardown needs the project prefix typed exactly"
		switch {
		case s.Prefix == "":
			detail = "nothing was removed: the plan has no project prefix to confirm with"
		case inv.Prefix != s.Prefix:
			detail = "nothing was removed: the inventory shown belongs to another plan (prefix " + inv.Prefix + ")"
		case typed.Check(s.Prefix, confirm) == typed.Empty:
			detail = "nothing was removed: no confirmation was typed"
		case typed.Check(s.Prefix, confirm) == typed.CaseOrBlanks:
			detail = "nothing was removed: the typed text differs from the project prefix in letter case or surrounding spaces"
		}
		fail("typed confirmation", detail, "type the project prefix exactly: "+s.Prefix)
		return res, fmt.Errorf("%w: %s", ErrNotConfirmed, detail)
	}
	if inv.Blocked() {
		for _, f := range inv.Findings {
			if f.Status == Fail {
				res.Findings = append(res.Findings, f)
			}
		}
		return res, fmt.Errorf("%w: %d blocking finding(s); nothing was removed", ErrTeardownBlocked, len(res.Findings))
	}
	b, err := newBases(s)
	if err != nil {
		return res, err
	}
	// Preflight: every area inside its base, over no protected path.
	for _, a := range inv.Areas {
		if _, err := b.checkArea(a); err != nil {
			fail("area "+a.Name, "nothing was removed: "+err.Error(), "run the teardown again to take a fresh inventory")
		}
	}
	for _, p := range inv.Prefixes {
		if err := b.checkPrefix(p, s.ProtectedURIs); err != nil {
			fail("prefix "+p.Name, "nothing was removed: "+err.Error(), "run the teardown again to take a fresh inventory")
		}
	}
	if len(inv.Prefixes) > 0 && s.Objects == nil {
		fail("warehouse", "nothing was removed: the inventory lists S3 objects but the object store is not open", "run the teardown again")
	}
	if len(res.Findings) > 0 {
		return res, fmt.Errorf("%w: an area failed the safety check; nothing was removed", ErrTeardownBlocked)
	}

	// 1. The catalog.
	released := false
	release := func() {
		if !released && s.Release != nil {
			released = true
			if err := s.Release(); err != nil {
				fail("release", "closing the catalog and the state store failed: "+err.Error(), "")
			}
		}
	}
	defer release()
	if s.Catalog != nil {
		for _, t := range inv.Tables {
			if !t.Drop {
				continue
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
			err := s.Catalog.DropTable(ctx, table.Identifier{s.Namespace, t.Name})
			switch {
			case err == nil:
				res.DroppedTables = append(res.DroppedTables, s.Namespace+"."+t.Name)
			case errors.Is(err, catalog.ErrNoSuchTable):
			default:
				fail("drop table "+t.Name, err.Error(), "run the teardown again")
			}
		}
		if inv.Catalog.DropNamespace {
			err := s.Catalog.DropNamespace(ctx, table.Identifier{s.Namespace})
			switch {
			case err == nil:
				res.DroppedNamespace = true
			case errors.Is(err, catalog.ErrNoSuchNamespace):
			case errors.Is(err, catalog.ErrNamespaceNotEmpty):
				fail("drop namespace "+s.Namespace, "the namespace still holds catalog objects: "+err.Error(), "list them and drop them, then run the teardown again")
			default:
				fail("drop namespace "+s.Namespace, err.Error(), "run the teardown again")
			}
		}
	}
	if s.Glue != nil {
		teardownGlue(ctx, s, inv, res, fail)
	}
	release()

	// 2. The files, in the inventory's order: tables, namespace folder,
	// raw/, history/, reports, state.
	for _, a := range inv.Areas {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		files, bytes, err := b.removeArea(a)
		if err != nil {
			fail("remove "+a.Name, err.Error(), "check the permissions of "+a.Path+", then run the teardown again")
			continue
		}
		res.Removed = append(res.Removed, a.Path)
		res.RemovedFiles += files
		res.RemovedBytes += bytes
	}
	for _, p := range inv.Prefixes {
		if err := deletePrefix(ctx, s.Objects, p); err != nil {
			fail("delete "+p.Name, err.Error(), "check the permissions on "+p.URI+", then run the teardown again")
			continue
		}
		res.Removed = append(res.Removed, p.URI)
		res.RemovedFiles += p.Objects
		res.RemovedBytes += p.Bytes
	}
	// Folders Lima made and emptied: the warehouse and reports/ (not the
	// state folder, which keeps the lock).
	for _, d := range []string{b.warehouseShown, b.reportsShown} {
		removeIfEmptyDir(d) // a folder, never a link to one
	}

	// 3. Proof: nothing listed remains.
	for _, a := range inv.Areas {
		if ok, err := b.exists(a); err != nil || ok {
			fail("left behind", fmt.Sprintf("%s is still there after the teardown", a.Path), "check its permissions, then run the teardown again")
		}
	}
	for _, p := range inv.Prefixes {
		left, err := s.Objects.List(ctx, p.Bucket, p.Prefix)
		if err != nil {
			fail("left behind", fmt.Sprintf("%s cannot be listed after the teardown: %v", p.URI, err), "run the teardown again")
			continue
		}
		for _, o := range left {
			if slices.Contains(p.Keys, o.Key) {
				fail("left behind", fmt.Sprintf("%s is still there after the teardown", p.URI+strings.TrimPrefix(o.Key, p.Prefix)), "check its permissions, then run the teardown again")
				break
			}
		}
	}
	if len(res.Findings) > 0 {
		return res, fmt.Errorf("%w: %d problem(s)", ErrTeardownIncomplete, len(res.Findings))
	}
	res.Status = Pass
	res.Findings = append(res.Findings, Finding{Name: "teardown", Status: Pass,
		Detail: fmt.Sprintf("dropped %d table(s)%s; removed %d file(s), %s", len(res.DroppedTables), nsWord(res.DroppedNamespace, s.Namespace), res.RemovedFiles, HumanBytes(res.RemovedBytes))})
	return res, nil
}

func nsWord(dropped bool, ns string) string {
	if dropped {
		return " and the namespace " + ns
	}
	return ""
}

// ---- bases and areas ----

type bases struct {
	workspace, workspaceReal   string
	warehouse, state, reports  string // resolved; "" when absent
	warehouseShown, stateShown string
	reportsShown               string
	stateLink, reportsLink     string // targets when .lima or reports/ is a link
	warehouseErr, warehouseFix string
	lockFile                   string
	s3                         *s3loc    // an S3 warehouse
	s3Tables                   []s3Table // table prefixes found in the catalog
	protected                  []string  // resolved
}

func newBases(s TeardownScope) (*bases, error) {
	if s.Workspace == "" {
		return nil, errors.New("gate 5: the workspace folder is required")
	}
	ws, err := filepath.Abs(s.Workspace)
	if err != nil {
		return nil, err
	}
	b := &bases{workspace: ws, workspaceReal: realPath(ws)}
	wh := s.Warehouse
	if strings.Contains(wh, "://") {
		if l, ok := parseS3(wh); ok && s.Objects != nil {
			b.s3 = &l
			wh = ""
		} else if p, err := fileuri.ToPath(wh); err != nil {
			b.warehouseErr = fmt.Sprintf("the warehouse %s is not a local folder", wh)
			b.warehouseFix = "tear down a remote lake with its own tools; this build removes local lakes and lakes on S3"
			wh = ""
		} else {
			wh = p
		}
	}
	if wh != "" {
		if b.warehouseShown, err = filepath.Abs(wh); err != nil {
			return nil, err
		}
		b.warehouse = existingReal(b.warehouseShown)
		if why := UnsafeLakeFolder(b.warehouseShown); why != "" {
			b.warehouseErr, b.warehouseFix, b.warehouse = why+": nothing there is removed", unsafeLakeFix+"; remove what Lima wrote here by hand", ""
		}
	}
	// The state folder and reports/ are emptied entry by entry: when one
	// of them is itself a symbolic link, it is not followed (the folder it
	// points to may hold anything) and nothing in it is removed.
	if s.StateDir != "" {
		if b.stateShown, err = filepath.Abs(s.StateDir); err != nil {
			return nil, err
		}
		if b.stateLink = linkTarget(b.stateShown); b.stateLink == "" {
			b.state = existingReal(b.stateShown)
		}
	}
	if s.ReportsDir != "" {
		if b.reportsShown, err = filepath.Abs(s.ReportsDir); err != nil {
			return nil, err
		}
		if b.reportsLink = linkTarget(b.reportsShown); b.reportsLink == "" {
			b.reports = existingReal(b.reportsShown)
		}
	}
	if s.LockFile != "" {
		b.lockFile = realPath(s.LockFile)
	}
	for _, p := range append([]string{ws}, s.Protected...) {
		if p != "" {
			b.protected = append(b.protected, realPath(p))
		}
	}
	return b, nil
}

func (b *bases) base(kind string) string {
	switch kind {
	case BaseWarehouse:
		return b.warehouse
	case BaseState:
		return b.state
	case BaseReports:
		return b.reports
	}
	return ""
}

// show makes a path relative to the workspace when it lies inside it.
func (b *bases) show(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	for _, ws := range []string{b.workspace, b.workspaceReal} {
		if r, err := filepath.Rel(ws, abs); err == nil && filepath.IsLocal(r) {
			return r
		}
	}
	return abs
}

// area inventories Rel inside the base of kind; skip are subtrees (Rel
// paths) counted elsewhere.
func (b *bases) area(kind, name, base, rel string, skip []string) AreaInventory {
	root := b.base(base)
	a := AreaInventory{Kind: kind, Name: name, Base: base, Rel: rel}
	if root == "" {
		a.Path = rel
		return a
	}
	a.Path = b.show(filepath.Join(root, rel))
	r, err := os.OpenRoot(root)
	if err != nil {
		return a
	}
	defer r.Close()
	fi, err := r.Lstat(rel)
	if err != nil {
		return a
	}
	a.Exists = true
	if fi.Mode()&fs.ModeSymlink != 0 {
		a.Symlinks = 1
		return a
	}
	if !fi.IsDir() {
		a.Files, a.Bytes = 1, fi.Size()
		return a
	}
	top := filepath.ToSlash(rel)
	_ = fs.WalkDir(r.FS(), top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == top {
			return nil
		}
		if slices.Contains(skip, filepath.FromSlash(p)) {
			return fs.SkipDir
		}
		if path.Dir(p) == top {
			a.Entries++
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			a.Symlinks++
		case d.IsDir():
			a.Dirs++
		default:
			a.Files++
			if info, err := d.Info(); err == nil {
				a.Bytes += info.Size()
			}
		}
		return nil
	})
	return a
}

// tableInventory describes one catalog table and, when its files lie in
// the warehouse, the area that removes them.
func (b *bases) tableInventory(ctx context.Context, s TeardownScope, id table.Identifier, warn func(name, detail string)) (TableInventory, *AreaInventory, *KeptItem) {
	name := id[len(id)-1]
	ti := TableInventory{Name: name, InPlan: slices.Contains(s.PlanTables, name), Rows: -1}
	var location string
	tbl, err := s.Catalog.LoadTable(ctx, id)
	if err != nil {
		ti.Note = "its metadata cannot be read (" + err.Error() + "); the catalog entry is dropped and the default location removed"
		ti.Managed = true // a broken entry in Lima's namespace: Lima's to clean
		if b.warehouseShown != "" {
			location = filepath.Join(b.warehouseShown, s.Namespace+".db", name)
		}
	} else {
		md := tbl.Metadata()
		ti.Managed = md.Properties()["lima.managed"] == "true"
		ti.Snapshots = len(md.Snapshots())
		if cur := md.CurrentSnapshot(); cur != nil && cur.Summary != nil {
			if n, err := strconv.ParseInt(cur.Summary.Properties["total-records"], 10, 64); err == nil {
				ti.Rows = n
			}
		} else if cur == nil {
			ti.Rows = 0
		}
		location = localPath(md.Location())
		ti.Location = md.Location()
	}
	ti.Drop = ti.InPlan || ti.Managed
	if !ti.Drop {
		return ti, nil, nil
	}
	if l, ok := parseS3(ti.Location); ok && b.s3 != nil && l.bucket == b.s3.bucket && l.key != "" &&
		strings.HasPrefix(dirPrefix(l.key), dirPrefix(b.s3.key)) && dirPrefix(l.key) != dirPrefix(b.s3.key) {
		ti.RemoveFiles = true
		b.s3Tables = append(b.s3Tables, s3Table{name: name, prefix: dirPrefix(l.key)})
		return ti, nil, nil
	}
	if location == "" {
		ti.Note = "its location " + ti.Location + " is not a local folder: its files are kept"
		warn("table "+name, ti.Note)
		return ti, nil, &KeptItem{Path: ti.Location, Reason: "files of " + name + " outside the local warehouse"}
	}
	if ti.Location == "" {
		ti.Location = location
	}
	rel, ok := b.relInWarehouse(location)
	if !ok {
		ti.Note = "its folder " + location + " lies outside the warehouse: its files are kept"
		warn("table "+name, ti.Note)
		return ti, nil, &KeptItem{Path: location, Reason: "files of " + name + " outside the warehouse (the catalog entry is dropped)"}
	}
	a := b.area(AreaTable, "table "+s.Namespace+"."+name, BaseWarehouse, rel, nil)
	if !a.Exists {
		return ti, nil, nil
	}
	if a.Symlinks == 1 && a.Files == 0 && a.Dirs == 0 {
		ti.Note = "its folder is a symbolic link: the link is removed, what it points to is kept"
		warn("table "+name, ti.Note)
	}
	ti.RemoveFiles = true
	ti.Symlinks = a.Symlinks
	b.classify(rel, &ti)
	return ti, &a, nil
}

// classify splits a table area's files into data, metadata and other.
func (b *bases) classify(rel string, ti *TableInventory) {
	b.walkFiles(rel, func(sub string, size int64) {
		switch {
		case strings.HasPrefix(sub, "data/"):
			ti.DataFiles++
			ti.DataBytes += size
		case strings.HasPrefix(sub, "metadata/"):
			ti.MetadataFiles++
			ti.MetadataBytes += size
		default:
			ti.OtherFiles++
			ti.OtherBytes += size
		}
	})
}

// walkFiles calls fn with the path below rel and the size of every regular
// file in the warehouse folder rel (symbolic links are not followed and
// nothing outside the warehouse is reached).
func (b *bases) walkFiles(rel string, fn func(sub string, size int64)) {
	r, err := os.OpenRoot(b.warehouse)
	if err != nil {
		return
	}
	defer r.Close()
	top := filepath.ToSlash(rel)
	if fi, err := r.Lstat(rel); err != nil || !fi.IsDir() {
		return
	}
	_ = fs.WalkDir(r.FS(), top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		fn(strings.TrimPrefix(strings.TrimPrefix(p, top), "/"), info.Size())
		return nil
	})
}

// relInWarehouse returns location relative to the warehouse when it lies
// inside it (lexically, or once the warehouse's own links are resolved).
func (b *bases) relInWarehouse(location string) (string, bool) {
	if b.warehouse == "" {
		return "", false
	}
	for _, base := range []string{b.warehouseShown, b.warehouse} {
		if r, err := filepath.Rel(base, filepath.Clean(location)); err == nil && filepath.IsLocal(r) {
			return r, true
		}
	}
	return "", false
}

func (b *bases) otherWarehouseEntries(nsRel string) []string {
	if b.warehouse == "" {
		return nil
	}
	ents, err := os.ReadDir(b.warehouse)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); n != nsRel && n != "raw" && n != "history" {
			out = append(out, n)
		}
	}
	return out
}

func (b *bases) stateEntries() []string {
	ents, err := os.ReadDir(b.state)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// checkArea verifies that an area lies inside its base and over no
// protected path, and returns its real path.
func (b *bases) checkArea(a AreaInventory) (string, error) {
	root := b.base(a.Base)
	if root == "" {
		return "", fmt.Errorf("%s: unknown or missing base %q", a.Path, a.Base)
	}
	if a.Rel == "." && a.Base != BaseReports {
		return "", fmt.Errorf("%s: only the reports folder is emptied as a whole", a.Path)
	}
	if a.Rel != "." && !filepath.IsLocal(a.Rel) {
		return "", fmt.Errorf("%s: %q is not a path inside the %s", a.Path, a.Rel, a.Base)
	}
	p := filepath.Join(root, a.Rel)
	// The parent's links (inside the base) resolved; the last element is
	// removed as it is, never followed.
	real := p
	if a.Rel != "." {
		if parent, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			real = filepath.Join(parent, filepath.Base(p))
		}
	}
	if real != root && !within(root, real) {
		return "", fmt.Errorf("%s leads outside the %s through a link", a.Path, a.Base)
	}
	for _, pr := range b.protected {
		if pr == real || within(real, pr) {
			what := protectedReason(pr)
			if pr == b.workspaceReal {
				what = "the workspace"
			}
			return "", fmt.Errorf("removing %s would remove %s, %s", a.Path, b.show(pr), what)
		}
	}
	return real, nil
}

// removeArea removes an area through an os.Root on its base: nothing
// outside the base is reached and links are removed, not followed.
func (b *bases) removeArea(a AreaInventory) (files, bytes int64, err error) {
	if _, err := b.checkArea(a); err != nil {
		return 0, 0, err
	}
	fresh := b.area(a.Kind, a.Name, a.Base, a.Rel, nil)
	r, err := os.OpenRoot(b.base(a.Base))
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	if a.Rel == "." {
		ents, err := fs.ReadDir(r.FS(), ".")
		if err != nil {
			return 0, 0, err
		}
		var errs []error
		for _, e := range ents {
			errs = append(errs, r.RemoveAll(e.Name()))
		}
		if err := errors.Join(errs...); err != nil {
			return 0, 0, err
		}
	} else if err := r.RemoveAll(a.Rel); err != nil {
		return 0, 0, err
	}
	return fresh.Files, fresh.Bytes, nil
}

func (b *bases) exists(a AreaInventory) (bool, error) {
	root := b.base(a.Base)
	if root == "" {
		return false, nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	defer r.Close()
	if a.Rel == "." {
		ents, err := fs.ReadDir(r.FS(), ".")
		return len(ents) > 0, err
	}
	_, err = r.Lstat(a.Rel)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func countState(ctx context.Context, s TeardownScope, inv *Inventory) error {
	st := &inv.State
	st.Open = true
	runs, err := s.State.Runs(ctx, 0)
	if err != nil {
		return err
	}
	st.Runs = int64(len(runs))
	tables := slices.Clone(s.PlanTables)
	for _, t := range inv.Tables {
		if !slices.Contains(tables, t.Name) {
			tables = append(tables, t.Name)
		}
	}
	sort.Strings(tables)
	st.ExceptionsByStatus = map[string]int64{}
	for _, t := range tables {
		if _, ok, err := s.State.Watermark(ctx, t); err != nil {
			return err
		} else if ok {
			st.Watermarks++
		}
		by, err := s.State.CountBy(ctx, ledger.Filter{Table: t}, ledger.ByStatus)
		if err != nil {
			return err
		}
		for k, n := range by {
			st.ExceptionsByStatus[k] += n
			st.Exceptions += n
		}
	}
	loads, err := s.State.PendingLoads(ctx)
	if err != nil {
		return err
	}
	for _, l := range loads {
		if slices.Contains(tables, l.Table) {
			st.PendingLoads++
		}
	}
	return nil
}

// ---- paths ----

// within reports whether p lies strictly inside dir (both clean, absolute).
func within(dir, p string) bool {
	if dir == "" || p == "" {
		return false
	}
	r, err := filepath.Rel(dir, p)
	return err == nil && r != "." && filepath.IsLocal(r)
}

// realPath resolves links of the longest existing prefix of p.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// linkTarget is the target of p when p itself is a symbolic link, else "".
func linkTarget(p string) string {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	target, err := os.Readlink(p)
	if err != nil || target == "" {
		return "(unreadable)"
	}
	return target
}

// existingReal resolves an existing folder; "" when it does not exist or
// is not a folder.
func existingReal(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return ""
	}
	return r
}

func localPath(loc string) string {
	if fileuri.Is(loc) {
		p, err := fileuri.ToPath(loc)
		if err != nil {
			return ""
		}
		return p
	}
	if filepath.IsAbs(loc) {
		return loc
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isCatalogEntry(entry, catalogFile string) bool {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if entry == catalogFile+suffix || within(entry, catalogFile+suffix) {
			return true
		}
	}
	return false
}

func removeIfEmptyDir(d string) {
	if d == "" {
		return
	}
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() {
		return
	}
	ents, err := os.ReadDir(d)
	if err == nil && len(ents) == 0 {
		_ = os.Remove(d)
	}
}

func protectedReason(p string) string {
	switch filepath.Base(p) {
	case "README.md", "ARCHITECTURE.md":
		return "your platform's documentation"
	}
	if strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") {
		return "the plan"
	}
	return "the source data"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// HumanBytes formats a byte count for people (1024-based units).
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
