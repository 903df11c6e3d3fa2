package gates

// Gate 5 for the AWS lake layouts: Hive-style tables (folders
// <warehouse>/<namespace>/<table>/ committed by _lima manifests), their Glue
// Data Catalog registrations, and a warehouse on S3, whose objects are
// listed under the plan's prefixes only and deleted in batches.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// LayoutHive names the Hive-style layout of TeardownScope.Layout.
const LayoutHive = "hive"

// AreaPrefix kinds of S3 prefixes (besides AreaTable, AreaNamespace,
// AreaRaw and AreaHistory).
const maxDeleteBatch = 1000 // S3's DeleteObjects limit

// StoreObject is one object of an object store.
type StoreObject struct {
	Key  string
	Size int64
}

// TeardownObjects is the part of an object store (S3) gate 5 uses.
type TeardownObjects interface {
	// List returns every object below prefix (all pages).
	List(ctx context.Context, bucket, prefix string) ([]StoreObject, error)
	// DeleteObjects deletes up to 1000 keys in one request and returns the
	// keys that could not be deleted with their errors.
	DeleteObjects(ctx context.Context, bucket string, keys []string) error
}

// GlueTable is a table of the Glue Data Catalog, as gate 5 sees it.
type GlueTable struct {
	Name       string
	Location   string
	Managed    bool // lima.managed=true
	Partitions int
}

// TeardownGlue is the part of the Glue Data Catalog gate 5 uses.
type TeardownGlue interface {
	// Database reports whether the database exists and whether Lima
	// created it (lima.managed=true).
	Database(ctx context.Context, name string) (exists, managed bool, err error)
	// Tables lists the tables of the database (all pages).
	Tables(ctx context.Context, db string) ([]GlueTable, error)
	// DeleteTable deletes a table and its partitions.
	DeleteTable(ctx context.Context, db, name string) error
	// DeleteDatabase deletes the database (Glue deletes its tables too:
	// gate 5 calls it only once GetTables shows it empty).
	DeleteDatabase(ctx context.Context, db string) error
}

// PrefixInventory is one S3 prefix whose listed objects a teardown
// deletes: exactly Keys, nothing else.
type PrefixInventory struct {
	Kind    string   `json:"kind"`
	Name    string   `json:"name"`
	URI     string   `json:"uri"`
	Bucket  string   `json:"bucket"`
	Prefix  string   `json:"prefix"`
	Objects int64    `json:"objects"`
	Bytes   int64    `json:"bytes"`
	Keys    []string `json:"keys"`
}

// s3loc is a parsed s3://bucket/key.
type s3loc struct{ bucket, key string }

func parseS3(uri string) (s3loc, bool) {
	l := strings.ToLower(uri)
	var rest string
	switch {
	case strings.HasPrefix(l, "s3://"):
		rest = uri[5:]
	case strings.HasPrefix(l, "s3a://"):
		rest = uri[6:]
	default:
		return s3loc{}, false
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return s3loc{}, false
	}
	key = strings.Trim(key, "/")
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return s3loc{}, false
		}
	}
	return s3loc{bucket: bucket, key: key}, true
}

// dirPrefix is key as a folder prefix ("" or "a/b/").
func dirPrefix(key string) string {
	if key == "" {
		return ""
	}
	return key + "/"
}

func (l s3loc) uri(prefix string) string { return "s3://" + l.bucket + "/" + prefix }

// hiveNames are the table folder names of the namespace folder (local).
func (b *bases) localHiveTables(nsRel string) (map[string]bool, error) {
	out := map[string]bool{}
	if b.warehouse == "" {
		return out, nil
	}
	ents, err := os.ReadDir(filepath.Join(b.warehouse, nsRel))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		out[e.Name()] = e.IsDir() && !strings.HasPrefix(e.Name(), "_") && !strings.HasPrefix(e.Name(), ".")
	}
	return out, nil
}

// classifyHive splits a hive table folder's files: manifests and table
// metadata (_lima/) are metadata, Parquet in partition folders data, the
// rest (an unfinished _staging/) other.
func classifyHive(sub string, size int64, ti *TableInventory) {
	switch {
	case strings.HasPrefix(sub, "_lima/"):
		ti.MetadataFiles++
		ti.MetadataBytes += size
		if strings.HasPrefix(sub, "_lima/commits/") && strings.HasSuffix(sub, ".json") {
			ti.Snapshots++
		}
	case !strings.HasPrefix(sub, "_") && strings.HasSuffix(sub, ".parquet"):
		ti.DataFiles++
		ti.DataBytes += size
	default:
		ti.OtherFiles++
		ti.OtherBytes += size
	}
}

