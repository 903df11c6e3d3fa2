package flow_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/s3test"
)

// tableNumbers are the per-table numbers a report.json states.
type tableNumbers struct {
	Status          string                     `json:"status"`
	RowsRead        int64                      `json:"rows_read"`
	RowsLoaded      int64                      `json:"rows_loaded"`
	RowsQuarantined int64                      `json:"rows_quarantined"`
	RowsSkipped     int64                      `json:"rows_skipped"`
	SkippedBy       map[string]int64           `json:"rows_skipped_by_reason"`
	Balanced        bool                       `json:"balanced"`
	Reconciliation  string                     `json:"reconciliation"`
	ControlTotals   map[string]json.RawMessage `json:"control_totals"`
	Normalizations  []json.RawMessage          `json:"normalizations"`
	InputBytes      int64                      `json:"input_bytes"`
}

// readReportNumbers parses a report.json from disk (not the in-memory
// report), keyed by table.
func readReportNumbers(t *testing.T, path string) (map[string]tableNumbers, json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Tables []struct {
			Name string `json:"name"`
			tableNumbers
		} `json:"tables"`
		Exceptions json.RawMessage `json:"exceptions"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]tableNumbers{}
	for _, tr := range r.Tables {
		out[tr.Name] = tr.tableNumbers
	}
	return out, r.Exceptions
}

// TestDemoS3MatchesLocalDemo runs the demo twice — from its local folder
// into a local lake, and from a bucket into a lake on the loopback S3
// server — and compares the two report.json files table by table. Then it
// checks raw/: every source file landed byte-identical (SHA-256 computed
// here from the bundled files), under load_date=…/<load-id>/, with the
// original name kept.
func TestDemoS3MatchesLocalDemo(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)

	ws, p := newDemo(t)
	local := runOnce(t, ws, p, flow.RunOptions{})

	dir := t.TempDir()
	root := "s3://" + bucket + "/erp_quality"
	if _, err := flow.CreateDemoS3(ctx, dir, root, now); err != nil {
		t.Fatal(err)
	}
	ws3 := flow.Workspace{Dir: dir}
	p3, err := flow.LoadPlan(ws3.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := flow.CheckApproval(p3); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p3.Storage.Warehouse, "s3://") || !strings.HasPrefix(p3.Sources["erp"].Path, "s3://") {
		t.Fatalf("the S3 demo plan is not on S3: %+v %+v", p3.Storage, p3.Sources["erp"])
	}
	remote := runOnce(t, ws3, p3, flow.RunOptions{})

	a, ea := readReportNumbers(t, local.ReportPath)
	b, eb := readReportNumbers(t, remote.ReportPath)
	if len(a) < 6 {
		t.Fatalf("the local demo reported %d tables", len(a))
	}
	var loaded int64
	for name, want := range a {
		got, ok := b[name]
		if !ok {
			t.Errorf("table %s: missing from the S3 report", name)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("table %s:\n  S3    %+v\n  local %+v", name, got, want)
		}
		loaded += want.RowsLoaded
	}
	if len(b) != len(a) {
		t.Errorf("S3 report has %d tables, local %d", len(b), len(a))
	}
	if loaded == 0 {
		t.Fatal("the demo loaded no rows; the comparison proves nothing")
	}
	if string(ea) != string(eb) {
		t.Errorf("exception counts differ:\n  S3    %s\n  local %s", eb, ea)
	}

	// The lake is on S3: data files and metadata below root/lake.
	objs, err := cl.List(ctx, bucket, "erp_quality/lake/")
	if err != nil {
		t.Fatal(err)
	}
	var parquet int
	for _, o := range objs {
		if strings.HasSuffix(o.Key, ".parquet") {
			parquet++
		}
	}
	if parquet == 0 {
		t.Fatal("no Parquet data file in the S3 warehouse")
	}
	if _, err := os.Stat(filepath.Join(dir, "lake")); err == nil {
		t.Error("the S3 demo wrote a local lake folder")
	}

	// raw/: byte-identical copies of every file each table read.
	want := map[string]string{}   // NFC name → sha256 of the bundled file
	origOf := map[string]string{} // NFC name → the name on disk (and key), when not NFC
	ents, err := os.ReadDir(filepath.Join(dir, "data", "erp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, "data", "erp", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		io.Copy(h, f)
		f.Close()
		want[norm.NFC.String(e.Name())] = hex.EncodeToString(h.Sum(nil))
		if nfc := norm.NFC.String(e.Name()); nfc != e.Name() {
			origOf[nfc] = e.Name()
		}
	}
	rawObjs, err := cl.List(ctx, bucket, "erp_quality/lake/raw/")
	if err != nil {
		t.Fatal(err)
	}
	landedNames := map[string]bool{}
	sawNFD := 0
	manifests := 0
	for _, o := range rawObjs {
		rel := strings.TrimPrefix(o.Key, "erp_quality/lake/")
		segs := strings.Split(rel, "/")
		// raw/<source>/<table>/load_date=YYYY-MM-DD/<load-id>/<name>
		if len(segs) != 6 || segs[1] != "erp" || !strings.HasPrefix(segs[3], "load_date=") || !strings.HasPrefix(segs[4], "ld-") {
			t.Errorf("raw object %s is not raw/<source>/<table>/load_date=…/<load-id>/<name>", rel)
			continue
		}
		tbl := b[segs[2]]
		if tbl.Status == "" {
			t.Errorf("raw object %s: no table %s in the report", rel, segs[2])
		}
		if _, err := time.Parse("2006-01-02", strings.TrimPrefix(segs[3], "load_date=")); err != nil {
			t.Errorf("raw object %s: %v", rel, err)
		}
		if segs[5] == rawland.ManifestName {
			manifests++
			continue
		}
		body, err := cl.Get(ctx, bucket, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		io.Copy(h, body)
		body.Close()
		sum, ok := want[segs[5]]
		if !ok {
			t.Errorf("raw object %s is not one of the source files", rel)
			continue
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != sum {
			t.Errorf("raw object %s: sha256 %s, the source file %s", rel, got, sum)
		}
		landedNames[segs[5]] = true
		_, meta, err := cl.Head(ctx, bucket, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := url.PathUnescape(meta["lima-original-name"])
		if orig != origOf[segs[5]] {
			t.Errorf("%s: original-name metadata %q, want %q", rel, orig, origOf[segs[5]])
		}
		if origOf[segs[5]] != "" {
			sawNFD++
		}
	}
	if manifests != len(b) {
		t.Errorf("%d raw manifests, want one per loaded table (%d)", manifests, len(b))
	}
	// Every bundled file is read by some table except none: the demo plan
	// reads them all.
	var missing []string
	for n := range want {
		if !landedNames[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("source files not landed in raw/: %v", missing)
	}
	if len(origOf) == 0 || sawNFD == 0 {
		t.Errorf("no NFD-named file was landed (%d NFD names in the bundle); the original-name check proved nothing", len(origOf))
	}

	// Rerunning the unchanged objects (same keys, sizes, ETags) finds every
	// load in its table and lands nothing new.
	again := runOnce(t, ws3, p3, flow.RunOptions{})
	c, _ := readReportNumbers(t, again.ReportPath)
	for name, tn := range c {
		if tn.Status != "already_loaded" {
			t.Errorf("rerun: table %s is %s, want already_loaded", name, tn.Status)
		}
	}
	rawAgain, err := cl.List(ctx, bucket, "erp_quality/lake/raw/")
	if err != nil || len(rawAgain) != len(rawObjs) {
		t.Errorf("rerun: raw/ holds %d objects, before %d (%v)", len(rawAgain), len(rawObjs), err)
	}
}

// TestRawLocalWarehouse: with storage.raw on, a local warehouse gets the
// raw/ layer too — byte-identical copies and one manifest per table; the
// local demo's default (off) lands nothing.
func TestRawLocalWarehouse(t *testing.T) {
	ws, p := newDemo(t)
	if p.RawEnabled() {
		t.Fatal("raw/ is on by default for a local warehouse")
	}
	on := true
	p.Storage.Raw = &on
	p.Gates.DataModel.PlanHash = p.Hash()
	out := runOnce(t, ws, p, flow.RunOptions{})
	nums, _ := readReportNumbers(t, out.ReportPath)
	base := filepath.Join(ws.Warehouse(p), "raw", "erp")
	manifests := 0
	err := filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, path)
		segs := strings.Split(filepath.ToSlash(rel), "/")
		if len(segs) != 4 || nums[segs[0]].Status == "" {
			t.Errorf("raw file %s is not <table>/load_date=…/<load-id>/<name> of a reported table", rel)
			return nil
		}
		if segs[3] == rawland.ManifestName {
			manifests++
			return nil
		}
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var src []byte
		ents, _ := os.ReadDir(filepath.Join(ws.Dir, "data", "erp"))
		for _, e := range ents {
			if norm.NFC.String(e.Name()) == segs[3] {
				src, _ = os.ReadFile(filepath.Join(ws.Dir, "data", "erp", e.Name()))
			}
		}
		if src == nil || sha256.Sum256(src) != sha256.Sum256(got) {
			t.Errorf("raw file %s differs from its source file", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if manifests == 0 || manifests != len(nums) {
		t.Errorf("%d manifests for %d tables", manifests, len(nums))
	}
	// The plain local demo (raw off) has no raw/ folder.
	ws2, p2 := newDemo(t)
	runOnce(t, ws2, p2, flow.RunOptions{})
	if _, err := os.Stat(filepath.Join(ws2.Warehouse(p2), "raw")); err == nil {
		t.Error("the local demo landed raw/ with storage.raw unset")
	}
}
