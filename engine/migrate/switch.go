package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/internal/typed"
)

// Record is the side record of a switch, written (0600, atomically)
// before the Glue entry changes: the original definition as it was, byte
// for byte restorable, and where the backup table is.
type Record struct {
	Database string `json:"database"`
	Table    string `json:"table"`
	// Backup is the Glue table holding a copy of the original definition.
	Backup     string    `json:"backup_table"`
	SwitchedAt time.Time `json:"switched_at"`
	Method     string    `json:"method"`
	// Metadata is the Iceberg metadata location the entry points at.
	Metadata    string           `json:"iceberg_metadata_location"`
	Fingerprint string           `json:"hive_listing_fingerprint"`
	Original    types.TableInput `json:"original_table_input"`
	RolledBack  *time.Time       `json:"rolled_back_at,omitempty"`
}

// RecordPath is the side record of db.table under the state folder.
func RecordPath(stateDir, db, tbl string) string {
	return filepath.Join(stateDir, "migrate", db+"."+tbl+".json")
}

// ReadRecord loads a side record.
func ReadRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", path, err)
	}
	return &r, nil
}

func writeRecord(path string, r *Record) error {
	if err := fsx.MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFileAtomic(path, append(b, '\n'))
}

// InputOf is the TableInput that recreates t: every field a TableInput
// has, as GetTable returned it (the fields only Glue sets — create and
// update time, version, catalog id — are not inputs).
func InputOf(t *types.Table) types.TableInput {
	return types.TableInput{
		Name:              t.Name,
		Description:       t.Description,
		LastAccessTime:    t.LastAccessTime,
		LastAnalyzedTime:  t.LastAnalyzedTime,
		Owner:             t.Owner,
		Parameters:        t.Parameters,
		PartitionKeys:     t.PartitionKeys,
		Retention:         t.Retention,
		StorageDescriptor: t.StorageDescriptor,
		TableType:         t.TableType,
		TargetTable:       t.TargetTable,
		ViewExpandedText:  t.ViewExpandedText,
		ViewOriginalText:  t.ViewOriginalText,
	}
}

// SwitchOptions configure a switch.
type SwitchOptions struct {
	// Confirm is what the person typed: database.table exactly.
	Confirm   string
	StateDir  string
	CatalogID string
	Method    string
	Now       time.Time
}

// SwitchResult says what the switch did.
type SwitchResult struct {
	Backup string
	Record string
}

// Confirmation checks the typed text against the table's name with gate
// 5's check (internal/typed): exact, letter case and blanks included.
func Confirmation(want, text string) error {
	switch typed.Check(want, text) {
	case typed.Exact:
		return nil
	case typed.Empty:
		return fmt.Errorf("%w: nothing was switched: no confirmation was typed (type %s)", ErrNotConfirmed, want)
	case typed.CaseOrBlanks:
		return fmt.Errorf("%w: nothing was switched: the typed text differs from %s in letter case or surrounding spaces", ErrNotConfirmed, want)
	}
	return fmt.Errorf("%w: nothing was switched: %q is not %s", ErrNotConfirmed, text, want)
}

