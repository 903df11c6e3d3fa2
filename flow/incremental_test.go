package flow_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

func TestIncrementalLoadSkipsBelowWatermarkAndRejectsKnownKeys(t *testing.T) {
	ws, p := workspace(t, map[string][]byte{
		"ev-1.csv": []byte("id,at,v\n1,2026-01-01,10\n2,2026-01-02,20\n"),
	}, `schema_version: 1
platform: {prefix: inc}
sources: {in: {kind: files, path: in}}
tables:
  events:
    source: {name: in, files: ["ev-*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: at, type: date}
      - {name: v, type: long}
    load: {mode: incremental, keys: [id], watermark: at}
`)
	first := runOnce(t, ws, p, flow.RunOptions{})
	if tr := first.Result.Tables[0]; tr.RowsLoaded != 2 || tr.WatermarkAfter != "2026-01-02" {
		t.Fatalf("first: loaded %d, watermark %q", tr.RowsLoaded, tr.WatermarkAfter)
	}
	// A second file: row 3 is new; row 1 again is at or below the
	// watermark (skipped, a declared reason); row 2 again with a later date
	// is above the watermark but its key is already in the table (held).
	os.WriteFile(filepath.Join(ws.Dir, "in", "ev-2.csv"), []byte("id,at,v\n3,2026-01-03,30\n1,2026-01-01,10\n2,2026-01-05,99\n"), 0o644)
	second := runOnce(t, ws, p, flow.RunOptions{})
	tr := second.Result.Tables[0]
	// read: ev-1 again (header + 2) + ev-2 (header + 3) = 7; skipped: 2
	// headers + rows 1 and 2 of ev-1 + row 1 of ev-2 = 5; loaded 1; held 1.
	if tr.RowsRead != 7 || tr.RowsLoaded != 1 || tr.RowsQuarantined != 1 || tr.RowsSkipped != 5 || !tr.Balanced() {
		t.Fatalf("second: read %d loaded %d held %d skipped %d", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
	}
	if tr.SkippedBy["at_or_below_watermark"] != 3 || tr.WatermarkBefore != "2026-01-02" || tr.WatermarkAfter != "2026-01-05" {
		t.Fatalf("skipped %v, watermark %s → %s", tr.SkippedBy, tr.WatermarkBefore, tr.WatermarkAfter)
	}
	if tableReport(t, second.Report, "events").Reconciliation != gates.Pass {
		t.Fatal("gate 4")
	}
	_, tbl := loadIceberg(t, ws, p, "events")
	if n := countRows(t, tbl); n != 3 {
		t.Fatalf("the lake holds %d rows, want 3", n)
	}
}
