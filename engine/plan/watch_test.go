package plan

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// withWatch is the fixture plan with a schedule.watch block added to its
// YAML, parsed and validated as a file.
func withWatch(t *testing.T, block string) (*Plan, error) {
	t.Helper()
	data, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if strings.Count(doc, "\nschedule:\n") != 1 {
		t.Fatal("the fixture has no schedule block; adapt the test")
	}
	doc = strings.Replace(doc, "\nschedule:\n", "\nschedule:\n  watch:\n"+block, 1)
	p, err := Parse([]byte(doc), "platform.yaml")
	if err != nil {
		return nil, err
	}
	return p, p.Validate()
}

func TestWatchFields(t *testing.T) {
	p, err := withWatch(t, "    interval: 30s\n    batch_rows: 100000\n    compact_every: 20\n")
	if err != nil {
		t.Fatal(err)
	}
	w := p.Schedule.Watch
	if d, err := w.IntervalDuration(); err != nil || d != 30*time.Second || w.BatchRows != 100000 || w.CompactEvery != 20 {
		t.Fatalf("watch = %+v (%v, %v)", w, d, err)
	}
	// No block, or no interval: the default.
	if d, err := (*Watch)(nil).IntervalDuration(); err != nil || d != DefaultWatchInterval {
		t.Fatalf("nil watch interval = %v %v", d, err)
	}
	if d, err := (&Watch{BatchRows: 5}).IntervalDuration(); err != nil || d != DefaultWatchInterval {
		t.Fatalf("empty interval = %v %v", d, err)
	}
	// Written and read back unchanged; the plan hash sees the block.
	path := t.TempDir() + "/platform.yaml"
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if *q.Schedule.Watch != *w {
		t.Fatalf("round trip: %+v, want %+v", *q.Schedule.Watch, *w)
	}
	before := q.Hash()
	q.Schedule.Watch.CompactEvery++
	if q.Hash() == before {
		t.Fatal("the plan hash ignores schedule.watch")
	}
}

func TestWatchValidation(t *testing.T) {
	cases := []struct {
		block string
		want  []string
	}{
		{"    interval: soon\n", []string{`schedule.watch.interval: "soon" is not a duration; write a number with a unit, e.g. 30s, 5m or 1h30m`}},
		{"    interval: 30\n", []string{`schedule.watch.interval: "30" is not a duration; write a number with a unit, e.g. 30s, 5m or 1h30m`}},
		{"    interval: 100ms\n", []string{`schedule.watch.interval: 100ms is out of range; use 1s to 24h0m0s`}},
		{"    interval: 48h\n", []string{`schedule.watch.interval: 48h0m0s is out of range; use 1s to 24h0m0s`}},
		{"    interval: -5s\n", []string{`schedule.watch.interval: -5s is out of range; use 1s to 24h0m0s`}},
		{"    batch_rows: -1\n    compact_every: -2\n", []string{
			`schedule.watch.batch_rows: -1 is negative; give the most lines of one micro-batch, or 0 for no cap`,
			`schedule.watch.compact_every: -2 is negative; give a number of micro-batches between compactions, or 0 for never`}},
		{"    interval: 1s\n    batch_rows: 0\n    compact_every: 0\n", nil},
	}
	for _, c := range cases {
		_, err := withWatch(t, c.block)
		if got := problems(t, err); !slices.Equal(got, c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.block, got, c.want)
		}
	}
	// Unknown and mistyped fields are refused when the plan is read.
	if _, err := withWatch(t, "    intervall: 30s\n"); err == nil || !strings.Contains(err.Error(), "schedule.watch.intervall") {
		t.Errorf("misspelt field: %v", err)
	}
	if _, err := withWatch(t, "    batch_rows: many\n"); err == nil || !strings.Contains(err.Error(), "schedule.watch.batch_rows") {
		t.Errorf("mistyped field: %v", err)
	}
}