// Switch points the Glue entry at the Iceberg table. It refuses unless the
// validation passed, the typed confirmation is database.table, the Hive
// files' listing has the validation's fingerprint (no file removed, added
// or changed since) and the Glue entry is the version validated. The
// original definition goes to the side record and to a backup table
// <table>_hive_backup_<UTC time> before the entry changes; the update is
// conditional on the validated version. Nothing is deleted anywhere.
func Switch(ctx context.Context, g GlueAPI, src *Source, v *Validation, tbl *table.Table, o SwitchOptions) (*SwitchResult, error) {
	if src.Kind != "glue" || src.Glue == nil {
		return nil, errors.New("only a Glue table has a catalog entry to switch")
	}
	if v == nil || !v.OK {
		return nil, fmt.Errorf("%w: the Glue entry was not touched", ErrNotValidated)
	}
	if err := Confirmation(src.Database+"."+src.Table, o.Confirm); err != nil {
		return nil, err
	}
	// Re-check right before the switch: the catalog's partitions read
	// again (one added since brings its files into the listing) and their
	// files listed again.
	fresh, err := FromGlue(ctx, g, o.CatalogID, src.Database, src.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s.%s again: %v; the Glue entry was not touched", ErrChanged, src.Database, src.Table, err)
	}
	files, fp, err := fresh.Files(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: re-listing the Hive files: %v; the Glue entry was not touched", ErrChanged, err)
	}
	if fp != v.Fingerprint {
		return nil, fmt.Errorf("%w: the Hive files differ from the listing validated (%d files then, %d now, fingerprint %s… vs %s…); the Glue entry was not touched — validate again",
			ErrChanged, v.Files, len(files), v.Fingerprint[:12], fp[:12])
	}
	cur, err := g.GetTable(ctx, &glue.GetTableInput{CatalogId: optional(o.CatalogID), DatabaseName: aws.String(src.Database), Name: aws.String(src.Table)})
	if err != nil {
		return nil, fmt.Errorf("glue: get table %s.%s: %w", src.Database, src.Table, err)
	}
	if deref(cur.Table.VersionId) != v.GlueVersion {
		return nil, fmt.Errorf("%w: the Glue entry %s.%s is at version %s, validation read version %s; the Glue entry was not touched — validate again",
			ErrChanged, src.Database, src.Table, deref(cur.Table.VersionId), v.GlueVersion)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	backup := strings.ToLower(src.Table) + "_hive_backup_" + now.UTC().Format("20060102t150405z")
	rec := &Record{Database: src.Database, Table: src.Table, Backup: backup, SwitchedAt: now.UTC(), Method: o.Method,
		Metadata: tbl.MetadataLocation(), Fingerprint: fp, Original: InputOf(cur.Table)}
	path := RecordPath(o.StateDir, src.Database, src.Table)
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s exists: an earlier switch of %s.%s keeps its backup; roll it back or drop the backup first", path, src.Database, src.Table)
	}
	if err := writeRecord(path, rec); err != nil {
		return nil, fmt.Errorf("write the side record: %w; the Glue entry was not touched", err)
	}
	bk := InputOf(cur.Table)
	bk.Name = aws.String(backup)
	if _, err := g.CreateTable(ctx, &glue.CreateTableInput{CatalogId: optional(o.CatalogID), DatabaseName: aws.String(src.Database), TableInput: &bk}); err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("glue: create the backup table %s.%s: %w; the Glue entry was not touched", src.Database, backup, err)
	}
	in := icebergInput(src.Table, cur.Table, tbl, backup)
	if _, err := g.UpdateTable(ctx, &glue.UpdateTableInput{CatalogId: optional(o.CatalogID), DatabaseName: aws.String(src.Database), TableInput: in, VersionId: cur.Table.VersionId}); err != nil {
		return nil, fmt.Errorf("glue: point %s.%s at the Iceberg table: %w; the entry is unchanged, the backup %s and the side record %s are kept", src.Database, src.Table, err, backup, path)
	}
	return &SwitchResult{Backup: backup, Record: path}, nil
}

// icebergInput is the Glue definition of the Iceberg table under the
// original name (table_type ICEBERG and metadata_location, as Athena and
// iceberg-go's Glue catalog read it).
func icebergInput(name string, orig *types.Table, tbl *table.Table, backup string) *types.TableInput {
	var cols []types.Column
	for _, f := range tbl.Schema().Fields() {
		c := types.Column{Name: aws.String(f.Name), Type: aws.String(hiveTypeOf(f.Type))}
		if f.Doc != "" {
			c.Comment = aws.String(f.Doc)
		}
		cols = append(cols, c)
	}
	return &types.TableInput{
		Name:        aws.String(name),
		Description: orig.Description,
		Owner:       orig.Owner,
		TableType:   aws.String("EXTERNAL_TABLE"),
		Parameters: map[string]string{"table_type": "ICEBERG", "metadata_location": tbl.MetadataLocation(),
			"lima.migrated-from": "hive", "lima.migrate.backup": backup},
		StorageDescriptor: &types.StorageDescriptor{Location: aws.String(tbl.Location()), Columns: cols},
	}
}

