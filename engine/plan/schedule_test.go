package plan

import (
	"testing"
	"time"
)

func TestParseClock(t *testing.T) {
	good := map[string]Clock{"00:00": {0, 0}, "06:30": {6, 30}, "7:05": {7, 5}, "23:59": {23, 59}, " 12:00 ": {12, 0}}
	for in, want := range good {
		got, err := ParseClock(in)
		if err != nil || got != want {
			t.Errorf("ParseClock(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"24:00": `"24:00" is out of range; use 00:00 to 23:59`,
		"12:60": `"12:60" is out of range; use 00:00 to 23:59`,
		"6pm":   `"6pm" is not a time of day; write HH:MM in 24-hour time, e.g. 06:30`,
		"1230":  `"1230" is not a time of day; write HH:MM in 24-hour time, e.g. 06:30`,
		"12:5":  `"12:5" is not a time of day; write HH:MM in 24-hour time, e.g. 06:30`,
		"-1:30": `"-1:30" is not a time of day; write HH:MM in 24-hour time, e.g. 06:30`,
		"":      `"" is not a time of day; write HH:MM in 24-hour time, e.g. 06:30`,
	}
	for in, want := range bad {
		if _, err := ParseClock(in); err == nil || err.Error() != want {
			t.Errorf("ParseClock(%q) error = %v, want %q", in, err, want)
		}
	}
	if (Clock{6, 5}).String() != "06:05" || (Clock{6, 5}).Minutes() != 365 {
		t.Errorf("Clock methods wrong")
	}
}

func TestParseWindow(t *testing.T) {
	s, e, err := ParseWindow("22:00 - 04:30")
	if err != nil || s != (Clock{22, 0}) || e != (Clock{4, 30}) {
		t.Errorf("ParseWindow = %v %v %v", s, e, err)
	}
	bad := map[string]string{
		"01:00":       `"01:00" is not a window; write HH:MM-HH:MM in 24-hour time, e.g. 01:00-05:00 (it may cross midnight: 22:00-04:00)`,
		"01:00-25:00": `window "01:00-25:00": end "25:00" is out of range; use 00:00 to 23:59`,
		"05:00-05:00": `window "05:00-05:00" is empty: start and end are the same`,
	}
	for in, want := range bad {
		if _, _, err := ParseWindow(in); err == nil || err.Error() != want {
			t.Errorf("ParseWindow(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestCheckCron(t *testing.T) {
	for _, ok := range []string{"0 2 * * *", "*/15 * * * *", "0 6-18/2 1,15 jan-jun mon-fri", "30 4 * * 7", "@daily", "@Hourly", " 0 0 1 1 * "} {
		if err := CheckCron(ok); err != nil {
			t.Errorf("CheckCron(%q): %v", ok, err)
		}
	}
	const help = `use five fields "minute hour day-of-month month day-of-week", e.g. "0 2 * * *" (02:00 every day), or @daily, @hourly, @weekly, @monthly`
	bad := map[string]string{
		"0 2 * *":        `"0 2 * *" has 4 fields; ` + help,
		"60 * * * *":     `"60 * * * *": minute 60 is out of range 0-59; ` + help,
		"0 0 0 * *":      `"0 0 0 * *": day of month 0 is out of range 1-31; ` + help,
		"0 0 * 13 *":     `"0 0 * 13 *": month 13 is out of range 1-12; ` + help,
		"0 0 * * 8":      `"0 0 * * 8": day of week 8 is out of range 0-7; ` + help,
		"0 5-1 * * *":    `"0 5-1 * * *": hour: range "5-1" runs backwards; ` + help,
		"*/0 * * * *":    `"*/0 * * * *": minute: step "0" must be from 1 to 59; ` + help,
		"0 x * * *":      `"0 x * * *": hour: "x" is not a number; ` + help,
		"0 0 * * funday": `"0 0 * * funday": day of week: "funday" is not a number; ` + help,
		"@sometimes":     `"@sometimes" is not a cron expression; ` + help,
		// Checked by robfig/cron, which computes the fire times.
		"0 0 * * 1-7/2": `"0 0 * * 1-7/2": end of range (7) above maximum (6): 1-7/2; ` + help,
		"@every 1h":     `"@every 1h" is not a cron expression; ` + help,
	}
	for in, want := range bad {
		if err := CheckCron(in); err == nil || err.Error() != want {
			t.Errorf("CheckCron(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestLocationAndDeadline(t *testing.T) {
	if loc, err := (Schedule{}).Location(); err != nil || loc != time.UTC {
		t.Errorf("empty timezone: %v %v", loc, err)
	}
	if loc, err := (Schedule{Timezone: "Europe/Berlin"}).Location(); err != nil || loc.String() != "Europe/Berlin" {
		t.Errorf("Europe/Berlin: %v %v", loc, err)
	}
	if _, err := (Schedule{Timezone: "Local"}).Location(); err == nil {
		t.Errorf("Local accepted")
	}
	good := map[string]time.Duration{"": 0, "48h": 48 * time.Hour, "2d": 48 * time.Hour, "1w": 7 * 24 * time.Hour, "1h30m": 90 * time.Minute}
	for in, want := range good {
		if got, err := (Owner{Deadline: in}).DeadlineAfter(); err != nil || got != want {
			t.Errorf("DeadlineAfter(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"soon": `"soon" is not a duration; write e.g. 4h, 48h, 2d, 1w or 2bd (business days)`,
		"0h":   `"0h": a deadline must be longer than zero`,
		"-2d":  `"-2d": a deadline must be longer than zero`,
		"2.5d": `"2.5d" is not a duration; write e.g. 4h, 48h, 2d, 1w or 2bd (business days)`,
	}
	for in, want := range bad {
		if _, err := (Owner{Deadline: in}).DeadlineAfter(); err == nil || err.Error() != want {
			t.Errorf("DeadlineAfter(%q) error = %v, want %q", in, err, want)
		}
	}
}

// TestParseCronWithRobfig: fire times from github.com/robfig/cron/v3 on a
// wall clock in UTC; 2026-11-30 is a Monday.
func TestParseCronWithRobfig(t *testing.T) {
	mon := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Time{
		"30 4 * * 7":     time.Date(2026, 12, 6, 4, 30, 0, 0, time.UTC), // 7 is Sunday
		"0 1 * * fri-7":  time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC),
		"@Daily":         time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		"@weekly":        time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC),
		"*/20 13 * * *":  time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC),
		"0 6 1,15 * *":   time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC),
		"0 0 29 feb *":   time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC),
		" 0 0 1 1 * ":    time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		"0 6-18/2 * * *": time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC),
	}
	for in, want := range cases {
		s, err := ParseCron(in)
		if err != nil {
			t.Errorf("ParseCron(%q): %v", in, err)
			continue
		}
		if got := s.Next(mon); !got.Equal(want) {
			t.Errorf("ParseCron(%q).Next(Mon 12:00) = %s, want %s", in, got, want)
		}
	}
	if _, err := ParseCron("TZ=UTC 0 2 * * *"); err == nil {
		t.Error("a zone inside the expression was accepted")
	}
}
