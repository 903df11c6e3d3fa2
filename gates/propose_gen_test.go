package gates

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"golang.org/x/text/encoding/korean"
)

// The generator below writes a dirty two-table export (a master table and
// a transaction table that refers to it) from a seed, with its own ground
// truth: which column is each table's key, which column refers to the
// master, and how many duplicate rows, empty ids, orphans and bad amounts
// it injected. Names, casing, id shapes and padding vary between seeds, so
// the proposal is judged on exports it was never tuned on.

type genExport struct {
	files map[string]string // path below the source root → content
	// ground truth
	parent, child     string // table names the proposal should give
	parentKey         string // header of the master's key
	decoyKeys         []string
	masterDirty       bool
	childKey          string // header of the transaction table's key
	refCol            string // header of the column referring to the master
	childRows         int    // data rows of the transaction table
	dupRows, emptyIDs int    // exact duplicate copies, rows with an empty id
	orphans           int    // rows whose reference is in no master row
	badAmounts        int
	controlChars      int // rows whose remark holds a control character
	currencyAmounts   int // rows whose amount carries a currency symbol
	heldBack          int // rows with any of the faults above (a repeat: all but the first in file order)
	// heldBy is heldBack by the rule the load must name (each faulty row
	// has exactly one fault).
	heldBy map[string]int
	// encoding: how the files are written — "utf-8", "euc-kr" (the master,
	// with Korean names) or "utf-8-bom-crlf" (the transactions).
	encoding         string
	amountCol        string
	badAmountExample string
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// idHeader names an identifier column of entity e in one of the styles
// exports use; style k picks the style (callers rotate it with the seed so
// that every style is drawn).
func idHeader(k int, e string) string {
	styles := []string{e + "_id", upperFirst(e) + "ID", strings.ToUpper(e) + "_ID", upperFirst(e[:4]) + "#", upperFirst(e) + "_Id", e + "_no"}
	return styles[k%len(styles)]
}

func genDirty(seed uint64) genExport {
	r := rand.New(rand.NewPCG(seed, seed*7919+1))
	type ent struct{ one, many string }
	master := pick(r, ent{"supplier", "suppliers"}, ent{"vendor", "vendors"}, ent{"customer", "customers"}, ent{"partner", "partners"})
	fact := pick(r, ent{"inspection", "inspections"}, ent{"order", "orders"}, ent{"receipt", "receipts"}, ent{"claim", "claims"})
	g := genExport{files: map[string]string{}, parent: master.many, child: fact.many}
	g.parentKey = idHeader(int(seed)+r.IntN(2)*6, master.one)
	g.childKey = idHeader(int(seed/2)+r.IntN(3), fact.one)
	// The reference: the master key's own header, or another name.
	g.refCol = pick(r, g.parentKey, master.one+"_ref", upperFirst(master.one)+"Code", master.one+"_number")

	// Master: ids numeric (SAP style, padded in the transactions) or
	// alphanumeric (case differs in the transactions).
	nMaster := 60 + r.IntN(140)
	numeric := r.IntN(2) == 0
	prefix := pick(r, "S-", "V", "C", "P-")
	masterIDs := make([]string, nMaster)
	perm := r.Perm(nMaster)
	for i := range masterIDs {
		if numeric {
			masterIDs[i] = fmt.Sprint(10000 + 3*perm[i])
		} else {
			masterIDs[i] = fmt.Sprintf("%s%05d", prefix, 10+perm[i])
		}
	}
	bizHeader := pick(r, "business_no", "BusinessNo", "tax_no")
	countryHeader := pick(r, "country_code", "CountryCode", "country_cd")
	g.decoyKeys = []string{bizHeader, countryHeader}
	var b strings.Builder
	b.WriteString(strings.Join([]string{g.parentKey, "Name", bizHeader, countryHeader}, ",") + "\n")
	var mrows []string
	g.encoding = []string{"euc-kr", "utf-8-bom-crlf", "utf-8"}[seed%3]
	for i, id := range masterIDs {
		name := fmt.Sprintf("%s %d", upperFirst(master.one), i)
		if g.encoding == "euc-kr" {
			name = fmt.Sprintf("%s %d", pick(r, "한일정밀", "부산주조", "대한금속", "서울공구"), i)
		}
		mrows = append(mrows, fmt.Sprintf("%s,%s,%d,%s\n", id, name, 1000000000+r.IntN(8000000000), pick(r, "KR", "US", "DE", "JP", "FR")))
	}
	if r.IntN(2) == 0 { // a dirty master: one row twice, one without an id
		g.masterDirty = true
		mrows = append(mrows, mrows[r.IntN(len(mrows))])
		mrows = append(mrows, fmt.Sprintf(",%s without id,%d,KR\n", upperFirst(master.one), 1000000000+r.IntN(8000000000)))
	}
	for _, i := range r.Perm(len(mrows)) {
		b.WriteString(mrows[i])
	}
	g.files[master.many+".csv"] = b.String()
	if g.encoding == "euc-kr" {
		enc, err := korean.EUCKR.NewEncoder().String(b.String())
		if err != nil {
			panic(err)
		}
		g.files[master.many+".csv"] = enc
	}

	// Transactions.
	n := 1500 + r.IntN(1500)
	amount := pick(r, "amount", "Amount", "total_amount", "cost")
	g.amountCol = amount
	dateH := pick(r, fact.one+"_date", upperFirst(fact.one)+"Date", "booked_on")
	header := []string{g.childKey, g.refCol, dateH, "qty", amount, "remark"}
	if g.refCol == g.childKey { // same style drawn twice
		header[1] = master.one + "_ref"
		g.refCol = header[1]
	}
	childIDs := r.Perm(n * 3)
	type row []string
	var rows []row
	for i := 0; i < n; i++ {
		id := fmt.Sprint(100000 + childIDs[i])
		if r.IntN(2) == 0 {
			id = fmt.Sprintf("%s-%07d", strings.ToUpper(fact.one[:3]), childIDs[i])
		}
		ref := masterIDs[r.IntN(nMaster)]
		if numeric {
			ref = fmt.Sprintf("%010s", ref) // SAP pads to 10 digits
		} else if r.IntN(3) == 0 {
			ref = strings.ToLower(ref)
		}
		if r.IntN(10) == 0 {
			ref = " " + ref
		}
		day := 1 + r.IntN(365)
		date := fmt.Sprintf("2025-%02d-%02d", 1+(day-1)/31%12, 1+(day-1)%28)
		amt := fmt.Sprintf("%d.%02d", r.IntN(5000), r.IntN(100))
		rows = append(rows, row{id, ref, date, fmt.Sprint(1 + r.IntN(50)), amt, pick(r, "ok", "late", "checked", ""), "", ""})
	}
	// Each faulty row gets exactly one fault: the rows are drawn from one
	// permutation, one slice per kind.
	faultRows := r.Perm(n)
	take := func(k int) []int {
		out := faultRows[:k]
		faultRows = faultRows[k:]
		return out
	}
	// Orphans: references to no master row.
	g.orphans = n/100 + r.IntN(5)
	for _, i := range take(g.orphans) {
		rows[i][6] = "orphan" // not written: the generator's own mark
		if numeric {
			rows[i][1] = fmt.Sprintf("%010d", 90000+r.IntN(9000))
		} else {
			rows[i][1] = fmt.Sprintf("%s%05d", "X", 90000+r.IntN(9000))
		}
	}
	// Bad amounts.
	g.badAmounts = 1 + r.IntN(3)
	for k, i := range take(g.badAmounts) {
		rows[i][4] = []string{"12x.50", "1.2.3", "about 5"}[k]
		if k == 0 {
			g.badAmountExample = rows[i][4]
		}
	}
	// Control characters in a remark (a NUL, a BEL, an ESC; quoted or
	// not), and amounts with a currency symbol the column does not declare.
	g.controlChars = 1 + r.IntN(3)
	for k, i := range take(g.controlChars) {
		rows[i][5] = []string{"\"bad\x00remark\"", "ring\x07", "esc\x1b[2J"}[k]
	}
	g.currencyAmounts = 1 + r.IntN(2)
	for k, i := range take(g.currencyAmounts) {
		rows[i][4] = []string{"₩1200", "€12.50"}[k]
	}
	// Empty ids, then exact duplicate copies of rows without a fault.
	g.emptyIDs = n/400 + 1 + r.IntN(4)
	for _, i := range take(g.emptyIDs) {
		rows[i][0] = ""
	}
	g.dupRows = n/200 + 1 + r.IntN(6)
	var copies []row
	for _, i := range take(g.dupRows) {
		cp := slices.Clone(rows[i]) // before any insert shifts the indices
		cp[7] = "copy"              // placed anywhere: the first in file order is the one kept
		copies = append(copies, cp)
	}
	for _, cp := range copies {
		rows = slices.Insert(rows, r.IntN(len(rows)+1), cp)
	}
	g.childRows = len(rows)
	g.orphans, g.badAmounts = 0, 0
	for _, rw := range rows {
		if rw[6] == "orphan" {
			g.orphans++
		}
		if slices.Contains([]string{"12x.50", "1.2.3", "about 5"}, rw[4]) {
			g.badAmounts++
		}
	}
	eol := "\n"
	if g.encoding == "utf-8-bom-crlf" {
		eol = "\r\n"
	}
	// One file, or monthly files.
	monthly := r.IntN(2) == 0
	parts := map[string]*strings.Builder{}
	for _, rw := range rows {
		name := fact.many + ".csv"
		if monthly {
			name = fact.many + "_" + rw[2][:7] + ".csv"
		}
		pb := parts[name]
		if pb == nil {
			pb = &strings.Builder{}
			if g.encoding == "utf-8-bom-crlf" {
				pb.WriteString("\ufeff")
			}
			pb.WriteString(strings.Join(header, ",") + eol)
			parts[name] = pb
		}
		pb.WriteString(strings.Join(rw[:6], ",") + eol)
	}
	for name, pb := range parts {
		g.files[name] = pb.String()
	}
	// Held back: every row with a fault; of rows with the same id, all but
	// the first in file order (files by name).
	names := make([]string, 0, len(parts))
	for name := range parts {
		names = append(names, name)
	}
	slices.Sort(names)
	seenID := map[string]bool{}
	g.heldBy = map[string]int{}
	for _, name := range names {
		for _, rw := range rows {
			if monthly && name != fact.many+"_"+rw[2][:7]+".csv" {
				continue
			}
			rule := ""
			switch {
			case rw[0] == "":
				rule = "not_null"
			case rw[6] == "orphan":
				rule = "references"
			case slices.Contains([]string{"12x.50", "1.2.3", "about 5"}, rw[4]):
				rule = "type"
			case strings.ContainsAny(rw[5], "\x00\x07\x1b"):
				rule = "control_char"
			case strings.ContainsAny(rw[4], "₩€"):
				rule = "currency"
			case seenID[rw[0]]:
				rule = "unique"
			}
			seenID[rw[0]] = true
			if rule != "" {
				g.heldBack++
				g.heldBy[rule]++
			}
		}
	}
	return g
}

// writeExport writes files below a new folder and returns a plan whose
// only source is that folder.
func writeExport(t *testing.T, files map[string]string) (string, *plan.Plan) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, "data", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Prefix: "gen"},
		Sources: map[string]*plan.Source{"src": {Kind: plan.SourceFiles, Path: "data"}}}
	return dir, p
}

