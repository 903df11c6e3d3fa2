package reports_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

// shopPlan is a small plan whose docs are worked out by hand below.
func shopPlan() *plan.Plan {
	return &plan.Plan{SchemaVersion: 1,
		Platform: plan.Platform{Prefix: "shop", Environment: "prod", Region: "eu-central-1", Pattern: "iceberg", Catalog: "sqlite"},
		Sources:  map[string]*plan.Source{"files": {Kind: "files", Path: "in"}},
		Tables: map[string]*plan.Table{
			"orders": {Description: "Web shop orders", Source: &plan.TableSource{Name: "files", Files: []string{"orders.csv"}},
				Columns: []plan.Column{{Name: "order_id", Type: "long", Required: true}, {Name: "customer", Type: "string", Normalize: []string{"trim"}},
					{Name: "ordered_on", Type: "date"}, {Name: "amount", Type: "decimal(12,2)", Description: "gross, EUR", Currency: "EUR"}},
				Partition: []string{"month(ordered_on)"}, Load: plan.LoadSpec{Keys: []string{"order_id"}, Watermark: "ordered_on"}},
			"customers": {Source: &plan.TableSource{Name: "files", Files: []string{"customers.csv"}},
				Columns: []plan.Column{{Name: "customer", Type: "string"}, {Name: "country", Type: "string"}}, Load: plan.LoadSpec{Keys: []string{"customer"}}},
		},
		DataQualityIssues: []plan.QualityIssue{{Table: "orders", Column: "amount", Issue: "decimal comma", Impact: "sums off by 100x", Fix: "decimal_comma"}},
		Schedule:          plan.Schedule{Cron: "0 3 * * *", Timezone: "Europe/Berlin", Deadline: "07:00"},
	}
}

func shopReport(id string, day int, loaded int64) *reports.Report {
	return &reports.Report{RunID: id, Status: reports.StatusOK, StartedAt: time.Date(2026, 1, day, 2, 0, 0, 0, time.UTC),
		Tables: []reports.TableReport{{Name: "orders", Mode: "full", Status: "loaded", RowsRead: loaded + 2, RowsLoaded: loaded,
			RowsQuarantined: 1, RowsSkipped: 1, WatermarkAfter: "2026-01-02", Reconciliation: gates.Pass}},
		Exceptions: reports.Exceptions{Total: 1, ByTable: map[string]int64{"orders": 1}, ByRule: map[string]int64{"type": 1}}}
}

var ordersLake = []reports.LakeTable{{Name: "orders", Rows: 3, SnapshotID: 77,
	Columns: []string{"order_id", "customer", "ordered_on", "amount"}, Types: []string{"long", "string", "date", "decimal(12,2)"},
	Required: []bool{true, false, false, false}}}