func inPlan(s TeardownScope, name string) bool {
	return slices.ContainsFunc(s.PlanTables, func(t string) bool { return strings.EqualFold(t, name) })
}

// glueDatabase is the Glue database of the plan's tables.
func glueDatabase(s TeardownScope) string {
	if s.GlueDatabase != "" {
		return s.GlueDatabase
	}
	return strings.ToLower(s.Namespace)
}

// glueInventory reads the Glue database of the plan: its tables, and
// whether the database itself goes.
func glueInventory(ctx context.Context, s TeardownScope, inv *Inventory) (map[string]GlueTable, error) {
	db := glueDatabase(s)
	exists, managed, err := s.Glue.Database(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("gate 5: Glue database %s: %w", db, err)
	}
	inv.Catalog.Database = db
	inv.Catalog.NamespaceExists = exists
	inv.Catalog.DatabaseManaged = managed
	out := map[string]GlueTable{}
	if !exists {
		return out, nil
	}
	tables, err := s.Glue.Tables(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("gate 5: list the Glue tables of %s: %w", db, err)
	}
	for _, t := range tables {
		out[t.Name] = t
	}
	return out, nil
}

// hiveInventory lists the Hive-style tables: the Glue tables of the
// database (when there is a Glue catalog) and the table folders under the
// namespace folder. A table is Lima's when the plan names it, when its Glue
// entry says lima.managed, or when its folder holds _lima/ manifests.
func (b *bases) hiveInventory(ctx context.Context, s TeardownScope, inv *Inventory, listing []StoreObject, warn func(name, detail string)) (keptTable bool, tableRels []string, err error) {
	var glueTables map[string]GlueTable
	if s.Glue != nil {
		if glueTables, err = glueInventory(ctx, s, inv); err != nil {
			return false, nil, err
		}
	}
	nsRel := s.Namespace
	// Folder names under the namespace folder, with whether they hold _lima/.
	folders := map[string]bool{} // name -> has _lima/
	if b.s3 != nil {
		nsPrefix := dirPrefix(b.s3.key) + nsRel + "/"
		for _, o := range listing {
			rest, ok := strings.CutPrefix(o.Key, nsPrefix)
			if !ok {
				continue
			}
			name, sub, ok := strings.Cut(rest, "/")
			if !ok || name == "" || strings.HasPrefix(name, "_") {
				continue
			}
			folders[name] = folders[name] || strings.HasPrefix(sub, "_lima/")
		}
	} else {
		dirs, err := b.localHiveTables(nsRel)
		if err != nil {
			return false, nil, err
		}
		for name, isDir := range dirs {
			if !isDir {
				continue
			}
			_, err := os.Lstat(filepath.Join(b.warehouse, nsRel, name, "_lima"))
			folders[name] = err == nil
		}
	}
	names := map[string]bool{}
	for n := range folders {
		names[n] = true
	}
	for n := range glueTables {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		gt, inGlue := glueTables[name]
		hasLima, hasFolder := folders[name]
		ti := TableInventory{Name: name, InPlan: inPlan(s, name), Managed: gt.Managed || hasLima, InCatalog: inGlue, Partitions: gt.Partitions, Rows: -1, Location: gt.Location}
		ti.Drop = ti.InPlan || ti.Managed
		if !ti.Drop {
			keptTable = true
			what := "folder"
			if inGlue {
				what = "Glue table"
			}
			inv.Kept = append(inv.Kept, KeptItem{Path: s.Namespace + "/" + name, Reason: "a " + what + " in the namespace that this plan did not create (not in the plan, no lima.managed property, no _lima/ manifests)"})
			warn("table "+name, fmt.Sprintf("%s.%s was not created by Lima: it is kept, and so is the namespace", s.Namespace, name))
			inv.Tables = append(inv.Tables, ti)
			continue
		}
		if inGlue {
			inv.Catalog.DropTables++
		}
		if hasFolder {
			rel := filepath.Join(nsRel, name)
			ti.RemoveFiles = true
			if b.s3 != nil {
				ti.Location = b.s3.uri(dirPrefix(b.s3.key) + nsRel + "/" + name)
				p := dirPrefix(b.s3.key) + nsRel + "/" + name + "/"
				b.s3Tables = append(b.s3Tables, s3Table{name: name, prefix: p, hive: true})
				for _, o := range listing {
					if sub, ok := strings.CutPrefix(o.Key, p); ok {
						classifyHive(sub, o.Size, &ti)
					}
				}
			} else {
				if ti.Location == "" {
					ti.Location = filepath.Join(b.warehouseShown, rel)
				}
				a := b.area(AreaTable, "table "+s.Namespace+"."+name, BaseWarehouse, rel, nil)
				if a.Exists {
					b.classifyHiveLocal(rel, &ti)
					ti.Symlinks = a.Symlinks
					inv.Areas = append(inv.Areas, a)
					tableRels = append(tableRels, rel)
				}
			}
		} else if inGlue && gt.Location != "" {
			ti.Note = "its Glue entry points at " + gt.Location + ", which is not a table folder of this warehouse: the entry is deleted, the files are kept"
			warn("table "+name, ti.Note)
			inv.Kept = append(inv.Kept, KeptItem{Path: gt.Location, Reason: "files of " + name + " outside the warehouse's namespace folder (the Glue entry is deleted)"})
		}
		inv.Tables = append(inv.Tables, ti)
	}
	if s.Glue != nil && inv.Catalog.NamespaceExists {
		switch {
		case keptTable:
			inv.Kept = append(inv.Kept, KeptItem{Path: "Glue database " + inv.Catalog.Database, Reason: "it holds tables Lima did not create"})
		case !inv.Catalog.DatabaseManaged:
			inv.Kept = append(inv.Kept, KeptItem{Path: "Glue database " + inv.Catalog.Database, Reason: "Lima did not create it (no lima.managed parameter); only this plan's tables are deleted"})
		default:
			inv.Catalog.DropNamespace = true
		}
	}
	return keptTable, tableRels, nil
}