// colByHeader is the proposed column read from a file header.
func colByHeader(t *testing.T, tb *plan.Table, header string) string {
	t.Helper()
	for _, c := range tb.Columns {
		if c.SourceName == header || (c.SourceName == "" && c.Name == header) {
			return c.Name
		}
	}
	t.Fatalf("no column from header %q in %+v", header, tb.Columns)
	return ""
}

func hasCheck(tb *plan.Table, rule, column, refs string) bool {
	return slices.ContainsFunc(tb.Checks, func(c plan.Check) bool {
		return c.Rule == rule && c.Column == column && c.References == refs
	})
}

func findingsText(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s [%s] %s | %s\n", f.Name, f.Status, f.Detail, f.Fix)
	}
	return b.String()
}

// TestProposeGeneratedDirtyExports: on exports the code was never tuned on,
// the proposal keys each table on the generator's true key despite
// duplicates and empty ids, states what will be held back, and finds the
// reference to the master table by value overlap.
func TestProposeGeneratedDirtyExports(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		g := genDirty(seed)
		t.Run(fmt.Sprintf("seed%d %s(%s dirty=%v) %s(%s → %s)", seed, g.parent, g.parentKey, g.masterDirty, g.child, g.childKey, g.refCol), func(t *testing.T) {
			dir, p := writeExport(t, g.files)
			pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
			if err != nil {
				t.Fatal(err)
			}
			all := findingsText(pr.Findings)
			master, fact := pr.Plan.Tables[g.parent], pr.Plan.Tables[g.child]
			if master == nil || fact == nil {
				t.Fatalf("tables %v, want %s and %s", pr.Plan.TableNames(), g.parent, g.child)
			}
			mk := colByHeader(t, master, g.parentKey)
			if !slices.Equal(master.Load.Keys, []string{mk}) {
				t.Errorf("%s keys %v, want [%s] (decoys %v)\n%s", g.parent, master.Load.Keys, mk, g.decoyKeys, all)
			}
			ck := colByHeader(t, fact, g.childKey)
			if !slices.Equal(fact.Load.Keys, []string{ck}) {
				t.Errorf("%s keys %v, want [%s]\n%s", g.child, fact.Load.Keys, ck, all)
			}
			kf := finding(t, pr.Findings, g.child+": key")
			for _, want := range []string{fmt.Sprintf("%d rows repeat", g.dupRows), fmt.Sprintf("%d rows have no %s", g.emptyIDs, ck), "held back", "unique"} {
				if !strings.Contains(kf.Detail+" "+kf.Fix, want) {
					t.Errorf("key finding does not say %q: %s | %s", want, kf.Detail, kf.Fix)
				}
			}
			rc := colByHeader(t, fact, g.refCol)
			ref := g.parent + "." + mk
			if !hasCheck(fact, plan.RuleReferences, rc, ref) {
				t.Errorf("%s: no references check %s → %s: %+v\n%s", g.child, rc, ref, fact.Checks, all)
			}
			if !slices.Contains(fact.JoinKeys, plan.JoinKey{Column: rc, References: ref}) {
				t.Errorf("%s: no join %s → %s: %+v", g.child, rc, ref, fact.JoinKeys)
			}
			ac := colByHeader(t, fact, g.amountCol)
			if a, _ := fact.Column(ac); !strings.HasPrefix(a.Type, "decimal") {
				t.Errorf("%s.%s proposed as %q despite only %d bad values", g.child, ac, a.Type, g.badAmounts)
			}
			tf := finding(t, pr.Findings, g.child+"."+ac+": type")
			if !strings.Contains(tf.Detail, fmt.Sprintf("; %s (", countNoun(g.badAmounts, "value", "values"))) || !strings.Contains(tf.Detail, fmt.Sprintf("%q", g.badAmountExample)) ||
				!strings.Contains(tf.Detail, "held back at load (rule type)") {
				t.Errorf("the type finding does not name the %d bad amounts: %s", g.badAmounts, tf.Detail)
			}
			jf := finding(t, pr.Findings, fmt.Sprintf("%s.%s → %s: join", g.child, rc, ref))
			if !strings.Contains(jf.Detail, fmt.Sprintf(" %d rows whose", g.orphans)) {
				t.Errorf("join finding does not name the %d would-be orphan rows: %s", g.orphans, jf.Detail)
			}
		})
	}
}

