package gates

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/internal/gluetest"
	"github.com/lima-lake/lima/internal/iamtest"
	"github.com/lima-lake/lima/internal/s3test"
)

// TestGlueChecks: gate 2's checks of an engine-glue table — the role
// (IAM GetRole: missing, another account's, present), the script location
// (probe put and deleted; a missing bucket names the setting to fix) and
// the job (GetJob: not deployed, deployed).
func TestGlueChecks(t *testing.T) {
	s3test.SetEnv(t)
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	g, iam := gluetest.New(t), iamtest.New(t)
	t.Setenv("AWS_ENDPOINT_URL_GLUE", g.URL())
	t.Setenv("AWS_ENDPOINT_URL_IAM", iam.URL())
	const role = "arn:aws:iam::111122223333:role/etl/lima-glue"
	p := &plan.Plan{Platform: plan.Platform{Prefix: "acme", Region: "us-east-1", Catalog: plan.CatalogGlue}, Storage: plan.Storage{Warehouse: "s3://" + bucket + "/lake"},
		Sources: map[string]*plan.Source{"in": {Kind: plan.SourceFiles, Path: "s3://" + bucket + "/in"}},
		Tables: map[string]*plan.Table{"orders": {Source: &plan.TableSource{Name: "in", Files: []string{"*.csv"}}, Engine: plan.EngineGlue,
			Glue: &plan.GlueJob{RoleARN: role, ScriptLocation: "s3://" + bucket + "/code/"}}}}
	run := func() map[string]Finding {
		out := map[string]Finding{}
		for _, c := range (Probe{}).glueChecks(p) {
			for _, f := range c.run(context.Background()) {
				out[f.Name] = f
			}
		}
		return out
	}
	fs := run()
	if f := fs["glue role orders"]; f.Status != Fail || !strings.Contains(f.Detail, "iam:GetRole lima-glue") || !strings.Contains(f.Fix, "glue.amazonaws.com") {
		t.Errorf("missing role: %+v", f)
	}
	if f := fs["glue job orders"]; f.Status != Fail || !strings.Contains(f.Fix, "lima-tui deploy glue --apply") {
		t.Errorf("undeployed job: %+v", f)
	}
	if f := fs["glue script location orders"]; f.Status != Pass || !strings.Contains(f.Detail, "put and deleted s3://"+bucket+"/code/.lima-probe-") {
		t.Errorf("script location: %+v", f)
	}
	if objs, err := cl.List(context.Background(), bucket, "code/"); err != nil || len(objs) != 0 {
		t.Errorf("the probe left %v (%v)", objs, err)
	}

	iam.PutRole("lima-glue", "arn:aws:iam::999999999999:role/etl/lima-glue")
	if f := run()["glue role orders"]; f.Status != Fail || !strings.Contains(f.Detail, "the role is arn:aws:iam::999999999999") {
		t.Errorf("another account's role: %+v", f)
	}
	iam.PutRole("lima-glue", role)
	gc, err := hivesink.NewGlueClient(context.Background(), hivesink.GlueConfig{Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gc.CreateJob(context.Background(), &glue.CreateJobInput{Name: aws.String("lima-acme-orders"), Role: aws.String(role), GlueVersion: aws.String("5.1"),
		Command: &types.JobCommand{Name: aws.String("glueetl"), ScriptLocation: aws.String("s3://elsewhere/x.py")}}); err != nil {
		t.Fatal(err)
	}
	p.Tables["orders"].Glue.ScriptLocation = "s3://" + bucket + "-missing/code/"
	fs = run()
	if f := fs["glue role orders"]; f.Status != Pass {
		t.Errorf("role: %+v", f)
	}
	if f := fs["glue script location orders"]; f.Status != Fail || !strings.Contains(f.Fix, "tables.orders.glue.script_location") {
		t.Errorf("missing bucket: %+v", f)
	}
	if f := fs["glue job orders"]; f.Status != Warn || !strings.Contains(f.Detail, "job lima-acme-orders deployed (Glue 5.1") || !strings.Contains(f.Detail, "outside glue.script_location") {
		t.Errorf("deployed job with another script: %+v", f)
	}
	if got := iam.Calls(); len(got) != 3 || got[0] != "GetRole lima-glue" {
		t.Errorf("IAM calls %v", got)
	}
}

// TestGlueTableNeedsNoLocalDisk: gate 2's disk check counts the input of
// the tables this machine loads, not of those the Glue job reads.
func TestGlueTableNeedsNoLocalDisk(t *testing.T) {
	s3test.SetEnv(t)
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	if err := cl.Put(context.Background(), bucket, "in/a.csv", strings.NewReader(strings.Repeat("x", 1000)), nil); err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Platform: plan.Platform{Prefix: "acme"}, Storage: plan.Storage{Warehouse: "s3://" + bucket + "/lake"},
		Sources: map[string]*plan.Source{"in": {Kind: plan.SourceFiles, Path: "s3://" + bucket + "/in"}},
		Tables:  map[string]*plan.Table{"orders": {Source: &plan.TableSource{Name: "in", Files: []string{"*.csv"}}}}}
	pr := Probe{Workspace: t.TempDir()}
	if n, files, err := pr.inputBytes(context.Background(), p); n != 1000 || files != 1 || err != nil {
		t.Fatalf("local engine: %d bytes in %d files (%v), want 1000 in 1", n, files, err)
	}
	p.Tables["orders"].Engine = plan.EngineGlue
	if n, files, err := pr.inputBytes(context.Background(), p); n != 0 || files != 0 || err != nil {
		t.Fatalf("engine glue: %d bytes in %d files (%v), want none on this machine", n, files, err)
	}
}

func TestRoleName(t *testing.T) {
	for arn, want := range map[string]string{"arn:aws:iam::1:role/a": "a", "arn:aws:iam::1:role/x/y/a": "a", "arn:aws-cn:iam::1:role/b": "b"} {
		if got := RoleName(arn); got != want {
			t.Errorf("RoleName(%s) = %s, want %s", arn, got, want)
		}
	}
}
