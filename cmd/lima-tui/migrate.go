package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

const migrateUsage = `lima-tui migrate --glue DB.TABLE | --folder PATH --method in-place|rewrite [--partition SPEC]... [--confirm DB.TABLE]
lima-tui migrate --glue DB.TABLE --rollback
lima-tui migrate --glue DB.TABLE --drop-backup --confirm DB.TABLE
lima-tui migrate --iceberg NS.TABLE --register-glue DB.TABLE --confirm DB.TABLE

Converts a Hive-style Parquet table (a Glue table stored as Parquet, or a
key=value folder tree on disk or S3) into an Iceberg table in the
workspace's embedded catalog, then validates it against the Hive files
partition by partition (rows, exact sums of integer and decimal columns,
null counts, every row's values; every partition accounted for) and writes
reports/<run-id>/report.json and report.md.

Only a Glue table is switched, only after validation passed, and only once
DB.TABLE is typed (at the prompt, or --confirm DB.TABLE headless): the Hive
files are listed again and must be unchanged, the original definition is
kept as <table>_hive_backup_<time> and in .lima/migrate/, and the entry then
points at the Iceberg table. --rollback restores the original definition;
--drop-backup removes the backup (no rollback after it). Nothing is ever
deleted in S3.

--iceberg with --register-glue moves a self-managed Iceberg table of the
workspace's embedded catalog into Glue: the Glue entry names the table's
current metadata file (nothing is copied); the table is then read through
both catalogs and compared. The embedded entry stays: write through one
catalog only from then on.

Methods (there is no default: choose one):
`

// The typed confirmation is asked for on a terminal (tests replace both).
var (
	migrateInteractive           = func() bool { return isTerminal(os.Stdin) && isTerminal(os.Stderr) }
	migrateStdin       io.Reader = os.Stdin
)

