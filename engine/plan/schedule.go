package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Clock is a time of day, 00:00 to 23:59.
type Clock struct{ Hour, Minute int }

// String is "HH:MM".
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// Minutes is the number of minutes since midnight.
func (c Clock) Minutes() int { return c.Hour*60 + c.Minute }

// ParseClock reads "HH:MM" in 24-hour time (00:00 to 23:59; one-digit hours
// such as 7:30 are accepted).
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	bad := fmt.Errorf("%q is not a time of day; write HH:MM in 24-hour time, e.g. 06:30", s)
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
		return Clock{}, bad
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || h[0] == '+' || h[0] == '-' || m[0] == '+' || m[0] == '-' {
		return Clock{}, bad
	}
	if hh > 23 || mm > 59 {
		return Clock{}, fmt.Errorf("%q is out of range; use 00:00 to 23:59", s)
	}
	return Clock{hh, mm}, nil
}

// ParseWindow reads "HH:MM-HH:MM". The window may cross midnight
// (22:00-04:00); start and end must differ.
func ParseWindow(s string) (start, end Clock, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return Clock{}, Clock{}, fmt.Errorf("%q is not a window; write HH:MM-HH:MM in 24-hour time, e.g. 01:00-05:00 (it may cross midnight: 22:00-04:00)", s)
	}
	if start, err = ParseClock(a); err != nil {
		return Clock{}, Clock{}, fmt.Errorf("window %q: start %w", s, err)
	}
	if end, err = ParseClock(b); err != nil {
		return Clock{}, Clock{}, fmt.Errorf("window %q: end %w", s, err)
	}
	if start == end {
		return Clock{}, Clock{}, fmt.Errorf("window %q is empty: start and end are the same", s)
	}
	return start, end, nil
}

// Location loads the schedule's time zone; UTC when Timezone is empty.
func (s Schedule) Location() (*time.Location, error) {
	if s.Timezone == "" {
		return time.UTC, nil
	}
	if s.Timezone == "Local" {
		return nil, fmt.Errorf(`time zone "Local" depends on the machine; name the zone, e.g. Europe/Berlin or UTC`)
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		return nil, fmt.Errorf("%q is not a known time zone; use an IANA name such as Europe/Berlin, America/New_York or UTC", s.Timezone)
	}
	return loc, nil
}

// DeadlineAfter parses a span Owner.Deadline: how long an open exception
// may wait before it is overdue, as a Go duration (90m, 48h, 1h30m) or whole
// days or weeks (2d, 1w). Empty gives 0, meaning no deadline. A time-of-day
// or business-day deadline gives 0 too (its length depends on when it
// starts); use DeadlineAt.
func (o Owner) DeadlineAfter() (time.Duration, error) {
	if _, _, ok, err := o.timeOfDay(); ok || err != nil {
		return 0, err
	}
	if _, ok, err := o.businessDays(); ok || err != nil {
		return 0, err
	}
	return parseSpan(o.Deadline)
}

// businessDays parses a deadline of the form "Nbd": N business days,
// Monday to Friday.
func (o Owner) businessDays() (int, bool, error) {
	t := strings.TrimSpace(o.Deadline)
	num, found := strings.CutSuffix(t, "bd")
	if !found {
		return 0, false, nil
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > 3650 || num[0] == '+' {
		return 0, true, fmt.Errorf("%q is not a number of business days; write e.g. 1bd, 2bd or 5bd", o.Deadline)
	}
	return n, true, nil
}

// addBusinessDays is from plus n days that are not a Saturday or a Sunday
// (in UTC), at the same time of day.
func addBusinessDays(from time.Time, n int) time.Time {
	d := from.UTC()
	for n > 0 {
		d = d.AddDate(0, 0, 1)
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			n--
		}
	}
	return d
}

// timeOfDay parses a deadline of the form "HH:MM" or "HH:MM Area/City".
func (o Owner) timeOfDay() (Clock, *time.Location, bool, error) {
	t := strings.TrimSpace(o.Deadline)
	if !strings.Contains(t, ":") {
		return Clock{}, nil, false, nil
	}
	clock, zone, _ := strings.Cut(t, " ")
	c, err := ParseClock(clock)
	if err != nil {
		return Clock{}, nil, true, err
	}
	loc := time.UTC
	if zone = strings.TrimSpace(zone); zone != "" {
		if zone == "Local" {
			return Clock{}, nil, true, fmt.Errorf("time zone %q depends on the machine; name the zone, e.g. Europe/Berlin", zone)
		}
		if loc, err = time.LoadLocation(zone); err != nil {
			return Clock{}, nil, true, fmt.Errorf("%q is not a known time zone; use an IANA name such as Europe/Berlin or UTC", zone)
		}
	}
	return c, loc, true, nil
}

// DeadlineAt is when an exception raised at from becomes overdue: from plus
// a span ("48h", "2d"), plus business days ("2bd": Saturdays and Sundays,
// in UTC, do not count), or the next occurrence of a time of day ("17:00"
// in UTC, "17:00 Europe/Berlin"). ok is false when the owner sets no
// deadline.
func (o Owner) DeadlineAt(from time.Time) (time.Time, bool, error) {
	if n, ok, err := o.businessDays(); err != nil {
		return time.Time{}, false, err
	} else if ok {
		return addBusinessDays(from, n), true, nil
	}
	if c, loc, ok, err := o.timeOfDay(); err != nil {
		return time.Time{}, false, err
	} else if ok {
		f := from.In(loc)
		d := time.Date(f.Year(), f.Month(), f.Day(), c.Hour, c.Minute, 0, 0, loc)
		if !d.After(f) {
			d = d.AddDate(0, 0, 1)
		}
		return d, true, nil
	}
	span, err := parseSpan(o.Deadline)
	if err != nil || span == 0 {
		return time.Time{}, false, err
	}
	return from.Add(span), true, nil
}

