package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

func TestDeadlineIsTheNextOccurrenceAfterStart(t *testing.T) {
	p := &plan.Plan{Schedule: plan.Schedule{Deadline: "06:00", Timezone: "Asia/Seoul"}}
	seoul, _ := time.LoadLocation("Asia/Seoul")
	cases := []struct {
		start time.Time
		want  time.Time
	}{
		// A nightly run at 02:00 KST must finish by 06:00 the same morning.
		{time.Date(2026, 11, 30, 2, 0, 0, 0, seoul), time.Date(2026, 11, 30, 6, 0, 0, 0, seoul)},
		// A run started at 07:00 is held to the next morning's deadline.
		{time.Date(2026, 11, 30, 7, 0, 0, 0, seoul), time.Date(2026, 12, 1, 6, 0, 0, 0, seoul)},
		// 22:30 UTC on the 29th is 07:30 KST on the 30th.
		{time.Date(2026, 11, 29, 22, 30, 0, 0, time.UTC), time.Date(2026, 12, 1, 6, 0, 0, 0, seoul)},
	}
	for _, c := range cases {
		got, ok := Deadline(p, c.start)
		if !ok || !got.Equal(c.want) {
			t.Errorf("start %v: deadline %v, want %v", c.start, got, c.want)
		}
	}
	if _, ok := Deadline(&plan.Plan{}, time.Now()); ok {
		t.Error("a plan without a deadline has one")
	}
}

func TestOwnerRoutingFirstMatchThenDefault(t *testing.T) {
	p := &plan.Plan{Owners: []plan.Owner{
		{Name: "ops", Default: true},
		{Name: "costs", Table: "inspections", Column: "cost"},
		{Name: "quality", Table: "inspections"},
		{Name: "dups", Rule: "unique"},
	}}
	cases := []struct{ table, column, rule, want string }{
		{"inspections", "cost", "type", "costs"},
		{"inspections", "inspected_on", "type", "quality"},
		{"suppliers", "supplier_id", "unique", "dups"},
		{"suppliers", "name", "type", "ops"},
	}
	for _, c := range cases {
		if got := OwnerFor(p, c.table, c.column, c.rule); got != c.want {
			t.Errorf("%s/%s/%s → %s, want %s", c.table, c.column, c.rule, got, c.want)
		}
	}
}

func TestMarkdownEscapesUntrustedCells(t *testing.T) {
	got := md("a|b\r\n\x1b[31m<script>\u202e")
	want := `a\|b\r\n\u001b\[31m\<script\>\u202e`
	if got != want {
		t.Fatalf("md = %q, want %q", got, want)
	}
	if strings.ContainsAny(got, "\r\n\x1b") {
		t.Fatal("control characters survived")
	}
}
