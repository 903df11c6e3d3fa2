package reports

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/lima-lake/lima/engine/plan"
)

// glueReferenceYear is the year whose time zone rules GlueCron checks the
// fire dates against (a pure function cannot ask the clock).
const glueReferenceYear = 2026

const starBit = uint64(1) << 63

var glueDays = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

// GlueCron converts a five-field cron expression (as in schedule.cron, also
// @daily and the like) that fires in tz to the six-field expression of an
// AWS Glue trigger, cron(Minutes Hours Day-of-month Month Day-of-week Year),
// which fires in UTC and needs ? in one of the day fields.
//
// When tz has one offset on every fire date (UTC, Asia/Seoul) the times are
// exact, shifted to UTC with the day of week moved when the UTC time falls on
// another day. When the offset changes over the year (daylight saving time:
// Europe/Berlin) the expression uses the standard-time offset and note says
// at what local time it fires while summer time applies. Schedules Glue
// cannot express (day of month and day of week both restricted; a day of
// month or month restriction that moves to another day in UTC) are errors.
func GlueCron(cronSpec string, tz *time.Location) (string, string, error) {
	if tz == nil {
		tz = time.UTC
	}
	parsed, err := plan.ParseCron(cronSpec)
	if err != nil {
		return "", "", err
	}
	s, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return "", "", fmt.Errorf("%q: not a calendar schedule", cronSpec)
	}
	domStar, dowStar, monthStar := s.Dom&starBit != 0, s.Dow&starBit != 0, s.Month&starBit != 0
	if !domStar && !dowStar {
		return "", "", fmt.Errorf("%q fires when the day of month OR the day of week matches; a Glue trigger takes one of them (the other is ?): use two triggers", cronSpec)
	}

	// The offsets of tz on the fire dates of the reference year.
	offsets := map[int]bool{} // seconds east of UTC -> is daylight saving time
	first := lowest(s.Minute)
	for d := time.Date(glueReferenceYear, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == glueReferenceYear; d = d.AddDate(0, 0, 1) {
		if !has(s.Month, int(d.Month())) || !has(s.Dom, d.Day()) || !has(s.Dow, int(d.Weekday())) {
			continue
		}
		for h := 0; h < 24; h++ {
			if has(s.Hour, h) {
				t := time.Date(d.Year(), d.Month(), d.Day(), h, first, 0, 0, tz)
				_, off := t.Zone()
				offsets[off] = t.IsDST()
			}
		}
	}
	off, note := 0, ""
	switch {
	case len(offsets) == 1:
		for o := range offsets {
			off = o
		}
		if off != 0 {
			note = fmt.Sprintf("%s is UTC%s on every fire date; Glue triggers run in UTC, so the times are shifted by %s", tz, offsetText(off), offsetText(-off))
		}
	case len(offsets) > 1:
		var std, other []int
		for o, dst := range offsets {
			if dst {
				other = append(other, o)
			} else {
				std = append(std, o)
			}
		}
		sort.Ints(std)
		sort.Ints(other)
		if len(std) == 0 {
			std, other = other[:1], other[1:]
		}
		off = std[0]
		var alt []string
		for _, o := range append(std[1:], other...) {
			alt = append(alt, "UTC"+offsetText(o))
		}
		h, m := lowest(s.Hour), first
		later := (h*60 + m + (append(std[1:], other...)[0]-off)/60 + 1440) % 1440
		note = fmt.Sprintf("%s changes its offset during the year (daylight saving time): UTC%s in standard time, %s otherwise. Glue triggers run in UTC only, so this trigger keeps standard time; while %s applies it fires later by the difference (%02d:%02d local becomes %02d:%02d). Move the trigger at each change, or let lima-tui schedule run the plan in its own zone",
			tz, offsetText(off), strings.Join(alt, ", "), strings.Join(alt, ", "), h, m, later/60, later%60)
	}

	// Shift every (hour, minute) to UTC.
	shift := -off / 60 // minutes
	var mins, hours uint64
	pairs := map[[2]int]bool{}
	dayShifts := map[int]bool{}
	for h := 0; h < 24; h++ {
		if !has(s.Hour, h) {
			continue
		}
		for m := 0; m < 60; m++ {
			if !has(s.Minute, m) {
				continue
			}
			total := h*60 + m + shift
			ds := floorDiv(total, 1440)
			total -= ds * 1440
			uh, um := total/60, total%60
			pairs[[2]int{uh, um}] = true
			hours |= 1 << uh
			mins |= 1 << um
			dayShifts[ds] = true
		}
	}
	if bits.OnesCount64(hours)*bits.OnesCount64(mins) != len(pairs) {
		return "", "", fmt.Errorf("%q in %s: the UTC times are not one set of minutes for one set of hours, which a Glue trigger needs; choose times on whole hours of UTC", cronSpec, tz)
	}
	dow := s.Dow &^ starBit
	if len(dayShifts) > 1 || !dayShifts[0] {
		if !domStar || !monthStar {
			return "", "", fmt.Errorf("%q in %s: in UTC it fires on another calendar day, which a Glue trigger cannot express with a day-of-month or month restriction; use UTC times that stay on the same day", cronSpec, tz)
		}
		if !dowStar {
			if len(dayShifts) > 1 {
				return "", "", fmt.Errorf("%q in %s: in UTC some of its times fall on another day of the week than others; use one trigger per day change", cronSpec, tz)
			}
			for ds := range dayShifts {
				dow = rotateDays(dow, ds)
			}
		}
	}

	f := []string{
		field(mins, 0, 59, true, nil),
		field(hours, 0, 23, true, nil),
		"*", field(s.Month&^starBit, 1, 12, false, nil), "?", "*",
	}
	if !domStar {
		f[2] = field(s.Dom&^starBit, 1, 31, false, nil)
	} else if !dowStar {
		f[2], f[4] = "?", field(dow, 0, 6, false, glueDays)
	}
	return "cron(" + strings.Join(f, " ") + ")", note, nil
}

