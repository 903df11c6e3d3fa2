package flow

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/reports"
)

// MigrateOptions configure one migration (lima-tui migrate).
type MigrateOptions struct {
	// Workspace holds the embedded catalog and the side records (.lima),
	// the reports (reports/) and the default warehouse (lake/).
	Workspace Workspace
	// Glue is database.table of a Hive/Parquet table in Glue; Folder a
	// key=value folder tree (a path or s3://…). Exactly one is set.
	Glue   string
	Folder string
	// Method is migrate.InPlace or migrate.Rewrite (no default: the
	// choice is the person's).
	Method string
	// Partition is the rewrite's spec in the plan's syntax (empty:
	// identity on the Hive keys).
	Partition []string
	// Target is namespace.table of the Iceberg table in the embedded
	// catalog (default: the Glue name, or migrated.<folder name>).
	Target string
	// Warehouse of the Iceberg table (default: the workspace's lake/).
	Warehouse string
	// Region, GlueEndpoint and CatalogID reach Glue (credentials: the
	// default chain only).
	Region, GlueEndpoint, CatalogID string
	// Confirm asks for the typed confirmation once validation passed; it
	// returns what the person typed. Nil: validate only, switch nothing.
	Confirm func(ctx context.Context, v *migrate.Validation) (string, error)
	// Notify receives progress lines (may be nil).
	Notify func(string)
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// MigrateResult is what a migration did.
type MigrateResult struct {
	Report    *reports.MigrationReport
	ReportDir string
}

// ErrMigrateValidation: the Iceberg table differs from the Hive table.
var ErrMigrateValidation = errors.New("migration validation failed")

func (o *MigrateOptions) notify(format string, a ...any) {
	if o.Notify != nil {
		o.Notify(fmt.Sprintf(format, a...))
	}
}

func (o *MigrateOptions) glueClient(ctx context.Context) (migrate.GlueAPI, error) {
	return hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: o.Region, Endpoint: o.GlueEndpoint, CatalogID: o.CatalogID})
}

// SplitTableName splits database.table.
func SplitTableName(s string) (string, string, error) {
	db, t, ok := strings.Cut(s, ".")
	if !ok || db == "" || t == "" || strings.Contains(t, ".") {
		return "", "", fmt.Errorf("%w: %q is not database.table", ErrUsage, s)
	}
	return db, t, nil
}

