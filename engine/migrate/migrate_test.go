package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/gluetest"
	mt "github.com/lima-lake/lima/internal/migratetest"
)

type env struct {
	ctx   context.Context
	dir   string
	root  string
	srv   *gluetest.Server
	gc    *glue.Client
	sk    *icesink.Sink
	truth map[string]*mt.Truth
	raw   []byte // the Glue definition as registered
}

func newEnv(t *testing.T, keysInFiles bool) *env {
	mt.FakeAWSEnv(t)
	e := &env{ctx: context.Background(), dir: t.TempDir(), srv: gluetest.New(t)}
	e.root = filepath.Join(e.dir, "hive", "orders")
	e.truth = mt.WriteHive(t, e.root, keysInFiles)
	gc, err := hivesink.NewGlueClient(e.ctx, hivesink.GlueConfig{Endpoint: e.srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	e.gc = gc
	mt.RegisterHive(t, e.ctx, gc, e.root)
	raw, ok := e.srv.RawTableInput("sales", "orders")
	if !ok {
		t.Fatal("the endpoint kept no definition")
	}
	e.raw = raw
	if e.sk, err = icesink.Open(e.ctx, icesink.Options{CatalogPath: filepath.Join(e.dir, ".lima", "catalog.db"), Warehouse: filepath.Join(e.dir, "lake")}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.sk.Close() })
	return e
}

func prepare(t *testing.T, e *env) (*migrate.Source, *migrate.Layout, []migrate.File, string) {
	t.Helper()
	src, err := migrate.FromGlue(e.ctx, e.gc, "", "sales", "orders")
	if err != nil {
		t.Fatal(err)
	}
	files, fp, err := src.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := 0
	for _, p := range mt.Parts {
		wantFiles += p.Files
	}
	if len(files) != wantFiles {
		t.Fatalf("%d files listed, %d written", len(files), wantFiles)
	}
	l, err := migrate.Resolve(e.ctx, src, files)
	if err != nil {
		t.Fatal(err)
	}
	return src, l, files, fp
}

func glueTable(t *testing.T, e *env, name string) (gluetest.Table, []byte) {
	t.Helper()
	tb, _ := e.srv.Table("sales", name)
	raw, _ := e.srv.RawTableInput("sales", name)
	return tb, raw
}

// TestMigrateGlueInPlace: a Glue Hive table whose files also hold the
// partition keys is migrated in place; an independent iceberg-go read
// gives the written truth per partition; the switch needs the typed name;
// rollback restores the Glue definition byte for byte; drop-backup removes
// the backup table and the side record, never a data file.
func TestMigrateGlueInPlace(t *testing.T) {
	e := newEnv(t, true)
	src, l, files, fp := prepare(t, e)
	b, err := migrate.BuildInPlace(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, "migrate-test-1")
	if err != nil {
		t.Fatal(err)
	}
	// In place wrote no data file: every data file of the snapshot is a Hive file.
	tasks, err := b.Table.Scan().PlanFiles(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		p, _ := fileuri.ToPath(task.File.FilePath())
		if !strings.HasPrefix(p, e.root+string(filepath.Separator)) {
			t.Errorf("data file %s is not a Hive file", task.File.FilePath())
		}
		n++
	}
	if n != len(files) {
		t.Errorf("%d data files in the snapshot, %d Hive files", n, len(files))
	}
	mt.SameTruth(t, e.truth, mt.Independent(t, e.ctx, b.Table.MetadataLocation()))

	v, err := migrate.Validate(e.ctx, src, l, files, fp, b.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK || len(v.Partitions) != len(mt.Parts) {
		t.Fatalf("validation: ok=%v, %d partitions: %+v", v.OK, len(v.Partitions), v)
	}
	before, beforeRaw := glueTable(t, e, "orders")
	if !bytes.Equal(beforeRaw, e.raw) {
		t.Fatal("the Glue definition changed before the switch")
	}
	// Wrong confirmations: nothing is switched.
	for _, typed := range []string{"", "orders", "SALES.ORDERS", " sales.orders"} {
		if _, err := migrate.Switch(e.ctx, e.gc, src, v, b.Table, migrate.SwitchOptions{Confirm: typed, StateDir: filepath.Join(e.dir, ".lima")}); !errors.Is(err, migrate.ErrNotConfirmed) {
			t.Fatalf("confirm %q: %v", typed, err)
		}
	}
	if _, raw := glueTable(t, e, "orders"); !bytes.Equal(raw, e.raw) {
		t.Fatal("an unconfirmed switch changed the Glue entry")
	}
	res, err := migrate.Switch(e.ctx, e.gc, src, v, b.Table, migrate.SwitchOptions{Confirm: "sales.orders", StateDir: filepath.Join(e.dir, ".lima"), Method: migrate.InPlace})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(res.Record); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("side record %s: %v %v", res.Record, err, st)
	}
	if st, err := os.Stat(filepath.Dir(res.Record)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("side record folder: %v %v", err, st)
	}
	now, _ := glueTable(t, e, "orders")
	if now.Parameters["table_type"] != "ICEBERG" || now.Parameters["metadata_location"] != b.Table.MetadataLocation() {
		t.Fatalf("the entry is not the Iceberg table: %+v", now.Parameters)
	}
	// The entry as switched reads as the Iceberg table through the
	// metadata location it names.
	mt.SameTruth(t, e.truth, mt.Independent(t, e.ctx, now.Parameters["metadata_location"]))
	// The backup is the original definition under another name.
	_, bkRaw := glueTable(t, e, res.Backup)
	if want := bytes.Replace(e.raw, []byte(`"Name":"orders"`), []byte(`"Name":"`+res.Backup+`"`), 1); !bytes.Equal(bkRaw, want) {
		t.Errorf("backup definition\n%s\nwant\n%s", bkRaw, want)
	}
	if _, err := migrate.Rollback(e.ctx, e.gc, filepath.Join(e.dir, ".lima"), "", "sales", "orders"); err != nil {
		t.Fatal(err)
	}
	after, afterRaw := glueTable(t, e, "orders")
	if !bytes.Equal(afterRaw, e.raw) {
		t.Errorf("rollback did not restore the definition byte for byte:\n%s\nwant\n%s", afterRaw, e.raw)
	}
	before.VersionId, after.VersionId = "", ""
	if !reflect.DeepEqual(before, after) {
		t.Errorf("rollback: the stored table differs:\n%+v\nwant\n%+v", after, before)
	}
	if _, err := migrate.DropBackup(e.ctx, e.gc, filepath.Join(e.dir, ".lima"), "", "sales", "orders"); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.srv.Table("sales", res.Backup); ok {
		t.Error("the backup table is still there")
	}
	if _, err := os.Stat(res.Record); !os.IsNotExist(err) {
		t.Errorf("side record: %v", err)
	}
	again, _, err := src.Files(e.ctx)
	if err != nil || len(again) != len(files) {
		t.Errorf("data files after drop-backup: %d (%v), want %d", len(again), err, len(files))
	}
}

// TestMigrateInPlaceRefusedWhenKeysOnlyInFolders: iceberg-go v0.7.0 would
// read folder-only keys as NULL, so in place is refused and says why.
func TestMigrateInPlaceRefusedWhenKeysOnlyInFolders(t *testing.T) {
	e := newEnv(t, false)
	src, l, files, _ := prepare(t, e)
	_, err := migrate.BuildInPlace(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, "migrate-test-2")
	if !errors.Is(err, migrate.ErrInPlaceUnsupported) || !strings.Contains(err.Error(), "--method rewrite") || !strings.Contains(err.Error(), "region, order_day") {
		t.Fatalf("in place over folder-only keys: %v", err)
	}
	if _, err := e.sk.Catalog().LoadTable(e.ctx, table.Identifier{"sales", "orders"}); err == nil {
		t.Error("a refused in-place migration created the Iceberg table")
	}
}

// TestMigrateGlueRewrite: the same kind of table, keys only in the folder
// names, rewritten under month(order_day) and bucket(4, id): the
// independent read gives the truth per Hive partition; then one Hive file
// removed between validation and switch stops the switch and leaves the
// Glue entry, byte for byte, and no backup or side record behind.
func TestMigrateGlueRewrite(t *testing.T) {
	e := newEnv(t, false)
	src, l, files, fp := prepare(t, e)
	var spec []plan.PartitionField
	for _, s := range []string{"month(order_day)", "bucket(4, id)"} {
		p, err := plan.ParsePartition(s)
		if err != nil {
			t.Fatal(err)
		}
		spec = append(spec, p)
	}
	b, err := migrate.BuildRewrite(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, spec, "migrate-test-3", nil)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, tr := range e.truth {
		want += tr.Rows
	}
	if b.RowsRead != want || b.RowsAdded != want {
		t.Fatalf("rows read %d, added %d, written %d", b.RowsRead, b.RowsAdded, want)
	}
	if got := b.Table.Spec().String(); !strings.Contains(got, "month") || !strings.Contains(got, "bucket[4]") {
		t.Errorf("spec %s", got)
	}
	mt.SameTruth(t, e.truth, mt.Independent(t, e.ctx, b.Table.MetadataLocation()))
	v, err := migrate.Validate(e.ctx, src, l, files, fp, b.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK {
		t.Fatalf("validation failed: %+v", v)
	}
	checkReported(t, e.truth, v)
	// The planted mismatch: a file goes between validation and switch.
	if err := os.Remove(files[len(files)-1].Path); err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Switch(e.ctx, e.gc, src, v, b.Table, migrate.SwitchOptions{Confirm: "sales.orders", StateDir: filepath.Join(e.dir, ".lima"), Method: migrate.Rewrite})
	if !errors.Is(err, migrate.ErrChanged) {
		t.Fatalf("switch after a file was removed: %v", err)
	}
	if _, raw := glueTable(t, e, "orders"); !bytes.Equal(raw, e.raw) {
		t.Error("the stopped switch changed the Glue entry")
	}
	if names := e.srv.Tables("sales"); len(names) != 1 {
		t.Errorf("tables after the stopped switch: %v", names)
	}
	if _, err := os.Stat(migrate.RecordPath(filepath.Join(e.dir, ".lima"), "sales", "orders")); !os.IsNotExist(err) {
		t.Errorf("side record after the stopped switch: %v", err)
	}
	// And validating again now sees the missing rows.
	files2, fp2, err := src.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := migrate.Validate(e.ctx, src, l, files2, fp2, b.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v2.OK {
		t.Error("validation passes with a Hive file gone")
	}
}

// TestMigrateValidationCatchesADifference: an Iceberg table that lost one
// row's value (a tampered in-place table: a Hive file replaced after the
// Iceberg table was built is not what validation compares) — here, a
// partition missing from the Iceberg side and a changed value each fail.
func TestMigrateValidationCatchesADifference(t *testing.T) {
	e := newEnv(t, false)
	src, l, files, fp := prepare(t, e)
	// Build from all files but the first: one partition's rows are short.
	b, err := migrate.BuildRewrite(e.ctx, src, l, files[1:], migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, nil, "migrate-test-4", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := migrate.Validate(e.ctx, src, l, files, fp, b.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
		t.Fatal("validation passed with a file's rows missing")
	}
	bad := 0
	for _, p := range v.Partitions {
		if !p.OK {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("%d partitions failed, want 1: %+v", bad, v.Partitions)
	}
	_, err = migrate.Switch(e.ctx, e.gc, src, v, b.Table, migrate.SwitchOptions{Confirm: "sales.orders", StateDir: filepath.Join(e.dir, ".lima")})
	if !errors.Is(err, migrate.ErrNotValidated) {
		t.Fatalf("switch after a failed validation: %v", err)
	}
}

// TestMigrateFolderRewrite: a key=value folder on disk (no catalog), key
// types guessed from the folder values, rewritten and validated.
func TestMigrateFolderRewrite(t *testing.T) {
	mt.FakeAWSEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "orders")
	want := mt.WriteHive(t, root, false)
	src, err := migrate.FromFolder(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Partitions) != len(mt.Parts) || src.PartitionKeys[1].Type.Kind != plan.Date || src.PartitionKeys[0].Type.Kind != plan.String {
		t.Fatalf("folder source: %+v", src.PartitionKeys)
	}
	files, fp, err := src.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l, err := migrate.Resolve(ctx, src, files)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	b, err := migrate.BuildRewrite(ctx, src, l, files, migrate.Target{Sink: sk, Namespace: "migrated", Name: "orders"}, nil, "migrate-test-5", nil)
	if err != nil {
		t.Fatal(err)
	}
	mt.SameTruth(t, want, mt.Independent(t, ctx, b.Table.MetadataLocation()))
	v, err := migrate.Validate(ctx, src, l, files, fp, b.Table, nil)
	if err != nil || !v.OK {
		t.Fatalf("validation: %v %+v", err, v)
	}

}

// TestMigrateValidationComparesRowValues: the Hive files rewritten after
// the Iceberg table was built with the same rows, sums and nulls but other
// text values — only the row content comparison can see it, and it does.
func TestMigrateValidationComparesRowValues(t *testing.T) {
	e := newEnv(t, false)
	src, l, files, _ := prepare(t, e)
	b, err := migrate.BuildRewrite(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, nil, "migrate-test-6", nil)
	if err != nil {
		t.Fatal(err)
	}
	mt.NotePrefix = "x"
	defer func() { mt.NotePrefix = "n" }()
	mt.WriteHive(t, e.root, false)
	files2, fp2, err := src.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := migrate.Validate(e.ctx, src, l, files2, fp2, b.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
		t.Fatal("validation passed with other values in the Hive files")
	}
	for _, p := range v.Partitions {
		for _, c := range p.Checks {
			if !c.OK && c.Name != "row content hash" {
				t.Errorf("partition %s: check %s failed (%s vs %s); only the row content differs", p.Partition, c.Name, c.Hive, c.Iceberg)
			}
		}
	}
}

// checkReported: what validation reports per partition is the truth the
// test kept (its sums exact, in the decimal's scale).
func checkReported(t *testing.T, want map[string]*mt.Truth, v *migrate.Validation) {
	t.Helper()
	if len(v.Partitions) != len(want) {
		t.Fatalf("%d partitions reported, %d written", len(v.Partitions), len(want))
	}
	for _, p := range v.Partitions {
		tr := want[p.Partition]
		if tr == nil {
			t.Errorf("reported partition %s was not written", p.Partition)
			continue
		}
		cents := fmt.Sprintf("%d.%02d", tr.Cents/100, abs(tr.Cents%100))
		if tr.Cents < 0 && tr.Cents > -100 {
			cents = "-" + cents
		}
		exp := map[string]string{"rows": fmt.Sprint(tr.Rows), "sum(amount)": cents, "sum(qty)": fmt.Sprint(tr.Qty),
			"nulls(amount)": fmt.Sprint(tr.NullAmount), "nulls(qty)": fmt.Sprint(tr.NullQty), "nulls(note)": fmt.Sprint(tr.NullNote), "nulls(id)": "0"}
		seen := 0
		for _, c := range p.Checks {
			if w, ok := exp[c.Name]; ok {
				seen++
				if c.Hive != w || c.Iceberg != w || !c.OK {
					t.Errorf("partition %s %s: hive %s, iceberg %s, written %s", p.Partition, c.Name, c.Hive, c.Iceberg, w)
				}
			}
		}
		if seen != len(exp) {
			t.Errorf("partition %s: %d of the %d expected checks reported: %+v", p.Partition, seen, len(exp), p.Checks)
		}
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// TestMigrateInPlaceFolderDisagreesWithFile: a file whose partition
// column says eu lies in a us folder. Hive readers count its rows under
// us (the folder), the in-place Iceberg table under eu (the file):
// validation must fail for both partitions and the switch must not happen.
func TestMigrateInPlaceFolderDisagreesWithFile(t *testing.T) {
	e := newEnv(t, true)
	from := filepath.Join(e.root, "region=eu", "order_day=2024-01-05", "part-00000.parquet")
	to := filepath.Join(e.root, "region=us", "order_day=2024-01-05", "part-00009.parquet")
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	src, err := migrate.FromGlue(e.ctx, e.gc, "", "sales", "orders")
	if err != nil {
		t.Fatal(err)
	}
	files, fp, err := src.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	l, err := migrate.Resolve(e.ctx, src, files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := migrate.BuildInPlace(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, "migrate-test-7")
	if err != nil {
		t.Fatal(err)
	}
	v, err := migrate.Validate(e.ctx, src, l, files, fp, b.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, p := range v.Partitions {
		if !p.OK {
			failed[p.Partition] = true
		}
	}
	if v.OK || len(failed) != 2 || !failed["region=eu/order_day=2024-01-05"] || !failed["region=us/order_day=2024-01-05"] {
		t.Fatalf("validation: ok=%v, failed %v", v.OK, failed)
	}
	if _, err := migrate.Switch(e.ctx, e.gc, src, v, b.Table, migrate.SwitchOptions{Confirm: "sales.orders", StateDir: filepath.Join(e.dir, ".lima")}); !errors.Is(err, migrate.ErrNotValidated) {
		t.Fatalf("switch: %v", err)
	}
}

// TestMigrateRollbackRefusedAfterGlueCommits: once the Iceberg table was
// committed to through Glue (its metadata_location moved on), rollback
// would hide those commits: it refuses and changes nothing.
func TestMigrateRollbackRefusedAfterGlueCommits(t *testing.T) {
	e := newEnv(t, false)
	src, l, files, fp := prepare(t, e)
	b, err := migrate.BuildRewrite(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, nil, "migrate-test-8", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := migrate.Validate(e.ctx, src, l, files, fp, b.Table, nil)
	if err != nil || !v.OK {
		t.Fatal(err, v)
	}
	state := filepath.Join(e.dir, ".lima")
	if _, err := migrate.Switch(e.ctx, e.gc, src, v, b.Table, migrate.SwitchOptions{Confirm: "sales.orders", StateDir: state}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.gc.GetTable(e.ctx, &glue.GetTableInput{DatabaseName: aws.String("sales"), Name: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	in := migrate.InputOf(cur.Table)
	in.Parameters = map[string]string{"table_type": "ICEBERG", "metadata_location": b.Table.MetadataLocation() + ".next"}
	if _, err := e.gc.UpdateTable(e.ctx, &glue.UpdateTableInput{DatabaseName: aws.String("sales"), TableInput: &in, VersionId: cur.Table.VersionId}); err != nil {
		t.Fatal(err)
	}
	_, before := glueTable(t, e, "orders")
	if _, err := migrate.Rollback(e.ctx, e.gc, state, "", "sales", "orders"); err == nil || !strings.Contains(err.Error(), "would hide those commits") {
		t.Fatalf("rollback after a Glue commit: %v", err)
	}
	if _, after := glueTable(t, e, "orders"); !bytes.Equal(before, after) {
		t.Error("the refused rollback changed the entry")
	}
}

// TestMigrateSwitchSeesANewPartition: a partition registered in Glue after
// validation (with its files) stops the switch: the switch reads the
// partitions again, not only the files of those validated.
func TestMigrateSwitchSeesANewPartition(t *testing.T) {
	e := newEnv(t, false)
	src, l, files, fp := prepare(t, e)
	b, err := migrate.BuildRewrite(e.ctx, src, l, files, migrate.Target{Sink: e.sk, Namespace: "sales", Name: "orders"}, nil, "migrate-test-9", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := migrate.Validate(e.ctx, src, l, files, fp, b.Table, nil)
	if err != nil || !v.OK {
		t.Fatal(err, v)
	}
	newDir := filepath.Join(e.root, "region=apac", "order_day=2024-04-01")
	if err := os.MkdirAll(newDir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(newDir, "part-00000.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := fileuri.FromPath(newDir)
	if _, err := e.gc.BatchCreatePartition(e.ctx, &glue.BatchCreatePartitionInput{DatabaseName: aws.String("sales"), TableName: aws.String("orders"),
		PartitionInputList: []types.PartitionInput{{Values: []string{"apac", "2024-04-01"}, StorageDescriptor: &types.StorageDescriptor{Location: aws.String(u)}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Switch(e.ctx, e.gc, src, v, b.Table, migrate.SwitchOptions{Confirm: "sales.orders", StateDir: filepath.Join(e.dir, ".lima")})
	if !errors.Is(err, migrate.ErrChanged) {
		t.Fatalf("switch with a partition added since validation: %v", err)
	}
	if _, raw := glueTable(t, e, "orders"); !bytes.Equal(raw, e.raw) {
		t.Error("the stopped switch changed the Glue entry")
	}
}