func parseSpan(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	bad := fmt.Errorf("%q is not a duration; write e.g. 4h, 48h, 2d, 1w or 2bd (business days)", s)
	var d time.Duration
	var err error
	switch {
	case strings.HasSuffix(t, "d") || strings.HasSuffix(t, "w"):
		n, err := strconv.Atoi(t[:len(t)-1])
		if err != nil || n > 3650 {
			return 0, bad
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(t, "w") {
			unit *= 7
		}
		d = time.Duration(n) * unit
	default:
		if d, err = time.ParseDuration(t); err != nil {
			return 0, bad
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: a deadline must be longer than zero", s)
	}
	return d, nil
}

// Cron.

var cronDescriptors = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

type cronField struct {
	name     string
	min, max int
	names    []string // index + min = value
}

var cronFields = []cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

const cronHelp = `use five fields "minute hour day-of-month month day-of-week", e.g. "0 2 * * *" (02:00 every day), or @daily, @hourly, @weekly, @monthly`

// CheckCron checks a standard five-field cron expression (with *, lists,
// ranges, steps and month/day names) or one of @yearly, @annually,
// @monthly, @weekly, @daily, @midnight, @hourly.
func CheckCron(expr string) error {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "@") {
		for _, d := range cronDescriptors {
			if strings.EqualFold(e, d) {
				return nil
			}
		}
		return fmt.Errorf("%q is not a cron expression; %s", expr, cronHelp)
	}
	parts := strings.Fields(e)
	if len(parts) != 5 {
		return fmt.Errorf("%q has %d fields; %s", expr, len(parts), cronHelp)
	}
	for i, p := range parts {
		if err := cronFields[i].check(p); err != nil {
			return fmt.Errorf("%q: %v; %s", expr, err, cronHelp)
		}
	}
	_, err := ParseCron(expr)
	return err
}

// ParseCron parses a cron expression that CheckCron accepts with
// github.com/robfig/cron/v3 (cron.ParseStandard). Day of week 7 (Sunday)
// becomes 0, descriptors are case-insensitive. The schedule works in wall
// clock time: give Next a time whose fields are the wall clock of the
// schedule's zone (see flow.NextFire), not an instant.
func ParseCron(expr string) (cron.Schedule, error) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "@") {
		e = strings.ToLower(e)
		if e == "@every" || strings.HasPrefix(e, "@every ") {
			return nil, fmt.Errorf("%q is not a cron expression; %s", expr, cronHelp)
		}
	} else if parts := strings.Fields(e); len(parts) == 5 {
		parts[4] = sundayAsZero(parts[4])
		e = strings.Join(parts, " ")
	}
	if strings.Contains(e, "TZ=") {
		return nil, fmt.Errorf("%q: name the time zone in schedule.timezone, not in the expression; %s", expr, cronHelp)
	}
	s, err := cron.ParseStandard(e)
	if err != nil {
		return nil, fmt.Errorf("%q: %v; %s", expr, err, cronHelp)
	}
	return s, nil
}

// sundayAsZero rewrites day of week 7 (Sunday, as in Vixie cron) to 0, which
// is all robfig/cron knows: "7" and "sun-7" style ranges ending in 7.
func sundayAsZero(f string) string {
	items := strings.Split(f, ",")
	for i, it := range items {
		switch lo, hi, ok := strings.Cut(it, "-"); {
		case it == "7":
			items[i] = "0"
		case ok && hi == "7" && lo == "7":
			items[i] = "0"
		case ok && hi == "7":
			items[i] = lo + "-6,0"
		}
	}
	return strings.Join(items, ",")
}

func (f cronField) check(s string) error {
	for _, item := range strings.Split(s, ",") {
		rng, step, hasStep := strings.Cut(item, "/")
		if hasStep {
			n, err := strconv.Atoi(step)
			if err != nil || n < 1 || n > f.max {
				return fmt.Errorf("%s: step %q must be from 1 to %d", f.name, step, f.max)
			}
		}
		if rng == "*" {
			continue
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		a, err := f.value(lo)
		if err != nil {
			return err
		}
		if isRange {
			b, err := f.value(hi)
			if err != nil {
				return err
			}
			if b < a {
				return fmt.Errorf("%s: range %q runs backwards", f.name, rng)
			}
		}
	}
	return nil
}

func (f cronField) value(s string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return i + f.min, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%s: %q is not a number", f.name, s)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%s %d is out of range %d-%d", f.name, n, f.min, f.max)
	}
	return n, nil
}

// Budget parses the table's error budget, falling back to the plan-wide
// etl.error_budget share. ok is false when no budget applies.
func (p *Plan) Budget(t *Table) (count int64, share float64, ok bool, err error) {
	b := strings.TrimSpace(t.ErrorBudget)
	if b == "" {
		if p.ETL.ErrorBudget > 0 {
			return 0, p.ETL.ErrorBudget, true, nil
		}
		return 0, 0, false, nil
	}
	if strings.HasSuffix(b, "%") {
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(b, "%")), 64)
		if err != nil || f < 0 || f > 100 {
			return 0, 0, false, fmt.Errorf("%q is not a share; write e.g. 2%% (0 to 100)", b)
		}
		return 0, f / 100, true, nil
	}
	n, err := strconv.ParseInt(b, 10, 64)
	if err != nil || n < 0 {
		return 0, 0, false, fmt.Errorf("%q is not an error budget; write a row count (50) or a share (2%%)", b)
	}
	return n, 0, true, nil
}
