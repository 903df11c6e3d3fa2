package reports

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/lima-lake/lima/gates"

	"github.com/lima-lake/lima/ui/textsafe"
)

// Markdown renders the report for people. Cell values come from data, so
// they are escaped for Markdown tables.
func Markdown(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lima run %s\n\n", r.RunID)
	fmt.Fprintf(&b, "- **Status:** %s\n", statusWord(r.Status))
	if r.Headline != "" {
		fmt.Fprintf(&b, "- **Gate 4:** %s\n", md(r.Headline))
	}
	for _, h := range r.HeldBackMost {
		fmt.Fprintf(&b, "- **⚠ %s**\n", md(h))
	}
	fmt.Fprintf(&b, "- **Started:** %s  \n- **Finished:** %s (%s)\n", r.StartedAt.Format("2006-01-02 15:04:05 MST"),
		r.FinishedAt.Format("2006-01-02 15:04:05 MST"), r.FinishedAt.Sub(r.StartedAt).Round(1e6))
	if r.ScheduledAt != nil {
		fmt.Fprintf(&b, "- **Scheduled for:** %s (started by the scheduler)\n", r.ScheduledAt.Format("2006-01-02 15:04 MST"))
	}
	if r.Deadline != nil {
		fmt.Fprintf(&b, "- **Deadline:** %s — %s\n", r.Deadline.Format("2006-01-02 15:04 MST"), r.DeadlineBy)
	} else {
		b.WriteString("- **Deadline:** none set in the plan\n")
	}
	fmt.Fprintf(&b, "- **Plan hash:** `%s`\n\n", short(r.PlanHash))
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "> ! %s\n\n", md(w))
	}
	if r.Watch != nil && len(r.Watch.Files) > 0 {
		fmt.Fprintf(&b, "- **Micro-batch %s**\n\n", r.Watch.Line())
	}

	b.WriteString("## Tables\n\n| table | mode | status | read | loaded | held back | skipped | balanced | gate 4 | snapshot |\n|---|---|---|--:|--:|--:|--:|---|---|---|\n")
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d | %s | %s | %d |\n", md(t.Name), t.Mode, t.Status, t.RowsRead, t.RowsLoaded,
			t.RowsQuarantined, t.RowsSkipped, yesNo(t.Balanced), mark(t.Reconciliation), t.SnapshotID)
	}
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "\n## %s\n\n", md(t.Name))
		if t.Error != "" {
			fmt.Fprintf(&b, "**Error:** %s\n\n", md(t.Error))
		}
		fmt.Fprintf(&b, "Load `%s`, watermark %s → %s.\n\n", t.LoadID, orDash(t.WatermarkBefore), orDash(t.WatermarkAfter))
		if t.Seconds > 0 {
			b.WriteString(PhasesLine(t.Seconds, t.Phases) + "\n\n")
		}
		if t.ReadNote != "" {
			fmt.Fprintf(&b, "Source read: %s.\n\n", md(t.ReadNote))
		}
		if u := t.Upsert; u != nil {
			fmt.Fprintf(&b, "Upsert: read from %s (lookback %s); %d inserted, %d updated, %d late rows caught by the lookback",
				orDash(md(u.ReadFrom)), orDash(md(u.Lookback)), u.Inserted, u.Updated, u.LateRows)
			if u.DeletesChecked {
				fmt.Fprintf(&b, "; keys compared with the source: %d deleted", u.Deleted)
			}
			if u.SoftDeleted > 0 {
				fmt.Fprintf(&b, "; %d deleted as marked at the source", u.SoftDeleted)
			}
			if u.DeleteNote != "" {
				fmt.Fprintf(&b, "; %s", md(u.DeleteNote))
			}
			fmt.Fprintf(&b, "; %d lake rows replaced or removed.\n\n", u.RowsRemoved)
		}
		if len(t.SkippedBy) > 0 {
			b.WriteString("Skipped rows: ")
			var parts []string
			for _, k := range sortedInt(t.SkippedBy) {
				parts = append(parts, fmt.Sprintf("%s %d", k, t.SkippedBy[k]))
			}
			b.WriteString(strings.Join(parts, ", ") + ".\n\n")
		}
		if len(t.ControlTotals) > 0 {
			b.WriteString("| control total | source | lake | variance |\n|---|--:|--:|--:|\n")
			cols := make([]string, 0, len(t.ControlTotals))
			for c := range t.ControlTotals {
				cols = append(cols, c)
			}
			sort.Strings(cols)
			for _, c := range cols {
				ct := t.ControlTotals[c]
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(c), ct.Source, ct.Target, ct.Variance)
			}
			b.WriteString("\n")
		}
		if len(t.Checks) > 0 {
			fmt.Fprintf(&b, "Checks: %s.\n\n", ChecksLine(t.Checks))
			b.WriteString("| check | result | evidence |\n|---|---|---|\n")
			for _, c := range t.Checks {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", md(c.Name), mark(c.Status), md(c.Detail))
			}
			b.WriteString("\n")
		}
		if len(t.Normalizations) > 0 {
			b.WriteString("| column | fix | rows |\n|---|---|--:|\n")
			for _, n := range t.Normalizations {
				fmt.Fprintf(&b, "| %s | %s | %d |\n", md(n.Column), md(n.Fix), n.Count)
			}
			b.WriteString("\n")
		}
		if len(t.Samples) > 0 {
			b.WriteString("Sample rows, source vs lake:\n\n")
			for _, s := range t.Samples {
				fmt.Fprintf(&b, "- %s %s: %s\n", mark(passIf(s.Match)), md(s.Locator), md(sourceText(s)))
				if !s.Match {
					fmt.Fprintf(&b, "  - lake: %s\n", md(rowText(s.Lake)))
				}
			}
			b.WriteString("\n")
		}
		if len(t.Exceptions) > 0 {
			b.WriteString("| held back | where | rule | reason | owner |\n|---|---|---|---|---|\n")
			for _, e := range t.Exceptions {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", e.Level, md(e.Locator), md(e.Rules), md(e.Reason), md(e.Owner))
			}
			if int64(len(t.Exceptions)) < t.RowsQuarantined {
				fmt.Fprintf(&b, "\n…and %d more; see `lima-tui exceptions`.\n", t.RowsQuarantined-int64(len(t.Exceptions)))
			}
			b.WriteString("\n")
		}
	}
	if len(r.Marts) > 0 {
		b.WriteString("\n## Marts\n\n| mart | table | status | rows | from fact rows | gate 4 |\n|---|---|---|--:|--:|---|\n")
		for _, m := range r.Marts {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s |\n", md(m.Name), md(m.Table), m.Status, m.Rows, m.FactRows, mark(m.Reconciliation))
		}
		for _, m := range r.Marts {
			if m.Error != "" {
				fmt.Fprintf(&b, "\n**%s:** %s\n", md(m.Name), md(m.Error))
			}
			for _, c := range m.Checks {
				if c.Status == "fail" {
					fmt.Fprintf(&b, "\n- %s %s: %s", mark(c.Status), md(c.Name), md(c.Detail))
				}
			}
		}
		b.WriteString("\n\n")
	}
	b.WriteString("## Exceptions\n\n")
	fmt.Fprintf(&b, "%s.\n\n", HeldBack(r.Exceptions, nil))
	for _, k := range sortedInt(r.Exceptions.ByOwner) {
		fmt.Fprintf(&b, "- owner %s: %d\n", md(k), r.Exceptions.ByOwner[k])
	}
	for _, k := range sortedInt(r.Exceptions.ByRule) {
		fmt.Fprintf(&b, "- rule %s: %d\n", md(k), r.Exceptions.ByRule[k])
	}
	if q := r.Exceptions.Queue; q != nil {
		fmt.Fprintf(&b, "\nThe whole queue: %d unresolved, %d overdue.\n", q.Unresolved, q.Overdue)
		for _, k := range sortedInt(q.OverdueByOwner) {
			fmt.Fprintf(&b, "- ! overdue for %s: %d\n", md(k), q.OverdueByOwner[k])
		}
	}
	if len(r.Notifications) > 0 {
		b.WriteString("\n## Notifications\n\n")
		for _, n := range r.Notifications {
			fmt.Fprintf(&b, "- %s via %s: %d exceptions — %s %s\n", md(n.Owner), md(n.Channel), n.Exceptions, n.Status, md(n.Error))
		}
	}
	return b.String()
}

