package flow_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/dynamotest"
	"github.com/lima-lake/lima/internal/s3test"
)

// ddbItems is how many items the DynamoDB load tests generate: 5,000 by
// default, the 100,000 under LIMA_SOAK=1.
func ddbItems() int {
	if os.Getenv("LIMA_SOAK") == "1" {
		return 100_000
	}
	return 5_000
}

// lakeTotals are a lake table's count and sums, read with iceberg-go
// directly (not through Lima's sink or gate 4).
type lakeTotals struct {
	rows, qty, cents, notes, flags int64
	big                            *big.Int
	sks                            map[int64]bool
}

func readLakeTotals(t *testing.T, tbl *table.Table) lakeTotals {
	t.Helper()
	lt := lakeTotals{big: new(big.Int), sks: map[int64]bool{}}
	if tbl.CurrentSnapshot() == nil {
		return lt
	}
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) arrow.Array {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) != 1 {
				t.Fatalf("lake table has no column %s (schema %v)", name, rec.Schema())
			}
			return rec.Column(idx[0])
		}
		sk, qty, amt, bg, note, flag := col("sk").(*array.Int64), col("qty").(*array.Int64), col("amount").(*array.Decimal128), col("big").(*array.Decimal128), col("note"), col("flag").(*array.Boolean)
		if s := amt.DataType().(*arrow.Decimal128Type).Scale; s != 2 {
			t.Fatalf("amount has scale %d, want 2", s)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			lt.rows++
			if lt.sks[sk.Value(r)] {
				t.Fatalf("sk %d twice in the lake", sk.Value(r))
			}
			lt.sks[sk.Value(r)] = true
			lt.qty += qty.Value(r)
			lt.cents += amt.Value(r).BigInt().Int64()
			lt.big.Add(lt.big, bg.Value(r).BigInt())
			if note.IsValid(r) {
				lt.notes++
			}
			if flag.Value(r) {
				lt.flags++
			}
		}
		rec.Release()
	}
	return lt
}

func (lt lakeTotals) check(t *testing.T, exp dynamotest.Expected) {
	t.Helper()
	if lt.rows != exp.Items || lt.qty != exp.QtySum || lt.cents != exp.AmountCents || lt.big.Cmp(exp.BigSum) != 0 || lt.notes != exp.WithNote || lt.flags != exp.FlagTrue {
		t.Fatalf("lake: %d rows, sum(qty) %d, sum(amount) %d cents, sum(big) %s, %d notes, %d flags;\ngenerator: %d, %d, %d, %s, %d, %d",
			lt.rows, lt.qty, lt.cents, lt.big, lt.notes, lt.flags, exp.Items, exp.QtySum, exp.AmountCents, exp.BigSum, exp.WithNote, exp.FlagTrue)
	}
}

const ddbPlan = `schema_version: 1
platform: {prefix: ddb}
sources:
  ddb: {kind: dynamodb}
tables:
  orders:
    source: {name: ddb, %s}
    load: {keys: [pk, sk]}
`

