package reports

// The platform docs Lima leaves in the user's workspace: README.md (how the
// platform is built and how to validate it) and ARCHITECTURE.md (its current
// state, the decisions with their rationale, known issues and a change log).
// platform.yaml stays the plan; it is not rewritten here.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fsx"
)

// Doc file names in the workspace.
const (
	ReadmeFile       = "README.md"
	ArchitectureFile = "ARCHITECTURE.md"
)

// MaxChangeLog is how many change log entries ARCHITECTURE.md keeps (the
// newest).
const MaxChangeLog = 200

// maxDocSize is the largest doc file WriteDocs reads and merges.
const maxDocSize = 16 << 20

// ErrDocNotWritten: a doc file could not be merged safely (a link, too
// large); the user's file is left as it is.
var ErrDocNotWritten = errors.New("doc not written")

// LakeTable is the lake's state of one table as gate 4 re-read it: rows of
// the current snapshot and the resolved (discovered) schema.
type LakeTable struct {
	Name       string   `json:"name"`
	Rows       int64    `json:"rows"`
	SnapshotID int64    `json:"snapshot_id"`
	Columns    []string `json:"columns"`
	Types      []string `json:"types"`
	Required   []bool   `json:"required,omitempty"`
	// Partition is the table's default partition spec in the plan's
	// spelling; set with FromMetadata.
	Partition []string `json:"partition,omitempty"`
	// FromMetadata: Columns, Types, Required and Partition were read from
	// the table's own (Iceberg) metadata, not from the run's plan.
	FromMetadata bool `json:"from_metadata,omitempty"`
	// RunID is the run that saw this state (set by WriteDocs).
	RunID string `json:"run_id,omitempty"`
}

// LakeTablesFrom builds the lake state of the tables a run reconciled: the
// schema from the run's expectations, rows and snapshot from gate 4's
// re-read. Tables gate 4 did not read are left out (their last known state
// is kept in ARCHITECTURE.md).
func LakeTablesFrom(exps []gates.Expectation, recs map[string]*gates.Reconciliation) []LakeTable {
	var out []LakeTable
	for _, e := range exps {
		rec := recs[e.Table]
		if rec == nil {
			continue
		}
		snap := rec.SnapshotID
		if snap == 0 {
			snap = e.SnapshotID
		}
		out = append(out, LakeTable{Name: e.Table, Rows: rec.LakeRows, SnapshotID: snap,
			Columns: e.Columns, Types: e.Types, Required: e.Required})
	}
	return out
}

