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