func TestDynamoDBTableLoadsExactly(t *testing.T) {
	cl := dynamotest.Client(t)
	dynamotest.SetEnv(t)
	for _, seed := range []uint64{11, 12} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			n := ddbItems()
			if seed != 11 && n > 5_000 {
				n = 5_000 // one large table is enough
			}
			table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 100_000})
			items, exp := dynamotest.Generate(seed, n)
			t0 := time.Now()
			dynamotest.Seed(t, cl, table, items)
			t.Logf("seeded %d items in %v", n, time.Since(t0).Round(time.Millisecond))
			ws, p := workspace(t, nil, fmt.Sprintf(ddbPlan, "table: "+table))
			t1 := time.Now()
			out := runOnce(t, ws, p, flow.RunOptions{})
			t.Logf("loaded in %v", time.Since(t1).Round(time.Millisecond))
			res := out.Result.Tables[0]
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.RowsRead != int64(n) || res.RowsLoaded != int64(n) || res.RowsQuarantined != 0 {
				t.Fatalf("read %d loaded %d held %d, want %d/%d/0 (exceptions: %+v)", res.RowsRead, res.RowsLoaded, res.RowsQuarantined, n, n, res.Exceptions)
			}
			types := map[string]string{}
			for i, c := range res.Columns {
				types[c] = res.Types[i].String()
			}
			for c, want := range map[string]string{"pk": "string", "sk": "long", "qty": "long", "big": "decimal(20,0)", "blob": "binary", "flag": "boolean", "attrs": "string", "tags": "string", "note": "string"} {
				if types[c] != want {
					t.Errorf("column %s: type %q, want %q", c, types[c], want)
				}
			}
			if !strings.HasPrefix(types["amount"], "decimal(") || !strings.HasSuffix(types["amount"], ",2)") {
				t.Errorf("amount: type %q, want decimal(p,2)", types["amount"])
			}
			if !strings.Contains(res.ReadNote, "DynamoDB Scan of "+table+" in 4 segments, eventually consistent, within 2.5e+04 read units/s (25% of the provisioned 100000") {
				t.Errorf("read note: %q", res.ReadNote)
			}
			tr := tableReport(t, out.Report, "orders")
			for _, name := range []string{"source count", "source sum(qty)", "source sum(amount)", "source sum(big)"} {
				if c := check(t, tr, name); c.Status != gates.Pass {
					t.Errorf("%s: %s %s", name, c.Status, c.Detail)
				}
			}
			if out.Report.Status != "ok" && out.Report.Status != "passed" {
				for _, c := range tr.Checks {
					if c.Status != gates.Pass {
						t.Logf("check %s: %s %s", c.Name, c.Status, c.Detail)
					}
				}
			}
			_, tbl := loadIceberg(t, ws, p, "orders")
			readLakeTotals(t, tbl).check(t, exp)
			if seed == 12 {
				// The table changes: the next run reads it afresh (a live
				// table has no fingerprint) and replaces the lake's rows.
				more, exp2 := dynamotest.Generate(seed+100, n+500)
				dynamotest.Seed(t, cl, table, more) // same keys 0..n-1 overwritten, 500 new
				out := runOnce(t, ws, p, flow.RunOptions{})
				if res := out.Result.Tables[0]; res.Err != nil || res.RowsLoaded != int64(n+500) {
					t.Fatalf("second run after the table changed: loaded %d (err %v), want %d", res.RowsLoaded, res.Err, n+500)
				}
				_, tbl2 := loadIceberg(t, ws, p, "orders")
				readLakeTotals(t, tbl2).check(t, exp2)
			}
			// A value of every kind, as the lake holds it.
			rows, err := kmIcebergRows(context.Background(), tbl)
			if err != nil {
				t.Fatal(err)
			}
			want := `attrs={"a":"x","m":{"k":true},"z":1}`
			found := false
			for text := range rows {
				if strings.Contains(text, want) && strings.Contains(text, `tags=["a","t0","z"]`) && strings.Contains(text, "sk=0|") {
					found = true
					if !strings.Contains(text, `scores=[-1.5,10,100]`) || !strings.Contains(text, `list=["b",2,null]`) || !strings.Contains(text, "gone=") {
						t.Errorf("item 0 in the lake: %s", text)
					}
				}
			}
			if !found {
				t.Errorf("item 0 (sk 0) not found with its map and set as canonical JSON")
			}
		})
	}
}