// WriteDocs generates README.md and ARCHITECTURE.md in the workspace dir and
// merges them into what is there: Lima's sections (between marker lines)
// are regenerated, everything else is kept byte for byte; a file without
// markers gets Lima's sections below the user's text. latest is the run
// just finished (nil: docs from the plan alone); lake is the state gate 4
// saw (see LakeTablesFrom; may be nil). The change log in ARCHITECTURE.md
// gains one entry per run id (at most MaxChangeLog are kept). Files are
// written atomically, 0600. A doc that cannot be merged safely is left
// alone and reported in the error (errors.Is ErrDocNotWritten); the other
// is still written.
func WriteDocs(dir string, p *plan.Plan, latest *Report, lake []LakeTable) error {
	if p == nil {
		return errors.New("docs: no plan")
	}
	var errs []error
	// The lake state (schemas and partitioning as the tables' metadata
	// says) is carried in ARCHITECTURE.md from run to run; both docs
	// describe a loaded table by it, never by the plan's hopes.
	ap := filepath.Join(dir, ArchitectureFile)
	oldArch, archErr := readDoc(ap)
	state := mergeLakeState(p, latest, lake, oldArch)
	rp := filepath.Join(dir, ReadmeFile)
	if old, err := readDoc(rp); err != nil {
		errs = append(errs, err)
	} else if err := writeDoc(rp, old, mergeDoc(old, readmeSections(p, state), "# "+md(title(p))+" — data platform\n\n")); err != nil {
		errs = append(errs, err)
	}
	if archErr != nil {
		errs = append(errs, archErr)
	} else if err := writeDoc(ap, oldArch, mergeDoc(oldArch, architectureSections(p, latest, state, oldArch), "# "+md(title(p))+" — architecture\n\n")); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func title(p *plan.Plan) string {
	if p.Platform.Prefix != "" {
		return p.Platform.Prefix
	}
	return "Lima"
}

func readDoc(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file (a link or a folder); Lima does not write through it", ErrDocNotWritten, path)
	}
	if fi.Size() > maxDocSize {
		return "", fmt.Errorf("%w: %s is larger than %d MiB", ErrDocNotWritten, path, maxDocSize>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDocSize+1))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func writeDoc(path, old, doc string) error {
	if doc == old {
		return nil
	}
	return fsx.WriteFileAtomic(path, []byte(doc))
}

// ---- README.md ----

const docNote = "_Lima regenerates the sections between the `lima:begin` and `lima:end` marker lines from platform.yaml and the latest run; write your own text outside them and it is kept as it is._\n"

// readmeSections depend on the plan only, so README.md changes only when
// the plan does.
func readmeSections(p *plan.Plan, state map[string]LakeTable) []docSection {
	return []docSection{
		{"overview", readmeOverview(p)},
		{"naming", readmeNaming(p)},
		{"storage", readmeStorage(p, state)},
		{"catalog", readmeCatalog(p)},
		{"tables", readmeTables(p, state)},
		{"schedule", readmeSchedule(p)},
		{"validate", readmeValidate()},
	}
}

func patternName(p *plan.Plan) string {
	if p.Pattern() == plan.PatternHive {
		return "Hive-style partitioned Parquet"
	}
	return "Apache Iceberg"
}

func catalogName(p *plan.Plan) string {
	switch p.Catalog() {
	case plan.CatalogGlue:
		return "AWS Glue Data Catalog"
	case plan.CatalogREST:
		return "Iceberg REST catalog"
	case plan.CatalogS3Tables:
		return "Amazon S3 Tables (Iceberg REST with SigV4)"
	}
	if p.Pattern() == plan.PatternHive {
		return "no catalog (Hive-style folders read through their _lima/commits manifests)"
	}
	return "embedded SQLite SQL catalog"
}

func catalogFile(p *plan.Plan) string {
	if p.Storage.CatalogURI != "" {
		return p.Storage.CatalogURI
	}
	return plan.DefaultCatalogURI
}

func readmeOverview(p *plan.Plan) string {
	var b strings.Builder
	b.WriteString("## Overview\n\n")
	b.WriteString(docNote + "\n")
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "| %s | %s |\n", k, v)
		}
	}
	row("project prefix", md(p.Platform.Prefix))
	row("environment", md(p.Platform.Environment))
	row("region", md(p.Platform.Region))
	row("table format", patternName(p))
	row("catalog", catalogName(p))
	row("warehouse", md(p.Warehouse()))
	cons := md(p.Downstream.Consumer)
	if len(p.Downstream.Tools) > 0 {
		cons += " (" + md(strings.Join(p.Downstream.Tools, ", ")) + ")"
	}
	row("consumers", strings.TrimSpace(cons))
	for _, n := range p.SourceNames() {
		s := p.Sources[n]
		if s == nil {
			continue
		}
		row("source "+md(n), md(s.Kind)+" "+md(s.Path))
	}
	row("tables", fmt.Sprint(len(p.Tables)))
	return b.String()
}

var (
	snakeRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	// safePathRE: a path that can go into a code block as it is.
	safePathRE = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)
)

func readmeNaming(p *plan.Plan) string {
	var b strings.Builder
	ns := p.Namespace()
	b.WriteString("## Naming convention\n\n")
	fmt.Fprintf(&b, "- **Project prefix** %s names the platform; the catalog namespace is %s.\n", md(p.Platform.Prefix), md(ns))
	fmt.Fprintf(&b, "- **Tables** are addressed as namespace.table: ")
	var names []string
	for _, t := range p.TableNames() {
		names = append(names, md(ns+"."+t))
	}
	if len(names) == 0 {
		b.WriteString("none yet.\n")
	} else {
		b.WriteString(strings.Join(names, ", ") + ".\n")
	}
	b.WriteString("- **Table and column names** are lower snake_case (letters, digits, underscores); a source header that differs is kept as the column's source_name.\n")
	var odd []string
	for _, tn := range p.TableNames() {
		if !snakeRE.MatchString(tn) {
			odd = append(odd, md(tn))
		}
		if t := p.Tables[tn]; t != nil {
			for _, c := range t.Columns {
				if !snakeRE.MatchString(c.Name) {
					odd = append(odd, md(tn+"."+c.Name))
				}
			}
		}
	}
	if len(odd) > 0 {
		fmt.Fprintf(&b, "  - ! Not following it: %s.\n", strings.Join(odd, ", "))
	}
	fmt.Fprintf(&b, "- **Files**: %s/%s.db/TABLE/data/ (Parquet data files) and …/metadata/ (table metadata and snapshots).\n", md(p.Warehouse()), md(ns))
	b.WriteString("- **Snapshots** carry lima.load-id (a fingerprint of the input), lima.run-id and lima.watermark in their summary.\n")
	b.WriteString("- **Runs** are named by their UTC start time and a random suffix (20260131T020000.000000Z-a1b2c3); each leaves reports/RUN-ID/report.json and report.md.\n")
	return b.String()
}