// sourceText is a sample's source row: each value as cleaned, and beside
// it the text as read where cleaning changed it (calibrated_on=2026-04-03
// (read "03/04/2026")).
func sourceText(s gates.SamplePair) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.Source)) {
		p := k + "=" + s.Source[k]
		if r, ok := s.Raw[k]; ok {
			p += fmt.Sprintf(" (read %q)", r)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func rowText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

func sortedInt(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func statusWord(s string) string {
	switch s {
	case StatusOK:
		return "✓ ok"
	case StatusReconciliationFailed:
		return "✗ loaded, but reconciliation failed"
	}
	return "✗ failed"
}

func mark(s string) string {
	switch s {
	case "pass":
		return "✓ pass"
	case "fail":
		return "✗ fail"
	case "warn":
		return "! warn"
	}
	return "– " + s
}

func yesNo(b bool) string {
	if b {
		return "✓ yes"
	}
	return "✗ no"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// md escapes text for a Markdown table cell and makes control characters
// visible.
func md(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '|':
			b.WriteString(`\|`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '`', r == '*', r == '<', r == '>', r == '[', r == ']':
			b.WriteByte('\\')
			b.WriteRune(r)
		case textsafe.Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// PhasesLine says where a table's seconds went, e.g. "Time: 4.12 s — open
// 0.10, read 1.20, …; the Parquet writer was busy 1.05 s beside the reader."
func PhasesLine(seconds float64, p Phases) string {
	parts := []string{}
	for _, ph := range []struct {
		name string
		s    float64
	}{{"open", p.Open}, {"raw landing", p.Land}, {"read", p.Read}, {"cast & check", p.CastCheck}, {"waiting on the writer", p.WriteWait},
		{"other staging", p.StageOther}, {"commit", p.Commit}, {"gate 4", p.Gate4}} {
		if ph.s >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f", ph.name, ph.s))
		}
	}
	line := fmt.Sprintf("Time: %.2f s", seconds)
	if len(parts) > 0 {
		line += " — " + strings.Join(parts, ", ")
	}
	if p.WriteBusy >= 0.005 {
		line += fmt.Sprintf("; the Parquet writer was busy %.2f s beside the reader", p.WriteBusy)
	}
	return line + "."
}

// WholeFiles counts the exceptions that hold back a whole file: "1 whole
// file", "3 whole files".
func WholeFiles(n int64) string {
	if n == 1 {
		return "1 whole file"
	}
	return fmt.Sprintf("%d whole files", n)
}

// HeldBack says what a run held back as exceptions, in the words every
// output uses (the run summary, report.md, gate 4's screen, the generated
// docs): "12 rows held back as exceptions", "12 rows and 1 whole file
// held back as 13 exceptions", "1 whole file held back as an exception".
// A row exception holds back one row — the rows of the tables' "held
// back" column —; a file exception holds back the whole file, whose rows
// were not read. num formats a count (nil: plain).
func HeldBack(ex Exceptions, num func(int64) string) string {
	if num == nil {
		num = func(n int64) string { return fmt.Sprint(n) }
	}
	rows := ex.Total - ex.Files
	var parts []string
	if rows > 0 || ex.Files == 0 {
		w := "rows"
		if rows == 1 {
			w = "row"
		}
		parts = append(parts, num(rows)+" "+w)
	}
	if ex.Files > 0 {
		w := "whole files"
		if ex.Files == 1 {
			w = "whole file"
		}
		parts = append(parts, num(ex.Files)+" "+w)
	}
	s := strings.Join(parts, " and ") + " held back as "
	switch {
	case ex.Total == 1:
		return s + "an exception"
	case ex.Files == 0:
		return s + "exceptions"
	}
	return s + num(ex.Total) + " exceptions"
}

// CheckCounts counts checks by outcome, the one count gate 4's screen and
// report.md give: passed, warned, failed, and all of them (skipped
// checks included in the total).
func CheckCounts(fs []gates.Finding) (pass, warn, fail, total int) {
	for _, f := range fs {
		switch f.Status {
		case gates.Pass:
			pass++
		case gates.Warn:
			warn++
		case gates.Fail:
			fail++
		}
	}
	return pass, warn, fail, len(fs)
}

// ChecksLine is "7 of 8 checks pass, 1 warned" — CheckCounts in words.
func ChecksLine(fs []gates.Finding) string {
	pass, warn, fail, total := CheckCounts(fs)
	s := fmt.Sprintf("%d of %d checks pass", pass, total)
	if total == 1 {
		s = fmt.Sprintf("%d of 1 check passes", pass)
	}
	if fail > 0 {
		s += fmt.Sprintf(", %d failed", fail)
	}
	if warn > 0 {
		s += fmt.Sprintf(", %d warned", warn)
	}
	if skip := total - pass - warn - fail; skip > 0 {
		s += fmt.Sprintf(", %d not made", skip)
	}
	return s
}
