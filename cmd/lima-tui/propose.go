package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/ui"
)

func cmdPropose(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("propose", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan")
	write := fs.Bool("write", false, "record the findings in data_quality_issues (and columns of tables that declare none) in platform.yaml")
	rows := fs.Int64("rows", 100_000, "profile at most this many data rows per table")
	asJSON := fs.Bool("json", false, "JSON output")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	ws := flow.Workspace{Dir: filepath.Dir(*planPath)}
	var profiles []*run.TableProfile
	changed := false
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if t.Type != "" && t.Type != "base" {
			continue
		}
		tp, err := run.Profile(ctx, run.Options{Workspace: ws.Dir, Plan: p}, name, *rows)
		if err != nil {
			return fail(stderr, err)
		}
		profiles = append(profiles, tp)
		if *write {
			if run.ProposeColumns(t, tp) {
				changed = true
			}
			for _, c := range tp.Columns {
				for _, f := range c.Findings() {
					q := plan.QualityIssue{Table: name, Column: sanitizeColumn(t, c.Name), Issue: f.Issue, Impact: f.Impact, Fix: f.Fix}
					if !hasIssue(p.DataQualityIssues, q) {
						p.DataQualityIssues = append(p.DataQualityIssues, q)
						changed = true
					}
				}
			}
		}
	}
	if *asJSON {
		b, _ := json.Marshal(profiles)
		fmt.Fprintln(stdout, string(b))
	} else {
		for _, tp := range profiles {
			printProfile(stdout, tp)
		}
	}
	if *write && changed {
		p.Platform.Updated = time.Now().UTC().Format(time.RFC3339)
		if err := p.Write(*planPath); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stderr, "lima: findings written to %s; the plan changed, so review it and approve the data model again: lima-tui approve --gate data-model --by NAME\n", ui.Sanitize(*planPath))
	}
	return exitOK
}

func sanitizeColumn(t *plan.Table, name string) string {
	for _, c := range t.Columns {
		if c.Name == name || c.SourceName == name {
			return c.Name
		}
	}
	return ""
}

func hasIssue(list []plan.QualityIssue, q plan.QualityIssue) bool {
	for _, x := range list {
		if x.Table == q.Table && x.Column == q.Column && x.Issue == q.Issue {
			return true
		}
	}
	return false
}

func printProfile(w io.Writer, tp *run.TableProfile) {
	note := ""
	if tp.Sampled {
		note = " (sampled)"
	}
	fmt.Fprintf(w, "\n%s — %d data rows profiled%s from %d file(s)\n", ui.Sanitize(tp.Table), tp.Rows, note, len(tp.Files))
	for _, f := range tp.Files {
		if f.Status != "read" {
			fmt.Fprintf(w, "  ✗ %s: %s\n", ui.Sanitize(f.Name), ui.Sanitize(f.Error))
		}
	}
	fmt.Fprintf(w, "  %-18s %-15s %5s %6s %9s  %-28s %s\n", "column", "type", "conf", "nulls", "distinct", "min … max", "samples")
	for _, c := range tp.Columns {
		nulls := 0
		for _, n := range c.NullTokens {
			nulls += n
		}
		mm := ""
		if c.Min != "" {
			mm = c.Min + " … " + c.Max
		}
		fmt.Fprintf(w, "  %-18s %-15s %4.0f%% %6d %9d  %-28s %s\n", ui.Sanitize(c.Name), c.Inferred.Type.String(), 100*c.Inferred.Confidence, nulls, c.Distinct,
			ui.Sanitize(clip(mm, 28)), ui.Sanitize(clip(strings.Join(c.Samples, " | "), 40)))
		var formats []string
		for f, n := range c.Formats {
			formats = append(formats, fmt.Sprintf("%s ×%d", f, n))
		}
		sort.Strings(formats)
		if len(formats) > 0 {
			fmt.Fprintf(w, "  %-18s formats: %s\n", "", ui.Sanitize(strings.Join(formats, ", ")))
		}
		for _, f := range c.Findings() {
			fmt.Fprintf(w, "  %-18s ! %s → %s\n", "", ui.Sanitize(f.Issue), ui.Sanitize(f.Fix))
		}
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