// threeCSVs is an ordinary small export: customers keyed by Cust#, products
// by product code, orders referring to both with 100% overlap.
func threeCSVs() map[string]string {
	var cu, pr, or strings.Builder
	cu.WriteString("Cust#,Name,country_code,Segment\n")
	countries := []string{"KR", "US", "DE", "FR", "JP", "GB", "IT", "ES"}
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&cu, "%d,Customer %c,%s,%s\n", 101+i, 'A'+i, countries[i], []string{"retail", "wholesale"}[i%2])
	}
	pr.WriteString("product_code,description,unit_price,category\n")
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&pr, "P-%03d,Item %d,%d.50,%s\n", i+1, i+1, 10+i, []string{"tools", "parts", "paint"}[i%3])
	}
	or.WriteString("order_id,customer_no,product_code,order_date,qty,amount\n")
	for i := 0; i < 40; i++ {
		amount := fmt.Sprintf("%d.%02d", 20+i*3, i%100)
		if i == 17 {
			amount = "12x.50"
		}
		fmt.Fprintf(&or, "%d,%d,P-%03d,2026-%02d-%02d,%d,%s\n", 5001+i, 101+(i*5)%8, 1+(i*7)%6, 1+i%3, 1+i%27, 1+i%9, amount)
	}
	return map[string]string{"customers.csv": cu.String(), "products.csv": pr.String(), "orders.csv": or.String()}
}

