package plan

import (
	"testing"
	"time"
)

func TestOwnerDeadlineAt(t *testing.T) {
	from := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC) // 16:00 in Berlin (CET)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cases := []struct {
		deadline string
		want     time.Time
		ok       bool
		bad      bool
	}{
		{"48h", from.Add(48 * time.Hour), true, false},
		{"2d", from.Add(48 * time.Hour), true, false},
		{"17:00", time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC), true, false},
		{"15:00", time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC), true, false}, // not after from: tomorrow
		{"17:00 Europe/Berlin", time.Date(2026, 11, 30, 17, 0, 0, 0, berlin), true, false},
		{"09:00 Europe/Berlin", time.Date(2026, 12, 1, 9, 0, 0, 0, berlin), true, false},
		{"2bd", time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC), true, false}, // Monday → Wednesday
		{"5bd", time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC), true, false}, // a week on
		{"0bd", time.Time{}, false, true},
		{"xbd", time.Time{}, false, true},
		{"", time.Time{}, false, false},
		{"25:00", time.Time{}, false, true},
		{"17:00 Mars/Olympus", time.Time{}, false, true},
		{"soon", time.Time{}, false, true},
	}
	for _, c := range cases {
		got, ok, err := Owner{Deadline: c.deadline}.DeadlineAt(from)
		if (err != nil) != c.bad || ok != c.ok || !got.Equal(c.want) {
			t.Errorf("%q: %v %v %v; want %v ok=%v bad=%v", c.deadline, got, ok, err, c.want, c.ok, c.bad)
		}
	}
}

func TestBusinessDaysSkipTheWeekend(t *testing.T) {
	fri := time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC)
	sat := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		from     time.Time
		deadline string
		want     time.Time
	}{
		{fri, "1bd", time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)},   // Friday → Monday
		{fri, "2bd", time.Date(2026, 12, 8, 15, 0, 0, 0, time.UTC)},   // → Tuesday
		{sat, "1bd", time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)},   // Saturday → Monday
		{fri, "10bd", time.Date(2026, 12, 18, 15, 0, 0, 0, time.UTC)}, // two weeks
	} {
		got, ok, err := Owner{Deadline: c.deadline}.DeadlineAt(c.from)
		if err != nil || !ok || !got.Equal(c.want) {
			t.Errorf("%s + %s = %v %v %v; want %v", c.from.Weekday(), c.deadline, got, ok, err, c.want)
		}
	}
	if d, err := (Owner{Deadline: "2bd"}).DeadlineAfter(); err != nil || d != 0 {
		t.Errorf("DeadlineAfter(2bd) = %v, %v; want 0 (use DeadlineAt)", d, err)
	}
}
