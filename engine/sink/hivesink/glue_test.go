package hivesink_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/gluetest"
)

// fakeAWSEnv gives the SDK's default chain credentials and a region; the
// local endpoint does not check signatures.
func fakeAWSEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local-test-secret")
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_GLUE", "")
}

func ordersSpec() sink.TableSpec {
	return sink.TableSpec{Name: "Orders", Namespace: "sales",
		Columns: []plan.Column{{Name: "order_id", Type: "long", Required: true}, {Name: "region", Type: "string"}, {Name: "qty", Type: "int"},
			{Name: "amount", Type: "decimal(12,2)"}, {Name: "ratio", Type: "double"}, {Name: "day", Type: "date"}, {Name: "at", Type: "timestamptz"},
			{Name: "ok", Type: "boolean"}, {Name: "blob", Type: "binary"}},
		Types: []plan.Type{{Kind: plan.Long}, {Kind: plan.String}, {Kind: plan.Int}, {Kind: plan.Decimal, Precision: 12, Scale: 2}, {Kind: plan.Double},
			{Kind: plan.Date}, {Kind: plan.TimestampTZ}, {Kind: plan.Boolean}, {Kind: plan.Binary}},
		Required:  []bool{true, false, false, false, false, false, false, false, false},
		Partition: []plan.PartitionField{{Column: "region", Transform: plan.TransformIdentity}},
	}
}

func orders(sc *arrow.Schema, regions []string, from int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, r := range regions {
		b.Field(0).(*array.Int64Builder).Append(int64(from + i))
		b.Field(1).(*array.StringBuilder).Append(r)
		b.Field(2).(*array.Int32Builder).Append(int32(i))
		b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i * 100)))
		b.Field(4).(*array.Float64Builder).Append(0.5)
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32(20454))
		b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000))
		b.Field(7).(*array.BooleanBuilder).Append(true)
		b.Field(8).(*array.BinaryBuilder).Append([]byte{1})
	}
	return b.NewRecordBatch()
}

func one(rec arrow.RecordBatch) func(func(arrow.RecordBatch, error) bool) {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if !yield(rec, nil) {
			rec.Release()
		}
	}
}