func (b *bases) classifyHiveLocal(rel string, ti *TableInventory) {
	b.walkFiles(rel, func(sub string, size int64) { classifyHive(sub, size, ti) })
}

// s3Table is a table whose objects lie under prefix.
type s3Table struct {
	name, prefix string
	hive         bool
}

// s3Inventory turns the warehouse listing into the prefixes to delete:
// every table's, the namespace's (what is not under a table, when no
// table is kept), raw/ and history/. Other objects of the warehouse are
// listed as kept.
func (b *bases) s3Inventory(s TeardownScope, inv *Inventory, listing []StoreObject, nsRel string, keptTable bool) {
	wh := dirPrefix(b.s3.key)
	take := func(kind, name, prefix string, skip []string) PrefixInventory {
		p := PrefixInventory{Kind: kind, Name: name, URI: b.s3.uri(prefix), Bucket: b.s3.bucket, Prefix: prefix, Keys: []string{}}
		for _, o := range listing {
			if !strings.HasPrefix(o.Key, prefix) || slices.ContainsFunc(skip, func(sp string) bool { return strings.HasPrefix(o.Key, sp) }) {
				continue
			}
			p.Keys = append(p.Keys, o.Key)
			p.Objects++
			p.Bytes += o.Size
		}
		return p
	}
	var skip []string
	for _, t := range b.s3Tables {
		if !strings.HasPrefix(t.prefix, wh) || t.prefix == wh {
			continue // checked (and refused) by checkPrefix
		}
		p := take(AreaTable, "table "+s.Namespace+"."+t.name, t.prefix, nil)
		skip = append(skip, t.prefix)
		if !t.hive {
			for i := range inv.Tables {
				ti := &inv.Tables[i]
				if ti.Name != t.name {
					continue
				}
				for _, o := range listing {
					sub, ok := strings.CutPrefix(o.Key, t.prefix)
					switch {
					case !ok:
					case strings.HasPrefix(sub, "data/"):
						ti.DataFiles++
						ti.DataBytes += o.Size
					case strings.HasPrefix(sub, "metadata/"):
						ti.MetadataFiles++
						ti.MetadataBytes += o.Size
					default:
						ti.OtherFiles++
						ti.OtherBytes += o.Size
					}
				}
			}
		}
		if p.Objects > 0 {
			inv.Prefixes = append(inv.Prefixes, p)
		}
	}
	if s.Namespace != "" && path.Clean(nsRel) == nsRel && !strings.Contains(nsRel, "/") {
		nsPrefix := wh + nsRel + "/"
		if keptTable {
			if p := take(AreaNamespace, "", nsPrefix, nil); p.Objects > 0 {
				inv.Kept = append(inv.Kept, KeptItem{Path: b.s3.uri(nsPrefix), Reason: "it holds tables Lima did not create"})
			}
		} else if p := take(AreaNamespace, "namespace prefix "+nsRel+"/", nsPrefix, skip); p.Objects > 0 {
			inv.Prefixes = append(inv.Prefixes, p)
		}
	}
	for _, layer := range []string{AreaRaw, AreaHistory} {
		p := take(layer, layer+"/", wh+layer+"/", nil)
		a := AreaInventory{Kind: layer, Name: layer + "/", Base: BaseWarehouse, Rel: layer, Path: p.URI, Exists: p.Objects > 0, Files: p.Objects, Bytes: p.Bytes}
		inv.Layers = append(inv.Layers, a)
		if p.Objects > 0 {
			inv.Prefixes = append(inv.Prefixes, p)
		}
	}
	others := map[string]bool{}
	for _, o := range listing {
		rest := strings.TrimPrefix(o.Key, wh)
		first, _, _ := strings.Cut(rest, "/")
		if first != nsRel && first != AreaRaw && first != AreaHistory {
			others[first] = true
		}
	}
	if len(others) > 0 {
		names := make([]string, 0, len(others))
		for n := range others {
			names = append(names, n)
		}
		sort.Strings(names)
		inv.Kept = append(inv.Kept, KeptItem{Path: b.s3.uri(wh), Reason: fmt.Sprintf("%d other entr%s in the warehouse that this plan did not create (%s)",
			len(names), plural(len(names), "y", "ies"), strings.Join(names, ", "))})
	}
}

