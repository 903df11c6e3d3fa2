package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/gluetest"
	"github.com/lima-lake/lima/internal/iamtest"
	"github.com/lima-lake/lima/internal/s3test"
	"github.com/lima-lake/lima/reports/gluejob"
)

// TestGlueDriverWithRealVerbs runs the driver lima-tui deploy glue
// generates under reports/gluejob/testdata/harness.py (stand-ins for
// awsglue, pyspark and boto3's listing and upload) with the REAL lima-tui
// binary as the Spark file: each task runs `lima-tui worker`, the driver
// runs `lima-tui commit`, against dirty CSV objects on the loopback S3
// server with a Glue catalog on a local Glue endpoint. The table read back
// with iceberg-go must hold exactly the ground truth's rows and sum, the
// uploaded report must balance to the ground truth, and a second run of the
// same load id must change nothing.
func TestGlueDriverWithRealVerbs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3 and lima-tui processes")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed to run the generated Glue driver (CI=true)")
		}
		t.Skip("SKIPPING: python3 not found: the generated Glue driver is not run with the real lima-tui")
	}
	harness, err := filepath.Abs(filepath.Join("..", "..", "reports", "gluejob", "testdata", "harness.py"))
	if err != nil {
		t.Fatal(err)
	}
	s3test.SetEnv(t)
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	glue, iamSrv := gluetest.New(t), iamtest.New(t)
	t.Setenv("AWS_ENDPOINT_URL_GLUE", glue.URL())
	t.Setenv("AWS_ENDPOINT_URL_IAM", iamSrv.URL())
	ctx := context.Background()

	// The ground truth: dirty files written with their own accounting.
	const nFiles = 4
	local := t.TempDir()
	truth := writeShardFiles(t, local, nFiles)
	var sizes []int
	for f := range nFiles {
		name := fmt.Sprintf("orders-%02d.csv", f)
		b, err := os.ReadFile(filepath.Join(local, name))
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(b))
		if err := cl.Put(ctx, bucket, "landing/"+name, bytes.NewReader(b), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Put(ctx, bucket, "landing/notes.txt", strings.NewReader("not a table file\n"), nil); err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, rows := range truth.held {
		held += len(rows)
	}
	var wantCents int64
	for _, r := range truth.rows {
		wantCents += glueCents(t, strings.Split(r, "|")[3])
	}

	src := `schema_version: 1
platform: {prefix: gluee2e, region: us-east-1, catalog: glue}
storage: {warehouse: "s3://BUCKET/lake"}
sources:
  landing: {kind: files, path: "s3://BUCKET/landing"}
tables:
  orders:
    source: {name: landing, files: ["orders-*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: name, type: string}
      - {name: qty, type: long}
      - {name: amount, type: "decimal(10,2)"}
      - {name: d, type: date}
    load: {keys: [id]}
    checks:
      - {rule: expression, column: qty, expr: "qty >= 0"}
    engine: glue
    glue: {role_arn: "` + glueRole + `", script_location: "s3://BUCKET/code/"}
`
	p, err := plan.Parse([]byte(strings.ReplaceAll(src, "BUCKET", bucket)), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: "2026-12-01T00:00:00Z", PlanHash: p.Hash()}
	ws := t.TempDir()
	planPath := filepath.Join(ws, "platform.yaml")
	if err := p.Write(planPath); err != nil {
		t.Fatal(err)
	}
	// As on AWS: the job's role exists and the job is deployed (lima-tui
	// commit runs gate 2, whose engine-glue checks GetRole and GetJob).
	iamSrv.PutRole(gates.RoleName(glueRole), glueRole)
	if code, out, errs := runCLI(t, "deploy", "glue", "--dir", ws, "--apply", "--binary", "/bin/true"); code != exitOK {
		t.Fatalf("deploy glue --apply: exit %d\n%s\n%s", code, out, errs)
	}
	p, err = flow.LoadPlan(planPath)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := gluejob.Generate(p, "orders", gluejob.Options{SourceBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	// shard_mb is at least 1 MiB; the test's files are a few KiB, so the
	// driver's SHARD_BYTES is lowered to the first two files' size: shards
	// {00, 01}, {02}, {03} (the files grow), several workers and a shard of
	// two objects.
	shardRe := regexp.MustCompile(`(?m)^(TABLE, SOURCE, SHARD_BYTES = .*, )\d+$`)
	if !shardRe.Match(bundle.Driver) {
		t.Fatalf("the driver has no SHARD_BYTES line:\n%s", bundle.Driver)
	}
	driver := shardRe.ReplaceAll(bundle.Driver, []byte("${1}"+strconv.Itoa(sizes[0]+sizes[1])))
	planBytes, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	bin := limaBin(t)

	runDriver := func(loadID string) (int, string, []map[string]string) {
		t.Helper()
		work := t.TempDir()
		if err := os.MkdirAll(filepath.Join(work, "added"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(work, "added", "lima-tui")); err != nil {
			t.Fatal(err)
		}
		objs, err := cl.List(ctx, bucket, "")
		if err != nil {
			t.Fatal(err)
		}
		var listing []map[string]any
		for _, o := range objs {
			listing = append(listing, map[string]any{"Bucket": bucket, "Key": o.Key, "Size": o.Size})
		}
		lb, _ := json.Marshal(listing)
		for path, b := range map[string][]byte{"added/platform.yaml": planBytes, "driver.py": driver, "listing.json": lb} {
			if err := os.WriteFile(filepath.Join(work, path), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, py, harness)
		cmd.Env = append(os.Environ(), "WORK="+work, "DRIVER="+filepath.Join(work, "driver.py"), "LOAD_ID="+loadID)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err = cmd.Run()
		rc := 0
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var uploads []map[string]string
		if b, err := os.ReadFile(filepath.Join(work, "uploads.json")); err == nil {
			_ = json.Unmarshal(b, &uploads)
		}
		return rc, stderr.String(), uploads
	}
	reportOf := func(uploads []map[string]string, loadID string) (string, reportTable) {
		t.Helper()
		for _, u := range uploads {
			if u["Bucket"] == bucket && u["Key"] == "code/reports/"+loadID+"/report.json" {
				path := filepath.Join(t.TempDir(), "report.json")
				if err := os.WriteFile(path, []byte(u["Body"]), 0o600); err != nil {
					t.Fatal(err)
				}
				return shardReport(t, path)
			}
		}
		t.Fatalf("no report.json uploaded to s3://%s/code/reports/%s/: %v", bucket, loadID, uploadKeys(uploads))
		return "", reportTable{}
	}

	rc, stderr, uploads := runDriver("L1")
	if rc != 0 {
		t.Fatalf("driver: exit %d\n%s", rc, stderr)
	}
	status, rep := reportOf(uploads, "L1")
	if rep.RowsRead != truth.read || rep.RowsLoaded != int64(len(truth.rows)) || rep.RowsQuarantined != int64(held) || rep.RowsSkipped != truth.skipped ||
		rep.RowsRead != rep.RowsLoaded+rep.RowsQuarantined+rep.RowsSkipped {
		t.Fatalf("report (status %s): read %d loaded %d held %d skipped %d; truth: read %d loaded %d held %d skipped %d",
			status, rep.RowsRead, rep.RowsLoaded, rep.RowsQuarantined, rep.RowsSkipped, truth.read, len(truth.rows), held, truth.skipped)
	}
	rows, snaps := glueLake(t, ws, p)
	if snaps != 1 {
		t.Fatalf("%d snapshots after the first run, want 1", snaps)
	}
	if !slices.Equal(rows, truth.rows) {
		t.Fatalf("the table holds %d rows, the truth %d: %s", len(rows), len(truth.rows), shardFirstDiff(rows, truth.rows))
	}
	var gotCents int64
	for _, r := range rows {
		gotCents += glueCents(t, strings.Split(r, "|")[3])
	}
	if gotCents != wantCents {
		t.Fatalf("sum(amount) %d cents, want %d", gotCents, wantCents)
	}

	// The same load again (a retried job run): nothing changes.
	rc, stderr, _ = runDriver("L1")
	if rc != 0 {
		t.Fatalf("second driver run: exit %d\n%s", rc, stderr)
	}
	rows2, snaps2 := glueLake(t, ws, p)
	if snaps2 != snaps || !slices.Equal(rows2, rows) {
		t.Fatalf("second run of load L1: %d snapshots (was %d), %d rows (was %d)", snaps2, snaps, len(rows2), len(rows))
	}
}

func uploadKeys(us []map[string]string) []string {
	var out []string
	for _, u := range us {
		out = append(out, u["Bucket"]+"/"+u["Key"])
	}
	return out
}

// glueCents parses a decimal(10,2) text as cents.
func glueCents(t *testing.T, s string) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(s, ".")
	frac = (frac + "00")[:2]
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return n
}

// glueLake reads the table through the Glue catalog with iceberg-go: its
// rows as id|name|qty|amount|d, sorted, and its snapshot count.
func glueLake(t *testing.T, dir string, p *plan.Plan) ([]string, int) {
	t.Helper()
	ctx := context.Background()
	sk, err := flow.OpenPlanSink(ctx, flow.Workspace{Dir: dir}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	ice, ok := sk.(*icesink.Sink)
	if !ok {
		t.Fatalf("the plan's sink is a %T, not Iceberg", sk)
	}
	tbl, err := ice.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), "orders"})
	if err != nil {
		t.Fatal(err)
	}
	snaps := len(tbl.Metadata().Snapshots())
	if tbl.CurrentSnapshot() == nil {
		return nil, snaps
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	var rows []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		idx := map[string]int{}
		for i, f := range rec.Schema().Fields() {
			idx[f.Name] = i
		}
		for r := range int(rec.NumRows()) {
			var cells []string
			for _, c := range []string{"id", "name", "qty", "amount", "d"} {
				col := rec.Column(idx[c])
				if dec, ok := col.(*array.Decimal128); ok && dec.IsValid(r) {
					cells = append(cells, dec.Value(r).ToString(dec.DataType().(*arrow.Decimal128Type).Scale))
					continue
				}
				cells = append(cells, col.ValueStr(r))
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
	}
	sort.Strings(rows)
	return rows, snaps
}
