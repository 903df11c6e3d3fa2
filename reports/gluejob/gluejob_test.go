package gluejob

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/files"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const testPlan = `schema_version: 1
platform: {prefix: acme, region: eu-central-1, catalog: glue}
storage: {warehouse: "s3://lake-bucket/acme"}
schedule: {cron: "30 2 * * 1-5", timezone: Asia/Seoul}
sources:
  landing: {kind: files, path: "s3://in-bucket/landing"}
tables:
  orders:
    source: {name: landing, files: ["orders/**/*.csv", "extra/o?.csv"]}
    engine: glue
    glue:
      role_arn: arn:aws:iam::111122223333:role/lima-glue
      script_location: s3://code-bucket/lima/
      timeout: 90m
`

func testBundle(t *testing.T, src string, o Options) *Bundle {
	t.Helper()
	p, err := plan.Parse([]byte(src), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := Generate(p, "orders", o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it after review):\n--- got\n%s", name, got)
	}
}

func TestGlueBundleGolden(t *testing.T) {
	b := testBundle(t, testPlan, Options{SourceBytes: 20 << 30})
	golden(t, "driver_orders.py", b.Driver)
	job, _ := json.MarshalIndent(b.Job, "", "  ")
	golden(t, "job_orders.json", append(job, '\n'))
	trig, _ := json.MarshalIndent(b.Trigger, "", "  ")
	golden(t, "trigger_orders.json", append(trig, '\n'))
	golden(t, "policy_orders.json", b.Policy)
	if n := bytes.Count(b.Driver, []byte("\n")); n > 60 {
		t.Errorf("the driver has %d lines; it must stay readable on one screen (at most 60)", n)
	}
}

// The values a reader of the job definition relies on, stated here
// independently of the golden file.
func TestGlueJobDefinition(t *testing.T) {
	b := testBundle(t, testPlan, Options{SourceBytes: 20 << 30})
	j := b.Job
	if j.Name != "lima-acme-orders" || j.GlueVersion != "5.1" || j.Role != "arn:aws:iam::111122223333:role/lima-glue" ||
		j.Command.Name != "glueetl" || j.Command.ScriptLocation != "s3://code-bucket/lima/lima-acme-orders.py" {
		t.Fatalf("job %+v", j)
	}
	// 20 GiB at 8 GiB per worker: 3 executors + the driver.
	if j.WorkerType != "G.1X" || j.NumberOfWorkers != 4 || j.Timeout != 90 || j.MaxRetries != 0 {
		t.Fatalf("size/timeout: %s x%d, %d min, %d retries", j.WorkerType, j.NumberOfWorkers, j.Timeout, j.MaxRetries)
	}
	a := j.DefaultArguments
	if a["--datalake-formats"] != "iceberg" || a["--job-bookmark-option"] != "job-bookmark-disable" || a["--load_id"] != "auto" {
		t.Fatalf("arguments %v", a)
	}
	confs := strings.Split(a["--conf"], " --conf ")
	for _, want := range []string{"spark.sql.catalog.lima.catalog-impl=org.apache.iceberg.aws.glue.GlueCatalog", "spark.sql.catalog.lima.warehouse=s3://lake-bucket/acme",
		"spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"} {
		found := false
		for _, c := range confs {
			found = found || c == want
		}
		if !found {
			t.Errorf("--conf lacks %s: %q", want, a["--conf"])
		}
	}
	// 02:30 in Seoul (UTC+9, no summer time) on weekdays is 17:30 UTC the day before: SUN-THU.
	if b.Trigger == nil || b.Trigger.Schedule != "cron(30 17 ? * SUN-THU *)" || b.Trigger.Actions[0].JobName != j.Name || b.Trigger.Type != "SCHEDULED" {
		t.Fatalf("trigger %+v (note %s)", b.Trigger, b.TriggerNote)
	}
	// A schedule one Glue trigger cannot express: no trigger, and why.
	both := testBundle(t, strings.Replace(testPlan, `cron: "30 2 * * 1-5"`, `cron: "0 3 1 * 1"`, 1), Options{SourceBytes: 1})
	if both.Trigger != nil || !strings.Contains(both.TriggerNote, "no Glue trigger") || !strings.Contains(both.TriggerNote, "two triggers") {
		t.Fatalf("day of month and day of week: trigger %+v, note %q", both.Trigger, both.TriggerNote)
	}
	// Overrides.
	o := testBundle(t, strings.Replace(testPlan, "      timeout: 90m\n", "      timeout: 90m\n      worker_type: G.2X\n      workers: 7\n      max_retries: 2\n", 1), Options{SourceBytes: 1})
	if o.Job.WorkerType != "G.2X" || o.Job.NumberOfWorkers != 7 || o.Job.MaxRetries != 2 {
		t.Fatalf("overrides: %+v", o.Job)
	}
	// No schedule, no trigger.
	n := testBundle(t, strings.Replace(testPlan, `schedule: {cron: "30 2 * * 1-5", timezone: Asia/Seoul}`+"\n", "", 1), Options{SourceBytes: -1})
	if n.Trigger != nil || n.Job.NumberOfWorkers != 2 {
		t.Fatalf("unscheduled: trigger %+v, workers %d", n.Trigger, n.Job.NumberOfWorkers)
	}
}

func TestGlueSizeRule(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		bytes int64
		want  int
	}{{0, 2}, {1, 2}, {8 * gib, 2}, {8*gib + 1, 3}, {80 * gib, 11}, {10000 * gib, 100}} {
		if _, n, _ := Size(c.bytes, nil); n != c.want {
			t.Errorf("Size(%d) = %d workers, want %d", c.bytes, n, c.want)
		}
	}
	if _, n, _ := Size(-1, &plan.Scope{Volume: "large"}); n != 20 {
		t.Errorf("large volume: %d", n)
	}
}

func TestGluePolicy(t *testing.T) {
	b := testBundle(t, testPlan, Options{SourceBytes: 1})
	var doc PolicyDocument
	if err := json.Unmarshal(b.Policy, &doc); err != nil {
		t.Fatal(err)
	}
	grants := map[string]map[string]bool{} // resource -> actions
	for _, s := range doc.Statement {
		if s.Effect != "Allow" {
			t.Fatalf("statement %s: %s", s.Sid, s.Effect)
		}
		for _, r := range s.Resource {
			if grants[r] == nil {
				grants[r] = map[string]bool{}
			}
			for _, a := range s.Action {
				grants[r][a] = true
			}
		}
	}
	want := map[string][]string{
		"arn:aws:s3:::in-bucket/landing/*":                     {"s3:GetObject"},
		"arn:aws:s3:::lake-bucket/acme/*":                      {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
		"arn:aws:s3:::code-bucket/lima/*":                      {"s3:GetObject"},
		"arn:aws:s3:::code-bucket/lima/reports/*":              {"s3:PutObject"},
		"arn:aws:glue:eu-central-1:111122223333:database/acme": {"glue:GetDatabase", "glue:CreateTable", "glue:UpdateTable"},
		"arn:aws:s3:::in-bucket":                               {"s3:ListBucket"},
	}
	for r, acts := range want {
		for _, a := range acts {
			if !grants[r][a] {
				t.Errorf("the policy does not grant %s on %s", a, r)
			}
		}
	}
	if grants["arn:aws:s3:::in-bucket/landing/*"]["s3:PutObject"] {
		t.Error("the policy lets the job write to the source")
	}
	// S3 Tables: its actions on the table bucket instead of Glue's.
	s3t := strings.NewReplacer("catalog: glue", "catalog: s3tables", `storage: {warehouse: "s3://lake-bucket/acme"}`,
		`storage: {warehouse: "s3://lake-bucket/acme", table_bucket_arn: "arn:aws:s3tables:eu-central-1:111122223333:bucket/acme-lake"}`).Replace(testPlan)
	sb := testBundle(t, s3t, Options{SourceBytes: 1})
	if !bytes.Contains(sb.Policy, []byte(`"s3tables:UpdateTableMetadataLocation"`)) || bytes.Contains(sb.Policy, []byte("glue:CreateTable")) ||
		!bytes.Contains(sb.Policy, []byte(`"arn:aws:s3tables:eu-central-1:111122223333:bucket/acme-lake/table/*"`)) {
		t.Fatalf("s3tables policy:\n%s", sb.Policy)
	}
	if !strings.Contains(sb.Job.DefaultArguments["--conf"], "rest.signing-name=s3tables") {
		t.Fatalf("s3tables conf %s", sb.Job.DefaultArguments["--conf"])
	}
}

// The driver is valid Python 3: python3 -m py_compile.
func TestGlueDriverCompiles(t *testing.T) {
	py := python3(t)
	b := testBundle(t, testPlan, Options{SourceBytes: 1})
	path := filepath.Join(t.TempDir(), "driver.py")
	if err := os.WriteFile(path, b.Driver, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-m", "py_compile", path).CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
}

func python3(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed to check the generated Glue driver (CI=true)")
		}
		t.Skip("python3 not found: the generated Glue driver is not compiled")
	}
	return py
}

// GlobRegexp matches exactly the names Lima's own glob matches.
func TestGlobRegexpAgreesWithFiles(t *testing.T) {
	globs := []string{"*.csv", "orders/*.csv", "orders/**/*.csv", "**/*.csv", "orders/**", "**", "o?.csv", "[a-c]*.csv", "[^a]x.csv",
		"data.2024.csv", "a+b(1).csv", "./x/*.csv", "x//y/*.csv", "**/**/z.csv", `esc\*.csv`, "[\\]]x.csv", "café/*.csv"}
	names := []string{"a.csv", "orders/a.csv", "orders/2024/01/a.csv", "orders", "orders/x", "o1.csv", "oo1.csv", "b1.csv", "d.csv", "ax.csv", "bx.csv",
		"data.2024.csv", "dataX2024.csv", "a+b(1).csv", "x/a.csv", "x/y/a.csv", "z.csv", "q/z.csv", "esc*.csv", "escX.csv", "]x.csv",
		"café/a.csv", "a/b.csv", "orders/a.CSV"}
	for _, g := range globs {
		re, err := GlobRegexp(g)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		rx := regexp.MustCompile("^(?:" + re + ")$")
		pg, err := files.ParseGlob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if got, want := rx.MatchString(n), pg.Match(n); got != want {
				t.Errorf("glob %q (regexp %s) on %q: %v, Lima's glob says %v", g, re, n, got, want)
			}
		}
	}
	if _, err := GlobRegexp("book.xlsx#Sheet1"); err == nil {
		t.Error("a sheet glob was accepted")
	}
}
