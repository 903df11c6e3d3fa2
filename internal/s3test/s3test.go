// Package s3test gives integration tests a real S3-compatible server on
// loopback (versitygw, started by scripts/ensure-s3.sh) and a fresh bucket
// per test, removed with its objects when the test ends.
//
// The server is found through LIMA_TEST_S3_ENDPOINT, LIMA_TEST_S3_REGION,
// LIMA_TEST_S3_ACCESS_KEY and LIMA_TEST_S3_SECRET_KEY, defaulting to what
// scripts/ensure-s3.sh starts (http://127.0.0.1:7070 with its throwaway
// loopback-only test key). When it does not answer, the test is skipped
// loudly — or fails under CI or LIMA_REQUIRE_SERVICES=1.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/lima-lake/lima/internal/s3x"
)

// Defaults of scripts/ensure-s3.sh.
const (
	DefaultEndpoint  = "http://127.0.0.1:7070"
	DefaultRegion    = "us-east-1"
	DefaultAccessKey = "limatest"
	DefaultSecretKey = "limatest-loopback-only"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Config is the test server's configuration (path style, static test key).
func Config() s3x.Config {
	return s3x.Config{
		Endpoint:    env("LIMA_TEST_S3_ENDPOINT", DefaultEndpoint),
		Region:      env("LIMA_TEST_S3_REGION", DefaultRegion),
		PathStyle:   true,
		MaxAttempts: 3,
		StaticKey:   &s3x.StaticKey{AccessKeyID: env("LIMA_TEST_S3_ACCESS_KEY", DefaultAccessKey), SecretAccessKey: env("LIMA_TEST_S3_SECRET_KEY", DefaultSecretKey)},
	}
}

// Env returns the standard AWS environment variables that point the
// product (which reads only the environment, never a plan) at the test
// server; set them with t.Setenv.
func Env() map[string]string {
	c := Config()
	return map[string]string{
		"AWS_ENDPOINT_URL":      c.Endpoint,
		"AWS_REGION":            c.Region,
		"AWS_ACCESS_KEY_ID":     c.StaticKey.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY": c.StaticKey.SecretAccessKey,
		// No profile files or instance metadata on the test machine.
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	}
}

// SetEnv sets Env with t.Setenv (so the test cannot run in parallel).
func SetEnv(t testing.TB) {
	t.Helper()
	for k, v := range Env() {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
}

func required() bool {
	return os.Getenv("CI") != "" || os.Getenv("LIMA_REQUIRE_SERVICES") == "1"
}

// Client returns a client of the test server, skipping (or failing under
// CI / LIMA_REQUIRE_SERVICES=1) when it does not answer.
func Client(t testing.TB) *s3x.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := Config()
	cl, err := s3x.New(ctx, c)
	if err == nil {
		_, err = cl.S3.ListBuckets(ctx, &s3.ListBucketsInput{})
	}
	if err != nil {
		msg := "S3 server at %s unusable: %v (scripts/ensure-s3.sh starts versitygw there; LIMA_TEST_S3_ENDPOINT/_ACCESS_KEY/_SECRET_KEY point elsewhere)"
		if required() {
			t.Fatalf("S3 INTEGRATION TEST FAILED: "+msg, c.Endpoint, err)
		}
		t.Skipf("SKIPPING S3 INTEGRATION TEST: "+msg+" (set CI or LIMA_REQUIRE_SERVICES=1 to make this a failure)", c.Endpoint, err)
	}
	return cl
}

// Bucket creates a uniquely named bucket for the test and removes it, with
// everything in it, when the test ends.
func Bucket(t testing.TB, cl *s3x.Client) string {
	t.Helper()
	var b [5]byte
	_, _ = rand.Read(b[:])
	name := "lima-test-" + strings.ToLower(hex.EncodeToString(b[:]))
	ctx := context.Background()
	if err := cl.CreateBucket(ctx, name); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	t.Cleanup(func() { Empty(t, cl, name, true) })
	return name
}

// Empty deletes every object (and unfinished multipart upload) of the
// bucket, and the bucket itself when drop is set.
func Empty(t testing.TB, cl *s3x.Client, bucket string, drop bool) {
	t.Helper()
	ctx := context.Background()
	objs, err := cl.List(ctx, bucket, "")
	if err != nil {
		t.Logf("s3test: list %s for cleanup: %v", bucket, err)
		return
	}
	for i := 0; i < len(objs); i += 500 {
		var ids []types.ObjectIdentifier
		for _, o := range objs[i:min(i+500, len(objs))] {
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(o.Key)})
		}
		if _, err := cl.S3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			t.Logf("s3test: delete objects of %s: %v", bucket, err)
		}
	}
	if ups, err := cl.S3.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)}); err == nil {
		for _, u := range ups.Uploads {
			_, _ = cl.S3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: u.Key, UploadId: u.UploadId})
		}
	}
	if drop {
		if _, err := cl.S3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Logf("s3test: delete bucket %s: %v", bucket, err)
		}
	}
}

// PutFile uploads a local file.
func PutFile(t testing.TB, cl *s3x.Client, bucket, key, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := cl.Put(context.Background(), bucket, key, f, nil); err != nil {
		t.Fatal(err)
	}
}

// ParseKey returns the key of an s3:// URI.
func ParseKey(uri string) (string, error) {
	u, err := s3x.ParseURI(uri)
	return u.Key, err
}
