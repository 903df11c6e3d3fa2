package gates

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/lima-lake/lima/internal/s3test"
)

// TestPreconditionsS3 runs gate 2 on a plan whose source and warehouse are
// on the loopback S3 server.
func TestPreconditionsS3(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ctx := context.Background()
	for _, k := range []string{"in/a.csv", "in/b.csv"} {
		if err := cl.Put(ctx, bucket, k, bytes.NewReader([]byte("id\n1\n")), nil); err != nil {
			t.Fatal(err)
		}
	}
	p, pr := preWorkspace(t)
	p.Sources["in"].Path = "s3://" + bucket + "/in"
	p.Storage.Warehouse = "s3://" + bucket + "/lake"
	pr.Warehouse = p.Storage.Warehouse
	got := byName(Preconditions(ctx, p, pr))
	for name, want := range map[string]string{"source in": Pass, "table t": Pass, "AWS region": Pass, "AWS caller identity": Skip, "S3 warehouse writable": Pass} {
		f, ok := got[name]
		if !ok {
			t.Errorf("no finding %q (have %v)", name, got)
			continue
		}
		if f.Status != want {
			t.Errorf("%s: %s, want %s — %s (fix: %s)", name, f.Status, want, f.Detail, f.Fix)
		}
	}
	if d := got["source in"].Detail; !strings.Contains(d, "2 object(s)") {
		t.Errorf("source evidence: %s", d)
	}
	if d := got["table t"].Detail; !strings.Contains(d, `"*.csv" matched 2 object(s)`) {
		t.Errorf("table evidence: %s", d)
	}
	if d := got["AWS caller identity"].Detail; !strings.Contains(d, "not verifiable against the endpoint") {
		t.Errorf("identity evidence: %s", d)
	}
	if d := got["S3 warehouse writable"].Detail; !strings.Contains(d, "put and deleted s3://"+bucket+"/lake/.lima-probe-") {
		t.Errorf("probe evidence: %s", d)
	}
	objs, err := cl.List(ctx, bucket, "lake/")
	if err != nil || len(objs) != 0 {
		t.Errorf("the probe left %v (%v)", objs, err)
	}

	// A glob that matches nothing, and a missing bucket, fail with a fix.
	p.Tables["t"].Source.Files = []string{"*.parquet"}
	p.Storage.Warehouse = "s3://" + bucket + "-missing/lake"
	pr.Warehouse = p.Storage.Warehouse
	got = byName(Preconditions(ctx, p, pr))
	if f := got["table t"]; f.Status != Fail || !strings.Contains(f.Detail, "matched no object") || f.Fix == "" {
		t.Errorf("no-match table: %+v", f)
	}
	if f := got["S3 warehouse writable"]; f.Status != Fail || !strings.Contains(f.Detail, "does not exist") || !strings.Contains(f.Fix, "create the bucket") {
		t.Errorf("missing bucket: %+v", f)
	}
}

// TestPreconditionsAWSWithoutCredentials: against AWS itself (no endpoint)
// with no region and no credentials, gate 2 says so with fixes. Nothing
// here reaches the network: the SDK fails before sending (no credentials).
func TestPreconditionsAWSWithoutCredentials(t *testing.T) {
	for k, v := range map[string]string{"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "",
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": ""} {
		t.Setenv(k, v)
	}
	p, pr := preWorkspace(t)
	p.Platform.Region = "eu-central-1"
	p.Storage.Warehouse = "s3://some-bucket/lake"
	pr.Warehouse = p.Storage.Warehouse
	got := byName(Preconditions(context.Background(), p, pr))
	if f := got["AWS region"]; f.Status != Fail || !strings.Contains(f.Fix, "AWS_REGION=eu-central-1") {
		t.Errorf("region: %+v", f)
	}
	if f := got["AWS caller identity"]; f.Status != Fail || !strings.Contains(f.Detail, "sts:GetCallerIdentity") || f.Fix == "" {
		t.Errorf("identity: %+v", f)
	}
	if f := got["S3 warehouse writable"]; f.Status != Fail || f.Fix == "" {
		t.Errorf("bucket: %+v", f)
	}
}
