package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// ErrOutsideWindow: the run was refused because it is outside the plan's run
// window (schedule.window); nothing was read or written. It wraps
// ErrPrecondition (exit 4).
var ErrOutsideWindow = errors.New("outside the run window")

// wall is t's wall clock in loc, expressed as a UTC time with the same fields.
func wall(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// NextFire is the first time strictly after after at which the schedule's
// cron expression fires, in the schedule's time zone.
//
// The expression is matched against the wall clock of the zone, so a daily
// job fires once a day across a change of daylight saving time: a fire time
// that does not exist (02:30 on the night the clocks jump from 02:00 to
// 03:00) runs at the same distance after the jump (03:30), and a fire time
// that exists twice (02:30 on the night the clocks go back from 03:00 to
// 02:00) runs only at its first occurrence.
func NextFire(s plan.Schedule, after time.Time) (time.Time, error) {
	if s.Cron == "" {
		return time.Time{}, fmt.Errorf("%w: the plan has no schedule.cron; add one, e.g. cron: \"0 2 * * *\"", ErrUsage)
	}
	loc, err := s.Location()
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: schedule.timezone: %w", ErrUsage, err)
	}
	cs, err := plan.ParseCron(s.Cron)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: schedule.cron: %w", ErrUsage, err)
	}
	w := wall(after, loc)
	for range 1000 {
		n := cs.Next(w)
		if n.IsZero() {
			break
		}
		t := time.Date(n.Year(), n.Month(), n.Day(), n.Hour(), n.Minute(), 0, 0, loc)
		if wall(t, loc) != n {
			// In the gap of a jump forward: the time is as far after the
			// jump as it would have been after the old offset.
			_, before := t.Add(-6 * time.Hour).Zone()
			t = n.Add(-time.Duration(before) * time.Second).In(loc)
		}
		if e, ok := earlierTwin(t); ok {
			t = e
		}
		if t.After(after) {
			return t, nil
		}
		w = n
	}
	return time.Time{}, fmt.Errorf("%w: schedule.cron %q never fires", ErrUsage, s.Cron)
}

// earlierTwin is the first occurrence of t's wall clock when the clocks went
// back shortly before t, so that it occurred twice.
func earlierTwin(t time.Time) (time.Time, bool) {
	_, off := t.Zone()
	_, earlier := t.Add(-3 * time.Hour).Zone()
	if earlier <= off {
		return t, false
	}
	e := t.Add(-time.Duration(earlier-off) * time.Second)
	return e, wall(e, t.Location()) == wall(t, t.Location())
}

// Window is the run window of a schedule, in its time zone.
type Window struct {
	Start, End plan.Clock
	Loc        *time.Location
	Text       string // as written in platform.yaml
}

// ScheduleWindow reads schedule.window; ok is false when the plan sets none.
func ScheduleWindow(s plan.Schedule) (w Window, ok bool, err error) {
	if s.Window == "" {
		return Window{}, false, nil
	}
	loc, err := s.Location()
	if err != nil {
		return Window{}, false, err
	}
	start, end, err := plan.ParseWindow(s.Window)
	if err != nil {
		return Window{}, false, err
	}
	return Window{Start: start, End: end, Loc: loc, Text: s.Window}, true, nil
}

// Contains reports whether t is inside the window: from Start (inclusive) to
// End (exclusive), crossing midnight when End is before Start.
func (w Window) Contains(t time.Time) bool {
	l := t.In(w.Loc)
	m := l.Hour()*60 + l.Minute()
	s, e := w.Start.Minutes(), w.End.Minutes()
	if s < e {
		return m >= s && m < e
	}
	return m >= s || m < e
}

// NextOpen is the next time at or after t when the window opens (t itself
// when t is inside it).
func (w Window) NextOpen(t time.Time) time.Time {
	if w.Contains(t) {
		return t
	}
	l := t.In(w.Loc)
	for d := 0; d <= 2; d++ {
		o := time.Date(l.Year(), l.Month(), l.Day()+d, w.Start.Hour, w.Start.Minute, 0, 0, w.Loc)
		if !o.Before(t) {
			return o
		}
	}
	return t // unreachable: the window opens every day
}

// String is "01:00-05:00 Europe/Berlin".
func (w Window) String() string { return w.Text + " " + w.Loc.String() }

// checkWindow refuses a run outside the plan's run window unless forced.
func checkWindow(p *plan.Plan, now time.Time, force bool) error {
	w, ok, err := ScheduleWindow(p.Schedule)
	if err != nil {
		return fmt.Errorf("%w: schedule.window: %w", ErrUsage, err)
	}
	if !ok || force || w.Contains(now) {
		return nil
	}
	open := w.NextOpen(now)
	return fmt.Errorf("%w: %w: large reads run only inside the window %s; it is %s there now; the window opens next at %s (in %s); nothing was read or written. To load now anyway: lima-tui run --force",
		ErrPrecondition, ErrOutsideWindow, w, now.In(w.Loc).Format("15:04"), open.Format("2006-01-02 15:04 MST"), open.Sub(now).Round(time.Minute))
}

// Scheduler runs a plan on its schedule in the foreground: it waits for the
// next fire time, runs the plan with that time as RunOptions.ScheduledAt,
// reports the outcome and waits again.
type Scheduler struct {
	// Load reads the plan before each wait, so an edited platform.yaml is
	// picked up at the next fire (and a changed, unapproved plan refused).
	Load func() (*plan.Plan, error)
	// Options is the template of every run; Plan and ScheduledAt are set
	// per run.
	Options RunOptions
	// Now and Sleep are the clock; nil means the real one.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Run is flow.Run unless set (tests).
	Run func(ctx context.Context, o RunOptions) (*Outcome, error)
	// Waiting is told the next fire time before each wait; Done the result
	// of each run. Either may be nil.
	Waiting func(p *plan.Plan, next time.Time)
	Done    func(fire time.Time, out *Outcome, err error)
}

// SleepContext sleeps for d or until ctx is done.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Loop runs the schedule until ctx is done (it returns nil then) or, with
// once, after the first run (returning that run's outcome and error). A
// failed run does not stop the loop; an unreadable plan does.
func (s *Scheduler) Loop(ctx context.Context, once bool) (*Outcome, error) {
	now, sleep, runFn := s.Now, s.Sleep, s.Run
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = SleepContext
	}
	if runFn == nil {
		runFn = Run
	}
	var last time.Time
	for {
		p, err := s.Load()
		if err != nil {
			return nil, err
		}
		after := now()
		if after.Before(last) {
			after = last // a clock set back must not repeat a fire time
		}
		next, err := NextFire(p.Schedule, after)
		if err != nil {
			return nil, err
		}
		if s.Waiting != nil {
			s.Waiting(p, next)
		}
		// Sleep in steps, so a clock that jumps (suspend, NTP) is noticed.
		for t := now(); t.Before(next); t = now() {
			if err := sleep(ctx, min(next.Sub(t), time.Minute)); err != nil {
				if ctx.Err() != nil {
					return nil, nil
				}
				return nil, err
			}
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		last = next
		o := s.Options
		o.Plan, o.ScheduledAt, o.Now = p, next, now
		out, err := runFn(ctx, o)
		if s.Done != nil {
			s.Done(next, out, err)
		}
		if once {
			return out, err
		}
	}
}
