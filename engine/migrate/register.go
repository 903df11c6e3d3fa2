package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/mart"
)

// Registerer is the optional capability of a catalog that registers an
// existing Iceberg table by its metadata location (iceberg-go's Glue and
// REST catalogs have it; its SQL catalog — Lima's embedded SQLite one —
// does not in v0.7.0, so a table cannot be moved into it).
type Registerer interface {
	RegisterTable(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error)
}

// ErrCannotRegister: the target catalog cannot register an existing table.
var ErrCannotRegister = errors.New("the target catalog cannot register an existing Iceberg table")

// Move is the registration of a self-managed Iceberg table in another
// catalog: no data or metadata file is written, copied or removed; the
// target entry names the source's current metadata file.
type Move struct {
	From, To   string
	Metadata   string
	SnapshotID int64
	// Checks compare the table read through both catalogs.
	Checks []Check
	OK     bool
}

// RegisterIceberg registers the current metadata of from's table in to
// under toIdent, once confirm is toIdent typed exactly, then reads the
// table through both catalogs and compares metadata location, current
// snapshot, schema, partition spec, and the rows (count, exact sums,
// nulls, every row's values). The source entry is left as it is.
func RegisterIceberg(ctx context.Context, from catalog.Catalog, fromIdent table.Identifier, to catalog.Catalog, toIdent table.Identifier, confirm string) (*Move, error) {
	reg, ok := to.(Registerer)
	if !ok {
		return nil, fmt.Errorf("%w (%T)", ErrCannotRegister, to)
	}
	src, err := from.LoadTable(ctx, fromIdent)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(fromIdent, "."), err)
	}
	if err := Confirmation(strings.Join(toIdent, "."), confirm); err != nil {
		return nil, err
	}
	if _, err := to.LoadTable(ctx, toIdent); err == nil {
		return nil, fmt.Errorf("%s exists in the target catalog: nothing was registered", strings.Join(toIdent, "."))
	}
	if ok, err := to.CheckNamespaceExists(ctx, toIdent[:len(toIdent)-1]); err == nil && !ok {
		if err := to.CreateNamespace(ctx, toIdent[:len(toIdent)-1], nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("create namespace %s: %w", strings.Join(toIdent[:len(toIdent)-1], "."), err)
		}
	}
	if _, err := reg.RegisterTable(ctx, toIdent, src.MetadataLocation()); err != nil {
		return nil, fmt.Errorf("register %s: %w", strings.Join(toIdent, "."), err)
	}
	// Read back through the target catalog, not the handle RegisterTable gave.
	dst, err := to.LoadTable(ctx, toIdent)
	if err != nil {
		return nil, fmt.Errorf("load %s after registering: %w", strings.Join(toIdent, "."), err)
	}
	m := &Move{From: strings.Join(fromIdent, "."), To: strings.Join(toIdent, "."), Metadata: src.MetadataLocation(), OK: true}
	if s := src.CurrentSnapshot(); s != nil {
		m.SnapshotID = s.SnapshotID
	}
	add := func(name, a, b string) {
		m.Checks = append(m.Checks, Check{Name: name, Hive: a, Iceberg: b, OK: a == b})
		m.OK = m.OK && a == b
	}
	snap := func(t *table.Table) string {
		if s := t.CurrentSnapshot(); s != nil {
			return fmt.Sprint(s.SnapshotID)
		}
		return "none"
	}
	add("metadata location", src.MetadataLocation(), dst.MetadataLocation())
	add("current snapshot", snap(src), snap(dst))
	add("schema", src.Schema().String(), dst.Schema().String())
	add("partition spec", src.Spec().String(), dst.Spec().String())
	l, err := layoutOf(src)
	if err != nil {
		return nil, err
	}
	a, err := readIceberg(ctx, src, l)
	if err != nil {
		return nil, err
	}
	b, err := readIceberg(ctx, dst, l)
	if err != nil {
		return nil, err
	}
	parts, _, _ := compare(l, a, b)
	for _, p := range parts {
		for _, c := range p.Checks {
			add(c.Name, c.Hive, c.Iceberg)
		}
	}
	return m, nil
}

// layoutOf is an Iceberg table's columns as an unpartitioned layout, so
// the table's rows are measured as one group.
func layoutOf(t *table.Table) (*Layout, error) {
	sc, err := table.SchemaToArrowSchema(t.Schema(), nil, true, false)
	if err != nil {
		return nil, err
	}
	l := &Layout{}
	for i, f := range sc.Fields() {
		pt, err := mart.PlanType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		l.Data = append(l.Data, DataCol{Name: f.Name, Type: pt, Arrow: f.Type, index: i})
	}
	return l, nil
}
