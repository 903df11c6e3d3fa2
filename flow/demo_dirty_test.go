package flow_test

// The dirtiest files of the bundled demo: an EUC-KR export whose name is
// Korean in NFD, an Excel workbook and a column whose date order the data
// cannot tell. Every number below was counted by hand from the files in
// engine/demo/data/erp, never taken from Lima's output.

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

// evalFile is the name of the EUC-KR supplier evaluation export as the
// plan, the report and the ledger spell it (NFC); on disk it is NFD, as a
// Mac saved it: ᄒ ᅧ ᆸ ᄅ ᅧ ᆨ … (U+1112 U+1167 U+11B8 …).
const evalFile = "협력사평가_2026.csv"

func TestDemoDirtyTablesBalanceWithHandCountedTotals(t *testing.T) {
	ws, p := newDemo(t)
	out := runOnce(t, ws, p, flow.RunOptions{})
	r := out.Report
	if r.Status != reports.StatusOK || r.ExitCode() != 0 {
		t.Fatalf("status %s, want ok", r.Status)
	}
	st := openLedger(t, ws, p)
	type want struct {
		read, loaded, quarantined, skipped int64
		skippedBy                          map[string]int64
		sums                               map[string]string
		// fixes is the exact set of fixes reported, "column/fix" → rows.
		fixes map[string]int64
		// rules counts the table's exceptions by rule.
		rules     map[string]int64
		watermark string
	}
	wants := map[string]want{
		// 협력사평가_2026.csv (EUC-KR, CRLF): 1 header + 9 records = 10 read;
		// skipped: the header. Held back: line 6 (10010019, its comment cut
		// after the lead byte 0xC0 of 으: encoding) and line 7 (0010010020,
		// score 105.0 > 100: range) = 2. Loaded 7.
		// score: 92.5 + 78.0 + 85.5 + 88.0 + 80.5 + 94.0 + 79.5 = 598.0.
		"supplier_evaluations": {10, 7, 2, 1, map[string]int64{"header": 1}, map[string]string{"score": "598.0"},
			map[string]int64{
				"supplier_id/trim": 1, // " 10010017 " (line 4)
				// every loaded row's evaluated_on is dd.MM.yyyy, read as ISO
				"evaluated_on/date format dd.MM.yyyy → ISO": 7,
				// 10010016 (lines 3, 8) and 10010017 (lines 4, 10); the
				// unpadded 10010019 of line 6 is held back, not counted.
				"supplier_id/zero-padded to 10 digits": 4,
			},
			map[string]int64{"encoding": 1, "range": 1},
			"2026-02-24", // 24.02.2026 (line 10), the latest date of the file
		},
		// shipments_2026Q1.xlsx#Shipments: sheet rows 1–8 = 8 read; skipped:
		// the merged title (row 1) and the header (row 2). Held back: row 7
		// (qty "12 box", amount #VALUE!) = 1. Loaded 5 (rows 3–6 and 8).
		// qty: 120 + 80 + 500 + 60 + 40 = 800.
		// amount (cached =qty*unit_price): 150060 + 78420 + 6375 + 75030 + 39210 = 349095.
		"shipments": {8, 5, 1, 2, map[string]int64{"header": 2}, map[string]string{"qty": "800", "amount": "349095.00"},
			map[string]int64{
				"shipment_no/zero-padded to 6 digits": 1, // 4504, typed as a number (row 6)
				"plant/Unicode NFD → NFC":             1, // 창원공장 pasted in NFD (row 6)
			},
			map[string]int64{"type": 1},
			"2026-03-27", // row 8, serial 46108
		},
		// gauge_calibrations.csv: 1 header + 7 records = 8 read. Held back:
		// G-0105 (31/04/2026: April has 30 days) = 1. Loaded 6.
		// deviation_mm: 0,02 - 0,01 + 0,00 + 0,03 + 0,05 - 0,02 = 0.07.
		"gauge_calibrations": {8, 6, 1, 1, map[string]int64{"header": 1}, map[string]string{"deviation_mm": "0.070"},
			map[string]int64{
				// every loaded value has a decimal comma (G-0105 is held back)
				"deviation_mm/decimal comma → point": 6,
				// the analyst's dd/MM/yyyy decision, applied to every loaded row
				"calibrated_on/date format dd/MM/yyyy → ISO": 6,
			},
			map[string]int64{"type": 1},
			"",
		},
	}
	ctx := context.Background()
	for name, w := range wants {
		tr := tableReport(t, r, name)
		if tr.Status != "loaded" || tr.RowsRead != w.read || tr.RowsLoaded != w.loaded || tr.RowsQuarantined != w.quarantined || tr.RowsSkipped != w.skipped {
			t.Errorf("%s: %s read/loaded/quarantined/skipped = %d/%d/%d/%d, want loaded %d/%d/%d/%d (%s)", name, tr.Status,
				tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped, w.read, w.loaded, w.quarantined, w.skipped, tr.Error)
		}
		if !tr.Balanced || tr.RowsRead != tr.RowsLoaded+tr.RowsQuarantined+tr.RowsSkipped {
			t.Errorf("%s: does not balance", name)
		}
		if len(tr.SkippedBy) != len(w.skippedBy) {
			t.Errorf("%s: skipped by %v, want %v", name, tr.SkippedBy, w.skippedBy)
		}
		for k, v := range w.skippedBy {
			if tr.SkippedBy[k] != v {
				t.Errorf("%s: skipped %s = %d, want %d", name, k, tr.SkippedBy[k], v)
			}
		}
		if len(tr.ControlTotals) != len(w.sums) {
			t.Errorf("%s: control totals %v, want exactly %v", name, tr.ControlTotals, w.sums)
		}
		for col, sum := range w.sums {
			ct, ok := tr.ControlTotals[col]
			if !ok || ct.Source != sum || ct.Target != sum {
				t.Errorf("%s: sum(%s) source %q lake %q, want %q on both sides", name, col, ct.Source, ct.Target, sum)
			}
		}
		if tr.Reconciliation != gates.Pass {
			t.Errorf("%s: gate 4 %s: %+v", name, tr.Reconciliation, tr.Checks)
		}
		if tr.WatermarkAfter != w.watermark {
			t.Errorf("%s: watermark %q, want %q", name, tr.WatermarkAfter, w.watermark)
		}
		got := map[string]int64{}
		for _, n := range tr.Normalizations {
			got[n.Column+"/"+n.Fix] = n.Count
		}
		for k, v := range w.fixes {
			if got[k] != v {
				t.Errorf("%s: fix %s = %d, want %d", name, k, got[k], v)
			}
		}
		if len(got) != len(w.fixes) {
			t.Errorf("%s: fixes reported %v, want exactly %v", name, got, w.fixes)
		}
		// Exceptions: the report's count of the table and the ledger's
		// committed exceptions of this load, by rule.
		var held int64
		for _, n := range w.rules {
			held += n
		}
		if r.Exceptions.ByTable[name] != held {
			t.Errorf("%s: report counts %d exceptions, want %d", name, r.Exceptions.ByTable[name], held)
		}
		byRule, err := st.CountBy(ctx, ledger.Filter{Table: name, LoadID: tr.LoadID}, ledger.ByRule)
		if err != nil {
			t.Fatal(err)
		}
		if len(byRule) != len(w.rules) {
			t.Errorf("%s: ledger rules %v, want %v", name, byRule, w.rules)
		}
		for k, v := range w.rules {
			if byRule[k] != v {
				t.Errorf("%s: ledger holds %d %s exceptions, want %d", name, byRule[k], k, v)
			}
		}
		// The lake, read with iceberg-go directly.
		_, tbl := loadIceberg(t, ws, p, name)
		if n := countRows(t, tbl); n != w.loaded {
			t.Errorf("%s: the lake holds %d rows, want %d", name, n, w.loaded)
		}
		if snap := tbl.CurrentSnapshot(); snap == nil || snap.Summary.Properties["lima.load-id"] != tr.LoadID {
			t.Errorf("%s: the current snapshot does not carry load %s", name, tr.LoadID)
		}
	}
}

