// Package migratetest is test support for migrations: a Hive-partitioned
// Parquet table written with its own ground truth (several partitions, a
// null partition, decimals and nulls), its registration in the local Glue
// endpoint as another tool would have made it, and an independent
// iceberg-go read of an Iceberg table measured the same way.
package migratetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/internal/fileuri"
)

func FakeAWSEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local-test-secret")
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_GLUE", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
}

// Truth is the test's own account of the rows it wrote, per partition
// (region=…/order_day=… as Hive names it).
type Truth struct {
	Rows       int64
	Cents      int64 // sum(amount) in cents
	Qty        int64
	NullAmount int64
	NullQty    int64
	NullNote   int64
}

type PartSpec struct {
	Region string // "" = the null partition
	Day    string
	Files  int
}

// NotePrefix starts every note; a test changes it to rewrite the files
// with the same counts, sums and nulls but other values.
var NotePrefix = "n"

var Parts = []PartSpec{
	{"eu", "2024-01-05", 2},
	{"eu", "2024-02-11", 1},
	{"us", "2024-01-05", 1},
	{"us", "2024-03-01", 2},
	{"", "2024-03-01", 1},
}

func PartName(p PartSpec) string {
	r := p.Region
	if r == "" {
		r = hivesink.DefaultPartition
	}
	return "region=" + r + "/order_day=" + p.Day
}

// WriteHive writes the Parquet files of a Hive table under root: id
// bigint, amount decimal(12,2), qty int, note string (with nulls); with
// keysInFiles the files also hold region and order_day, as some writers
// keep them. It returns the ground Truth per partition.
func WriteHive(t *testing.T, root string, keysInFiles bool) map[string]*Truth {
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
	out := map[string]*Truth{}
	id := int64(0)
	for pi, p := range Parts {
		tr := &Truth{}
		out[PartName(p)] = tr
		dir := filepath.Join(root, "region="+hivesink.EscapeValue(p.Region), "order_day="+p.Day)
		if p.Region == "" {
			dir = filepath.Join(root, "region="+hivesink.DefaultPartition, "order_day="+p.Day)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		day, _ := time.Parse(time.DateOnly, p.Day)
		for fi := 0; fi < p.Files; fi++ {
			n := 40 + 13*pi + 7*fi
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for r := 0; r < n; r++ {
				id++
				tr.Rows++
				b.Field(0).(*array.Int64Builder).Append(id)
				if id%9 == 0 {
					b.Field(1).AppendNull()
					tr.NullAmount++
				} else {
					cents := id*137%100000 - 25000 // negatives too
					b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(cents))
					tr.Cents += cents
				}
				if id%7 == 0 {
					b.Field(2).AppendNull()
					tr.NullQty++
				} else {
					b.Field(2).(*array.Int32Builder).Append(int32(id % 50))
					tr.Qty += id % 50
				}
				if id%5 == 0 {
					b.Field(3).AppendNull()
					tr.NullNote++
				} else {
					b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("%s%d", NotePrefix, id))
				}
				if keysInFiles {
					if p.Region == "" {
						b.Field(4).AppendNull()
					} else {
						b.Field(4).(*array.StringBuilder).Append(p.Region)
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

func URI(t *testing.T, p string) string {
	u, err := fileuri.FromPath(p)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// RegisterHive registers the table in the Glue endpoint as another tool
// would have: a full definition (every TableInput field a Hive table
// carries) and one partition per folder.
func RegisterHive(t *testing.T, ctx context.Context, gc *glue.Client, root string) {
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
		StorageDescriptor: sd(URI(t, root)),
	}}); err != nil {
		t.Fatal(err)
	}
	in := &glue.BatchCreatePartitionInput{DatabaseName: aws.String("sales"), TableName: aws.String("orders")}
	for _, p := range Parts {
		r := p.Region
		if r == "" {
			r = hivesink.DefaultPartition
		}
		in.PartitionInputList = append(in.PartitionInputList, types.PartitionInput{Values: []string{r, p.Day}, StorageDescriptor: sd(URI(t, filepath.Join(root, filepath.FromSlash(PartName(p)))))})
	}
	out, err := gc.BatchCreatePartition(ctx, in)
	if err != nil || len(out.Errors) > 0 {
		t.Fatal(err, out)
	}
}

// Independent reads the Iceberg table from its metadata file with
// iceberg-go alone and measures it per partition, as the test's Truth is
// kept: rows, sum(amount) in cents, sum(qty), null counts.
func Independent(t *testing.T, ctx context.Context, metadata string) map[string]*Truth {
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
	out := map[string]*Truth{}
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
				tr = &Truth{}
				out[k] = tr
			}
			tr.Rows++
			if amount.IsNull(i) {
				tr.NullAmount++
			} else {
				tr.Cents += amount.Value(i).BigInt().Int64()
			}
			switch q := qty.(type) {
			case *array.Int32:
				if q.IsNull(i) {
					tr.NullQty++
				} else {
					tr.Qty += int64(q.Value(i))
				}
			default:
				t.Fatalf("qty reads as %s", qty.DataType())
			}
			if note.IsNull(i) {
				tr.NullNote++
			}
		}
		rec.Release()
	}
	return out
}

func SameTruth(t *testing.T, want, got map[string]*Truth) {
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