// cmdMigrate converts a Hive table to Iceberg, validates it and switches
// the Glue entry after the typed name.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("migrate", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, migrateUsage)
		for _, m := range []string{migrate.InPlace, migrate.Rewrite} {
			fmt.Fprintf(stderr, "  %s:\n", m)
			for _, t := range migrate.TradeOffs[m] {
				fmt.Fprintf(stderr, "    - %s\n", t)
			}
		}
		fmt.Fprint(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	dir := fs.String("dir", ".", "the workspace `folder` (.lima/ catalog and side records, reports/, lake/)")
	glueName := fs.String("glue", "", "the Hive/Parquet table in the Glue Data Catalog: `database.table`")
	folder := fs.String("folder", "", "a key=value folder tree of Parquet files: a `path` or s3://bucket/prefix")
	method := fs.String("method", "", "in-place (the existing files, no rewrite) or rewrite (read and written anew)")
	var partition multi
	fs.Var(&partition, "partition", "rewrite: a partition `field` in the plan's syntax, repeatable: col, month(col), bucket(N, col)…")
	target := fs.String("target", "", "the Iceberg table in the embedded catalog: `namespace.table` (default: the Glue name, or migrated.<folder>)")
	warehouse := fs.String("warehouse", "", "where the Iceberg table's metadata (and rewritten files) go: a `folder` or s3:// URI (default: <dir>/lake)")
	region := fs.String("region", "", "the AWS `region` of the Glue Data Catalog (default: the AWS environment)")
	endpoint := fs.String("glue-endpoint", "", "a Glue endpoint `URL` override (default: AWS_ENDPOINT_URL_GLUE)")
	catalogID := fs.String("catalog-id", "", "the `account` of the Data Catalog (default: the caller's)")
	confirm := fs.String("confirm", "", "switch headless: `database.table` typed exactly")
	rollback := fs.Bool("rollback", false, "restore the Glue entry's original definition from the side record")
	dropBackup := fs.Bool("drop-backup", false, "remove the backup table and the side record (needs --confirm database.table)")
	icebergName := fs.String("iceberg", "", "an Iceberg table of the workspace's embedded catalog to register elsewhere: `namespace.table`")
	registerGlue := fs.String("register-glue", "", "with --iceberg: register it in the Glue Data Catalog as `database.table`")
	jsonOut := fs.Bool("json", false, "print the report as JSON on stdout")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui migrate: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	o := flow.MigrateOptions{Workspace: flow.Workspace{Dir: *dir}, Glue: *glueName, Folder: *folder, Method: *method, Partition: partition,
		Target: *target, Warehouse: *warehouse, Region: *region, GlueEndpoint: *endpoint, CatalogID: *catalogID,
		Notify: func(s string) { fmt.Fprintln(stderr, ui.Sanitize(s)) }}
	switch {
	case (*icebergName == "") != (*registerGlue == ""):
		fmt.Fprintln(stderr, "lima-tui migrate: --iceberg and --register-glue go together")
		return exitUsage
	case *icebergName != "":
		m, err := flow.MigrateRegister(ctx, o, *icebergName, *registerGlue, *confirm)
		if err != nil {
			return fail(stderr, err)
		}
		for _, c := range m.Checks {
			fmt.Fprintf(stderr, "%s  %s\n", reports.OKMark(c.OK), ui.Sanitize(c.Name))
		}
		if *jsonOut {
			b, _ := json.MarshalIndent(m, "", "  ")
			fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
		}
		if !m.OK {
			fmt.Fprintf(stderr, "lima-tui migrate: %s reads differently through Glue than through the embedded catalog\n", ui.Sanitize(m.To))
			return exitReconcile
		}
		fmt.Fprintf(stderr, "Registered %s in Glue as %s (metadata %s). The embedded entry stays: write through one catalog only from now on.\n",
			ui.Sanitize(m.From), ui.Sanitize(m.To), ui.Sanitize(m.Metadata))
		return exitOK
	case *rollback && *dropBackup:
		fmt.Fprintln(stderr, "lima-tui migrate: --rollback or --drop-backup, not both")
		return exitUsage
	case *rollback:
		rec, err := flow.MigrateRollback(ctx, o)
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stderr, "Restored %s.%s to its definition before the switch of %s. The backup %s and the side record stay until --drop-backup.\n",
			ui.Sanitize(rec.Database), ui.Sanitize(rec.Table), rec.SwitchedAt.Format("2006-01-02 15:04:05 MST"), ui.Sanitize(rec.Backup))
		return exitOK
	case *dropBackup:
		rec, err := flow.MigrateDropBackup(ctx, o, *confirm)
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stderr, "Dropped the backup table %s.%s and the side record; the switch can no longer be rolled back. No data file was touched.\n",
			ui.Sanitize(rec.Database), ui.Sanitize(rec.Backup))
		return exitOK
	}
	if *method != migrate.InPlace && *method != migrate.Rewrite {
		fmt.Fprintln(stderr, "lima-tui migrate: choose --method in-place or --method rewrite; the trade-offs:")
		for _, m := range []string{migrate.InPlace, migrate.Rewrite} {
			fmt.Fprintf(stderr, "  %s:\n", m)
			for _, t := range migrate.TradeOffs[m] {
				fmt.Fprintf(stderr, "    - %s\n", t)
			}
		}
		return exitUsage
	}
	// The trade-offs of the chosen method, before anything happens.
	fmt.Fprintf(stderr, "Method %s:\n", *method)
	for _, t := range migrate.TradeOffs[*method] {
		fmt.Fprintf(stderr, "  - %s\n", t)
	}
	if *glueName != "" {
		switch {
		case wasSet(fs, "confirm"):
			typed := *confirm
			o.Confirm = func(context.Context, *migrate.Validation) (string, error) { return typed, nil }
		case migrateInteractive():
			o.Confirm = func(_ context.Context, v *migrate.Validation) (string, error) {
				fmt.Fprintf(stderr, "\nValidation passed. To point the Glue entry %s at the Iceberg table %s, type %s (anything else: do not switch): ",
					ui.Sanitize(*glueName), ui.Sanitize(v.Iceberg), ui.Sanitize(*glueName))
				line, err := bufio.NewReader(migrateStdin).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return "", err
				}
				return strings.TrimRight(line, "\r\n"), nil
			}
		}
	}
	res, err := flow.Migrate(ctx, o)
	if res != nil && res.Report.Validation != nil {
		fmt.Fprintln(stderr)
		for _, line := range reports.MigrationTable(res.Report.Validation) {
			fmt.Fprintln(stderr, ui.Sanitize(line))
		}
		fmt.Fprintf(stderr, "\nreport: %s\n", ui.Sanitize(res.ReportDir))
		if *jsonOut {
			b, _ := json.MarshalIndent(res.Report, "", "  ")
			fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
		}
	}
	switch {
	case errors.Is(err, flow.ErrMigrateValidation), errors.Is(err, migrate.ErrChanged):
		fmt.Fprintf(stderr, "lima-tui migrate: %s\n", ui.Sanitize(err.Error()))
		return exitReconcile
	case errors.Is(err, migrate.ErrInPlaceUnsupported), errors.Is(err, migrate.ErrNotHive):
		fmt.Fprintf(stderr, "lima-tui migrate: %s\n", ui.Sanitize(err.Error()))
		return exitPrecondition
	case err != nil:
		return fail(stderr, err)
	}
	switch res.Report.Status {
	case reports.MigrationSwitched:
		fmt.Fprintf(stderr, "Switched: %s now points at the Iceberg table. The original definition is kept as %s (lima-tui migrate --glue %s --rollback restores it).\n",
			ui.Sanitize(*glueName), ui.Sanitize(res.Report.Switch.Backup), ui.Sanitize(*glueName))
	case reports.MigrationValidated:
		if *glueName != "" {
			fmt.Fprintf(stderr, "Validated; the Glue entry was not touched. To switch: lima-tui migrate --glue %s --method %s --confirm %s\n(the table built now is validated again, not rebuilt)\n",
				ui.Sanitize(*glueName), *method, ui.Sanitize(*glueName))
		}
	}
	return exitOK
}
