package s3x_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/lima-lake/lima/internal/s3test"
	"github.com/lima-lake/lima/internal/s3x"
)

func TestParseURI(t *testing.T) {
	for _, c := range []struct {
		in, bucket, key string
		bad             bool
	}{
		{in: "s3://b/raw/x.csv", bucket: "b", key: "raw/x.csv"},
		{in: "s3://b", bucket: "b"},
		{in: "s3a://b/p/", bucket: "b", key: "p/"},
		{in: "s3://", bad: true},
		{in: "s3://b/../etc", bad: true},
		{in: "/tmp/x", bad: true},
	} {
		u, err := s3x.ParseURI(c.in)
		if (err != nil) != c.bad {
			t.Errorf("%s: err %v", c.in, err)
			continue
		}
		if !c.bad && (u.Bucket != c.bucket || u.Key != c.key) {
			t.Errorf("%s: got %+v", c.in, u)
		}
	}
	if got := (s3x.URI{Bucket: "b", Key: "p/"}).Join("/raw/", "x").String(); got != "s3://b/p/raw/x" {
		t.Errorf("join: %s", got)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_PROFILE", "analytics")
	t.Setenv("AWS_MAX_ATTEMPTS", "7")
	t.Setenv("LIMA_S3_VIRTUAL_HOSTED", "")
	c := s3x.FromEnv()
	if c.Endpoint != "http://127.0.0.1:9" || c.Region != "eu-central-1" || c.Profile != "analytics" || !c.PathStyle || c.MaxAttempts != 7 || !c.IsLocalEndpoint() {
		t.Fatalf("%+v", c)
	}
	p := c.IcebergProps()
	if p["s3.endpoint"] != c.Endpoint || p["s3.force-virtual-addressing"] != "false" || p["s3.region"] != "eu-central-1" {
		t.Fatalf("props %v", p)
	}
	if _, ok := p["s3.secret-access-key"]; ok {
		t.Fatal("credentials from the chain must not become properties")
	}
	t.Setenv("AWS_ENDPOINT_URL", "")
	if c := s3x.FromEnv(); c.PathStyle || c.IsLocalEndpoint() {
		t.Fatalf("no endpoint: %+v", c)
	}
}

// TestRoundTrip: a 20 MiB object goes up in parts (above the multipart
// threshold) and comes back byte-identical, whole, listed and by ranges.
func TestRoundTrip(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	ctx := context.Background()
	big := make([]byte, s3x.MultipartThreshold+4<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(r.IntN(256))
	}
	if err := cl.Put(ctx, bucket, "in/big.bin", bytes.NewReader(big), map[string]string{"original-name": "big.bin"}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Put(ctx, bucket, "in/small.csv", bytes.NewReader([]byte("a,b\n1,2\n")), nil); err != nil {
		t.Fatal(err)
	}
	objs, err := cl.List(ctx, bucket, "in/")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Key != "in/big.bin" || objs[0].Size != int64(len(big)) || objs[1].Size != 8 || objs[0].ETag == "" {
		t.Fatalf("listed %+v", objs)
	}
	body, err := cl.Get(ctx, bucket, "in/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, body); err != nil {
		t.Fatal(err)
	}
	body.Close()
	if want := sha256.Sum256(big); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("the object read back differs from what was uploaded")
	}
	_, meta, err := cl.Head(ctx, bucket, "in/big.bin")
	if err != nil || meta["original-name"] != "big.bin" {
		t.Fatalf("metadata %v %v", meta, err)
	}
	ra := cl.NewReaderAt(ctx, bucket, "in/big.bin", int64(len(big)))
	buf := make([]byte, 1000)
	for _, off := range []int64{0, 5 << 20, int64(len(big)) - 1000} {
		if n, err := ra.ReadAt(buf, off); n != 1000 || (err != nil && err != io.EOF) || !bytes.Equal(buf, big[off:off+1000]) {
			t.Fatalf("ReadAt %d: n=%d err=%v", off, n, err)
		}
	}
	if n, err := ra.ReadAt(buf, int64(len(big))-10); n != 10 || err != io.EOF {
		t.Fatalf("short ReadAt: n=%d err=%v", n, err)
	}
	if err := cl.Delete(ctx, bucket, "in/small.csv"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cl.Head(ctx, bucket, "in/small.csv"); !s3x.IsNotFound(err) {
		t.Fatalf("deleted object: %v", err)
	}
}

// TestBoundedRetries: against a server that resets every connection the
// client gives up after MaxAttempts, not forever.
func TestBoundedRetries(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) // RST on close: a connection reset
			}
			c.Close()
		}
	}()
	cfg := s3x.Config{Endpoint: "http://" + ln.Addr().String(), PathStyle: true, MaxAttempts: 3, MaxBackoff: 50 * time.Millisecond,
		StaticKey: &s3x.StaticKey{AccessKeyID: "x", SecretAccessKey: "y"}}
	cl, err := s3x.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.List(context.Background(), "b", ""); err == nil {
		t.Fatal("a server that resets every connection answered")
	}
	if n := len(accepted); n != 3 {
		t.Fatalf("%d connections, want 3 attempts", n)
	}
}