// writeExport writes a DynamoDB full export of items (DynamoDB JSON,
// gzip, files of per items) below s3://bucket/prefix/AWSDynamoDB/<id>/ and
// returns the export folder's URI.
func writeExport(t *testing.T, bucket string, items []map[string]types.AttributeValue, per int) string {
	t.Helper()
	cl := s3test.Client(t)
	ctx := context.Background()
	id := "01700000000000-abcdef12"
	root := "exports/AWSDynamoDB/" + id + "/"
	var manifest bytes.Buffer
	for f := 0; f*per < len(items); f++ {
		var raw bytes.Buffer
		zw := gzip.NewWriter(&raw)
		chunk := items[f*per : min((f+1)*per, len(items))]
		for _, it := range chunk {
			b, err := json.Marshal(map[string]any{"Item": ddbJSON(it)})
			if err != nil {
				t.Fatal(err)
			}
			zw.Write(append(b, '\n'))
		}
		zw.Close()
		key := fmt.Sprintf("%sdata/%08x.json.gz", root, f*7919)
		if err := cl.Put(ctx, bucket, key, bytes.NewReader(raw.Bytes()), nil); err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(map[string]any{"itemCount": len(chunk), "md5Checksum": "x", "etag": "y", "dataFileS3Key": key})
		manifest.Write(append(line, '\n'))
	}
	if err := cl.Put(ctx, bucket, root+"manifest-files.json", bytes.NewReader(manifest.Bytes()), nil); err != nil {
		t.Fatal(err)
	}
	sum, _ := json.Marshal(map[string]any{"version": "2020-06-30", "exportArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders/export/" + id,
		"itemCount": len(items), "outputFormat": "DYNAMODB_JSON", "exportType": "FULL_EXPORT", "manifestFilesS3Key": root + "manifest-files.json", "s3Bucket": bucket, "s3Prefix": "exports"})
	if err := cl.Put(ctx, bucket, root+"manifest-summary.json", bytes.NewReader(sum), nil); err != nil {
		t.Fatal(err)
	}
	return "s3://" + bucket + "/" + root
}

// ddbJSON is an attribute map in DynamoDB JSON, written by the test
// itself (the product's decoder is what reads it).
func ddbJSON(item map[string]types.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range item {
		out[k] = ddbValue(v)
	}
	return out
}

func ddbValue(v types.AttributeValue) map[string]any {
	switch a := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": a.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": a.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(a.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": a.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": a.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": a.Value}
	case *types.AttributeValueMemberBS:
		var bs []string
		for _, b := range a.Value {
			bs = append(bs, base64.StdEncoding.EncodeToString(b))
		}
		return map[string]any{"BS": bs}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": ddbJSON(a.Value)}
	case *types.AttributeValueMemberL:
		var l []any
		for _, x := range a.Value {
			l = append(l, ddbValue(x))
		}
		return map[string]any{"L": l}
	}
	panic(fmt.Sprintf("unknown %T", v))
}