// partitionOf is how a table is partitioned: as its metadata says when a
// run read it, else as the plan declares.
func partitionOf(n string, t *plan.Table, state map[string]LakeTable) []string {
	if lt, ok := state[n]; ok && lt.FromMetadata {
		return lt.Partition
	}
	return t.Partition
}

func readmeStorage(p *plan.Plan, state map[string]LakeTable) string {
	var b strings.Builder
	b.WriteString("## Storage pattern\n\n")
	if p.Pattern() == plan.PatternHive {
		fmt.Fprintf(&b, "Tables are Hive-style partitioned Parquet folders (load_date=…/column=value/, zstd) under %s. "+
			"Each run writes to a _staging/ folder, publishes the files, then writes one manifest per table (_lima/commits/) carrying the load id and the watermark: "+
			"the manifest is the commit, so readers that follow the manifests never see a half-published load, and a rerun of the same input finds its load id and adds nothing.\n\n", md(p.Warehouse()))
	} else {
		fmt.Fprintf(&b, "Tables are Apache Iceberg tables under %s: Parquet data files (zstd), one atomic snapshot per table per run. "+
			"Readers never see a half-written load, and a rerun of the same input finds its load id and adds nothing.\n\n", md(p.Warehouse()))
	}
	b.WriteString("| table | type | load | partitioned by |\n|---|---|---|---|\n")
	for _, n := range p.TableNames() {
		t := p.Tables[n]
		if t == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(n), md(t.TableType()), md(t.Mode()), orDash(md(strings.Join(partitionOf(n, t, state), ", "))))
	}
	store := "SQLite in .lima/state.db"
	if p.Storage.State == "postgres" {
		store = "PostgreSQL (DSN from $" + md(p.Storage.StateDSNEnv) + ")"
	}
	fmt.Fprintf(&b, "\nRuns, watermarks and the exception queue live in the state store: %s.\n", store)
	return b.String()
}

func readmeCatalog(p *plan.Plan) string {
	var b strings.Builder
	b.WriteString("## Catalog\n\n")
	fmt.Fprintf(&b, "- Catalog: %s", catalogName(p))
	if p.Catalog() == plan.CatalogSQLite {
		fmt.Fprintf(&b, ", file %s (catalog name lima)", md(catalogFile(p)))
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "- Namespace: %s.\n", md(p.Namespace()))
	if p.Catalog() == plan.CatalogSQLite && snakeRE.MatchString(p.Namespace()) && safePathRE.MatchString(p.Warehouse()) && safePathRE.MatchString(catalogFile(p)) {
		var first string
		for _, n := range p.TableNames() {
			if snakeRE.MatchString(n) {
				first = n
				break
			}
		}
		if first != "" {
			b.WriteString("\nRead a table from Python (PyIceberg), in the workspace folder:\n\n```python\nfrom pathlib import Path\n" +
				"from pyiceberg.catalog.sql import SqlCatalog\n" +
				"cat = SqlCatalog(\"lima\", uri=\"sqlite:///" + catalogFile(p) + "\",\n" +
				"                 warehouse=Path(\"" + p.Warehouse() + "\").resolve().as_uri())  # escapes %, #, ? and spaces\n" +
				"df = cat.load_table(\"" + p.Namespace() + "." + first + "\").scan().to_pandas()\n```\n")
		}
	}
	return b.String()
}

