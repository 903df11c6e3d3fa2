package rawland_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/internal/s3test"
)

var day = time.Date(2026, 3, 9, 23, 30, 0, 0, time.UTC)

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// fixture: files with an NFD name, a subfolder and CRLF/NUL bytes that a
// text reader would change.
func fixture() map[string][]byte {
	return map[string][]byte{
		norm.NFD.String("협력사.csv"): []byte("a;b\r\n1;\"x\r\ny\"\r\n"),
		"sub/blob.ndjson":          {0xEF, 0xBB, 0xBF, '{', '}', '\n', 0, 0xFF},
	}
}

func TestLandLocal(t *testing.T) {
	srcDir, wh := t.TempDir(), t.TempDir()
	fx := fixture()
	for n, b := range fx {
		os.MkdirAll(filepath.Dir(filepath.Join(srcDir, n)), 0o755)
		if err := os.WriteFile(filepath.Join(srcDir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := files.New(srcDir)
	units, err := src.List(context.Background(), []string{"**"})
	if err != nil || len(units) != 2 {
		t.Fatalf("%v %v", units, err)
	}
	m, err := rawland.Target{Dir: wh}.Land(context.Background(), src, "erp", "orders", "ld-1", day, units)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(wh, "raw", "erp", "orders", "load_date=2026-03-09", "ld-1")
	for n, b := range fx {
		nfc := norm.NFC.String(n)
		got, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(nfc)))
		if err != nil {
			t.Fatalf("%s not landed under its NFC name: %v", nfc, err)
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s landed with other bytes", nfc)
		}
	}
	mb, err := os.ReadFile(filepath.Join(base, rawland.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var mf rawland.Manifest
	if err := json.Unmarshal(mb, &mf); err != nil {
		t.Fatal(err)
	}
	if len(mf.Files) != 2 || len(m.Files) != 2 {
		t.Fatalf("manifest %+v", mf)
	}
	for _, f := range mf.Files {
		var orig string
		for n := range fx {
			if norm.NFC.String(n) == f.Name {
				orig = n
			}
		}
		if f.SHA256 != sum(fx[orig]) || f.Bytes != int64(len(fx[orig])) {
			t.Errorf("%s: manifest sha %s bytes %d", f.Name, f.SHA256, f.Bytes)
		}
		if (orig != f.Name) != (f.OriginalName == orig) {
			t.Errorf("%s: original name %q, want %q", f.Name, f.OriginalName, orig)
		}
	}
	// A unit name that would leave the landing folder is refused.
	bad := []source.Unit{{Path: filepath.Join(srcDir, "sub/blob.ndjson"), Name: "../../x"}}
	if _, err := (rawland.Target{Dir: wh}).Land(context.Background(), src, "erp", "orders", "ld-2", day, bad); err == nil {
		t.Fatal("a ../ name was landed")
	}
	if _, err := rawland.Prefix("erp", "../t", "ld", day); err == nil {
		t.Fatal("a ../ table was accepted")
	}
}

// TestLandS3 lands S3 objects on S3: byte-identical, original key in the
// object metadata, and a tampered copy fails verification.
func TestLandS3(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	ctx := context.Background()
	fx := fixture()
	for n, b := range fx {
		if err := cl.Put(ctx, bucket, "in/"+n, bytes.NewReader(b), nil); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := s3src.New(cl, "s3://"+bucket+"/in")
	units, err := src.List(ctx, []string{"**"})
	if err != nil || len(units) != 2 {
		t.Fatalf("%v %v", units, err)
	}
	tgt, _ := rawlandTarget(cl, "s3://"+bucket+"/lake")
	m, err := tgt.Land(ctx, src, "erp", "orders", "ld-1", day, units)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		u, _ := s3test.ParseKey(f.Location)
		body, err := cl.Get(ctx, bucket, u)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(body)
		body.Close()
		orig := f.OriginalName
		if orig == "" {
			orig = f.Name
		}
		if !bytes.Equal(buf.Bytes(), fx[orig]) {
			t.Errorf("%s landed with other bytes", f.Location)
		}
		if want := "lake/raw/erp/orders/load_date=2026-03-09/ld-1/" + norm.NFC.String(orig); u != want {
			t.Errorf("key %s, want %s", u, want)
		}
	}
	// Tamper with a landed copy: the verification of a fresh read catches it.
	loc := m.Files[0].Location
	k, _ := s3test.ParseKey(loc)
	if err := cl.Put(ctx, bucket, k, bytes.NewReader([]byte("changed")), nil); err != nil {
		t.Fatal(err)
	}
	if got, err := tgt.Checksum(ctx, loc); err != nil || got == m.Files[0].SHA256 {
		t.Fatalf("tampered copy: %s %v", got, err)
	}
}
