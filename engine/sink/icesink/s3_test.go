package icesink_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
	"github.com/lima-lake/lima/internal/s3test"
)

// TestConformanceS3 runs the sink suite with the warehouse on the loopback
// S3 server (the SQLite catalog stays local), then checks that the test
// credentials, handed over in memory, were written to no object.
func TestConformanceS3(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	cfg := s3test.Config()
	n := 0
	sinktest.Run(t, func(t *testing.T) sink.Sink {
		n++
		dir := t.TempDir()
		wh := "s3://" + bucket + "/wh" + strings.Repeat("x", n)
		sk, err := icesink.Open(context.Background(), icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: wh, S3: &cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sk.Close() })
		return sk
	})
	ctx := context.Background()
	objs, err := cl.List(ctx, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	var data, meta int
	for _, o := range objs {
		switch {
		case strings.HasSuffix(o.Key, ".parquet"):
			data++
		case strings.HasSuffix(o.Key, ".metadata.json"):
			meta++
			body, err := cl.Get(ctx, bucket, o.Key)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(body)
			body.Close()
			if strings.Contains(string(b), cfg.StaticKey.SecretAccessKey) || strings.Contains(string(b), cfg.StaticKey.AccessKeyID) {
				t.Errorf("%s carries the S3 credentials", o.Key)
			}
		}
	}
	if data == 0 || meta == 0 {
		t.Fatalf("the suite left %d data files and %d metadata files on S3; the warehouse was not used", data, meta)
	}
}