func hiveTypeOf(t iceberg.Type) string {
	switch tt := t.(type) {
	case iceberg.Int32Type:
		return "int"
	case iceberg.Int64Type:
		return "bigint"
	case iceberg.Float64Type:
		return "double"
	case iceberg.Float32Type:
		return "float"
	case iceberg.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", tt.Precision(), tt.Scale())
	case iceberg.DateType:
		return "date"
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return "timestamp"
	case iceberg.BooleanType:
		return "boolean"
	case iceberg.BinaryType:
		return "binary"
	}
	return "string"
}

// Rollback restores the Glue entry from the side record: every field of
// the original TableInput, as read before the switch. The record and the
// backup table stay until DropBackup.
func Rollback(ctx context.Context, g GlueAPI, stateDir, catalogID, db, tbl string) (*Record, error) {
	path := RecordPath(stateDir, db, tbl)
	rec, err := ReadRecord(path)
	if err != nil {
		return nil, fmt.Errorf("no switch of %s.%s to roll back (side record %s): %w", db, tbl, path, err)
	}
	cur, err := g.GetTable(ctx, &glue.GetTableInput{CatalogId: optional(catalogID), DatabaseName: aws.String(db), Name: aws.String(tbl)})
	if err != nil {
		return nil, fmt.Errorf("glue: get table %s.%s: %w", db, tbl, err)
	}
	if cur.Table.Parameters["metadata_location"] == "" && rec.RolledBack != nil {
		return rec, nil // rolled back already
	}
	if ml := cur.Table.Parameters["metadata_location"]; ml != rec.Metadata {
		return nil, fmt.Errorf("%s.%s names the Iceberg metadata %s, the switch set %s: the table was committed to (or changed) through Glue since, and restoring the Hive definition would hide those commits; nothing was changed — the original definition is in %s and in the backup table %s",
			db, tbl, ml, rec.Metadata, path, rec.Backup)
	}
	in := rec.Original
	if _, err := g.UpdateTable(ctx, &glue.UpdateTableInput{CatalogId: optional(catalogID), DatabaseName: aws.String(db), TableInput: &in, VersionId: cur.Table.VersionId}); err != nil {
		return nil, fmt.Errorf("glue: restore %s.%s: %w", db, tbl, err)
	}
	now := time.Now().UTC()
	rec.RolledBack = &now
	if err := writeRecord(path, rec); err != nil {
		return rec, fmt.Errorf("restored, but updating the side record failed: %w", err)
	}
	return rec, nil
}

// DropBackup removes the backup table and the side record (after it, a
// switch can no longer be rolled back). Data files are never touched.
func DropBackup(ctx context.Context, g GlueAPI, stateDir, catalogID, db, tbl string) (*Record, error) {
	path := RecordPath(stateDir, db, tbl)
	rec, err := ReadRecord(path)
	if err != nil {
		return nil, fmt.Errorf("no backup of %s.%s (side record %s): %w", db, tbl, path, err)
	}
	_, err = g.DeleteTable(ctx, &glue.DeleteTableInput{CatalogId: optional(catalogID), DatabaseName: aws.String(db), Name: aws.String(rec.Backup)})
	var nf *types.EntityNotFoundException
	if err != nil && !errors.As(err, &nf) {
		return nil, fmt.Errorf("glue: drop the backup %s.%s: %w", db, rec.Backup, err)
	}
	if err := os.Remove(path); err != nil {
		return rec, err
	}
	return rec, nil
}
