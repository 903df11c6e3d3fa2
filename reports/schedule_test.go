package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
)

// TestDeadlineMetAndMissed: deadline 06:00 Asia/Seoul (UTC+9, no DST).
func TestDeadlineMetAndMissed(t *testing.T) {
	seoul, _ := time.LoadLocation("Asia/Seoul")
	kst := func(d, h, m int) time.Time { return time.Date(2026, 12, d, h, m, 0, 0, seoul) }
	p := &plan.Plan{Schedule: plan.Schedule{Cron: "0 2 * * *", Deadline: "06:00", Timezone: "Asia/Seoul"}}
	cases := []struct {
		name              string
		fire              time.Time // zero: started by hand
		started, finished time.Time
		deadline          time.Time
		met               bool
		margin            string
	}{
		{"scheduled 02:00, done 05:45", kst(1, 2, 0), kst(1, 2, 0), kst(1, 5, 45), kst(1, 6, 0), true, "met with 15m0s to spare"},
		{"scheduled 02:00, waited for the lock until 05:00, done 05:59:30", kst(1, 2, 0), kst(1, 5, 0), kst(1, 5, 59).Add(30 * time.Second), kst(1, 6, 0), true, "met with 30s to spare"},
		{"scheduled 02:00, started late at 06:10, done 06:40", kst(1, 2, 0), kst(1, 6, 10), kst(1, 6, 40), kst(1, 6, 0), false, "missed by 40m0s"},
		{"scheduled 02:00, done 07:25:10", kst(1, 2, 0), kst(1, 2, 0), kst(1, 7, 25).Add(10 * time.Second), kst(1, 6, 0), false, "missed by 1h25m10s"},
		{"exactly on the deadline is met", kst(1, 2, 0), kst(1, 2, 0), kst(1, 6, 0), kst(1, 6, 0), true, "met with 0s to spare"},
		// By hand, the deadline is the next 06:00 after the start.
		{"by hand at 06:10, done 06:40", time.Time{}, kst(1, 6, 10), kst(1, 6, 40), kst(2, 6, 0), true, "met with 23h20m0s to spare"},
		{"by hand at 04:00, done 06:30", time.Time{}, kst(1, 4, 0), kst(1, 6, 30), kst(1, 6, 0), false, "missed by 30m0s"},
	}
	for _, c := range cases {
		r := Build(p, &run.Result{RunID: "r", Started: c.started.UTC(), Finished: c.finished.UTC()}, nil)
		if !c.fire.IsZero() {
			r.SetScheduled(p, c.fire)
			if r.ScheduledAt == nil || !r.ScheduledAt.Equal(c.fire) {
				t.Errorf("%s: scheduled_at %v", c.name, r.ScheduledAt)
			}
		}
		if r.Deadline == nil || !r.Deadline.Equal(c.deadline) || r.DeadlineMet == nil || *r.DeadlineMet != c.met || r.DeadlineBy != c.margin {
			t.Errorf("%s: deadline %v met %v %q; want %s %v %q", c.name, r.Deadline, r.DeadlineMet, r.DeadlineBy, c.deadline, c.met, c.margin)
		}
	}
	// Fire time on the deadline: the deadline is the next day's.
	q := &plan.Plan{Schedule: plan.Schedule{Deadline: "06:00", Timezone: "Asia/Seoul"}}
	if got, ok := DeadlineAfter(q, kst(1, 6, 0)); !ok || !got.Equal(kst(2, 6, 0)) {
		t.Errorf("DeadlineAfter(06:00) = %s, want the next day's 06:00", got)
	}
	if _, ok := DeadlineAfter(&plan.Plan{}, kst(1, 6, 0)); ok {
		t.Error("no deadline in the plan, yet one after the fire time")
	}
}