func readDocs(t *testing.T, dir string) (readme, arch string) {
	t.Helper()
	r, err := os.ReadFile(filepath.Join(dir, reports.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(dir, reports.ArchitectureFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(r), string(a)
}

var markerRE = regexp.MustCompile(`(?m)^<!-- lima:(begin|end) ([a-z0-9_-]+) -->$`)

// sectionNames lists the begin markers, in order, checking each has its end.
func sectionNames(t *testing.T, doc string) []string {
	t.Helper()
	var names []string
	open := ""
	for _, m := range markerRE.FindAllStringSubmatch(doc, -1) {
		switch {
		case m[1] == "begin" && open == "":
			open = m[2]
			names = append(names, m[2])
		case m[1] == "end" && open == m[2]:
			open = ""
		default:
			t.Fatalf("marker %q out of order (open %q)", m[0], open)
		}
	}
	if open != "" {
		t.Fatalf("section %s is not closed", open)
	}
	return names
}

func TestWriteDocsFromScratch(t *testing.T) {
	dir := t.TempDir()
	p := shopPlan()
	if err := reports.WriteDocs(dir, p, shopReport("r1", 5, 3), ordersLake); err != nil {
		t.Fatal(err)
	}
	readme, arch := readDocs(t, dir)
	if got, want := strings.Join(sectionNames(t, readme), ","), "overview,naming,storage,catalog,tables,schedule,validate"; got != want {
		t.Errorf("README sections %s, want %s", got, want)
	}
	if got, want := strings.Join(sectionNames(t, arch), ","), "state,decisions,schedule,issues,changelog"; got != want {
		t.Errorf("ARCHITECTURE sections %s, want %s", got, want)
	}
	for _, f := range []string{reports.ReadmeFile, reports.ArchitectureFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v %v, want 0600", f, fi.Mode().Perm(), err)
		}
	}
	cases := []struct {
		doc, name, want string
	}{
		{readme, "title outside the markers", "# shop — data platform\n\n<!-- lima:begin overview -->\n"},
		{readme, "table heading", "\n### shop.orders\n\nWeb shop orders\n\n"},
		{readme, "load line", "- Load: full; key order_id (unique within a load, never null); watermark ordered_on\n"},
		{readme, "partition line", "- Partitioned by: month(ordered_on)\n"},
		{readme, "key column", "| order_id | long | yes | yes |  |  |  |\n"},
		{readme, "trimmed column", "| customer | string |  |  |  | trim |  |\n"},
		{readme, "partition column", "| ordered_on | date |  |  | month(ordered_on) |  |  |\n"},
		{readme, "money column", "| amount | decimal(12,2) |  |  |  | currency EUR (its symbols removed) | gross, EUR |\n"},
		{readme, "text key is NFC", "| customer | string | yes | yes |  | nfc (keys by default) |  |\n"},
		{readme, "unpartitioned", "| customers | base | full | – |\n"},
		{readme, "schedule", "- Cron: 0 3 \\* \\* \\* (Europe/Berlin)\n"},
		{readme, "validate command", "lima-tui reconcile --plan platform.yaml"},
		{readme, "pyiceberg", `df = cat.load_table("shop.customers").scan().to_pandas()`},
		{arch, "state row from the lake", "| orders | 3 | 77 | r1 | loaded 3, held back 1 | 2026-01-02 | ✓ pass |\n"},
		{arch, "table not loaded yet", "| customers | – | – | – | – | – | – |\n"},
		{arch, "discovered schema", "**shop.orders** (as discovered by the run)\n\n| column | type | required |\n|---|---|---|\n| order_id | long | yes |\n"},
		{arch, "plan schema", "**shop.customers** (from the plan; not loaded yet)\n"},
		{arch, "pattern decision", "| table format | Apache Iceberg |"},
		{arch, "catalog decision", "| catalog | embedded SQLite (.lima/catalog.db) |"},
		{arch, "partition decision", "| partitioning of orders | month(ordered_on) | queries filter on ordered_on;"},
		{arch, "no partition decision", "| partitioning of customers | none |"},
		{arch, "key decision", "| key of orders | order_id |"},
		{arch, "decimal decision", "| decimal types in orders | amount decimal(12,2) |"},
		{arch, "nfc decision", "| key text of customers | Unicode NFC: customer |"},
		{arch, "load id decision", "| commits | one per table per run, with lima.load-id"},
		{arch, "quality issue", "| orders | amount | decimal comma | sums off by 100x | decimal_comma |\n"},
		{arch, "exceptions of the run", "- 1 row held back as an exception — by table: orders 1; by rule: type 1;"},
		{arch, "change log", "| date | run | status | rows |\n|---|---|---|---|\n| 2026-01-05 02:00 UTC | r1 | ok | read 5, loaded 3, held back 1 |\n<!-- lima:end changelog -->\n"},
	}
	for _, c := range cases {
		if !strings.Contains(c.doc, c.want) {
			t.Errorf("%s: missing %q", c.name, c.want)
		}
	}
	// Nothing changed, nothing rewritten: the same inputs give the same bytes.
	if err := reports.WriteDocs(dir, p, shopReport("r1", 5, 3), ordersLake); err != nil {
		t.Fatal(err)
	}
	readme2, arch2 := readDocs(t, dir)
	if readme2 != readme || arch2 != arch {
		t.Error("regenerating from the same inputs changed the docs")
	}
}

func TestWriteDocsKeepsTheLastKnownLakeState(t *testing.T) {
	dir := t.TempDir()
	p := shopPlan()
	if err := reports.WriteDocs(dir, p, shopReport("r1", 5, 3), ordersLake); err != nil {
		t.Fatal(err)
	}
	// Run 2 found its input already loaded: gate 4 read nothing.
	r2 := shopReport("r2", 6, 0)
	r2.Tables[0].Status, r2.Tables[0].RowsRead, r2.Tables[0].Reconciliation = "already_loaded", 0, gates.Skip
	if err := reports.WriteDocs(dir, p, r2, nil); err != nil {
		t.Fatal(err)
	}
	_, arch := readDocs(t, dir)
	if want := "| orders | 3 | 77 | r1 | already_loaded | 2026-01-02 | – skip |\n"; !strings.Contains(arch, want) {
		t.Errorf("missing %q in\n%s", want, arch)
	}
	if !strings.Contains(arch, "Latest run r2, 2026-01-06 02:00 UTC, status ok.") {
		t.Error("the latest run is not r2")
	}
}

// userSegments cuts Lima's sections out (an implementation independent of
// the one in docs_merge.go: a section is a begin marker line followed by
// its end marker line with no begin marker between) and returns what is
// left, in order.
func userSegments(doc string) []string {
	ms := markerRE.FindAllStringSubmatchIndex(doc, -1)
	var out []string
	last := 0
	for i := 0; i < len(ms); i++ {
		m := ms[i]
		if doc[m[2]:m[3]] != "begin" || i+1 >= len(ms) {
			continue
		}
		n := ms[i+1]
		if doc[n[2]:n[3]] != "end" || doc[n[4]:n[5]] != doc[m[4]:m[5]] {
			continue
		}
		out = append(out, doc[last:m[0]])
		last = n[1] + 1 // the end marker's newline
		i++
	}
	return append(out, doc[last:])
}

func TestWriteDocsKeepsTheUsersTextByteForByte(t *testing.T) {
	above := "# Shop lake\r\n\r\nOwned by the data team.  \r\nAsk #data before changing anything.\r\n\r\n"
	between := "\n> **Note** our BI reads orders only after 06:00.\n\n```\n<!-- lima:begin tables -->\n```\n\n"
	below := "\n## Contacts\n\n- ops: ops@example.com\n- Ünïcödé, tabs\tand a final line without newline"
	cases := []struct {
		file, after string // insert between after the end marker of section after
	}{
		{reports.ReadmeFile, "naming"},
		{reports.ReadmeFile, "tables"},
		{reports.ArchitectureFile, "decisions"},
		{reports.ArchitectureFile, "state"},
	}
	for _, c := range cases {
		t.Run(c.file+"/"+c.after, func(t *testing.T) {
			dir := t.TempDir()
			p := shopPlan()
			if err := reports.WriteDocs(dir, p, shopReport("r1", 5, 3), ordersLake); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c.file)
			b, _ := os.ReadFile(path)
			doc := string(b)
			doc = strings.TrimPrefix(doc, doc[:strings.Index(doc, "<!-- lima:begin")]) // drop Lima's default title
			endMarker := "<!-- lima:end " + c.after + " -->\n"
			i := strings.Index(doc, endMarker) + len(endMarker)
			doc = above + doc[:i] + between + doc[i:] + below
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			want := userSegments(doc)

			// Two regenerations with a changed plan and new runs.
			p.Tables["orders"].Description = "Web shop orders, all channels"
			p.Tables["orders"].Columns = append(p.Tables["orders"].Columns, plan.Column{Name: "channel", Type: "string"})
			for k, id := range []string{"r2", "r3"} {
				if err := reports.WriteDocs(dir, p, shopReport(id, 6+k, 4), nil); err != nil {
					t.Fatal(err)
				}
			}
			b, _ = os.ReadFile(path)
			got := string(b)
			gotSegs := userSegments(got)
			if len(gotSegs) != len(want) {
				t.Fatalf("user text in %d pieces, want %d:\n%s", len(gotSegs), len(want), got)
			}
			for i := range want {
				if gotSegs[i] != want[i] {
					t.Errorf("user piece %d changed:\n got %q\nwant %q", i, gotSegs[i], want[i])
				}
			}
			if !strings.HasPrefix(got, above) || !strings.HasSuffix(got, below) || !strings.Contains(got, endMarker+between) {
				t.Error("a user paragraph moved")
			}
			if c.file == reports.ReadmeFile && !strings.Contains(got, "| channel | string |") {
				t.Error("the regenerated README lacks the new column")
			}
		})
	}
}

func TestWriteDocsAppendsBelowAFileWithoutMarkers(t *testing.T) {
	dir := t.TempDir()
	mine := "# Our lake\n\nHand-written notes, no final newline"
	if err := os.WriteFile(filepath.Join(dir, reports.ReadmeFile), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	p := shopPlan()
	for range 2 {
		if err := reports.WriteDocs(dir, p, shopReport("r1", 5, 3), nil); err != nil {
			t.Fatal(err)
		}
	}
	readme, _ := readDocs(t, dir)
	if want := mine + "\n\n<!-- lima:begin overview -->\n## Overview\n"; !strings.HasPrefix(readme, want) {
		t.Errorf("README starts %q, want %q", readme[:min(len(readme), 120)], want)
	}
	if n := len(sectionNames(t, readme)); n != 7 {
		t.Errorf("%d sections after two runs, want 7", n)
	}
}

func TestWriteDocsPutsAMissingSectionBackInItsPlace(t *testing.T) {
	dir := t.TempDir()
	p := shopPlan()
	if err := reports.WriteDocs(dir, p, nil, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, reports.ReadmeFile)
	b, _ := os.ReadFile(path)
	doc := string(b)
	// The user deleted the catalog section.
	i := strings.Index(doc, "<!-- lima:begin catalog -->")
	j := strings.Index(doc, "<!-- lima:end catalog -->\n") + len("<!-- lima:end catalog -->\n")
	doc = doc[:i] + "My own catalog notes.\n" + doc[j:]
	os.WriteFile(path, []byte(doc), 0o600)
	if err := reports.WriteDocs(dir, p, nil, nil); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	got := string(b)
	if want := "<!-- lima:end storage -->\n\n<!-- lima:begin catalog -->\n"; !strings.Contains(got, want) {
		t.Errorf("catalog section not back after storage:\n%s", got)
	}
	if want := "<!-- lima:end catalog -->\n\nMy own catalog notes.\n\n<!-- lima:begin tables -->"; !strings.Contains(got, want) {
		t.Errorf("the user's notes moved:\n%s", got)
	}
}

var changeRE = regexp.MustCompile(`(?m)^\| 2026-\d\d-\d\d 02:00 UTC \| (r\d+) \| ok \| `)

func changeLog(arch string) []string {
	var ids []string
	for _, m := range changeRE.FindAllStringSubmatch(arch, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestWriteDocsChangeLogGainsOneEntryPerRun(t *testing.T) {
	dir := t.TempDir()
	p := shopPlan()
	steps := []struct {
		run  string
		want string
	}{
		{"r1", "r1"},
		{"r2", "r1 r2"},
		{"r2", "r1 r2"}, // the same run written again adds nothing
		{"r3", "r1 r2 r3"},
	}
	for k, s := range steps {
		if err := reports.WriteDocs(dir, p, shopReport(s.run, 5+k, 3), nil); err != nil {
			t.Fatal(err)
		}
		_, arch := readDocs(t, dir)
		if got := strings.Join(changeLog(arch), " "); got != s.want {
			t.Errorf("after %s: change log %q, want %q", s.run, got, s.want)
		}
	}
	// Capped at the newest 200.
	dir = t.TempDir()
	for i := 1; i <= reports.MaxChangeLog+5; i++ {
		if err := reports.WriteDocs(dir, p, shopReport(fmt.Sprintf("r%03d", i), 1+i%28, 3), nil); err != nil {
			t.Fatal(err)
		}
	}
	_, arch := readDocs(t, dir)
	ids := changeLog(arch)
	if len(ids) != reports.MaxChangeLog || ids[0] != "r006" || ids[len(ids)-1] != "r205" {
		t.Errorf("change log has %d entries, %s … %s; want 200, r006 … r205", len(ids), ids[0], ids[len(ids)-1])
	}
}

func TestWriteDocsEscapesHostileText(t *testing.T) {
	dir := t.TempDir()
	p := shopPlan()
	evilCol := "a|b\r\n<!-- lima:end tables -->\x1b[31m\u202e"
	p.Tables["orders"].Columns = append(p.Tables["orders"].Columns, plan.Column{Name: evilCol, Type: "string", Description: "<script>alert(1)</script>"})
	p.Tables["evil|t`x"] = &plan.Table{Columns: []plan.Column{{Name: "id", Type: "long"}}}
	p.Tables["orders"].Source.Files = []string{"orders|*.csv\n<!-- lima:begin x -->"}
	rep := shopReport("r1", 5, 3)
	rep.Tables[0].Error = "boom\n<!-- lima:end issues -->\x07"
	rep.Tables[0].Checks = []gates.Finding{{Name: "data convention", Status: gates.Warn, Detail: "column " + evilCol + " looks odd"}}
	lake := []reports.LakeTable{{Name: "orders", Rows: 1, Columns: []string{evilCol}, Types: []string{"string"}}}
	if err := reports.WriteDocs(dir, p, rep, lake); err != nil {
		t.Fatal(err)
	}
	readme, arch := readDocs(t, dir)
	escaped := `a\|b\r\n\<!-- lima:end tables --\>\u001b\[31m\u202e`
	cases := []struct {
		doc, name, want string
	}{
		{readme, "column row", "| " + escaped + " | string |  |  |  |  | \\<script\\>alert(1)\\</script\\> |\n"},
		{readme, "table heading", "### shop.evil\\|t\\`x\n"},
		{readme, "file glob", `files orders\|\*.csv\n\<!-- lima:begin x --\>`},
		{arch, "schema row", "| " + escaped + " | string |  |\n"},
		{arch, "error", `- ✗ orders: boom\n\<!-- lima:end issues --\>\u0007`},
		{arch, "warning", "- ! warn orders: data convention — column " + escaped + " looks odd\n"},
	}
	for _, c := range cases {
		if !strings.Contains(c.doc, c.want) {
			t.Errorf("%s: missing %q", c.name, c.want)
		}
	}
	for _, doc := range []string{readme, arch} {
		if strings.ContainsAny(doc, "\x1b\x07\r\u202e") || strings.Contains(doc, "<script>") {
			t.Error("a raw control character, BiDi override or tag reached the docs")
		}
	}
	// The markers still frame exactly Lima's sections.
	if got := strings.Join(sectionNames(t, readme), ","); got != "overview,naming,storage,catalog,tables,schedule,validate" {
		t.Errorf("README sections %s", got)
	}
	if got := strings.Join(sectionNames(t, arch), ","); got != "state,decisions,schedule,issues,changelog" {
		t.Errorf("ARCHITECTURE sections %s", got)
	}
	// A second regeneration keeps it that way (the hidden lake state
	// round-trips the hostile name).
	if err := reports.WriteDocs(dir, p, shopReport("r2", 6, 3), nil); err != nil {
		t.Fatal(err)
	}
	_, arch2 := readDocs(t, dir)
	if !strings.Contains(arch2, "| "+escaped+" | string |  |\n") || len(sectionNames(t, arch2)) != 5 {
		t.Errorf("second regeneration:\n%s", arch2)
	}
}

func TestWriteDocsDoesNotWriteThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.md")
	if err := os.WriteFile(target, []byte("not yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, reports.ReadmeFile)); err != nil {
		t.Fatal(err)
	}
	err := reports.WriteDocs(dir, shopPlan(), nil, nil)
	if !errors.Is(err, reports.ErrDocNotWritten) {
		t.Fatalf("err %v, want ErrDocNotWritten", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "not yours" {
		t.Error("the link's target was written")
	}
	if _, err := os.Stat(filepath.Join(dir, reports.ArchitectureFile)); err != nil {
		t.Errorf("ARCHITECTURE.md should still be written: %v", err)
	}
}

func TestWriteDocsForTheDemoWorkspace(t *testing.T) {
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	ws := flow.Workspace{Dir: dir}
	p, err := flow.LoadPlan(ws.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	exps, err := reports.ReadExpectations(ws.ReportsDir(), out.Report.RunID)
	if err != nil {
		t.Fatal(err)
	}
	recList, err := flow.Reconcile(context.Background(), ws, p, out.Report.RunID)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]*gates.Reconciliation{}
	for _, r := range recList {
		recs[r.Table] = r
	}
	if err := reports.WriteDocs(dir, p, out.Report, reports.LakeTablesFrom(exps, recs)); err != nil {
		t.Fatal(err)
	}
	readme, arch := readDocs(t, dir)
	for _, name := range p.TableNames() {
		tbl := p.Tables[name]
		if !strings.Contains(readme, "### "+p.Namespace()+"."+name+"\n") {
			t.Errorf("README lacks table %s", name)
		}
		for _, c := range tbl.Columns {
			if !strings.Contains(readme, "| "+c.Name+" | "+c.Type+" |") || !strings.Contains(arch, "| "+c.Name+" | "+c.Type+" |") {
				t.Errorf("%s.%s (%s) missing from the docs", name, c.Name, c.Type)
			}
		}
		for _, tr := range out.Report.Tables {
			if tr.Name == name && tr.Status == "loaded" {
				// Gate 4's re-read of a full load equals the rows loaded.
				if want := fmt.Sprintf("| %s | %d | %d | %s |", name, tr.RowsLoaded, tr.SnapshotID, out.Report.RunID); !strings.Contains(arch, want) {
					t.Errorf("ARCHITECTURE lacks %q", want)
				}
			}
		}
	}
	if n := len(changeLogAny(arch)); n != 1 {
		t.Errorf("%d change log entries, want 1", n)
	}
}

func changeLogAny(arch string) []string {
	return regexp.MustCompile(`(?m)^\| \d{4}-\d\d-\d\d \d\d:\d\d UTC \| \S+ \| `).FindAllString(arch, -1)
}
