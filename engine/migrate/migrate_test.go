package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"
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
)

func fakeAWSEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local-test-secret")
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_GLUE", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
}

// truth is the test's own account of the rows it wrote, per partition
// (region=…/order_day=… as Hive names it).
type truth struct {
	rows       int64
	cents      int64 // sum(amount) in cents
	qty        int64
	nullAmount int64
	nullQty    int64
	nullNote   int64
}

type partSpec struct {
	region string // "" = the null partition
	day    string
	files  int
}

// notePrefix starts every note; a test changes it to rewrite the files
// with the same counts, sums and nulls but other values.
var notePrefix = "n"

var parts = []partSpec{
	{"eu", "2024-01-05", 2},
	{"eu", "2024-02-11", 1},
	{"us", "2024-01-05", 1},
	{"us", "2024-03-01", 2},
	{"", "2024-03-01", 1},
}

func partName(p partSpec) string {
	r := p.region
	if r == "" {
		r = hivesink.DefaultPartition
	}
	return "region=" + r + "/order_day=" + p.day
}

// writeHive writes the Parquet files of a Hive table under root: id
// bigint, amount decimal(12,2), qty int, note string (with nulls); with
// keysInFiles the files also hold region and order_day, as some writers
// keep them. It returns the ground truth per partition.
func writeHive(t *testing.T, root string, keysInFiles bool) map[string]*truth {
	t.Helper()
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	if keysInFiles {
		fields = append(fields, arrow.Field{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "order_day", Type: arrow.FixedWidthTypes.Date32, Nullable: true})
	}
	sc := arrow.NewSchema(fields, nil)
	out := map[string]*truth{}
	id := int64(0)
	for pi, p := range parts {
		tr := &truth{}
		out[partName(p)] = tr
		dir := filepath.Join(root, "region="+hivesink.EscapeValue(p.region), "order_day="+p.day)
		if p.region == "" {
			dir = filepath.Join(root, "region="+hivesink.DefaultPartition, "order_day="+p.day)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		day, _ := time.Parse(time.DateOnly, p.day)
		for fi := 0; fi < p.files; fi++ {
			n := 40 + 13*pi + 7*fi
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for r := 0; r < n; r++ {
				id++
				tr.rows++
				b.Field(0).(*array.Int64Builder).Append(id)
				if id%9 == 0 {
					b.Field(1).AppendNull()
					tr.nullAmount++
				} else {
					cents := id*137%100000 - 25000 // negatives too
					b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(cents))
					tr.cents += cents
				}
				if id%7 == 0 {
					b.Field(2).AppendNull()
					tr.nullQty++
				} else {
					b.Field(2).(*array.Int32Builder).Append(int32(id % 50))
					tr.qty += id % 50
				}
				if id%5 == 0 {
					b.Field(3).AppendNull()
					tr.nullNote++
				} else {
					b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("%s%d", notePrefix, id))
				}
				if keysInFiles {
					if p.region == "" {
						b.Field(4).AppendNull()
					} else {
						b.Field(4).(*array.StringBuilder).Append(p.region)
					}
					b.Field(5).(*array.Date32Builder).Append(arrow.Date32FromTime(day))
				}
			}
			rec := b.NewRecordBatch()
			b.Release()
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", fi)))
			if err != nil {
				t.Fatal(err)
			}
			tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
			if err := pqarrow.WriteTable(tbl, f, 1024, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
				t.Fatal(err)
			}
			tbl.Release()
			rec.Release()
		}
		// What Hive readers skip must be skipped here too.
		if err := os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func uri(t *testing.T, p string) string {
	u, err := fileuri.FromPath(p)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// registerHive registers the table in the Glue endpoint as another tool
// would have: a full definition (every TableInput field a Hive table
// carries) and one partition per folder.
func registerHive(t *testing.T, ctx context.Context, gc *glue.Client, root string) {
	t.Helper()
	if _, err := gc.CreateDatabase(ctx, &glue.CreateDatabaseInput{DatabaseInput: &types.DatabaseInput{Name: aws.String("sales")}}); err != nil {
		t.Fatal(err)
	}
	accessed := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cols := []types.Column{
		{Name: aws.String("id"), Type: aws.String("bigint"), Comment: aws.String("order id")},
		{Name: aws.String("amount"), Type: aws.String("decimal(12,2)")},
		{Name: aws.String("qty"), Type: aws.String("int")},
		{Name: aws.String("note"), Type: aws.String("string")},
	}
	sd := func(loc string) *types.StorageDescriptor {
		return &types.StorageDescriptor{Columns: cols, Location: aws.String(loc), InputFormat: aws.String(hivesink.ParquetInputFormat),
			OutputFormat: aws.String(hivesink.ParquetOutputFormat), Compressed: true, NumberOfBuckets: -1,
			SerdeInfo:  &types.SerDeInfo{SerializationLibrary: aws.String(hivesink.ParquetSerDe), Parameters: map[string]string{"serialization.format": "1"}},
			Parameters: map[string]string{"crawler": "nightly"}}
	}
	if _, err := gc.CreateTable(ctx, &glue.CreateTableInput{DatabaseName: aws.String("sales"), TableInput: &types.TableInput{
		Name: aws.String("orders"), Description: aws.String("orders, by region and day"), Owner: aws.String("finance"),
		Retention: 30, LastAccessTime: &accessed, TableType: aws.String("EXTERNAL_TABLE"),
		Parameters:        map[string]string{"classification": "parquet", "EXTERNAL": "TRUE", "projection.enabled": "false"},
		PartitionKeys:     []types.Column{{Name: aws.String("region"), Type: aws.String("string")}, {Name: aws.String("order_day"), Type: aws.String("date"), Comment: aws.String("UTC")}},
		StorageDescriptor: sd(uri(t, root)),
	}}); err != nil {
		t.Fatal(err)
	}
	in := &glue.BatchCreatePartitionInput{DatabaseName: aws.String("sales"), TableName: aws.String("orders")}
	for _, p := range parts {
		r := p.region
		if r == "" {
			r = hivesink.DefaultPartition
		}
		in.PartitionInputList = append(in.PartitionInputList, types.PartitionInput{Values: []string{r, p.day}, StorageDescriptor: sd(uri(t, filepath.Join(root, filepath.FromSlash(partName(p)))))})
	}
	out, err := gc.BatchCreatePartition(ctx, in)
	if err != nil || len(out.Errors) > 0 {
		t.Fatal(err, out)
	}
}

type env struct {
	ctx   context.Context
	dir   string
	root  string
	srv   *gluetest.Server
	gc    *glue.Client
	sk    *icesink.Sink
	truth map[string]*truth
	raw   []byte // the Glue definition as registered
}

func newEnv(t *testing.T, keysInFiles bool) *env {
	fakeAWSEnv(t)
	e := &env{ctx: context.Background(), dir: t.TempDir(), srv: gluetest.New(t)}
	e.root = filepath.Join(e.dir, "hive", "orders")
	e.truth = writeHive(t, e.root, keysInFiles)
	gc, err := hivesink.NewGlueClient(e.ctx, hivesink.GlueConfig{Endpoint: e.srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	e.gc = gc
	registerHive(t, e.ctx, gc, e.root)
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

// independent reads the Iceberg table from its metadata file with
// iceberg-go alone and measures it per partition, as the test's truth is
// kept: rows, sum(amount) in cents, sum(qty), null counts.
func independent(t *testing.T, ctx context.Context, metadata string) map[string]*truth {
	t.Helper()
	fsF := func(ctx context.Context) (icebergio.IO, error) { return icebergio.LoadFS(ctx, nil, metadata) }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"check", "orders"}, metadata, fsF, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, recs, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		idx := sc.FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s in %s", name, sc)
		}
		return idx[0]
	}
	out := map[string]*truth{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		region, day := rec.Column(col("region")), rec.Column(col("order_day")).(*array.Date32)
		amount, qty, note := rec.Column(col("amount")).(*array.Decimal128), rec.Column(col("qty")), rec.Column(col("note"))
		for i := 0; i < int(rec.NumRows()); i++ {
			r := hivesink.DefaultPartition
			if !region.IsNull(i) {
				r = region.ValueStr(i)
			}
			k := "region=" + r + "/order_day=" + day.Value(i).ToTime().Format(time.DateOnly)
			tr := out[k]
			if tr == nil {
				tr = &truth{}
				out[k] = tr
			}
			tr.rows++
			if amount.IsNull(i) {
				tr.nullAmount++
			} else {
				tr.cents += amount.Value(i).BigInt().Int64()
			}
			switch q := qty.(type) {
			case *array.Int32:
				if q.IsNull(i) {
					tr.nullQty++
				} else {
					tr.qty += int64(q.Value(i))
				}
			default:
				t.Fatalf("qty reads as %s", qty.DataType())
			}
			if note.IsNull(i) {
				tr.nullNote++
			}
		}
		rec.Release()
	}
	return out
}

func sameTruth(t *testing.T, want, got map[string]*truth) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			t.Errorf("partition %s: missing from the Iceberg table", k)
			continue
		}
		if *g != *want[k] {
			t.Errorf("partition %s: Iceberg %+v, written %+v", k, *g, *want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("partition %s: only in the Iceberg table", k)
		}
	}
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
	for _, p := range parts {
		wantFiles += p.files
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
	sameTruth(t, e.truth, independent(t, e.ctx, b.Table.MetadataLocation()))

	v, err := migrate.Validate(e.ctx, src, l, files, fp, b.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK || len(v.Partitions) != len(parts) {
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
	now, _ := glueTable(t, e, "orders")
	if now.Parameters["table_type"] != "ICEBERG" || now.Parameters["metadata_location"] != b.Table.MetadataLocation() {
		t.Fatalf("the entry is not the Iceberg table: %+v", now.Parameters)
	}
	// The entry as switched reads as the Iceberg table through the
	// metadata location it names.
	sameTruth(t, e.truth, independent(t, e.ctx, now.Parameters["metadata_location"]))
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
		want += tr.rows
	}
	if b.RowsRead != want || b.RowsAdded != want {
		t.Fatalf("rows read %d, added %d, written %d", b.RowsRead, b.RowsAdded, want)
	}
	if got := b.Table.Spec().String(); !strings.Contains(got, "month") || !strings.Contains(got, "bucket[4]") {
		t.Errorf("spec %s", got)
	}
	sameTruth(t, e.truth, independent(t, e.ctx, b.Table.MetadataLocation()))
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
	fakeAWSEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "orders")
	want := writeHive(t, root, false)
	src, err := migrate.FromFolder(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Partitions) != len(parts) || src.PartitionKeys[1].Type.Kind != plan.Date || src.PartitionKeys[0].Type.Kind != plan.String {
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
	sameTruth(t, want, independent(t, ctx, b.Table.MetadataLocation()))
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
	notePrefix = "x"
	defer func() { notePrefix = "n" }()
	writeHive(t, e.root, false)
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
func checkReported(t *testing.T, want map[string]*truth, v *migrate.Validation) {
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
		cents := fmt.Sprintf("%d.%02d", tr.cents/100, abs(tr.cents%100))
		if tr.cents < 0 && tr.cents > -100 {
			cents = "-" + cents
		}
		exp := map[string]string{"rows": fmt.Sprint(tr.rows), "sum(amount)": cents, "sum(qty)": fmt.Sprint(tr.qty),
			"nulls(amount)": fmt.Sprint(tr.nullAmount), "nulls(qty)": fmt.Sprint(tr.nullQty), "nulls(note)": fmt.Sprint(tr.nullNote), "nulls(id)": "0"}
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