func has(b uint64, v int) bool { return b&(1<<uint(v)) != 0 }

func lowest(b uint64) int { return bits.TrailingZeros64(b &^ starBit) }

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func rotateDays(dow uint64, by int) uint64 {
	var out uint64
	for d := 0; d < 7; d++ {
		if has(dow, d) {
			out |= 1 << uint(((d+by)%7+7)%7)
		}
	}
	return out
}

// offsetText is "+09:00" for 9h east of UTC.
func offsetText(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d:%02d", sign, sec/3600, sec%3600/60)
}

// field writes the values set in b: * when all of lo..hi, start/step for a
// progression that runs to the end (when steps), ranges and lists otherwise.
func field(b uint64, lo, hi int, steps bool, names []string) string {
	var vs []int
	for v := lo; v <= hi; v++ {
		if has(b, v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == hi-lo+1 {
		return "*"
	}
	name := func(v int) string {
		if names != nil {
			return names[v]
		}
		return strconv.Itoa(v)
	}
	if steps && len(vs) >= 3 {
		step := vs[1] - vs[0]
		ok := step > 1 && vs[len(vs)-1]+step > hi
		for i := 2; ok && i < len(vs); i++ {
			ok = vs[i]-vs[i-1] == step
		}
		if ok {
			return name(vs[0]) + "/" + strconv.Itoa(step)
		}
	}
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, name(vs[i])+"-"+name(vs[j]))
		case j > i:
			parts = append(parts, name(vs[i]), name(vs[j]))
		default:
			parts = append(parts, name(vs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// archSchedule is the ARCHITECTURE.md section on when the plan runs: the
// plan's cron and, for an AWS deployment, the equivalent Glue trigger
// (GlueCron), with its caveat or the reason one trigger cannot express it.
func archSchedule(p *plan.Plan) string {
	var b strings.Builder
	b.WriteString("## Schedule and the AWS Glue trigger\n\n")
	sc := p.Schedule
	if sc.Cron == "" {
		b.WriteString("Not scheduled: runs start by hand (`lima-tui run`). Set schedule.cron in platform.yaml to get the equivalent AWS Glue trigger here.\n")
		return b.String()
	}
	tzName := sc.Timezone
	if tzName == "" {
		tzName = "UTC"
	}
	fmt.Fprintf(&b, "- Plan schedule: `%s` in %s (`lima-tui schedule` runs it in that zone)\n", md(sc.Cron), md(tzName))
	loc, err := time.LoadLocation(tzName)
	if err != nil {
		fmt.Fprintf(&b, "- AWS Glue trigger: none — the time zone %s is unknown (%s)\n", md(tzName), md(err.Error()))
		return b.String()
	}
	glue, note, err := GlueCron(sc.Cron, loc)
	if err != nil {
		fmt.Fprintf(&b, "- AWS Glue trigger: cannot be one trigger — %s\n", md(err.Error()))
		return b.String()
	}
	fmt.Fprintf(&b, "- AWS Glue trigger (UTC): `%s`\n", glue)
	if note != "" {
		fmt.Fprintf(&b, "- Note: %s\n", md(note))
	}
	b.WriteString("\n```sh\naws glue create-trigger --name " + md(p.Platform.Prefix) + "-nightly --type SCHEDULED \\\n  --schedule '" + glue + "' --actions JobName=<the job that runs lima-tui run> --start-on-creation\n```\n")
	return b.String()
}