// Migrate runs one migration: read the Hive table, build the Iceberg
// table (in place or by rewrite), validate both paths partition by
// partition, write the report, and — only for a Glue table, only when
// validation passed and Confirm returns database.table — switch the Glue
// entry (re-checking the Hive listing first).
func Migrate(ctx context.Context, o MigrateOptions) (*MigrateResult, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if (o.Glue == "") == (o.Folder == "") {
		return nil, fmt.Errorf("%w: name the Hive table: --glue database.table or --folder PATH", ErrUsage)
	}
	if o.Method != migrate.InPlace && o.Method != migrate.Rewrite {
		return nil, fmt.Errorf("%w: --method in-place or --method rewrite (see the trade-offs: lima-tui migrate --help)", ErrUsage)
	}
	var spec []plan.PartitionField
	for _, s := range o.Partition {
		p, err := plan.ParsePartition(s)
		if err != nil {
			return nil, fmt.Errorf("%w: --partition: %w", ErrUsage, err)
		}
		spec = append(spec, p)
	}
	if len(spec) > 0 && o.Method != migrate.Rewrite {
		return nil, fmt.Errorf("%w: --partition applies to --method rewrite (in place keeps the Hive layout)", ErrUsage)
	}
	unlock, err := Lock(ctx, o.Workspace, 0)
	if err != nil {
		return nil, err
	}
	defer unlock()
	started := now()
	runID := NewRunID(started)
	rep := &reports.MigrationReport{RunID: runID, StartedAt: started, Method: o.Method, Partition: o.Partition, TradeOffs: migrate.TradeOffs[o.Method]}

	var (
		src *migrate.Source
		g   migrate.GlueAPI
	)
	if o.Glue != "" {
		db, tbl, err := SplitTableName(o.Glue)
		if err != nil {
			return nil, err
		}
		if g, err = o.glueClient(ctx); err != nil {
			return nil, err
		}
		if src, err = migrate.FromGlue(ctx, g, o.CatalogID, db, tbl); err != nil {
			return nil, err
		}
	} else if src, err = migrate.FromFolder(ctx, o.Folder); err != nil {
		return nil, err
	}
	rep.Source = src.Name()
	files, fp, err := src.Files(ctx)
	if err != nil {
		return nil, err
	}
	layout, err := migrate.Resolve(ctx, src, files)
	if err != nil {
		return nil, err
	}
	o.notify("%s: %d partitions, %d files", src.Name(), len(src.Partitions), len(files))

	ns, name := src.Database, src.Table
	if src.Kind != "glue" {
		ns, name = "migrated", strings.ToLower(path.Base(strings.TrimRight(filepath.ToSlash(src.Location), "/")))
	}
	if o.Target != "" {
		if ns, name, err = SplitTableName(o.Target); err != nil {
			return nil, err
		}
	}
	wh := o.Warehouse
	if wh == "" {
		wh = filepath.Join(o.Workspace.Dir, "lake")
	}
	if strings.HasPrefix(src.Location, "s3://") && !strings.HasPrefix(wh, "s3://") {
		return nil, fmt.Errorf("%w: %s is on S3, so the Iceberg table's metadata must be on S3 too (readers of the catalog cannot read a local file): give --warehouse s3://bucket/prefix", ErrUsage, src.Name())
	}
	if err := fsx.MkdirPrivate(o.Workspace.StateDir()); err != nil {
		return nil, err
	}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(o.Workspace.StateDir(), "catalog.db"), Warehouse: wh})
	if err != nil {
		return nil, err
	}
	defer sk.Close()
	tgt := migrate.Target{Sink: sk, Namespace: ns, Name: name}
	loadID := "migrate-" + runID
	built, reuse, err := migrate.Existing(ctx, tgt, o.Method)
	if err != nil {
		return nil, err
	}
	if reuse {
		o.notify("the Iceberg table %s.%s was built by an earlier %s migration: validating it again", ns, name, o.Method)
		rep.Notes = append(rep.Notes, "the Iceberg table was built by an earlier run (snapshot "+fmt.Sprint(built.Table.CurrentSnapshot().SnapshotID)+"); this run validated it again")
	} else if o.Method == migrate.InPlace {
		o.notify("in place: adding %d Hive files to the Iceberg table %s.%s", len(files), ns, name)
		built, err = migrate.BuildInPlace(ctx, src, layout, files, tgt, loadID)
	} else {
		o.notify("rewrite: reading %d Hive files into the Iceberg table %s.%s", len(files), ns, name)
		built, err = migrate.BuildRewrite(ctx, src, layout, files, tgt, spec, loadID, nil)
	}
	if err != nil {
		return nil, err
	}
	rep.RowsRead, rep.RowsAdded = built.RowsRead, built.RowsAdded
	o.notify("validating: the Hive path against the Iceberg path, partition by partition")
	v, err := migrate.Validate(ctx, src, layout, files, fp, built.Table, nil)
	if err != nil {
		return nil, err
	}
	v.Method = o.Method
	rep.Validation = v
	res := &MigrateResult{Report: rep}
	write := func() error {
		rep.FinishedAt = now()
		d, err := reports.WriteMigration(o.Workspace.ReportsDir(), rep)
		res.ReportDir = d
		return err
	}
	switch {
	case !v.OK:
		rep.Status = reports.MigrationFailed
		rep.Switch = &reports.MigrationSwitch{Refusal: "validation failed; the Glue entry was not touched"}
		if src.Kind != "glue" {
			rep.Switch = nil
		}
		if err := write(); err != nil {
			return res, err
		}
		return res, fmt.Errorf("%w: see %s", ErrMigrateValidation, res.ReportDir)
	case src.Kind != "glue":
		rep.Status = reports.MigrationValidated
		rep.Notes = append(rep.Notes, "a folder has no catalog entry to switch: the Iceberg table is "+ns+"."+name+" in the embedded catalog")
		return res, write()
	case o.Confirm == nil:
		rep.Status = reports.MigrationValidated
		rep.Switch = &reports.MigrationSwitch{Refusal: "not asked to switch (no --confirm): the Glue entry was not touched"}
		return res, write()
	}
	// The report of the validation is on disk before anyone is asked.
	rep.Status = reports.MigrationValidated
	if err := write(); err != nil {
		return res, err
	}
	typed, err := o.Confirm(ctx, v)
	if err != nil {
		return res, err
	}
	sw, err := migrate.Switch(ctx, g, src, v, built.Table, migrate.SwitchOptions{Confirm: typed, StateDir: o.Workspace.StateDir(), CatalogID: o.CatalogID, Method: o.Method, Now: now()})
	if err != nil {
		rep.Status = reports.MigrationNotSwitched
		rep.Switch = &reports.MigrationSwitch{Refusal: err.Error()}
		if werr := write(); werr != nil {
			return res, errors.Join(err, werr)
		}
		return res, err
	}
	rep.Status = reports.MigrationSwitched
	rep.Switch = &reports.MigrationSwitch{Done: true, Backup: sw.Backup, Record: sw.Record}
	return res, write()
}