// proposeThreeCSVs proposes the data model of the three CSVs.
func proposeThreeCSVs(t *testing.T) (*Proposal, *plan.Table, *plan.Table, *plan.Table) {
	t.Helper()
	dir, p := writeExport(t, threeCSVs())
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	cust, prod, ord := pr.Plan.Tables["customers"], pr.Plan.Tables["products"], pr.Plan.Tables["orders"]
	if cust == nil || prod == nil || ord == nil {
		t.Fatalf("tables %v", pr.Plan.TableNames())
	}
	return pr, cust, prod, ord
}

// TestProposeThreePlainCSVs is the golden-ish proposal of three ordinary
// CSVs: keys Cust#, product_code and order_id (not country_code, unique in
// eight rows); both references of orders as checks and joins.
func TestProposeThreePlainCSVs(t *testing.T) {
	pr, cust, prod, ord := proposeThreeCSVs(t)
	all := findingsText(pr.Findings)
	ck := colByHeader(t, cust, "Cust#")
	for _, c := range []struct {
		tb   *plan.Table
		name string
		want []string
	}{{cust, "customers", []string{ck}}, {prod, "products", []string{"product_code"}}, {ord, "orders", []string{"order_id"}}} {
		if !slices.Equal(c.tb.Load.Keys, c.want) {
			t.Errorf("%s keys %v, want %v\n%s", c.name, c.tb.Load.Keys, c.want, all)
		}
	}
	wantJoins := []plan.JoinKey{{Column: "customer_no", References: "customers." + ck}, {Column: "product_code", References: "products.product_code"}}
	for _, j := range wantJoins {
		if !slices.Contains(ord.JoinKeys, j) {
			t.Errorf("orders: no join %+v in %+v\n%s", j, ord.JoinKeys, all)
		}
		if !hasCheck(ord, plan.RuleReferences, j.Column, j.References) {
			t.Errorf("orders: no references check %+v in %+v", j, ord.Checks)
		}
	}
	if len(ord.JoinKeys) != 2 || len(ord.Checks) != 2 {
		t.Errorf("orders: joins %+v, checks %+v; want exactly the two references", ord.JoinKeys, ord.Checks)
	}
	if len(cust.JoinKeys)+len(prod.JoinKeys) != 0 || len(cust.Checks)+len(prod.Checks) != 0 {
		t.Errorf("dimensions refer to nothing: customers %+v %+v, products %+v %+v", cust.JoinKeys, cust.Checks, prod.JoinKeys, prod.Checks)
	}
	for name, tb := range map[string]*plan.Table{"customers": cust, "products": prod, "orders": ord} {
		if len(tb.Partition) != 0 {
			t.Errorf("%s partitioned by %v: tables this small are not partitioned", name, tb.Partition)
		}
	}
}

