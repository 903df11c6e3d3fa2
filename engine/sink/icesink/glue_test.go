package icesink_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gluecat "github.com/apache/iceberg-go/catalog/glue"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
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

// TestGlueConformance runs the sink conformance suite on iceberg-go's Glue
// catalog, pointed at the local Glue endpoint, with a local warehouse.
func TestGlueConformance(t *testing.T) {
	fakeAWSEnv(t)
	sinktest.Run(t, func(t *testing.T) sink.Sink {
		srv := gluetest.New(t)
		sk, err := icesink.OpenGlue(context.Background(), icesink.Options{},
			icesink.AWSOptions{Region: "eu-central-1", GlueEndpoint: srv.URL(), Warehouse: filepath.Join(t.TempDir(), "lake")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sk.Close() })
		return sk
	})
}

// TestGlueCommitReachesTheEndpoint checks what the endpoint holds after a
// commit: an Iceberg table whose metadata_location moved with the commit,
// which another sink finds the load through.
func TestGlueCommitReachesTheEndpoint(t *testing.T) {
	fakeAWSEnv(t)
	srv := gluetest.New(t)
	ctx := context.Background()
	sk, err := icesink.OpenGlue(ctx, icesink.Options{}, icesink.AWSOptions{Region: "eu-central-1", GlueEndpoint: srv.URL(), Warehouse: filepath.Join(t.TempDir(), "lake")})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.OpenTable(ctx, sinktest.Spec("orders"))
	if err != nil {
		t.Fatal(err)
	}
	gt, ok := srv.Table("conformance", "orders")
	if !ok || gt.Parameters["table_type"] != "ICEBERG" {
		t.Fatalf("glue table %+v", gt)
	}
	before := gt.Parameters["metadata_location"]
	st, err := tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	c, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "ld-glue", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	gt, _ = srv.Table("conformance", "orders")
	after := gt.Parameters["metadata_location"]
	if after == before || gt.Parameters["previous_metadata_location"] != before || gt.VersionId != "2" {
		t.Fatalf("after the commit: metadata %s (before %s), version %s", after, before, gt.VersionId)
	}
	sk2, err := icesink.OpenGlue(ctx, icesink.Options{}, icesink.AWSOptions{Region: "eu-central-1", GlueEndpoint: srv.URL(), Warehouse: filepath.Join(t.TempDir(), "other")})
	if err != nil {
		t.Fatal(err)
	}
	tbl2, err := sk2.OpenTable(ctx, sinktest.Spec("orders"))
	if err != nil {
		t.Fatal(err)
	}
	found, ok, err := tbl2.FindLoad(ctx, "ld-glue")
	if err != nil || !ok || found.SnapshotID != c.SnapshotID {
		t.Fatalf("FindLoad through Glue: %+v %v %v", found, ok, err)
	}
}

func TestGlueProperties(t *testing.T) {
	fakeAWSEnv(t)
	local := filepath.Join(t.TempDir(), "lake")
	cases := []struct {
		name     string
		a        icesink.AWSOptions
		env      map[string]string
		glue, s3 string
		err      bool
	}{
		{"no override", icesink.AWSOptions{Region: "eu-west-1"}, nil, "", "", false},
		{"glue only", icesink.AWSOptions{Region: "eu-west-1", GlueEndpoint: "http://127.0.0.1:9000"}, nil, "http://127.0.0.1:9000", "https://s3.eu-west-1.amazonaws.com", false},
		{"s3 only", icesink.AWSOptions{Region: "eu-west-1", S3Endpoint: "http://127.0.0.1:7070"}, nil, "https://glue.eu-west-1.amazonaws.com", "http://127.0.0.1:7070", false},
		{"both", icesink.AWSOptions{Region: "eu-west-1", GlueEndpoint: "http://g", S3Endpoint: "http://s"}, nil, "http://g", "http://s", false},
		{"glue from env", icesink.AWSOptions{Region: "eu-west-1"}, map[string]string{"AWS_ENDPOINT_URL_GLUE": "http://envglue"}, "http://envglue", "https://s3.eu-west-1.amazonaws.com", false},
		{"global env", icesink.AWSOptions{Region: "eu-west-1"}, map[string]string{"AWS_ENDPOINT_URL": "http://local:4566"}, "http://local:4566", "http://local:4566", false},
		{"s3 env, glue plan", icesink.AWSOptions{Region: "eu-west-1", GlueEndpoint: "http://g"}, map[string]string{"AWS_ENDPOINT_URL_S3": "http://s3env"}, "http://g", "http://s3env", false},
		{"override without region", icesink.AWSOptions{GlueEndpoint: "http://g"}, nil, "", "", true},
		{"both overridden without region", icesink.AWSOptions{GlueEndpoint: "http://g", S3Endpoint: "http://s"}, nil, "http://g", "http://s", false},
		{"catalog id, s3 warehouse", icesink.AWSOptions{Region: "eu-west-1", CatalogID: "123456789012", Warehouse: "s3://bucket/lake"}, nil, "", "", false},
		{"local warehouse", icesink.AWSOptions{Region: "eu-west-1", Warehouse: local}, nil, "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			p, err := icesink.GlueProperties(c.a)
			if c.err {
				if err == nil {
					t.Fatalf("no error: %v", p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p[gluecat.Endpoint] != c.glue || p[icebergio.S3EndpointURL] != c.s3 {
				t.Fatalf("glue.endpoint %q s3.endpoint %q, want %q %q", p[gluecat.Endpoint], p[icebergio.S3EndpointURL], c.glue, c.s3)
			}
			if p[gluecat.Region] != c.a.Region {
				t.Fatalf("region %q", p[gluecat.Region])
			}
			if id, ok := p[gluecat.CatalogIdKey]; id != c.a.CatalogID || ok != (c.a.CatalogID != "") {
				t.Fatalf("catalog id %q (set: %v), want %q", id, ok, c.a.CatalogID)
			}
			// The warehouse: a URI as given, a folder as its file URI
			// (created), none when not given.
			wh, ok := p["warehouse"]
			switch {
			case c.a.Warehouse == "":
				if ok {
					t.Fatalf("warehouse %q, want none", wh)
				}
			case strings.Contains(c.a.Warehouse, "://"):
				if wh != c.a.Warehouse {
					t.Fatalf("warehouse %q, want %q", wh, c.a.Warehouse)
				}
			default:
				if wh != "file://"+c.a.Warehouse {
					t.Fatalf("warehouse %q, want file://%s", wh, c.a.Warehouse)
				}
				if fi, err := os.Stat(c.a.Warehouse); err != nil || !fi.IsDir() {
					t.Fatalf("the warehouse folder was not created: %v", err)
				}
			}
			for k := range p {
				if k == gluecat.AccessKeyID || k == gluecat.SecretAccessKey || k == icebergio.S3AccessKeyID || k == icebergio.S3SecretAccessKey {
					t.Fatalf("credentials in the properties: %s", k)
				}
			}
		})
	}
}
