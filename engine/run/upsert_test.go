package run

import (
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
)

func TestLowerBound(t *testing.T) {
	ts := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tt := func(s string) plan.Type {
		typ, err := plan.ParseType(s)
		if err != nil {
			t.Fatal(err)
		}
		return typ
	}
	cases := []struct {
		typ, prev, lookback string
		cell                clean.Cell
		wantArg             any
		wantText, wantErr   string
	}{
		{"timestamptz", "2026-03-01T10:00:00.000000Z", "10m", clean.Cell{I: ts.UnixMicro()}, ts.Add(-10 * time.Minute), "2026-03-01T09:50:00.000000Z", ""},
		{"timestamp", "2026-03-01T10:00:00.000000", "", clean.Cell{I: ts.UnixMicro()}, ts, "2026-03-01T10:00:00.000000", ""},
		{"timestamp", "2026-03-01T10:00:00.000000", "2d", clean.Cell{I: ts.UnixMicro()}, ts.Add(-48 * time.Hour), "2026-02-27T10:00:00.000000", ""},
		// A date bound is whole days: 10 minutes before 1 March is 28 Feb.
		{"date", "2026-03-01", "10m", clean.Cell{I: ts.Unix() / 86400}, time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC), "2026-02-28", ""},
		{"long", "1000", "25", clean.Cell{I: 1000}, int64(975), "975", ""},
		{"int", "7", "", clean.Cell{I: 7}, int64(7), "7", ""},
		{"string", "B-17", "", clean.Cell{S: "B-17"}, "B-17", "B-17", ""},
		{"timestamptz", "x", "500", clean.Cell{I: ts.UnixMicro()}, nil, "", "give a duration"},
		{"long", "1000", "1h", clean.Cell{I: 1000}, nil, "", "give a count"},
		{"string", "B-17", "5", clean.Cell{S: "B-17"}, nil, "", "has no lookback"},
	}
	for _, c := range cases {
		arg, text, err := lowerBound(tt(c.typ), c.cell, c.prev, c.lookback)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s %s lookback %q: err %v, want %q", c.typ, c.prev, c.lookback, err, c.wantErr)
			}
			continue
		}
		if err != nil || text != c.wantText || arg != c.wantArg {
			t.Errorf("%s %s lookback %q = %v %q %v; want %v %q", c.typ, c.prev, c.lookback, arg, text, err, c.wantArg, c.wantText)
		}
	}
}
