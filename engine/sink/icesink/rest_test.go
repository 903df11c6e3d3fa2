package icesink_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/lima-lake/lima/engine/sink/icesink"
)

const bucketARN = "arn:aws:s3tables:eu-central-1:111122223333:bucket/sales-lake"

func TestS3TablesProperties(t *testing.T) {
	p, err := icesink.S3Tables{Region: "eu-central-1", TableBucketARN: bucketARN}.Properties()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"type": "rest", "uri": "https://s3tables.eu-central-1.amazonaws.com/iceberg", "warehouse": bucketARN,
		"rest.sigv4-enabled": "true", "rest.signing-name": "s3tables", "rest.signing-region": "eu-central-1"}
	if len(p) != len(want) {
		t.Fatalf("properties %v, want %v", p, want)
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	if _, ok := p["location"]; ok {
		t.Error("S3 Tables gets no location")
	}
	if _, err := (icesink.S3Tables{Region: "eu-central-1", TableBucketARN: "s3://bucket"}).Properties(); err == nil {
		t.Error("an s3:// URI was taken for a table bucket ARN")
	}
	if _, err := (icesink.S3Tables{Region: "eu-central-1", TableBucketARN: "arn:aws:s3:::general-purpose-bucket"}).Properties(); err == nil {
		t.Error("a general purpose bucket's ARN was taken for a table bucket ARN")
	}
	if _, err := (icesink.S3Tables{TableBucketARN: bucketARN}).Properties(); err == nil {
		t.Error("no region accepted")
	}
}

// TestS3TablesSignsRequests opens the sink against a local REST endpoint
// and checks the configuration request: SigV4-signed for s3tables in the
// region, with the table bucket as the warehouse. (Real S3 Tables cannot
// be reached from the test machines.)
func TestS3TablesSignsRequests(t *testing.T) {
	fakeAWSEnv(t)
	var mu sync.Mutex
	var auth, sha, warehouse, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth, sha, warehouse, path = r.Header.Get("Authorization"), r.Header.Get("X-Amz-Content-Sha256"), r.URL.Query().Get("warehouse"), r.URL.Path
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}})
	}))
	defer srv.Close()
	sk, err := icesink.OpenS3Tables(context.Background(), icesink.Options{}, icesink.S3Tables{Region: "eu-central-1", TableBucketARN: bucketARN, Endpoint: srv.URL + "/iceberg"})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	mu.Lock()
	defer mu.Unlock()
	if path != "/iceberg/v1/config" || warehouse != bucketARN {
		t.Errorf("request %s warehouse %q", path, warehouse)
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDLOCALTEST/") || !strings.Contains(auth, "/eu-central-1/s3tables/aws4_request") || sha == "" {
		t.Errorf("not signed for s3tables: Authorization %q, x-amz-content-sha256 %q", auth, sha)
	}
}