// TestGlueRegistration commits two loads through a real Glue client
// pointed at the local Glue endpoint and checks what the endpoint holds:
// the database, the table (columns and Hive types, partition keys,
// location, Parquet SerDe) and one partition per distinct region, created
// in batches of at most 100, existing ones skipped.
func TestGlueRegistration(t *testing.T) {
	fakeAWSEnv(t)
	srv := gluetest.New(t)
	ctx := context.Background()
	client, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sk, err := hivesink.Open(ctx, hivesink.Options{Warehouse: dir, Registrar: &hivesink.GlueRegistrar{Client: client}, Now: func() time.Time { return fixedDay }})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.OpenTable(ctx, ordersSpec())
	if err != nil {
		t.Fatal(err)
	}
	var regions []string
	for i := range 150 {
		regions = append(regions, fmt.Sprintf("r/%03d", i)) // a / in every value
	}
	st, err := tbl.Stage(ctx, one(orders(tbl.Schema(), regions, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "g1", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.Database("sales"); !ok {
		t.Fatal("no database sales")
	}
	gt, ok := srv.Table("sales", "orders")
	if !ok {
		t.Fatal("no table sales.orders (names are lower-case in Glue)")
	}
	type col struct{ name, typ string }
	var got []col
	for _, c := range gt.StorageDescriptor.Columns {
		got = append(got, col{c.Name, c.Type})
	}
	want := []col{{"order_id", "bigint"}, {"qty", "int"}, {"amount", "decimal(12,2)"}, {"ratio", "double"}, {"day", "date"}, {"at", "timestamp"}, {"ok", "boolean"}, {"blob", "binary"}}
	if !slices.Equal(got, want) {
		t.Errorf("columns %v, want %v (region is a partition key only)", got, want)
	}
	var keys []col
	for _, c := range gt.PartitionKeys {
		keys = append(keys, col{c.Name, c.Type})
	}
	if !slices.Equal(keys, []col{{"load_date", "date"}, {"region", "string"}}) {
		t.Errorf("partition keys %v", keys)
	}
	loc, err := fileuri.FromPath(filepath.Join(dir, "sales", "Orders"))
	if err != nil {
		t.Fatal(err)
	}
	sd := gt.StorageDescriptor
	if gt.TableType != "EXTERNAL_TABLE" || sd.Location != loc || sd.InputFormat != hivesink.ParquetInputFormat || sd.OutputFormat != hivesink.ParquetOutputFormat ||
		sd.SerdeInfo == nil || sd.SerdeInfo.SerializationLibrary != hivesink.ParquetSerDe {
		t.Errorf("table definition %+v / %+v", gt, sd)
	}
	parts := srv.Partitions("sales", "orders")
	if len(parts) != len(regions) {
		t.Fatalf("%d partitions, want %d", len(parts), len(regions))
	}
	for i, p := range parts { // sorted by values; the regions are sorted too
		if !slices.Equal(p.Values, []string{"2026-11-30", regions[i]}) {
			t.Fatalf("partition %d values %v, want [2026-11-30 %s]", i, p.Values, regions[i])
		}
		// The folder's name keeps Hive's escape (r%2F000); its URI escapes
		// that % again, so a URI reader finds the folder itself.
		folder := filepath.Join(dir, "sales", "Orders", "load_date=2026-11-30", "region="+strings.ReplaceAll(regions[i], "/", "%2F"))
		wantLoc, err := fileuri.FromPath(folder)
		if err != nil {
			t.Fatal(err)
		}
		if p.StorageDescriptor == nil || p.StorageDescriptor.Location != wantLoc {
			t.Fatalf("partition %v location %+v, want %s", p.Values, p.StorageDescriptor, wantLoc)
		}
		if back, err := fileuri.ToPath(wantLoc); err != nil || back != folder {
			t.Fatalf("partition location %s reads back as %q (%v), want %s", wantLoc, back, err, folder)
		}
		if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
			t.Fatalf("partition folder %s: %v", folder, err)
		}
	}
	batches := 0
	for _, c := range srv.Calls() {
		if c == "BatchCreatePartition" {
			batches++
		}
	}
	if batches != 2 {
		t.Errorf("%d BatchCreatePartition calls for 150 partitions, want 2", batches)
	}
	// Someone changes the table in Glue: the next commit puts Lima's
	// definition back (UpdateTable with the version it read).
	if _, err := client.UpdateTable(ctx, &glue.UpdateTableInput{DatabaseName: aws.String("sales"), TableInput: &types.TableInput{Name: aws.String("orders"),
		StorageDescriptor: &types.StorageDescriptor{Location: aws.String("s3://elsewhere/")}}}); err != nil {
		t.Fatal(err)
	}
	// A second load: 50 old regions and 10 new ones.
	second := append(append([]string{}, regions[:50]...), "new-0", "new-1", "new-2", "new-3", "new-4", "new-5", "new-6", "new-7", "new-8", "new-9")
	st, _ = tbl.Stage(ctx, one(orders(tbl.Schema(), second, 1000)))
	if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "g2", RunID: "r2"}); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Partitions("sales", "orders")); n != 160 {
		t.Fatalf("%d partitions after the second load, want 160", n)
	}
	gt, _ = srv.Table("sales", "orders")
	if gt.StorageDescriptor.Location != loc || len(gt.PartitionKeys) != 2 || gt.VersionId != "3" {
		t.Fatalf("after the second load: location %s, keys %v, version %s; want %s, 2 keys, version 3", gt.StorageDescriptor.Location, gt.PartitionKeys, gt.VersionId, loc)
	}
}

// TestGlueFailureCommitsNothing: when Glue refuses the partitions the load
// is not published.
func TestGlueFailureCommitsNothing(t *testing.T) {
	fakeAWSEnv(t)
	srv := gluetest.New(t)
	ctx := context.Background()
	t.Setenv("AWS_ENDPOINT_URL_GLUE", srv.URL()) // the endpoint from the environment
	client, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sk, _ := hivesink.Open(ctx, hivesink.Options{Warehouse: dir, Registrar: &hivesink.GlueRegistrar{Client: client}})
	tbl, err := sk.OpenTable(ctx, ordersSpec())
	if err != nil {
		t.Fatal(err)
	}
	srv.FailNext("BatchCreatePartition", "AccessDeniedException")
	st, _ := tbl.Stage(ctx, one(orders(tbl.Schema(), []string{"a", "b"}, 0)))
	_, err = tbl.Commit(ctx, st, sink.CommitProps{LoadID: "g1", RunID: "r1"})
	if !errors.Is(err, sink.ErrCommitFailed) || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("commit error %v, want ErrCommitFailed naming AccessDenied", err)
	}
	if _, ok, _ := tbl.Current(ctx); ok {
		t.Fatal("a commit is visible")
	}
	st.Discard(ctx)
	if files := parquetFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left: %v", files)
	}
}
