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
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// cmdPropose is gate 3 from the command line. A plan without tables (after
// lima-tui init) gets the proposed data model: tables from the discovered
// files, types, keys, partitions, join keys and marts, each decision with
// its evidence; --write records it. A plan with tables keeps them: its
// tables are profiled, its marts checked against their grain, and --write
// only adds findings to data_quality_issues.
func cmdPropose(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("propose", stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan")
	write := fs.Bool("write", false, "write the proposal into a plan without tables, or record the findings in data_quality_issues")
	rows := fs.Int64("rows", 100_000, "read at most this many data rows per table")
	asJSON := fs.Bool("json", false, "JSON output")
	var sets multi
	fs.Var(&sets, "set", "edit the model as gate 3's findings suggest, e.g. orders.order_date.format=dd/MM/yyyy, .formats=a,b, .type=decimal(12,2), .currency=KRW, .required=true, .references=t.col, .name=new_name (renames the column, its source name kept), orders.key=a,b, orders.partition=month(col)|none, orders.name=new_name (renames the table) (repeatable; with --write recorded in the plan)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lima-tui propose: unexpected argument %q\n", ui.Sanitize(fs.Arg(0)))
		return exitUsage
	}
	if *rows < 0 {
		// A negative sample profiled nothing and proposed from no data.
		fmt.Fprintf(stderr, "lima-tui propose: --rows %d: give how many data rows to read per table, e.g. --rows 100000\n", *rows)
		return exitUsage
	}
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	ws := flow.Workspace{Dir: filepath.Dir(*planPath)}
	if len(p.Tables) == 0 {
		return proposeModel(ctx, p, ws, *planPath, *rows, *write, *asJSON, sets, stdout, stderr)
	}
	if len(sets) > 0 {
		return editModel(ctx, p, ws, *planPath, *write, sets, stdout, stderr)
	}
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
	grain := gates.ValidateGrain(p)
	if *write {
		for _, f := range grain {
			if f.Status != gates.Fail {
				continue
			}
			table, _, _ := strings.Cut(strings.TrimPrefix(f.Name, "mart "), ":")
			q := plan.QualityIssue{Table: table, Issue: f.Detail, Impact: "a measure counted more than once, or a total that means nothing", Fix: f.Fix}
			if p.Tables[table] != nil && !hasIssue(p.DataQualityIssues, q) {
				p.DataQualityIssues = append(p.DataQualityIssues, q)
				changed = true
			}
		}
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			Profiles []*run.TableProfile `json:"profiles"`
			Grain    []gates.Finding     `json:"grain"`
		}{profiles, grain})
		fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
	} else {
		for _, tp := range profiles {
			printProfile(stdout, tp)
		}
		if len(grain) > 0 {
			fmt.Fprintf(stdout, "\nmarts: measures at their grain\n")
			printGate3Findings(stdout, grain)
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

// proposeModel proposes the data model of a plan without tables.
func proposeModel(ctx context.Context, p *plan.Plan, ws flow.Workspace, planPath string, rows int64, write, asJSON bool, sets []string, stdout, stderr io.Writer) int {
	pr, err := gates.ProposeDataModel(ctx, p, gates.ProposeOptions{Workspace: ws.Dir, MaxRows: rows})
	if err != nil {
		return fail(stderr, err)
	}
	withTables := *p // the plan's lake, the proposal's tables
	withTables.Tables = pr.Plan.Tables
	lake, err := lakeFor(ctx, ws, &withTables, sets)
	if err != nil {
		return editRefused(stderr, err)
	}
	edits, err := pr.ApplyEdits(sets, lake)
	if err != nil {
		return editRefused(stderr, err)
	}
	if asJSON {
		b, _ := json.Marshal(struct {
			Tables   map[string]*plan.Table `json:"tables"`
			Findings []gates.Finding        `json:"findings"`
		}{pr.Plan.Tables, pr.Findings})
		fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
	} else {
		printProposal(stdout, pr)
		printEdits(stdout, edits)
	}
	for _, h := range proposalHeadlines(pr) {
		fmt.Fprintf(stderr, "lima: ⚠ %s\n", ui.Sanitize(h))
	}
	if len(pr.Plan.Tables) == 0 {
		fmt.Fprintln(stderr, "lima: no tables to propose: the sources hold no files Lima reads (see the findings)")
		return exitOK
	}
	if !write {
		fmt.Fprintf(stderr, "lima: nothing written; to record this data model: lima-tui propose --plan %s --write\n", ui.Sanitize(planPath))
		return exitOK
	}
	pr.Apply(p)
	for _, q := range pr.Issues {
		if !hasIssue(p.DataQualityIssues, q) {
			p.DataQualityIssues = append(p.DataQualityIssues, q)
		}
	}
	// The profile's findings of each column, as propose records them for a
	// plan with tables.
	for name, ev := range pr.Evidence {
		t := p.Tables[name]
		for _, c := range ev.Columns {
			for _, f := range c.Profile.Findings() {
				q := plan.QualityIssue{Table: name, Column: sanitizeColumn(t, c.Profile.Name), Issue: f.Issue, Impact: f.Impact, Fix: f.Fix}
				if !hasIssue(p.DataQualityIssues, q) {
					p.DataQualityIssues = append(p.DataQualityIssues, q)
				}
			}
		}
	}
	sort.SliceStable(p.DataQualityIssues, func(i, j int) bool { return p.DataQualityIssues[i].Table < p.DataQualityIssues[j].Table })
	if err := p.Validate(); err != nil {
		return fail(stderr, fmt.Errorf("the proposed plan does not validate (a bug; nothing written): %w", err))
	}
	p.Platform.Updated = time.Now().UTC().Format(time.RFC3339)
	if err := p.Write(planPath); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "lima: the proposed data model is in %s; review and edit it, then approve it: lima-tui approve --gate data-model --by NAME\n", ui.Sanitize(planPath))
	return exitOK
}

// printProposal prints the proposed tables and marts, then the findings.
func printProposal(w io.Writer, pr *gates.Proposal) {
	var bases, marts []string
	for _, n := range pr.Plan.TableNames() {
		if pr.Plan.Tables[n].IsMart() {
			marts = append(marts, n)
		} else {
			bases = append(bases, n)
		}
	}
	fmt.Fprintf(w, "gate 3 — proposed data model: %d table(s), %d mart(s)\n", len(bases), len(marts))
	for _, n := range bases {
		t := pr.Plan.Tables[n]
		ev := pr.Evidence[n]
		if t.Source.Table != "" { // a database table
			from := t.Source.Table
			if t.Source.Schema != "" {
				from = t.Source.Schema + "." + from
			}
			fmt.Fprintf(w, "\n%s ← %s: table %s (%d rows sampled)\n", ui.Sanitize(n), ui.Sanitize(t.Source.Name), ui.Sanitize(from), ev.Rows)
		} else {
			fmt.Fprintf(w, "\n%s ← %s: %s (%d file(s), %d rows read)\n", ui.Sanitize(n), ui.Sanitize(t.Source.Name), ui.Sanitize(strings.Join(t.Source.Files, ", ")), len(ev.Units), ev.Rows)
		}
		var facts []string
		if len(t.Load.Keys) > 0 {
			facts = append(facts, "key "+strings.Join(t.Load.Keys, ", "))
		}
		if t.Load.Mode != "" {
			facts = append(facts, "mode "+t.Load.Mode)
		}
		if t.Load.Watermark != "" {
			facts = append(facts, "watermark "+t.Load.Watermark)
		}
		if len(t.Partition) > 0 {
			facts = append(facts, "partition "+strings.Join(t.Partition, ", "))
		}
		for _, j := range t.JoinKeys {
			facts = append(facts, "join "+j.Column+" → "+j.References)
		}
		if len(facts) > 0 {
			fmt.Fprintf(w, "  %s\n", ui.Sanitize(strings.Join(facts, " · ")))
		}
		for _, c := range t.Columns {
			typ := c.Type
			if len(c.Formats) > 0 {
				typ += " (" + strings.Join(c.Formats, ", ") + ")"
			}
			var notes []string
			if len(c.Normalize) > 0 {
				notes = append(notes, strings.Join(c.Normalize, ", "))
			}
			if c.Currency != "" {
				notes = append(notes, "currency "+c.Currency)
			}
			if c.SourceName != "" {
				notes = append(notes, "from "+c.SourceName)
			}
			if c.Sensitive {
				notes = append(notes, "sensitive")
			}
			fmt.Fprintf(w, "  %-24s %-30s %s\n", ui.Sanitize(c.Name), ui.Sanitize(typ), ui.Sanitize(strings.Join(notes, "; ")))
		}
	}
	for _, n := range marts {
		t := pr.Plan.Tables[n]
		fmt.Fprintf(w, "\nmart %s ← %s\n  grain (%s)\n", ui.Sanitize(n), ui.Sanitize(strings.Join(t.From, ", ")), ui.Sanitize(strings.Join(t.Grain, ", ")))
		for _, m := range t.Measures {
			what := m.Agg + "(*)"
			if m.Column != "" {
				what = m.Agg + "(" + m.Column + ")"
			}
			safe := ""
			for _, s := range t.SumSafeColumns {
				if s == m.Name {
					safe = "SUM-safe"
				}
			}
			fmt.Fprintf(w, "  %-24s %-30s %s\n", ui.Sanitize(m.Name), ui.Sanitize(what), safe)
		}
	}
	fmt.Fprintf(w, "\nfindings\n")
	printGate3Findings(w, pr.Findings)
}

// printGate3Findings prints findings as ✓ ! ✗ – lines with evidence and fix.
func printGate3Findings(w io.Writer, fs []gates.Finding) {
	for _, f := range fs {
		mark := "✓"
		switch f.Status {
		case gates.Fail:
			mark = "✗"
		case gates.Warn:
			mark = "!"
		case gates.Skip:
			mark = "–"
		}
		fmt.Fprintf(w, "  %s %s: %s\n", mark, ui.Sanitize(f.Name), ui.Sanitize(f.Detail))
		if f.Fix != "" && f.Status != gates.Pass {
			fmt.Fprintf(w, "      fix: %s\n", ui.Sanitize(f.Fix))
		}
	}
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

// editModel applies --set edits to a plan that has its tables: printed,
// and with --write recorded (the data model must then be approved again).
func editModel(ctx context.Context, p *plan.Plan, ws flow.Workspace, planPath string, write bool, sets []string, stdout, stderr io.Writer) int {
	lake, err := lakeFor(ctx, ws, p, sets)
	if err != nil {
		return editRefused(stderr, err)
	}
	edits, err := gates.ApplyEditsIn(p, sets, lake)
	if err != nil {
		return editRefused(stderr, err)
	}
	if err := p.Validate(); err != nil {
		fmt.Fprintf(stderr, "lima-tui propose: the edited plan does not validate, nothing written: %s\n", ui.Sanitize(err.Error()))
		return exitUsage
	}
	printEdits(stdout, edits)
	if !write {
		fmt.Fprintf(stderr, "lima: nothing written; to record the edits: lima-tui propose --plan %s --write --set …\n", ui.Sanitize(planPath))
		return exitOK
	}
	p.Platform.Updated = time.Now().UTC().Format(time.RFC3339)
	if err := p.Write(planPath); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "lima: edits written to %s; approve the data model again: lima-tui approve --gate data-model --by NAME\n", ui.Sanitize(planPath))
	return exitOK
}

// lakeFor reads the lake's tables when an edit renames (a rename must
// know whether the table or column is already in the lake).
func lakeFor(ctx context.Context, ws flow.Workspace, p *plan.Plan, sets []string) (gates.Lake, error) {
	if !gates.HasRename(sets) {
		return nil, nil
	}
	lake, err := flow.LakeTables(ctx, ws, p)
	if err != nil {
		return nil, fmt.Errorf("%w: a rename needs to know which tables are in the lake, and the lake could not be read: %v", gates.ErrEdit, err)
	}
	return lake, nil
}

// editRefused reports a --set that cannot apply (exit 2, nothing written).
func editRefused(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "lima-tui propose: --set refused, nothing written: %s\n", ui.Sanitize(err.Error()))
	return exitUsage
}

func printEdits(w io.Writer, edits []string) {
	if len(edits) == 0 {
		return
	}
	fmt.Fprintf(w, "\nedits (--set)\n")
	for _, e := range edits {
		fmt.Fprintf(w, "  ~ %s\n", ui.Sanitize(e))
	}
}

// proposalHeadlines warn of the proposed tables whose sampled rows would
// mostly be held back under the model as proposed (and edited).
func proposalHeadlines(pr *gates.Proposal) []string {
	var out []string
	for _, n := range pr.Plan.TableNames() {
		held, sampled, err := gates.PreviewTable(pr.Plan.Tables[n], pr.Evidence[n])
		if err != nil {
			continue
		}
		if h := gates.HoldBackHeadline(n, held, sampled); h != "" {
			out = append(out, h)
		}
	}
	return out
}
