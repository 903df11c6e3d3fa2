package reports

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/gates"
)

// A huge cell is not copied into report.json or report.md: sample values,
// exception reasons and check details are cut, with their full length
// stated (a 50 MB cell used to make a 105 MB report.json).
func TestReportCutsHugeCells(t *testing.T) {
	const size = 5 << 20
	huge := strings.Repeat("y", size)
	reason := strconv.Quote(huge) + " is not a number" // as the caster words it
	tr := &run.TableResult{Name: "t", Status: run.StatusLoaded, RowsRead: 2, RowsLoaded: 1, RowsQuarantined: 1,
		Exceptions: []run.Exception{{Level: "row", Errors: []clean.CellError{{Column: "amount", Rule: "type", Reason: reason}}}}}
	rec := &gates.Reconciliation{Status: gates.Pass,
		Checks:  []gates.Finding{{Name: "range of note", Status: gates.Pass, Detail: "source " + huge}},
		Samples: []gates.SamplePair{{Locator: "a.csv:2", Source: map[string]string{"id": "1", "note": huge}, Lake: map[string]string{"id": "1", "note": huge}, Match: true}}}
	r := Build(&plan.Plan{}, &run.Result{RunID: "r", Tables: []*run.TableResult{tr}}, map[string]*gates.Reconciliation{"t": rec})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(r)
	for what, out := range map[string]string{"report.json": string(b), "report.md": md} {
		if len(out) > 64<<10 {
			t.Errorf("%s is %d bytes with a %d-byte cell, want under 64 KiB", what, len(out), size)
		}
	}
	tt := r.Tables[0]
	wantCell := strings.Repeat("y", 4096) + "…(5,242,880 bytes)"
	if s := tt.Samples[0]; s.Source["note"] != wantCell || s.Lake["note"] != wantCell || s.Source["id"] != "1" || !s.Match {
		t.Errorf("sample = %d/%d bytes, id %q, match %v; want the note cut to 4,096 bytes with its length", len(s.Source["note"]), len(s.Lake["note"]), s.Source["id"], s.Match)
	}
	// The reason "amount: \"yyy…\" is not a number" is 5,242,906 bytes.
	full := len("amount: " + reason)
	if e := tt.Exceptions[0]; !strings.HasSuffix(e.Reason, "…("+groupedForTest(full)+" bytes)") || len(e.Reason) > 4200 {
		t.Errorf("exception reason is %d bytes, ends %q; want it cut with its length %d stated", len(e.Reason), e.Reason[max(0, len(e.Reason)-30):], full)
	}
	for _, c := range tt.Checks {
		if len(c.Detail) > 4200 {
			t.Errorf("check %q detail is %d bytes", c.Name, len(c.Detail))
		}
	}
	// The report keeps its rows' untouched source maps: gate 4's samples
	// are not cut in place.
	if len(rec.Samples[0].Source["note"]) != size {
		t.Errorf("Build cut the reconciliation's own sample")
	}
}

// groupedForTest writes n with thousands commas, independently of textcut.
func groupedForTest(n int) string {
	s := strconv.Itoa(n)
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	return strings.Join(append([]string{s}, out...), ",")
}