func readmeTables(p *plan.Plan, state map[string]LakeTable) string {
	var b strings.Builder
	b.WriteString("## Tables\n")
	for _, n := range p.TableNames() {
		t := p.Tables[n]
		if t == nil {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", md(p.Namespace()+"."+n))
		if t.Description != "" {
			b.WriteString(md(t.Description) + "\n\n")
		}
		if t.Source != nil {
			fmt.Fprintf(&b, "- Source: %s, files %s", md(t.Source.Name), md(strings.Join(t.Source.Files, ", ")))
			if t.Source.Format != "" {
				fmt.Fprintf(&b, " (%s)", md(t.Source.Format))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "- Load: %s", md(t.Mode()))
		if len(t.Load.Keys) > 0 {
			fmt.Fprintf(&b, "; key %s (unique within a load, never null)", md(strings.Join(t.Load.Keys, ", ")))
		}
		if t.Load.Watermark != "" {
			fmt.Fprintf(&b, "; watermark %s", md(t.Load.Watermark))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "- Partitioned by: %s\n", orDash(md(strings.Join(partitionOf(n, t, state), ", "))))
		if t.IsMart() {
			fmt.Fprintf(&b, "- Grain: %s; SUM-safe: %s\n", orDash(md(strings.Join(t.Grain, ", "))), orDash(md(strings.Join(t.SumSafeColumns, ", "))))
		}
		for _, j := range t.JoinKeys {
			fmt.Fprintf(&b, "- Joins: %s → %s\n", md(j.Column), md(j.References))
		}
		for _, c := range t.Checks {
			fmt.Fprintf(&b, "- Check: %s\n", md(checkText(c)))
		}
		if len(t.ControlColumns) > 0 {
			fmt.Fprintf(&b, "- Control totals (summed on both sides by gate 4): %s\n", md(strings.Join(t.ControlColumns, ", ")))
		}
		if t.ErrorBudget != "" {
			fmt.Fprintf(&b, "- Error budget: %s\n", md(t.ErrorBudget))
		}
		lt, loaded := state[n]
		loaded = loaded && lt.FromMetadata && len(lt.Columns) == len(lt.Types)
		if len(t.Columns) == 0 && !loaded {
			b.WriteString("\nColumns: inferred from the data at the first run.\n")
			continue
		}
		parts := map[string]string{}
		for _, ps := range partitionOf(n, t, state) {
			if pf, err := plan.ParsePartition(ps); err == nil {
				parts[pf.Column] = ps
			}
		}
		cols, types, required := t.Columns, map[string]string{}, map[string]bool{}
		if loaded {
			b.WriteString("\nColumns as the table's metadata says:\n")
			cols = nil
			for i, name := range lt.Columns {
				c := plan.Column{Name: name}
				if pc, ok := t.Column(name); ok {
					c = *pc
				}
				cols = append(cols, c)
				types[name] = lt.Types[i]
				required[name] = i < len(lt.Required) && lt.Required[i]
			}
		}
		b.WriteString("\n| column | type | required | key | partition | fixes | description |\n|---|---|---|---|---|---|---|\n")
		for _, c := range cols {
			typ := c.Type
			req := t.IsRequired(c.Name)
			if loaded {
				typ, req = types[c.Name], required[c.Name]
			}
			if typ == "" {
				typ = "inferred"
			}
			desc := c.Description
			if c.Sensitive {
				desc = strings.TrimSpace("sensitive. " + desc)
			}
			fixes := c.Normalize
			if t.IsKey(c.Name) && isText(c.Type) && !slices.Contains(fixes, "nfc") {
				fixes = append(slices.Clip(fixes), "nfc (keys by default)")
			}
			if c.Currency != "" {
				fixes = append(slices.Clip(fixes), "currency "+c.Currency+" (its symbols removed)")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", md(c.Name), md(typ), yesBlank(req), yesBlank(t.IsKey(c.Name)),
				md(parts[c.Name]), md(strings.Join(fixes, ", ")), md(desc))
		}
	}
	if len(p.Tables) == 0 {
		b.WriteString("\nNo tables yet.\n")
	}
	return b.String()
}

func checkText(c plan.Check) string {
	s := c.Rule
	if c.Column != "" {
		s += " " + c.Column
	}
	switch c.Rule {
	case plan.RuleAllowed:
		s += " in {" + strings.Join(c.Values, ", ") + "}"
	case plan.RuleRange:
		if c.Min != nil {
			s += fmt.Sprintf(" ≥ %g", *c.Min)
		}
		if c.Max != nil {
			s += fmt.Sprintf(" ≤ %g", *c.Max)
		}
	case plan.RuleRegex:
		s += " matches " + c.Regex
	case plan.RuleMaxLength:
		s += fmt.Sprintf(" at most %d characters", c.Length)
	case plan.RuleReferences:
		s += " exists in " + c.References
	case plan.RuleExpression:
		s = "expression " + c.Expr
	}
	if c.Name != "" {
		s = c.Name + ": " + s
	}
	return s
}

func readmeSchedule(p *plan.Plan) string {
	var b strings.Builder
	b.WriteString("## Schedule\n\n")
	sc := p.Schedule
	if sc.Cron == "" {
		b.WriteString("Not scheduled: runs start by hand (lima-tui run).\n")
		return b.String()
	}
	tz := sc.Timezone
	if tz == "" {
		tz = "UTC"
	}
	fmt.Fprintf(&b, "- Cron: %s (%s)\n", md(sc.Cron), md(tz))
	if sc.Window != "" {
		fmt.Fprintf(&b, "- Run window: %s\n", md(sc.Window))
	}
	if sc.Deadline != "" {
		fmt.Fprintf(&b, "- Deadline: %s — each report says whether it was met\n", md(sc.Deadline))
	}
	if p.ETL.MaxParallelReads > 0 {
		fmt.Fprintf(&b, "- At most %d source reads in parallel\n", p.ETL.MaxParallelReads)
	}
	b.WriteString("\nThe scheduler runs, in this folder:\n\n```sh\nlima-tui run --plan platform.yaml --json\n```\n\n" +
		"Exit codes: 0 ok · 1 error (nothing half-visible) · 2 usage · 3 loaded but reconciliation (gate 4) failed · 4 a precondition failed, nothing written.\n")
	return b.String()
}

func readmeValidate() string {
	var b strings.Builder
	b.WriteString("## How to validate\n\n")
	b.WriteString("Every run proves, per table, that rows read = loaded + held back + skipped, then re-reads the committed snapshot " +
		"and compares row counts, exact sums of the control columns, nulls in required columns, duplicate keys, date ranges and sample rows with the source.\n\n")
	b.WriteString("```sh\n" +
		"lima-tui check                                # gate 2: sources, lake, catalog, disk and clock are ready\n" +
		"lima-tui run --plan platform.yaml --json      # load and reconcile; the exit code says what happened\n" +
		"lima-tui reconcile --plan platform.yaml       # prove the latest run again against the current snapshots\n" +
		"lima-tui report --plan platform.yaml          # the latest run report (report.md)\n" +
		"lima-tui exceptions list                      # the rows held back, by owner, rule and deadline\n" +
		"lima-tui teardown --plan platform.yaml        # the blast radius; removes nothing without --confirm PREFIX\n" +
		"```\n")
	return b.String()
}

// ---- ARCHITECTURE.md ----

func architectureSections(p *plan.Plan, latest *Report, state map[string]LakeTable, old string) []docSection {
	return []docSection{
		{"state", archState(p, latest, state)},
		{"decisions", archDecisions(p, state)},
		{"schedule", archSchedule(p)},
		{"issues", archIssues(p, latest)},
		{"changelog", archChangeLog(latest, old)},
	}
}

// lakeDataPrefix starts the hidden line in the state section that carries
// the last known lake state of every table from run to run.
const lakeDataPrefix = "<!-- lima:data "

// mergeLakeState combines the last known state (from the old document)
// with what this run saw; tables no longer in the plan are dropped.
func mergeLakeState(p *plan.Plan, latest *Report, lake []LakeTable, old string) map[string]LakeTable {
	state := map[string]LakeTable{}
	for _, body := range existingSections(old, "state") {
		for _, line := range splitLines(body) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, lakeDataPrefix) && strings.HasSuffix(line, "-->") {
				var m map[string]LakeTable
				if json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(line, lakeDataPrefix), "-->")), &m) == nil {
					for k, v := range m {
						state[k] = v
					}
				}
			}
		}
	}
	for _, lt := range lake {
		if latest != nil {
			lt.RunID = latest.RunID
		}
		state[lt.Name] = lt
	}
	for k := range state {
		if _, ok := p.Tables[k]; !ok {
			delete(state, k)
		}
	}
	return state
}