// checkPrefix verifies that a prefix lies strictly inside the warehouse,
// that every key lies under it, and that it holds no protected source.
func (b *bases) checkPrefix(p PrefixInventory, protected []string) error {
	if b.s3 == nil || p.Bucket != b.s3.bucket {
		return fmt.Errorf("%s is not in the warehouse bucket", p.URI)
	}
	wh := dirPrefix(b.s3.key)
	rel, ok := strings.CutPrefix(p.Prefix, wh)
	if !ok || rel == "" || !strings.HasSuffix(rel, "/") {
		return fmt.Errorf("%s is not a folder prefix inside the warehouse %s", p.URI, b.s3.uri(wh))
	}
	for _, seg := range strings.Split(strings.TrimSuffix(rel, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%s has an empty or relative segment", p.URI)
		}
	}
	for _, k := range p.Keys {
		if !strings.HasPrefix(k, p.Prefix) {
			return fmt.Errorf("the key %s lies outside %s", k, p.URI)
		}
	}
	for _, pr := range protected {
		l, ok := parseS3(pr)
		if !ok || l.bucket != p.Bucket {
			continue
		}
		if k := dirPrefix(l.key); strings.HasPrefix(k, p.Prefix) || strings.HasPrefix(p.Prefix, k) {
			return fmt.Errorf("deleting %s would delete %s, the source data", p.URI, pr)
		}
	}
	return nil
}

// deletePrefix deletes the prefix's listed keys in batches.
func deletePrefix(ctx context.Context, store TeardownObjects, p PrefixInventory) error {
	for i := 0; i < len(p.Keys); i += maxDeleteBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := store.DeleteObjects(ctx, p.Bucket, p.Keys[i:min(i+maxDeleteBatch, len(p.Keys))]); err != nil {
			return err
		}
	}
	return nil
}

// teardownGlue deletes the plan's Glue tables, then the database when
// Lima created it and it is empty.
func teardownGlue(ctx context.Context, s TeardownScope, inv *Inventory, res *TeardownResult, fail func(name, detail, fix string)) {
	db := inv.Catalog.Database
	for _, t := range inv.Tables {
		if !t.Drop || !t.InCatalog {
			continue
		}
		if err := s.Glue.DeleteTable(ctx, db, t.Name); err != nil {
			fail("delete Glue table "+t.Name, err.Error(), "run the teardown again")
			continue
		}
		res.DroppedTables = append(res.DroppedTables, db+"."+t.Name)
	}
	if !inv.Catalog.DropNamespace {
		return
	}
	left, err := s.Glue.Tables(ctx, db)
	if err != nil {
		fail("delete Glue database "+db, err.Error(), "run the teardown again")
		return
	}
	if len(left) > 0 {
		names := make([]string, 0, len(left))
		for _, t := range left {
			names = append(names, t.Name)
		}
		fail("delete Glue database "+db, "the database still holds tables ("+strings.Join(names, ", ")+"); it is kept", "look at these tables, then run the teardown again")
		return
	}
	if err := s.Glue.DeleteDatabase(ctx, db); err != nil {
		fail("delete Glue database "+db, err.Error(), "run the teardown again")
		return
	}
	res.DroppedNamespace = true
}