func TestEUCKRFileWithNFDNameKeepsItsBytes(t *testing.T) {
	ws, p := newDemo(t)
	out := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"suppliers", "supplier_evaluations"}})
	tr := tableReport(t, out.Report, "supplier_evaluations")
	nfd := norm.NFD.String(evalFile)
	if nfd == evalFile || !norm.NFC.IsNormalString(evalFile) {
		t.Fatal("test setup: the NFC and NFD names should differ")
	}
	// On disk the name is NFD (13 Hangul syllables → jamo); the plan names
	// it in NFC and Lima reports it in NFC, keeping the name as stored.
	dir := filepath.Join(ws.Dir, "data", "erp")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == nfd }) {
		t.Fatalf("no file named %+q (NFD) in %s", nfd, dir)
	}
	if len(tr.Files) != 1 || tr.Files[0].Name != evalFile || tr.Files[0].OriginalName != nfd || tr.Files[0].RowsRead != 10 {
		t.Fatalf("report files %+v, want one: %+q (NFC) stored as %+q, 10 rows", tr.Files, evalFile, nfd)
	}
	for _, e := range tr.Exceptions {
		if !strings.HasPrefix(e.Locator, evalFile+":") {
			t.Errorf("report exception at %+q, want the NFC name", e.Locator)
		}
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(out.ReportPath), "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte(evalFile+":6")) || bytes.Contains(md, []byte(nfd)) {
		t.Error("report.md does not name the file in NFC only")
	}

	// The file as stored, split on CRLF: line N is lines[N-1].
	stored, err := os.ReadFile(filepath.Join(dir, nfd))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(stored, []byte("\r\n"))
	euckr := func(s string) []byte {
		b, err := korean.EUCKR.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Line 6 as the ERP wrote it: the comment cut after the lead byte of
	// 으 (EUC-KR 0xC0 0xB8). Line 7: the score above 100.
	line6 := append(euckr("10010019,03.02.2026,81.0,검사 성적서 제출 지연"), 0xC0)
	line7 := euckr("0010010020,10.02.2026,105.0,우수 협력사 가점 포함")
	if !bytes.Equal(lines[5], line6) || !bytes.Equal(lines[6], line7) {
		t.Fatal("test setup: lines 6 and 7 of the file are not what this test expects")
	}

	st := openLedger(t, ws, p)
	page, _, err := st.List(context.Background(), ledger.Filter{Table: "supplier_evaluations"}, ledger.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 {
		t.Fatalf("ledger holds %d exceptions of supplier_evaluations, want 2 (lines 6 and 7)", len(page))
	}
	for _, e := range page {
		if e.File != evalFile || e.Encoding != clean.EUCKR || e.Owner != "Seo-yeon Han (supplier quality)" || e.Status != ledger.StatusOpen {
			t.Errorf("exception at %+q:%d: encoding %q owner %q status %s", e.File, e.Line, e.Encoding, e.Owner, e.Status)
		}
		if utf8.Valid(e.Raw) {
			t.Errorf("line %d: raw bytes are valid UTF-8, want the EUC-KR bytes as stored", e.Line)
		}
		switch e.Line {
		case 6:
			// 25 bytes of "10010019,03.02.2026,81.0," + 21 of "검사 성적서
			// 제출 지연" (9 syllables × 2 + 3 spaces): the cut byte is at 46.
			if !bytes.Equal(e.Raw, line6) || len(e.Failures) != 1 || e.Failures[0].Rule != clean.RuleEncoding ||
				e.Failures[0].Reason != "invalid euc-kr byte sequence 0xC0 at byte 46 of the row" {
				t.Errorf("line 6: raw %q failures %+v", e.Raw, e.Failures)
			}
		case 7:
			if !bytes.Equal(e.Raw, line7) || len(e.Failures) != 1 || e.Failures[0].Rule != "range" || e.Failures[0].Column != "score" || e.Failures[0].Value != "105.0" {
				t.Errorf("line 7: raw %q failures %+v", e.Raw, e.Failures)
			}
			// The values replay starts from are decoded text.
			if e.Values["comment"] != "우수 협력사 가점 포함" {
				t.Errorf("line 7: comment %q", e.Values["comment"])
			}
			if txt, err := clean.Decode(clean.EUCKR, e.Raw); err != nil || txt != "0010010020,10.02.2026,105.0,우수 협력사 가점 포함" {
				t.Errorf("line 7 decodes to %q (%v)", txt, err)
			}
		default:
			t.Errorf("unexpected exception at line %d", e.Line)
		}
	}

	// The loaded text is decoded: read back with iceberg-go.
	_, tbl := loadIceberg(t, ws, p, "supplier_evaluations")
	rows := lakeRows(t, tbl, "supplier_id", "evaluated_on")
	for key, comment := range map[string]string{
		"0010010015|2026-01-15": "납기 준수 우수",
		"0010010017|2026-01-20": "품질 안정적",             // " 10010017 " trimmed and padded
		"0010010018|2026-01-22": "독일 공장, 리드타임 긴 편",    // a quoted comma
		"0010010017|2026-02-24": "치수 불량 1건, 시정 조치 완료", // 24.02.2026
	} {
		if got := rows[key]["comment"]; got != comment {
			t.Errorf("lake %s: comment %q, want %q", key, got, comment)
		}
	}
	if len(rows) != 7 {
		t.Errorf("lake holds %d evaluations, want 7", len(rows))
	}
}

func TestXLSXShipmentsReadAsExcelShowsThem(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{Tables: []string{"shipments"}})
	_, tbl := loadIceberg(t, ws, p, "shipments")
	rows := lakeRows(t, tbl, "shipment_no")
	want := map[string]map[string]string{
		// Row 3: the id stored as text keeps its zeros; the date is the
		// serial 46030 in format yyyy-mm-dd; the amount the formula's
		// cached value 120 × 1250.5.
		"004501": {"shipped_on": "2026-01-08", "plant": "창원공장", "carrier": "CJ대한통운", "qty": "120", "unit_price": "1250.50", "amount": "150060.00"},
		// Row 4: its carrier cell is empty, under the merged D3:D4.
		"004502": {"shipped_on": "2026-01-15", "carrier": "CJ대한통운", "amount": "78420.00"},
		// Row 6: 4504 typed as a number, zero-padded; the plant in NFC.
		"004504": {"shipped_on": "2026-02-19", "plant": "창원공장", "carrier": "롯데글로벌로지스", "amount": "75030.00"},
	}
	for no, cols := range want {
		for c, v := range cols {
			if got := rows[no][c]; got != v {
				t.Errorf("lake shipment %s: %s = %q, want %q", no, c, got, v)
			}
		}
	}
	if len(rows) != 5 || rows["004505"] != nil {
		t.Errorf("lake shipments %v, want 004501–004504 and 004506", slices.Sorted(maps.Keys(rows)))
	}
	for no, r := range rows {
		if strings.Contains(r["amount"], "*") || !norm.NFC.IsNormalString(r["plant"]) {
			t.Errorf("shipment %s: amount %q plant %+q", no, r["amount"], r["plant"])
		}
	}
	st := openLedger(t, ws, p)
	page, _, err := st.List(context.Background(), ledger.Filter{Table: "shipments"}, ledger.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 {
		t.Fatalf("ledger holds %d shipment exceptions, want 1 (row 7)", len(page))
	}
	e := page[0]
	// Row 7 of sheet Shipments: both cells fail, one exception.
	if e.File != "shipments_2026Q1.xlsx#Shipments" || e.Row != 7 || e.Owner != "Min-jun Choi (logistics)" || len(e.Failures) != 2 ||
		e.Failures[0].Column != "qty" || e.Failures[0].Value != "12 box" || e.Failures[0].Rule != "type" ||
		e.Failures[1].Column != "amount" || e.Failures[1].Value != "#VALUE!" || e.Failures[1].Rule != "type" {
		t.Fatalf("exception %+v", e)
	}
	if string(e.Raw) != `["004505","2026-03-05","구미공장","한진","GSK-020","12 box","15.5","#VALUE!"]` {
		t.Errorf("raw %s", e.Raw)
	}
}

func TestAmbiguousDateColumnIsFlaggedByProfiling(t *testing.T) {
	ws, p := newDemo(t)
	src := files.New(filepath.Join(ws.Dir, "data", "erp"))
	ctx := context.Background()
	units, err := src.List(ctx, []string{"gauge_calibrations.csv"})
	if err != nil || len(units) != 1 {
		t.Fatalf("list: %v %v", units, err)
	}
	rd, err := src.Open(ctx, units[0], source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cols := rd.Columns()
	prof := clean.NewProfiler(cols, nil)
	var dates []string
	for {
		row, err := rd.Next()
		if err != nil {
			break
		}
		if row.Kind == source.Data {
			prof.Add(row.Values)
			dates = append(dates, row.Values[slices.Index(cols, "calibrated_on")])
		}
	}
	// 03/04, 05/01, 07/02, 11/03, 12/05, 09/06: both fields ≤ 12, 6 values;
	// 31/04 is no real date either way; none proves an order.
	d := clean.DetectDateOrder(dates)
	if !d.Ambiguous || d.Order != "" || d.Patterns != nil || d.Both != 6 || d.Invalid != 1 || d.DayProof != 0 || d.MonthProof != 0 || d.Dates != 7 {
		t.Fatalf("date order %+v, want ambiguous: 6 both ways, 1 invalid", d)
	}
	var cp *clean.ColumnProfile
	for _, c := range prof.Profile() {
		if c.Name == "calibrated_on" {
			cp = &c
		}
	}
	if cp == nil || !cp.DateOrder.Ambiguous || cp.Formats["dd/MM/yyyy or MM/dd/yyyy"] != 7 {
		t.Fatalf("profile %+v", cp)
	}
	var found bool
	for _, f := range cp.Findings() {
		if f.Issue == "d/M vs M/d cannot be told apart: 6 values are ≤ 12 in both fields" &&
			strings.Contains(f.Fix, "dd/MM/yyyy (day first) or MM/dd/yyyy (month first)") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no ambiguity finding: %+v", cp.Findings())
	}
	// The plan records the analyst's decision: one of the two orders, and
	// the column's data-quality issue says so.
	col, _ := p.Tables["gauge_calibrations"].Column("calibrated_on")
	if col == nil || !slices.Equal(col.Formats, d.DayFirst) {
		t.Fatalf("plan formats %v, want the day-first choice %v", col, d.DayFirst)
	}
	if !slices.ContainsFunc(p.DataQualityIssues, func(q plan.QualityIssue) bool {
		return q.Table == "gauge_calibrations" && q.Column == "calibrated_on" && strings.Contains(q.Issue, "d/M vs M/d")
	}) {
		t.Error("no data_quality_issues entry for the ambiguous column")
	}
	// Loaded under that decision, 03/04/2026 is the 3rd of April.
	runOnce(t, ws, p, flow.RunOptions{Tables: []string{"gauge_calibrations"}})
	_, tbl := loadIceberg(t, ws, p, "gauge_calibrations")
	if got := lakeRows(t, tbl, "gauge_id")["G-0101"]["calibrated_on"]; got != "2026-04-03" {
		t.Fatalf("G-0101 calibrated on %q, want 2026-04-03", got)
	}
}

const oddDatesPlan = `schema_version: 1
platform: {prefix: odd}
sources:
  in: {kind: files, path: in}
tables:
  receipts:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: received_on, type: date, formats: [yyyy-MM-dd, dd.MM.yyyy]}
    load: {mode: full, keys: [id], watermark: received_on}
`

// A full first load whose every row is held back makes no snapshot and
// publishes its exceptions (it once panicked in icesink.Commit).
func TestUnknownDateFormatsAreHeldBackNeverNulled(t *testing.T) {
	// Seven dates in formats the plan does not declare; none is a null token.
	odd := []string{"3 avril 2026", "2026年4月3日", "04/03/2026", "20260403", "Apr 3, 2026", "03-APR-26", "Q2 2026"}
	var b strings.Builder
	b.WriteString("id,received_on\n")
	for i, v := range odd {
		b.WriteString(strconv.Itoa(i+1) + `,"` + v + "\"\n")
	}
	ws, p := workspace(t, map[string][]byte{"receipts.csv": []byte(b.String())}, oddDatesPlan)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := tableReport(t, out.Report, "receipts")
	// 1 header + 7 rows read; every row held back, none loaded.
	if tr.Status != "nothing_to_load" || tr.RowsRead != 8 || tr.RowsLoaded != 0 || tr.RowsQuarantined != 7 || tr.RowsSkipped != 1 || !tr.Balanced {
		t.Fatalf("read/loaded/quarantined/skipped = %d/%d/%d/%d, want 8/0/7/1", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
	}
	if len(tr.Normalizations) != 0 {
		t.Errorf("fixes %+v, want none (no null token, no known format)", tr.Normalizations)
	}
	if out.Report.Exceptions.Total != 7 || out.Report.Exceptions.ByRule["type"] != 7 {
		t.Errorf("exceptions %+v, want 7 of rule type", out.Report.Exceptions)
	}
	st := openLedger(t, ws, p)
	page, _, err := st.List(context.Background(), ledger.Filter{Table: "receipts"}, ledger.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 7 {
		t.Fatalf("ledger holds %d exceptions, want 7", len(page))
	}
	for _, e := range page {
		i := int(e.Line) - 2 // line 2 holds odd[0]
		if i < 0 || i >= len(odd) {
			t.Fatalf("exception at line %d", e.Line)
		}
		want := `"` + odd[i] + `" matches none of yyyy-MM-dd, dd.MM.yyyy`
		if len(e.Failures) != 1 || e.Failures[0].Rule != "type" || e.Failures[0].Column != "received_on" || e.Failures[0].Value != odd[i] || e.Failures[0].Reason != want {
			t.Errorf("line %d: failures %+v, want %q", e.Line, e.Failures, want)
		}
		if e.Values["received_on"] != odd[i] || e.Key != "id="+strconv.Itoa(i+1) {
			t.Errorf("line %d: values %v key %q", e.Line, e.Values, e.Key)
		}
	}
	// Nothing reached the lake, so no date became NULL there.
	_, tbl := loadIceberg(t, ws, p, "receipts")
	if tbl.CurrentSnapshot() != nil {
		t.Fatalf("the lake holds %d rows, want none", countRows(t, tbl))
	}
}

// lakeRows reads a table with iceberg-go and returns its rows by key (the
// key columns' values joined with "|"), each as column → canonical text.
func lakeRows(t *testing.T, tbl *table.Table, keys ...string) map[string]map[string]string {
	t.Helper()
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			row := map[string]string{}
			for c, f := range rec.Schema().Fields() {
				row[f.Name] = cellText(rec.Column(c), r)
			}
			var k []string
			for _, kc := range keys {
				k = append(k, row[kc])
			}
			out[strings.Join(k, "|")] = row
		}
		rec.Release()
	}
	return out
}

func cellText(a arrow.Array, r int) string {
	if a.IsNull(r) {
		return "NULL"
	}
	switch v := a.(type) {
	case *array.String:
		return v.Value(r)
	case *array.Int32:
		return strconv.FormatInt(int64(v.Value(r)), 10)
	case *array.Int64:
		return strconv.FormatInt(v.Value(r), 10)
	case *array.Decimal128:
		return v.Value(r).ToString(v.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return time.Unix(int64(v.Value(r))*86400, 0).UTC().Format("2006-01-02")
	}
	return a.ValueStr(r)
}