func archState(p *plan.Plan, latest *Report, state map[string]LakeTable) string {
	var b strings.Builder
	b.WriteString("## Current state\n\n")
	b.WriteString(docNote + "\n")
	if latest != nil {
		fmt.Fprintf(&b, "Latest run %s, %s, status %s.\n\n", md(latest.RunID), latest.StartedAt.UTC().Format("2006-01-02 15:04 UTC"), md(latest.Status))
	} else {
		b.WriteString("No run yet.\n\n")
	}
	byName := map[string]TableReport{}
	if latest != nil {
		for _, t := range latest.Tables {
			byName[t.Name] = t
		}
	}
	b.WriteString("| table | rows in the lake | snapshot | as of run | latest load | watermark | gate 4 |\n|---|--:|---|---|---|---|---|\n")
	for _, n := range p.TableNames() {
		rows, snap, asOf := "–", "–", "–"
		if lt, ok := state[n]; ok {
			rows, snap, asOf = fmt.Sprint(lt.Rows), fmt.Sprint(lt.SnapshotID), md(lt.RunID)
		}
		load, wm, g4 := "–", "–", "–"
		if tr, ok := byName[n]; ok {
			load = md(tr.Status)
			if tr.Status == "loaded" {
				load = fmt.Sprintf("loaded %d, held back %d", tr.RowsLoaded, tr.RowsQuarantined)
			}
			wm = orDash(md(tr.WatermarkAfter))
			g4 = mark(tr.Reconciliation)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", md(n), rows, snap, asOf, load, wm, g4)
	}
	b.WriteString("\n### Schemas in the lake\n")
	for _, n := range p.TableNames() {
		t := p.Tables[n]
		fmt.Fprintf(&b, "\n**%s**", md(p.Namespace()+"."+n))
		lt, ok := state[n]
		if ok && len(lt.Columns) == len(lt.Types) && len(lt.Columns) > 0 {
			if lt.FromMetadata {
				fmt.Fprintf(&b, " (as the table's metadata says; partitioned by %s)\n\n| column | type | required |\n|---|---|---|\n", orDash(md(strings.Join(lt.Partition, ", "))))
			} else {
				b.WriteString(" (as discovered by the run)\n\n| column | type | required |\n|---|---|---|\n")
			}
			for i, c := range lt.Columns {
				req := i < len(lt.Required) && lt.Required[i]
				fmt.Fprintf(&b, "| %s | %s | %s |\n", md(c), md(lt.Types[i]), yesBlank(req))
			}
			continue
		}
		b.WriteString(" (from the plan; not loaded yet)\n\n")
		if t == nil || len(t.Columns) == 0 {
			b.WriteString("Columns are inferred at the first run.\n")
			continue
		}
		b.WriteString("| column | type | required |\n|---|---|---|\n")
		for _, c := range t.Columns {
			typ := c.Type
			if typ == "" {
				typ = "inferred"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", md(c.Name), md(typ), yesBlank(t.IsRequired(c.Name)))
		}
	}
	if len(state) > 0 {
		// json.Marshal escapes <, > and &: the line cannot close the
		// comment or forge a marker.
		data, err := json.Marshal(state)
		if err == nil {
			b.WriteString("\n" + lakeDataPrefix + asciiJSON(data) + " -->\n")
		}
	}
	return b.String()
}

func archDecisions(p *plan.Plan, state map[string]LakeTable) string {
	var b strings.Builder
	b.WriteString("## Decisions\n\n")
	b.WriteString("| decision | choice | rationale | do not change to |\n|---|---|---|---|\n")
	row := func(decision, choice, why, not string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", decision, choice, why, not)
	}
	if p.Pattern() == plan.PatternHive {
		row("table format", "Hive-style partitioned Parquet",
			"the consumers read plain Parquet folders; chosen at gate 1. Each run stages its files, publishes them and commits one manifest per table carrying the load id, so reruns are safe",
			"Iceberg without telling the consumers — their readers expect column=value/ folders")
	} else {
		row("table format", "Apache Iceberg",
			"one atomic snapshot per table per run carries the load id and the watermark, so readers never see half a load and reruns are safe",
			"Hive-style Parquet folders — no atomic commit, a rerun could load twice")
	}
	switch {
	case p.Catalog() == plan.CatalogSQLite && p.Pattern() == plan.PatternHive:
		row("catalog", "none", "Hive-style folders are read through their _lima/commits manifests; nothing to register", "a catalog nobody reads — add catalog glue when Athena should see the tables")
	case p.Catalog() == plan.CatalogSQLite:
		row("catalog", "embedded SQLite ("+md(catalogFile(p))+")",
			"no server to run; one workspace writes it, under a run lock",
			"a copy on a network share — SQLite locking is unreliable there; use Glue or an Iceberg REST catalog for shared access")
	case p.Catalog() == plan.CatalogGlue:
		if p.Pattern() == plan.PatternHive {
			row("catalog", "AWS Glue Data Catalog", "each commit registers the table (columns, partition keys) and its new partitions (BatchCreatePartition), so Athena sees them", "no catalog — Athena would not see the tables or their new partitions")
		} else {
			row("catalog", "AWS Glue Data Catalog", "the consumers query through Athena/Glue in the account", "a local SQLite catalog — the consumers would not see the tables")
		}
	case p.Catalog() == plan.CatalogS3Tables:
		row("catalog", "Amazon S3 Tables", "Iceberg tables in a table bucket, reached through the S3 Tables Iceberg REST endpoint signed with SigV4; lower-case names, no LOCATION", "a Glue or SQLite catalog — the table bucket manages its own tables")
	case p.Catalog() == plan.CatalogREST:
		row("catalog", "Iceberg REST catalog", "shared, server-side commits", "a local SQLite catalog — other readers would not see the tables")
	}
	for _, n := range p.TableNames() {
		t := p.Tables[n]
		if t == nil {
			continue
		}
		if part := partitionOf(n, t, state); len(part) > 0 {
			row("partitioning of "+md(n), md(strings.Join(part, ", ")),
				"queries filter on "+md(partitionColumns(part))+"; files stay few and large",
				"a key or other high-cardinality column — millions of tiny files")
		} else {
			row("partitioning of "+md(n), "none", "a small table: one set of files reads fastest",
				"partitioning by a key — many tiny files for no pruning gain")
		}
		if len(t.Load.Keys) > 0 {
			row("key of "+md(n), md(strings.Join(t.Load.Keys, ", ")),
				"unique within a load and never null; gate 4 re-checks it in the lake",
				"no key — duplicate rows would go unnoticed")
		}
		if t.Load.Watermark != "" {
			row("watermark of "+md(n), md(t.Load.Watermark),
				"committed in the snapshot with the data (the table is its source of truth; the state store mirrors it)",
				"a watermark kept only in the state store — it could disagree with the table after a failed commit")
		}
		var decs []string
		for _, c := range t.Columns {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.Type)), "decimal") {
				decs = append(decs, c.Name+" "+c.Type)
			}
		}
		if len(decs) > 0 {
			row("decimal types in "+md(n), md(strings.Join(decs, ", ")),
				"money and measured values stay exact: sums reconcile to the last digit",
				"double/float — sums drift and reconciliation would need a tolerance")
		}
		var nfcKeys []string
		for _, c := range t.KeyColumns() {
			if isText(c.Type) {
				nfcKeys = append(nfcKeys, c.Name)
			}
		}
		if len(nfcKeys) > 0 {
			row("key text of "+md(n), "Unicode NFC: "+md(strings.Join(nfcKeys, ", ")),
				"the same key typed in composed or decomposed form joins and deduplicates as one",
				"raw bytes — visually equal keys would not match")
		}
	}
	row("commits", "one per table per run, with lima.load-id, lima.run-id and lima.watermark",
		"the load id fingerprints the input (plan and files); a rerun or a retry after an unknown commit outcome finds it and adds nothing",
		"several commits per run, or appends without the load-id check — a retry could load twice")
	row("held-back rows", "kept in the exception queue with file, line, raw bytes, rule and owner",
		"nothing is silently dropped or nulled; rows read = loaded + held back + skipped",
		"dropping or nulling bad values — the totals would no longer balance")
	store := "SQLite (.lima/state.db)"
	if p.Storage.State == "postgres" {
		store = "PostgreSQL (shared)"
	}
	row("state store", store, "runs, watermark mirror and the exception queue in one transactional store", "files next to the data — no transactions, no queue")
	return b.String()
}

