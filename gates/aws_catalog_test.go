package gates

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/internal/gluetest"
)

func fakeAWSEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local-test-secret")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_GLUE", "AWS_ENDPOINT_URL_S3TABLES", "AWS_REGION", "AWS_PROFILE"} {
		t.Setenv(k, "")
	}
}

const testARN = "arn:aws:s3tables:eu-central-1:111122223333:bucket/sales-lake"

func awsPlan(catalog string) *plan.Plan {
	p := &plan.Plan{SchemaVersion: 1, Platform: plan.Platform{Prefix: "sales", Region: "eu-central-1", Environment: "dev", Catalog: catalog},
		Sources:    map[string]*plan.Source{"erp": {Kind: "files", Path: "data/erp"}},
		Downstream: plan.Downstream{Consumer: "bi"},
		Tables: map[string]*plan.Table{"orders": {Source: &plan.TableSource{Name: "erp", Files: []string{"*.csv"}},
			Columns: []plan.Column{{Name: "order_id", Type: "long"}, {Name: "amount", Type: "decimal(10,2)"}}}}}
	if catalog == plan.CatalogS3Tables {
		p.Storage.TableBucketARN = testARN
	}
	return p
}

func names(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name+"="+f.Status)
	}
	return out
}

func TestScopeS3TablesNamesAreLowerCase(t *testing.T) {
	p := awsPlan(plan.CatalogS3Tables)
	var got *Finding
	for _, f := range Scope(p) {
		if f.Name == "S3 Tables names" {
			got = &f
		}
	}
	if got == nil || got.Status != Pass {
		t.Fatalf("lower-case plan: %+v", got)
	}
	p.Storage.Namespace = "Sales"
	p.Tables["orders"].Columns[1].Name = "Amount"
	failed := FailedFindings(Scope(p))
	if len(failed) != 1 || failed[0].Name != "S3 Tables names" {
		t.Fatalf("failed %v", names(failed))
	}
	f := failed[0]
	if !strings.Contains(f.Detail, `namespace "Sales"`) || !strings.Contains(f.Detail, `column of orders "Amount"`) ||
		!strings.Contains(f.Fix, "Sales → sales") || !strings.Contains(f.Fix, "Amount → amount") {
		t.Fatalf("finding %+v", f)
	}
	// Glue folds names itself: no such rule there.
	p.Platform.Catalog, p.Storage.TableBucketARN = plan.CatalogGlue, ""
	for _, f := range Scope(p) {
		if f.Name == "S3 Tables names" {
			t.Fatal("the S3 Tables rule ran for glue")
		}
	}
}

func TestGate2Glue(t *testing.T) {
	fakeAWSEnv(t)
	srv := gluetest.New(t)
	ctx := context.Background()
	p := awsPlan(plan.CatalogGlue)
	p.Storage.GlueEndpoint = srv.URL()
	pr := Probe{}

	fs := pr.checkCatalog(ctx, p)
	if len(fs) != 2 || fs[0].Status != Pass || fs[1].Status != Pass || !strings.Contains(fs[1].Detail, "does not exist yet") ||
		!strings.Contains(fs[0].Detail, srv.URL()) {
		t.Fatalf("missing database: %+v", fs)
	}
	client, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: "eu-central-1", Endpoint: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateDatabase(ctx, &glue.CreateDatabaseInput{DatabaseInput: &types.DatabaseInput{Name: aws.String("sales")}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if _, err := client.CreateTable(ctx, &glue.CreateTableInput{DatabaseName: aws.String("sales"), TableInput: &types.TableInput{Name: aws.String(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	fs = pr.checkCatalog(ctx, p)
	if len(fs) != 2 || fs[1].Status != Pass || fs[1].Detail != "Glue database sales exists with 2 table(s)" {
		t.Fatalf("existing database: %+v", fs)
	}
	srv.FailNext("GetDatabase", "AccessDeniedException")
	fs = pr.checkCatalog(ctx, p)
	if len(fs) != 1 || fs[0].Status != Fail || !strings.Contains(fs[0].Detail, "AccessDenied") || !strings.Contains(fs[0].Fix, "glue:GetDatabase") {
		t.Fatalf("access denied: %+v", fs)
	}
	// The endpoint from the environment, and then gone.
	p.Storage.GlueEndpoint = ""
	t.Setenv("AWS_ENDPOINT_URL_GLUE", srv.URL())
	srv.Close()
	fs = pr.checkCatalog(ctx, p)
	if len(fs) != 1 || fs[0].Status != Fail || !strings.Contains(fs[0].Detail, "$AWS_ENDPOINT_URL_GLUE") || !strings.Contains(fs[0].Fix, "network") {
		t.Fatalf("unreachable: %+v", fs)
	}
	for _, f := range fs {
		if strings.Contains(f.Detail+f.Fix, "local-test-secret") {
			t.Fatal("a secret in a finding")
		}
	}
}

func TestGate2S3Tables(t *testing.T) {
	fakeAWSEnv(t)
	var mu sync.Mutex
	exists := false
	signed := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(r.Header.Get("Authorization"), "/eu-central-1/s3tables/aws4_request") {
			signed = false
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/iceberg/v1/config":
			json.NewEncoder(w).Encode(map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}})
		case strings.HasSuffix(r.URL.Path, "/namespaces/sales") && exists:
			json.NewEncoder(w).Encode(map[string]any{"namespace": []string{"sales"}, "properties": map[string]string{}})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "not found", "type": "NoSuchNamespaceException", "code": 404}})
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	p := awsPlan(plan.CatalogS3Tables)
	p.Storage.CatalogURI = srv.URL + "/iceberg"
	fs := Probe{}.checkCatalog(ctx, p)
	if len(fs) != 2 || fs[0].Status != Pass || fs[1].Status != Pass || !strings.Contains(fs[1].Detail, "does not exist yet") {
		t.Fatalf("missing namespace: %+v", fs)
	}
	mu.Lock()
	exists = true
	mu.Unlock()
	fs = Probe{}.checkCatalog(ctx, p)
	if len(fs) != 2 || fs[1].Detail != "namespace sales exists in the table bucket" {
		t.Fatalf("existing namespace: %+v", fs)
	}
	mu.Lock()
	if !signed {
		t.Error("a request was not signed for s3tables in eu-central-1")
	}
	mu.Unlock()
	srv.Close()
	fs = Probe{}.checkCatalog(ctx, p)
	if len(fs) != 1 || fs[0].Status != Fail || fs[0].Fix == "" {
		t.Fatalf("unreachable: %+v", fs)
	}
}

func TestGate2HiveWithoutCatalog(t *testing.T) {
	p := awsPlan("")
	p.Platform.Pattern = plan.PatternHive
	fs := Probe{}.checkCatalog(context.Background(), p)
	if len(fs) != 1 || fs[0].Status != Pass || !strings.Contains(fs[0].Detail, "_lima/commits") {
		t.Fatalf("%+v", fs)
	}
}