// MigrateRollback restores the Glue entry of database.table from the side
// record of its switch.
func MigrateRollback(ctx context.Context, o MigrateOptions) (*migrate.Record, error) {
	db, tbl, err := SplitTableName(o.Glue)
	if err != nil {
		return nil, err
	}
	g, err := o.glueClient(ctx)
	if err != nil {
		return nil, err
	}
	return migrate.Rollback(ctx, g, o.Workspace.StateDir(), o.CatalogID, db, tbl)
}

// MigrateDropBackup removes the backup table and the side record of
// database.table's switch once confirm is database.table typed exactly.
func MigrateDropBackup(ctx context.Context, o MigrateOptions, confirm string) (*migrate.Record, error) {
	db, tbl, err := SplitTableName(o.Glue)
	if err != nil {
		return nil, err
	}
	if err := migrate.Confirmation(db+"."+tbl, confirm); err != nil {
		return nil, err
	}
	g, err := o.glueClient(ctx)
	if err != nil {
		return nil, err
	}
	return migrate.DropBackup(ctx, g, o.Workspace.StateDir(), o.CatalogID, db, tbl)
}

// MigrateRegister registers the Iceberg table from (namespace.table of the
// workspace's embedded SQLite catalog) in the Glue Data Catalog as to
// (database.table) by its metadata location, after confirm is to typed
// exactly; nothing is written, copied or removed, and the embedded entry
// stays (write through one catalog only from then on).
func MigrateRegister(ctx context.Context, o MigrateOptions, from, to, confirm string) (*migrate.Move, error) {
	fns, fname, err := SplitTableName(from)
	if err != nil {
		return nil, err
	}
	tdb, tname, err := SplitTableName(to)
	if err != nil {
		return nil, err
	}
	unlock, err := Lock(ctx, o.Workspace, 0)
	if err != nil {
		return nil, err
	}
	defer unlock()
	wh := o.Warehouse
	if wh == "" {
		wh = filepath.Join(o.Workspace.Dir, "lake")
	}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(o.Workspace.StateDir(), "catalog.db"), Warehouse: wh})
	if err != nil {
		return nil, err
	}
	defer sk.Close()
	gs, err := icesink.OpenGlue(ctx, icesink.Options{}, icesink.AWSOptions{Region: o.Region, GlueEndpoint: o.GlueEndpoint, CatalogID: o.CatalogID, Warehouse: wh})
	if err != nil {
		return nil, err
	}
	defer gs.Close()
	return migrate.RegisterIceberg(ctx, sk.Catalog(), []string{fns, fname}, gs.Catalog(), []string{tdb, tname}, confirm)
}
