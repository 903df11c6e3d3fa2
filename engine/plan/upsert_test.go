package plan

import (
	"strings"
	"testing"
	"time"
)

const upsertPlan = `schema_version: 1
platform: {prefix: ups}
sources:
  erp: {kind: postgres, dsn_env: ERP_DSN}
  in: {kind: files, path: in}
tables:
  items:
    source: {name: erp, table: items}
    columns:
      - {name: id, type: long}
      - {name: updated_at, type: timestamptz}
      - {name: seq, type: long}
    load: LOAD
`

func TestValidateUpsert(t *testing.T) {
	tests := []struct{ load, want string }{
		{`{mode: upsert, keys: [id], watermark: updated_at, lookback: 10m, detect_deletes: every_run}`, ""},
		{`{mode: upsert, keys: [id], watermark: seq, lookback: 500, detect_deletes: 7d}`, ""},
		{`{mode: upsert, keys: [id]}`, ""},
		{`{mode: upsert, watermark: updated_at}`, "tables.items.load.keys: required for mode upsert"},
		{`{mode: upsert, keys: [id], watermark: updated_at, lookback: 500}`, "give the lookback as a duration"},
		{`{mode: upsert, keys: [id], watermark: seq, lookback: 10m}`, "give the lookback as a count"},
		{`{mode: upsert, keys: [id], lookback: 10m}`, "a lookback needs a watermark column"},
		{`{mode: upsert, keys: [id], watermark: seq, lookback: soon}`, "is neither a count"},
		{`{mode: upsert, keys: [id], detect_deletes: sometimes}`, "is not never, every_run or a period"},
		{`{mode: full, keys: [id], detect_deletes: every_run}`, "only mode upsert deletes rows by key"},
		{`{mode: incremental, keys: [id], watermark: seq, lookback: 5}`, ""},
		{`{mode: incremental, keys: [id], watermark: updated_at, lookback: 5}`, "give the lookback as a duration"},
		{`{mode: upsert, keys: [id], soft_delete: seq}`, "a soft-delete column is a boolean"},
		{`{mode: full, keys: [id], soft_delete: seq}`, "only mode upsert deletes rows by key"},
	}
	for _, tc := range tests {
		t.Run(tc.load, func(t *testing.T) {
			p, err := Parse([]byte(strings.Replace(upsertPlan, "LOAD", tc.load, 1)), "platform.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = p.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
	// split_by names an integer, date or timestamp column of a database table.
	for split, want := range map[string]string{"id": "", "updated_at": "", "nope": `no column "nope"`} {
		p, err := Parse([]byte(strings.Replace(strings.Replace(upsertPlan, "LOAD", `{keys: [id]}`, 1), "table: items}", "table: items, split_by: "+split+"}", 1)), "platform.yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = p.Validate()
		if (want == "" && err != nil) || (want != "" && (err == nil || !strings.Contains(err.Error(), want))) {
			t.Errorf("split_by %s: %v, want %q", split, err, want)
		}
	}
	// Upsert reads a database: a files source is refused.
	p, err := Parse([]byte(strings.Replace(strings.Replace(upsertPlan, "LOAD", `{mode: upsert, keys: [id]}`, 1), "{name: erp, table: items}", "{name: in, files: ['*.csv']}", 1)), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "upsert reads a database table") {
		t.Fatalf("files upsert: %v", err)
	}
}

func TestParseLookbackAndDeleteDetection(t *testing.T) {
	for _, tc := range []struct {
		in      string
		d       time.Duration
		n       int64
		isCount bool
	}{{"", 0, 0, false}, {"10m", 10 * time.Minute, 0, false}, {"2d", 48 * time.Hour, 0, false}, {"1000", 0, 1000, true}, {"0", 0, 0, true}} {
		d, n, c, err := ParseLookback(tc.in)
		if err != nil || d != tc.d || n != tc.n || c != tc.isCount {
			t.Errorf("ParseLookback(%q) = %v %d %v %v", tc.in, d, n, c, err)
		}
	}
	if _, _, _, err := ParseLookback("-5"); err == nil {
		t.Error("a negative lookback was accepted")
	}
	for _, tc := range []struct {
		in     string
		on     bool
		period time.Duration
	}{{"", false, 0}, {"never", false, 0}, {"every_run", true, 0}, {"24h", true, 24 * time.Hour}, {"1w", true, 7 * 24 * time.Hour}} {
		on, period, err := LoadSpec{DetectDeletes: tc.in}.DeleteDetection()
		if err != nil || on != tc.on || period != tc.period {
			t.Errorf("DeleteDetection(%q) = %v %v %v", tc.in, on, period, err)
		}
	}
}
