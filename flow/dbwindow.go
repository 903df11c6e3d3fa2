package flow

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// checkTableWindows refuses a run that includes a table (tables: the
// run's selection, empty for all) outside that table's own run window
// (tables.<name>.source.window, in the schedule's time zone), unless
// forced. Nothing is read or written; the message names the tables, when
// their windows open, and how to run the others now.
func checkTableWindows(p *plan.Plan, tables []string, now time.Time, force bool) error {
	if force {
		return nil
	}
	var closed, others []string
	var first time.Time
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if t == nil || t.Source == nil || t.IsMart() || (len(tables) > 0 && !slices.Contains(tables, name)) {
			continue
		}
		if t.Source.Window == "" {
			others = append(others, name)
			continue
		}
		w, ok, err := ScheduleWindow(plan.Schedule{Window: t.Source.Window, Timezone: p.Schedule.Timezone})
		if err != nil {
			return fmt.Errorf("%w: tables.%s.source.window: %w", ErrUsage, name, err)
		}
		if !ok || w.Contains(now) {
			others = append(others, name)
			continue
		}
		open := w.NextOpen(now)
		if first.IsZero() || open.Before(first) {
			first = open
		}
		closed = append(closed, fmt.Sprintf("%s (window %s, opens %s)", name, w, open.Format("2006-01-02 15:04 MST")))
	}
	if len(closed) == 0 {
		return nil
	}
	hint := "lima-tui run --force"
	if len(others) > 0 {
		hint = "lima-tui run --table " + strings.Join(others, " --table ") + " (the other tables), or --force"
	}
	return fmt.Errorf("%w: %w: large reads of %s run only inside their windows (next opening in %s); nothing was read or written. To load now anyway: %s",
		ErrPrecondition, ErrOutsideWindow, strings.Join(closed, ", "), first.Sub(now).Round(time.Minute), hint)
}
