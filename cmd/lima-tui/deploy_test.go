package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/internal/gluetest"
	"github.com/lima-lake/lima/internal/iamtest"
	"github.com/lima-lake/lima/internal/s3test"
	"github.com/lima-lake/lima/internal/s3x"
	"github.com/lima-lake/lima/reports"
)

const glueRole = "arn:aws:iam::111122223333:role/lima-glue"

type glueEnv struct {
	dir, bucket string
	s3          *s3x.Client
	glue        *gluetest.Server
	iam         *iamtest.Server
}

// glueWorkspace is an approved plan whose table orders has engine glue,
// with its source files, warehouse and script location in one test bucket
// of the loopback S3 server, Glue and IAM on local endpoints.
func glueWorkspace(t *testing.T) *glueEnv {
	t.Helper()
	s3test.SetEnv(t)
	e := &glueEnv{s3: s3test.Client(t), glue: gluetest.New(t), iam: iamtest.New(t), dir: t.TempDir()}
	e.bucket = s3test.Bucket(t, e.s3)
	t.Setenv("AWS_ENDPOINT_URL_GLUE", e.glue.URL())
	t.Setenv("AWS_ENDPOINT_URL_IAM", e.iam.URL())
	ctx := context.Background()
	for key, body := range map[string]string{"landing/orders/a.csv": "id,amount\n1,10\n", "landing/orders/b.csv": "id,amount\n2,20\n", "landing/other.csv": "x\n"} {
		if err := e.s3.Put(ctx, e.bucket, key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	src := `schema_version: 1
platform: {prefix: acme, region: us-east-1, catalog: glue}
storage: {warehouse: "s3://BUCKET/lake"}
schedule: {cron: "0 3 * * *"}
sources:
  landing: {kind: files, path: "s3://BUCKET/landing"}
tables:
  orders:
    source: {name: landing, files: ["orders/*.csv"]}
    columns: [{name: id, type: long}, {name: amount, type: long}]
    engine: glue
    glue: {role_arn: "` + glueRole + `", script_location: "s3://BUCKET/code/"}
`
	p, err := plan.Parse([]byte(strings.ReplaceAll(src, "BUCKET", e.bucket)), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: "2026-12-01T00:00:00Z", PlanHash: p.Hash()}
	if err := p.Write(filepath.Join(e.dir, "platform.yaml")); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *glueEnv) object(t *testing.T, key string) []byte {
	t.Helper()
	rc, err := e.s3.Get(context.Background(), e.bucket, key)
	if err != nil {
		t.Fatalf("s3://%s/%s: %v", e.bucket, key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ops(rs []gluetest.Request) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Op)
	}
	return strings.Join(out, " ")
}

func str(m map[string]any, path ...string) string {
	var v any = m
	for _, k := range path {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDeployGlueApply: deploy glue writes the definitions, and --apply
// uploads the binary, the plan and the driver byte for byte and creates
// the job and the trigger with the expected requests; a second --apply
// updates both instead of failing.
func TestDeployGlueApply(t *testing.T) {
	e := glueWorkspace(t)
	const bin = "/bin/true" // a small linux/amd64 executable stands in for the lima-tui binary
	binBytes, err := os.ReadFile(bin)
	if err != nil {
		t.Skip("no /bin/true to stand in for the binary")
	}

	// Without --apply: files only, nothing asked of Glue.
	code, out, errs := runCLI(t, "deploy", "glue", "--dir", e.dir)
	if code != exitOK {
		t.Fatalf("deploy glue: exit %d\n%s\n%s", code, out, errs)
	}
	if n := len(e.glue.Requests()); n != 0 {
		t.Fatalf("deploy without --apply made %d Glue requests", n)
	}
	jobDir := filepath.Join(e.dir, ".lima", "deploy", "glue", "lima-acme-orders")
	for _, name := range []string{"driver.py", "job.json", "trigger.json", "policy.json"} {
		fi, err := os.Stat(filepath.Join(jobDir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v", name, err, fi)
		}
	}
	if fi, err := os.Stat(jobDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v", jobDir, err, fi)
	}

	// --out elsewhere: the same files there, 0600 in 0700 folders.
	other := filepath.Join(t.TempDir(), "out")
	if code, _, errs := runCLI(t, "deploy", "glue", "--dir", e.dir, "--out", other, "--table", "orders"); code != exitOK {
		t.Fatalf("--out: exit %d\n%s", code, errs)
	}
	for _, name := range []string{"driver.py", "policy.json"} {
		a, _ := os.ReadFile(filepath.Join(jobDir, name))
		b, err := os.ReadFile(filepath.Join(other, "lima-acme-orders", name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("--out %s: %v", name, err)
		}
	}
	if fi, err := os.Stat(other); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("--out folder: %v %v", err, fi)
	}
	// A table without engine glue, and a target other than glue, are usage errors.
	if code, _, errs := runCLI(t, "deploy", "glue", "--dir", e.dir, "--table", "nope"); code != exitUsage || !strings.Contains(errs, `no table "nope"`) {
		t.Errorf("unknown table: exit %d %s", code, errs)
	}
	if code, _, _ := runCLI(t, "deploy", "lambda", "--dir", e.dir); code != exitUsage {
		t.Errorf("deploy lambda: exit %d", code)
	}

	// A binary that is not linux/amd64 is refused before anything is sent.
	if code, _, errs := runCLI(t, "deploy", "glue", "--dir", e.dir, "--apply", "--binary", filepath.Join(e.dir, "platform.yaml")); code != exitUsage || !strings.Contains(errs, "not a Linux executable") {
		t.Fatalf("non-ELF binary: exit %d\n%s", code, errs)
	}
	if n := len(e.glue.Requests()); n != 0 {
		t.Fatalf("a refused deploy made %d Glue requests", n)
	}

	code, out, errs = runCLI(t, "deploy", "glue", "--dir", e.dir, "--apply", "--binary", bin)
	if code != exitOK {
		t.Fatalf("deploy glue --apply: exit %d\n%s\n%s", code, out, errs)
	}
	reqs := e.glue.Requests()
	if got := ops(reqs); got != "GetJob CreateJob GetTrigger CreateTrigger" {
		t.Fatalf("first apply: %s", got)
	}
	job := reqs[1].Body
	want := map[string]string{
		"Name": "lima-acme-orders", "Role": glueRole, "GlueVersion": "5.1", "WorkerType": "G.1X", "NumberOfWorkers": "2", "Timeout": "120", "MaxRetries": "",
		"Command.Name": "glueetl", "Command.ScriptLocation": "s3://" + e.bucket + "/code/lima-acme-orders.py",
		"DefaultArguments.--job-bookmark-option": "job-bookmark-disable", "DefaultArguments.--datalake-formats": "iceberg", "DefaultArguments.--load_id": "auto",
		"ExecutionProperty.MaxConcurrentRuns": "1",
	}
	for k, v := range want {
		if got := str(job, strings.SplitN(k, ".", 2)...); got != v {
			t.Errorf("CreateJob %s = %q, want %q", k, got, v)
		}
	}
	if c := str(job, "DefaultArguments", "--conf"); !strings.Contains(c, "spark.sql.catalog.lima.warehouse=s3://"+e.bucket+"/lake") {
		t.Errorf("CreateJob --conf %q", c)
	}
	trig := reqs[3].Body
	// 03:00 UTC every day, in Glue's six fields with ? for the day of week.
	if str(trig, "Name") != "lima-acme-orders-schedule" || str(trig, "Type") != "SCHEDULED" || str(trig, "Schedule") != "cron(0 3 * * ? *)" ||
		str(trig, "Actions") != `[{"JobName":"lima-acme-orders"}]` || str(trig, "StartOnCreation") != "true" {
		t.Errorf("CreateTrigger %v", trig)
	}
	// The uploads, byte for byte.
	if !bytes.Equal(e.object(t, "code/lima-tui"), binBytes) {
		t.Error("the uploaded binary differs from --binary")
	}
	planBytes, _ := os.ReadFile(filepath.Join(e.dir, "platform.yaml"))
	if !bytes.Equal(e.object(t, "code/platform.yaml"), planBytes) {
		t.Error("the uploaded plan differs from the workspace's platform.yaml")
	}
	driver, _ := os.ReadFile(filepath.Join(jobDir, "driver.py"))
	if got := e.object(t, "code/lima-acme-orders.py"); !bytes.Equal(got, driver) || !bytes.Contains(got, []byte(`"orders/[^/]*\\.csv"`)) {
		t.Errorf("the uploaded driver differs from driver.py or lacks the glob:\n%s", got)
	}

	// No credential of the environment reaches a generated file or an upload.
	secret := os.Getenv("AWS_SECRET_ACCESS_KEY")
	if secret == "" {
		t.Fatal("the test environment has no secret key to look for")
	}
	for _, name := range []string{"driver.py", "job.json", "trigger.json", "policy.json"} {
		if b, _ := os.ReadFile(filepath.Join(jobDir, name)); bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(os.Getenv("AWS_ACCESS_KEY_ID"))) {
			t.Errorf("%s carries a credential", name)
		}
	}
	for _, r := range e.glue.Requests() {
		if b, _ := json.Marshal(r.Body); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s carries the secret key", r.Op)
		}
	}

	// Again: updated in place.
	code, out, errs = runCLI(t, "deploy", "glue", "--dir", e.dir, "--apply", "--binary", bin)
	if code != exitOK {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, out, errs)
	}
	reqs = e.glue.Requests()[4:]
	if got := ops(reqs); got != "GetJob UpdateJob GetTrigger UpdateTrigger" {
		t.Fatalf("second apply: %s", got)
	}
	if str(reqs[1].Body, "JobName") != "lima-acme-orders" || str(reqs[1].Body, "JobUpdate", "Command") != str(job, "Command") ||
		str(reqs[1].Body, "JobUpdate", "DefaultArguments") != str(job, "DefaultArguments") || str(reqs[1].Body, "JobUpdate", "NumberOfWorkers") != "2" {
		t.Errorf("UpdateJob %v", reqs[1].Body)
	}
	if str(reqs[3].Body, "TriggerUpdate", "Schedule") != "cron(0 3 * * ? *)" {
		t.Errorf("UpdateTrigger %v", reqs[3].Body)
	}
	if !strings.Contains(out, "job updated, trigger updated") {
		t.Errorf("second apply says:\n%s", out)
	}
}

// TestRunGlueTable: run on an engine-glue table passes gate 2's Glue checks
// (a missing role stops it with exit 4 before any job run), starts the job
// with a new load id, follows it to SUCCEEDED and shows the report the
// commit uploaded; a FAILED run is a clear error and exit 1.
func TestRunGlueTable(t *testing.T) {
	e := glueWorkspace(t)
	glueRunPoll = 5 * time.Millisecond
	t.Cleanup(func() { glueRunPoll = 0 })
	planPath := filepath.Join(e.dir, "platform.yaml")

	// Not deployed, no role: gate 2 says both, nothing starts.
	code, _, errs := runCLI(t, "run", "--plan", planPath, "--force")
	if code != exitPrecondition || !strings.Contains(errs, "glue role orders") || !strings.Contains(errs, "no such role") ||
		!strings.Contains(errs, "glue job orders") || !strings.Contains(errs, "lima-tui deploy glue --apply") {
		t.Fatalf("undeployed: exit %d\n%s", code, errs)
	}
	if len(e.glue.Runs()) != 0 {
		t.Fatal("a job run started although gate 2 failed")
	}
	e.iam.PutRole("lima-glue", glueRole)
	if code, out, errs := runCLI(t, "deploy", "glue", "--dir", e.dir, "--apply", "--binary", "/bin/true"); code != exitOK {
		t.Fatalf("deploy: exit %d\n%s\n%s", code, out, errs)
	}

	// The job's part: the commit's report under reports/<load id>/.
	rep := reports.Report{RunID: "20261207T030000.000000Z-abc123", Status: reports.StatusOK, Headline: "every table reconciles",
		Tables: []reports.TableReport{{Name: "orders", RowsRead: 2, RowsLoaded: 2}}}
	e.glue.OnStart(func(r gluetest.JobRun) {
		b, _ := json.Marshal(rep)
		if err := e.s3.Put(context.Background(), e.bucket, "code/reports/"+r.Arguments["--load_id"]+"/report.json", bytes.NewReader(b), nil); err != nil {
			t.Error(err)
		}
	})
	e.glue.ScriptRun(gluetest.RunStep{State: "STARTING"}, gluetest.RunStep{State: "RUNNING"}, gluetest.RunStep{State: "SUCCEEDED", ExecutionTime: 95, DPUSeconds: 190})
	code, out, errs := runCLI(t, "run", "--plan", planPath, "--force")
	t.Logf("run:\n%s", errs)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	runs := e.glue.Runs()
	if len(runs) != 1 || runs[0].JobName != "lima-acme-orders" || !strings.HasPrefix(runs[0].Arguments["--load_id"], "glue-") {
		t.Fatalf("job runs %+v", runs)
	}
	local := filepath.Join(e.dir, "reports", rep.RunID, "report.json")
	if strings.TrimSpace(out) != local {
		t.Errorf("stdout %q, want the report's path %s", out, local)
	}
	got, err := reports.Read(local)
	if err != nil || got.Status != reports.StatusOK || len(got.Tables) != 1 || got.Tables[0].RowsLoaded != 2 {
		t.Fatalf("local report %+v %v", got, err)
	}
	for _, s := range []string{"run " + rep.RunID, "SUCCEEDED", "190 DPU-seconds", "load id " + runs[0].Arguments["--load_id"]} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
	if !strings.Contains(errs, "1m35s") {
		t.Errorf("stderr lacks the execution time 1m35s:\n%s", errs)
	}

	// --json: one JSON object with the job run and the report.
	code, out, errs = runCLI(t, "run", "--plan", planPath, "--force", "--json", "--table", "orders")
	var sum map[string]any
	if err := json.Unmarshal([]byte(out), &sum); code != exitOK || err != nil {
		t.Fatalf("run --json: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	if sum["state"] != "SUCCEEDED" || sum["status"] != "ok" || sum["job_run_id"] != "jr_2" || sum["run_id"] != rep.RunID || sum["dpu_seconds"] != 190.0 ||
		!strings.HasPrefix(sum["load_id"].(string), "glue-") || sum["load_id"] == runs[0].Arguments["--load_id"] {
		t.Errorf("run --json: %v", sum)
	}

	// FAILED, no report: a clear error, exit 1.
	e.glue.OnStart(nil)
	e.glue.ScriptRun(gluetest.RunStep{State: "RUNNING"}, gluetest.RunStep{State: "FAILED", ExecutionTime: 30, ErrorMessage: "SystemExit: lima-tui commit exited 1: load glue-x is not committed"})
	code, _, errs = runCLI(t, "run", "--plan", planPath, "--force")
	if code != exitError || !strings.Contains(errs, "ended FAILED") || !strings.Contains(errs, "lima-tui commit exited 1") {
		t.Fatalf("failed run: exit %d\n%s", code, errs)
	}
	// Glue gives no DPU-seconds for a standard run: 2 G.1X workers × 1 DPU × 30 s.
	if !strings.Contains(errs, "about 60 DPU-seconds (2 G.1X workers × 1 DPU × 30s)") {
		t.Errorf("the failed run's cost is not stated:\n%s", errs)
	}
	if n := len(e.glue.Runs()); n != 3 {
		t.Fatalf("%d job runs, want 3", n)
	}
}

// TestDeployGlueNeedsTheApprovedPlan: a plan changed since its approval is
// not deployed (the workers would refuse it): exit 4, nothing uploaded or
// created.
func TestDeployGlueNeedsTheApprovedPlan(t *testing.T) {
	e := glueWorkspace(t)
	path := filepath.Join(e.dir, "platform.yaml")
	p, err := plan.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p.Tables["orders"].Glue.Workers = 5 // changed after the approval
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "deploy", "glue", "--dir", e.dir, "--apply", "--binary", "/bin/true")
	if code != exitPrecondition || !strings.Contains(errs, "the plan changed since test approved it") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if n := len(e.glue.Requests()); n != 0 {
		t.Errorf("%d Glue requests", n)
	}
	if objs, err := e.s3.List(context.Background(), e.bucket, "code/"); err != nil || len(objs) != 0 {
		t.Errorf("uploaded %v (%v)", objs, err)
	}
}

// TestRunGlueUsage: what run cannot do for an engine-glue table is a usage
// error before anything starts: --full-refresh, and --json over tables
// that run in Glue and here at once.
func TestRunGlueUsage(t *testing.T) {
	e := glueWorkspace(t)
	path := filepath.Join(e.dir, "platform.yaml")
	p, err := plan.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p.Tables["other"] = &plan.Table{Source: &plan.TableSource{Name: "landing", Files: []string{"other.csv"}}}
	p.Gates.DataModel.PlanHash = p.Hash()
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--full-refresh", "--table", "orders"}, "tables orders run in Glue"},
		{[]string{"--json"}, "tables orders run in Glue and other here"},
	} {
		code, _, errs := runCLI(t, append([]string{"run", "--plan", path, "--force"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("run %v: exit %d\n%s", c.args, code, errs)
		}
	}
	if n := len(e.glue.Runs()); n != 0 {
		t.Errorf("%d job runs started", n)
	}
}