func TestDynamoDBExportLoadsExactly(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	n := ddbItems()
	items, exp := dynamotest.Generate(21, n)
	uri := writeExport(t, bucket, items, 1500)
	ws, p := workspace(t, nil, fmt.Sprintf(ddbPlan, "export: "+uri))
	out := runOnce(t, ws, p, flow.RunOptions{})
	res := out.Result.Tables[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.RowsRead != int64(n) || res.RowsLoaded != int64(n) {
		t.Fatalf("read %d loaded %d, want %d", res.RowsRead, res.RowsLoaded, n)
	}
	if got := len(res.Files); got != (n+1499)/1500 {
		t.Errorf("%d data files read, want %d", got, (n+1499)/1500)
	}
	tr := tableReport(t, out.Report, "orders")
	for _, name := range []string{"source count", "source sum(qty)", "source sum(amount)", "source sum(big)"} {
		if c := check(t, tr, name); c.Status != gates.Pass {
			t.Errorf("%s: %s %s", name, c.Status, c.Detail)
		}
	}
	_, tbl := loadIceberg(t, ws, p, "orders")
	readLakeTotals(t, tbl).check(t, exp)
	snaps := len(tbl.Metadata().Snapshots())
	// The same export again: already loaded (its files' ETags are the
	// load's fingerprint), nothing added.
	out = runOnce(t, ws, p, flow.RunOptions{})
	if res := out.Result.Tables[0]; res.Err != nil || res.RowsLoaded != 0 {
		t.Fatalf("second run of the same export: loaded %d, err %v; want nothing loaded", res.RowsLoaded, res.Err)
	}
	_, tbl = loadIceberg(t, ws, p, "orders")
	if got := len(tbl.Metadata().Snapshots()); got != snaps {
		t.Fatalf("second run of the same export made %d snapshots, want %d", got, snaps)
	}
	readLakeTotals(t, tbl).check(t, exp)
}

// TestDynamoDBScanKilledLeavesNothingAndRerunIsExact kills lima-tui run in
// the middle of a scan held back by a small read budget (SIGKILL) and at
// the commit's fault points: nothing is visible after the kill, and the
// rerun loads the table exactly once.
func TestDynamoDBScanKilledLeavesNothingAndRerunIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs lima-tui")
	}
	cl := dynamotest.Client(t)
	dynamotest.SetEnv(t)
	bin := os.Getenv("LIMA_LIFE_BIN")
	if bin == "" {
		bin = buildLima(t)
	}
	// For the SIGKILL: 40 provisioned read units at read_percent 25 are 10
	// units/s, so the scan of 3,000 items takes about five seconds and the
	// kill at two lands inside it. The fault points use a fast table.
	items, exp := dynamotest.Generate(31, 3000)
	slow := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 40})
	fast := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 100_000})
	dynamotest.Seed(t, cl, slow, items)
	dynamotest.Seed(t, cl, fast, items)
	// The columns as gate 3 proposes them: the run reads without a profile.
	const cols = `
    columns:
      - {name: pk, type: string, required: true}
      - {name: sk, type: long, required: true}
      - {name: qty, type: long}
      - {name: amount, type: "decimal(12,2)"}
      - {name: big, type: "decimal(20,0)"}
      - {name: note, type: string}
      - {name: flag, type: boolean}
`
	for _, kill := range []string{"sigkill", "before-commit", "after-commit"} {
		t.Run(kill, func(t *testing.T) {
			table := fast
			if kill == "sigkill" {
				table = slow
			}
			ws, p := workspace(t, nil, fmt.Sprintf(ddbPlan, "table: "+table)+cols)
			cmd := exec.Command(bin, "run", "--plan", ws.PlanPath(), "--force")
			cmd.Dir = ws.Dir
			cmd.Env = os.Environ()
			if kill != "sigkill" {
				cmd.Env = append(cmd.Env, "LIMA_FAULTPOINT="+kill)
			}
			var outb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &outb, &outb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if kill == "sigkill" {
				time.AfterFunc(2*time.Second, func() { _ = cmd.Process.Kill() })
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
				t.Fatalf("lima-tui run was not killed (%v):\n%s", err, outb.String())
			}
			t.Logf("killed (%s); its output:\n%s", kill, tail(outb.String(), 600))
			sk, err := flow.OpenSink(context.Background(), ws, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			tbl, lerr := sk.Catalog().LoadTable(context.Background(), []string{p.Namespace(), "orders"})
			sk.Close()
			if kill == "after-commit" {
				// Killed after its commit: the snapshot is whole.
				if lerr != nil {
					t.Fatal(lerr)
				}
				readLakeTotals(t, tbl).check(t, exp)
			} else if lerr == nil && tbl.CurrentSnapshot() != nil {
				t.Fatalf("killed (%s) before its commit, yet the table has a snapshot with %d rows", kill, readLakeTotals(t, tbl).rows)
			}
			// The rerun: the whole table, once.
			rerun := exec.Command(bin, "run", "--plan", ws.PlanPath(), "--force")
			rerun.Dir = ws.Dir
			t0 := time.Now()
			if b, err := rerun.CombinedOutput(); err != nil {
				t.Fatalf("rerun: %v\n%s", err, b)
			}
			if el := time.Since(t0); kill == "sigkill" {
				// The whole run within the budget takes longer than the
				// delay of the kill: the killed run was still scanning.
				t.Logf("the rerun took %v; the killed run was killed after 2s", el.Round(time.Millisecond))
				if el < 3*time.Second {
					t.Fatalf("the rerun took only %v: the kill after 2s may have come after the scan; slow the scan down", el)
				}
			}
			_, tbl = loadIceberg(t, ws, p, "orders")
			readLakeTotals(t, tbl).check(t, exp)
			files := 0
			filepath.WalkDir(ws.Dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") {
					files++
				}
				return nil
			})
			t.Logf("%s: %d parquet files in the workspace after the rerun", kill, files)
		})
	}
}