func partitionColumns(part []string) string {
	var cols []string
	for _, ps := range part {
		if pf, err := plan.ParsePartition(ps); err == nil {
			cols = append(cols, pf.Column)
		}
	}
	return strings.Join(cols, ", ")
}

func archIssues(p *plan.Plan, latest *Report) string {
	var b strings.Builder
	b.WriteString("## Known issues\n\n")
	if len(p.DataQualityIssues) > 0 {
		b.WriteString("Found while profiling the sources (platform.yaml, data_quality_issues):\n\n| table | column | issue | impact | fix |\n|---|---|---|---|---|\n")
		for _, q := range p.DataQualityIssues {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", orDash(md(q.Table)), orDash(md(q.Column)), md(q.Issue), orDash(md(q.Impact)), orDash(md(q.Fix)))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("No data quality issues recorded in the plan.\n\n")
	}
	if latest == nil {
		return b.String()
	}
	fmt.Fprintf(&b, "From the latest run (%s):\n\n", md(latest.RunID))
	n := 0
	for _, t := range latest.Tables {
		if t.Error != "" {
			fmt.Fprintf(&b, "- ✗ %s: %s\n", md(t.Name), md(t.Error))
			n++
		}
		for _, c := range t.Checks {
			if c.Status == gates.Fail || c.Status == gates.Warn {
				fmt.Fprintf(&b, "- %s %s: %s — %s\n", mark(c.Status), md(t.Name), md(c.Name), md(c.Detail))
				n++
			}
		}
	}
	ex := latest.Exceptions
	if ex.Total > 0 {
		fmt.Fprintf(&b, "- %s", HeldBack(ex, nil))
		var parts []string
		for _, k := range sortedInt(ex.ByTable) {
			parts = append(parts, fmt.Sprintf("%s %d", md(k), ex.ByTable[k]))
		}
		if len(parts) > 0 {
			b.WriteString(" — by table: " + strings.Join(parts, ", "))
		}
		parts = nil
		for _, k := range sortedInt(ex.ByRule) {
			parts = append(parts, fmt.Sprintf("%s %d", md(k), ex.ByRule[k]))
		}
		if len(parts) > 0 {
			b.WriteString("; by rule: " + strings.Join(parts, ", "))
		}
		b.WriteString("; see lima-tui exceptions list\n")
		n++
	}
	if q := ex.Queue; q != nil && (q.Unresolved > 0 || q.Overdue > 0) {
		fmt.Fprintf(&b, "- the exception queue holds %d unresolved, %d overdue\n", q.Unresolved, q.Overdue)
		n++
	}
	if n == 0 {
		b.WriteString("- none\n")
	}
	return b.String()
}

// changeEntryRE finds the run id (second cell) of a change log line.
var changeEntryRE = regexp.MustCompile(`^\| [^|]* \| ([^ |]+) \| `)

func archChangeLog(latest *Report, old string) string {
	var entries []string
	seen := map[string]bool{}
	for _, body := range existingSections(old, "changelog") {
		for _, line := range splitLines(body) {
			if m := changeEntryRE.FindStringSubmatch(line); m != nil && m[1] != "run" && !seen[m[1]] {
				seen[m[1]] = true
				entries = append(entries, strings.TrimRight(line, "\r\n")+"\n")
			}
		}
	}
	if latest != nil {
		id := md(latest.RunID)
		if !seen[id] && id != "" {
			var read, loaded, held int64
			for _, t := range latest.Tables {
				read += t.RowsRead
				loaded += t.RowsLoaded
				held += t.RowsQuarantined
			}
			entries = append(entries, fmt.Sprintf("| %s | %s | %s | read %d, loaded %d, held back %d |\n",
				latest.StartedAt.UTC().Format("2006-01-02 15:04 UTC"), id, md(latest.Status), read, loaded, held))
		}
	}
	if len(entries) > MaxChangeLog {
		entries = entries[len(entries)-MaxChangeLog:]
	}
	var b strings.Builder
	b.WriteString("## Change log\n\n")
	if len(entries) == 0 {
		b.WriteString("No run yet.\n")
		return b.String()
	}
	b.WriteString("| date | run | status | rows |\n|---|---|---|---|\n")
	for _, e := range entries {
		b.WriteString(e)
	}
	return b.String()
}

// asciiJSON writes every non-ASCII character of JSON text as a \u escape,
// so no BiDi override or other invisible character hides in the file.
func asciiJSON(data []byte) string {
	var b strings.Builder
	for _, r := range string(data) {
		switch {
		case r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// isText reports whether a plan type is text (or still to be inferred,
// which keys usually are).
func isText(typ string) bool {
	if strings.TrimSpace(typ) == "" {
		return true
	}
	pt, err := plan.ParseType(typ)
	return err == nil && pt.Kind == plan.String
}

func yesBlank(v bool) string {
	if v {
		return "yes"
	}
	return ""
}
