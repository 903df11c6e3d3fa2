package flow_test

import (
	"testing"

	"github.com/lima-lake/lima/flow"
)

// Naive timestamps are read in the source's time zone; zoned ones keep
// theirs; Excel serial dates are dates.
func TestSourceTimezoneAndExcelSerials(t *testing.T) {
	ws, p := workspace(t, map[string][]byte{
		"ev.csv": []byte("id,at,day\n1,2026-01-04 08:30:00,45678\n2,2026-01-04T08:30:00Z,2026-01-22\n"),
	}, `schema_version: 1
platform: {prefix: tz}
sources: {in: {kind: files, path: in, timezone: Asia/Seoul}}
tables:
  ev:
    source: {name: in, files: [ev.csv]}
    columns:
      - {name: id, type: long, required: true}
      - {name: at, type: timestamptz, formats: ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-ddTHH:mm:ssXXX"]}
      - {name: day, type: date, formats: [yyyy-MM-dd, excel]}
    load: {keys: [id]}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := tableReport(t, out.Report, "ev")
	if tr.RowsLoaded != 2 {
		t.Fatalf("loaded %d: %+v", tr.RowsLoaded, tr.Exceptions)
	}
	got := map[string]map[string]string{}
	for _, s := range tr.Samples {
		got[s.Source["id"]] = s.Lake
	}
	// 08:30 in Seoul (UTC+9) is 23:30 UTC the day before.
	if got["1"]["at"] != "2026-01-03T23:30:00.000000Z" || got["2"]["at"] != "2026-01-04T08:30:00.000000Z" {
		t.Errorf("timestamps %v", got)
	}
	// Serial 45678 is 2025-01-21 (44927 is 2023-01-01, +731 days is 2025-01-01).
	if got["1"]["day"] != "2025-01-21" || got["2"]["day"] != "2026-01-22" {
		t.Errorf("days %v", got)
	}
}