// TestProposeSamplesEveryFile: with more rows than it reads, gate 3 reads
// the first rows of every file, not the first files only: twelve monthly
// files show a span of twelve months, and the finding counts the files
// matched and sampled.
func TestProposeSamplesEveryFile(t *testing.T) {
	files := map[string]string{}
	for m := 1; m <= 12; m++ {
		var b strings.Builder
		b.WriteString("event_id,happened_on,qty\n")
		for i := 0; i < 300; i++ {
			fmt.Fprintf(&b, "%d,2025-%02d-%02d,%d\n", m*1000+i, m, 1+i%28, i)
		}
		files[fmt.Sprintf("events_2025-%02d.csv", m)] = b.String()
	}
	dir, p := writeExport(t, files)
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir, MaxRows: 1200})
	if err != nil {
		t.Fatal(err)
	}
	f := finding(t, pr.Findings, "events: files")
	if !strings.Contains(f.Detail, "events_*.csv matched 12 files") || !strings.Contains(f.Detail, "sampled 12 of 12 files (first, last and random rows of each): 1200 data rows read of about 3600") {
		t.Errorf("files finding: %s", f.Detail)
	}
	ev := pr.Evidence["events"]
	for _, c := range ev.Columns {
		if c.Profile.Name == "happened_on" {
			if lo, hi := c.TimeMin.Format(time.DateOnly), c.TimeMax.Format(time.DateOnly); lo != "2025-01-01" || hi < "2025-12-01" {
				t.Errorf("span %s … %s, want January to December", lo, hi)
			}
		}
	}
}

