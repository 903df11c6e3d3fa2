package rawland_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/sink/rawland"
)

// TestLandExtractLocal: the extract file lands byte-identical as
// extract.csv.gz, its manifest carries the SHA-256 computed here and the
// extract's description.
func TestLandExtractLocal(t *testing.T) {
	wh := t.TempDir()
	src := filepath.Join(t.TempDir(), "x.csv.gz")
	body := []byte{0x1f, 0x8b, 0, 1, 2, '\r', '\n', 0xff}
	if err := os.WriteFile(src, body, 0o600); err != nil {
		t.Fatal(err)
	}
	ex := rawland.Extract{Unit: "public.t", Columns: []string{"id"}, Rows: 3, Query: `SELECT "id" FROM "public"."t"`}
	m, err := rawland.Target{Dir: wh}.LandExtract(context.Background(), "erp", "t", "ld-9", day, src, ex)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(wh, "raw", "erp", "t", "load_date=2026-03-09", "ld-9")
	got, err := os.ReadFile(filepath.Join(base, rawland.ExtractName))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("landed %x (%v), want %x", got, err, body)
	}
	mb, err := os.ReadFile(filepath.Join(base, rawland.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var mf rawland.Manifest
	if err := json.Unmarshal(mb, &mf); err != nil {
		t.Fatal(err)
	}
	if len(mf.Files) != 1 || mf.Files[0].SHA256 != sum(body) || mf.Files[0].Name != rawland.ExtractName || m.Files[0].SHA256 != sum(body) {
		t.Errorf("manifest files %+v", mf.Files)
	}
	if mf.Extract == nil || mf.Extract.Kind != "database" || mf.Extract.Rows != 3 || mf.Extract.Query != ex.Query || mf.LoadID != "ld-9" {
		t.Errorf("manifest extract %+v", mf.Extract)
	}
	if _, err := (rawland.Target{Dir: wh}).LandExtract(context.Background(), "erp", "../t", "ld-9", day, src, ex); err == nil {
		t.Error("a ../ table was accepted")
	}
}