// TestGlueCron: AWS Glue triggers fire in UTC with six fields and ? in one
// day field. Offsets worked out by hand: Asia/Seoul UTC+9 all year;
// Asia/Kolkata UTC+5:30; America/Bogota UTC-5; Europe/Berlin UTC+1 in winter
// and UTC+2 in summer; America/New_York UTC-5 in winter and UTC-4 in summer.
func TestGlueCron(t *testing.T) {
	load := func(name string) *time.Location {
		l, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	cases := []struct {
		spec, tz, want string
		dst            bool // a note about daylight saving time
	}{
		{"0 2 * * *", "UTC", "cron(0 2 * * ? *)", false},
		{"*/15 * * * *", "UTC", "cron(0/15 * * * ? *)", false},
		{"0 6-18/2 * * mon-fri", "UTC", "cron(0 6,8,10,12,14,16,18 ? * MON-FRI *)", false},
		{"30 4 * * 7", "UTC", "cron(30 4 ? * SUN *)", false},
		{"0 2 1,15 * *", "UTC", "cron(0 2 1,15 * ? *)", false},
		{"0 0 1 jan *", "UTC", "cron(0 0 1 1 ? *)", false},
		{"0 3 * * 1,3,5", "UTC", "cron(0 3 ? * MON,WED,FRI *)", false},
		{"@hourly", "UTC", "cron(0 * * * ? *)", false},
		// 02:00 KST = 17:00 UTC the day before.
		{"0 2 * * *", "Asia/Seoul", "cron(0 17 * * ? *)", false},
		{"30 6 * * 1-5", "Asia/Seoul", "cron(30 21 ? * SUN-THU *)", false},
		{"0 12 * * 1-5", "Asia/Seoul", "cron(0 3 ? * MON-FRI *)", false},
		// 22:00 IST = 16:30 UTC.
		{"0 22 * * 5", "Asia/Kolkata", "cron(30 16 ? * FRI *)", false},
		// 20:00 in Bogota = 01:00 UTC the next day.
		{"0 20 * * 5", "America/Bogota", "cron(0 1 ? * SAT *)", false},
		// Standard time: 02:00 CET = 01:00 UTC; 00:00 CET = 23:00 UTC the day before.
		{"0 2 * * *", "Europe/Berlin", "cron(0 1 * * ? *)", true},
		{"@daily", "Europe/Berlin", "cron(0 23 * * ? *)", true},
		{"0 3 * * 1", "America/New_York", "cron(0 8 ? * MON *)", true},
		// Only January: Berlin is UTC+1 on every fire date.
		{"0 9 * 1 *", "Europe/Berlin", "cron(0 8 * 1 ? *)", false},
	}
	for _, c := range cases {
		got, note, err := GlueCron(c.spec, load(c.tz))
		if err != nil || got != c.want {
			t.Errorf("GlueCron(%q, %s) = %q, %v; want %q", c.spec, c.tz, got, err, c.want)
			continue
		}
		if hasDST := note != "" && strings.Contains(note, "daylight saving"); hasDST != c.dst {
			t.Errorf("GlueCron(%q, %s) note %q; want a DST note: %v", c.spec, c.tz, note, c.dst)
		}
		if c.tz == "UTC" && note != "" {
			t.Errorf("GlueCron(%q, UTC) note %q, want none", c.spec, note)
		}
	}
	if _, note, _ := GlueCron("0 2 * * *", load("Asia/Seoul")); note != "Asia/Seoul is UTC+09:00 on every fire date; Glue triggers run in UTC, so the times are shifted by -09:00" {
		t.Errorf("Seoul note %q", note)
	}
	if got, _, err := GlueCron("0 2 * * *", nil); err != nil || got != "cron(0 2 * * ? *)" {
		t.Errorf("nil zone: %q %v", got, err)
	}
	for _, c := range []struct{ spec, tz string }{
		{"0 2 1 * 1", "UTC"},             // day of month OR day of week
		{"0 2 1 * *", "Asia/Seoul"},      // the 1st at 02:00 KST is the last day of the month before in UTC
		{"0 2 * 1 *", "Asia/Seoul"},      // January in KST starts on 31 December in UTC
		{"0 8,10 * * 1", "Asia/Seoul"},   // 23:00 Sunday and 01:00 Monday UTC
		{"*/20 2 * * *", "Asia/Kolkata"}, // 20:30, 20:50, 21:10 UTC: not minutes x hours
		{"0 2 * *", "UTC"},
		{"@every 1h", "UTC"},
	} {
		if got, _, err := GlueCron(c.spec, load(c.tz)); err == nil {
			t.Errorf("GlueCron(%q, %s) = %q, want an error", c.spec, c.tz, got)
		}
	}
}