// TestProposeNamesLinksOutside: a link inside the source folder to a file
// inside it is followed, a link that leads out of it is named by a
// finding (it used to be dropped without one).
func TestProposeNamesLinksOutside(t *testing.T) {
	dir, p := writeExport(t, map[string]string{"store/customers.csv": threeCSVs()["customers.csv"]})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "orders.csv"), []byte(threeCSVs()["orders.csv"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "orders.csv"), filepath.Join(dir, "data", "orders.csv")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink("store", filepath.Join(dir, "data", "current")); err != nil {
		t.Fatal(err)
	}
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Plan.Tables["customers"] == nil {
		t.Errorf("tables %v, want customers", pr.Plan.TableNames())
	}
	f := finding(t, pr.Findings, "source src: links left out")
	if f.Status != Warn || !strings.Contains(f.Detail, "orders.csv") {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}

// TestProposeTypeSurvivesABadValue: one bad amount in forty keeps
// orders.amount a decimal, the finding naming the value held back.
func TestProposeTypeSurvivesABadValue(t *testing.T) {
	pr, _, _, ord := proposeThreeCSVs(t)
	if a, _ := ord.Column("amount"); !strings.HasPrefix(a.Type, "decimal") {
		t.Errorf("orders.amount proposed as %q: one bad value of 40 must not turn it into text", a.Type)
	}
	f := finding(t, pr.Findings, "orders.amount: type")
	if f.Status != Warn || !strings.Contains(f.Detail, `39 of 40 values read fit it (97.5%); 1 value ("12x.50") does not: its row is held back at load (rule type)`) {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}

// TestProposePinsTimestampFormatsByFrequency: a timestamp column gets the
// formats its values were read in, the most frequent first (it used to get
// none, so the load tried every default layout on every value).
func TestProposePinsTimestampFormatsByFrequency(t *testing.T) {
	var b strings.Builder
	b.WriteString("event_id,updated_at\n")
	for i := 0; i < 40; i++ {
		ts := fmt.Sprintf("2026-01-%02d 10:%02d:00", 1+i%28, i)
		if i%4 == 0 {
			ts = fmt.Sprintf("2026-01-%02dT10:%02d:00", 1+i%28, i)
		}
		fmt.Fprintf(&b, "%d,%s\n", i+1, ts)
	}
	dir, p := writeExport(t, map[string]string{"events.csv": b.String()})
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := pr.Plan.Tables["events"].Column("updated_at")
	if c.Type != "timestamp" || len(c.Formats) != 2 || !strings.Contains(c.Formats[0], "dd HH") || !strings.Contains(c.Formats[1], "ddTHH") {
		t.Errorf("updated_at: %s %q; want timestamp with the space form (30 values) before the T form (10)", c.Type, c.Formats)
	}
}

// TestWriteGeneratedExport writes one generated export to
// $LIMA_GEN_DIR/<seed> with its ground truth, to walk the newcomer path
// (init --defaults, propose --write, approve, run) by hand. Skipped
// unless LIMA_GEN_DIR is set.
func TestWriteGeneratedExport(t *testing.T) {
	out := os.Getenv("LIMA_GEN_DIR")
	if out == "" {
		t.Skip("LIMA_GEN_DIR not set")
	}
	for seed := uint64(1); seed <= 12; seed++ {
		g := genDirty(seed)
		dir := filepath.Join(out, fmt.Sprint(seed))
		for name, body := range g.files {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("seed %d: %s key %s (dirty %v); %s key %s, %d rows: %d duplicate copies, %d empty ids, %d orphans (%s), %d bad amounts; expect %d loaded, %d held back",
			seed, g.parent, g.parentKey, g.masterDirty, g.child, g.childKey, g.childRows, g.dupRows, g.emptyIDs, g.orphans, g.refCol, g.badAmounts, g.childRows-g.heldBack, g.heldBack)
	}
}

// GenDirtyForTest exposes the generator to the external test package
// (propose_e2e_test.go), which may import flow.
func GenDirtyForTest(seed uint64) (files map[string]string, child string, rows, heldBack int, heldBy map[string]int, encoding string) {
	g := genDirty(seed)
	return g.files, g.child, g.childRows, g.heldBack, g.heldBy, g.encoding
}
