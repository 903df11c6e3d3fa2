package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExceptionsCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	plan := filepath.Join(dir, "platform.yaml")
	code, out, _ := runCLI(t, "exceptions", "list", "--plan", plan, "--table", "inspections", "--json")
	if code != exitOK {
		t.Fatalf("list exit %d", code)
	}
	var list struct {
		Total      int64 `json:"total"`
		Exceptions []struct {
			ID    int64  `json:"id"`
			File  string `json:"file"`
			Line  int64  `json:"line"`
			Owner string `json:"owner"`
		} `json:"exceptions"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || list.Total != 5 {
		t.Fatalf("list: %v %s", err, out)
	}
	var costID, dateID, dupID string
	for _, e := range list.Exceptions {
		switch {
		case e.File == "inspections_2026-02.csv" && e.Line == 5:
			costID = itoa(e.ID)
		case e.File == "inspections_2026-02.csv" && e.Line == 4:
			dateID = itoa(e.ID)
		case e.File == "inspections_2026-03.csv" && e.Line == 4:
			dupID = itoa(e.ID)
		}
	}
	// Filters: by rule, with the plain-text table.
	if code, out, _ := runCLI(t, "exceptions", "list", "--plan", plan, "--rule", "unique"); code != exitOK || !strings.HasPrefix(out, "2 exception(s)") {
		t.Fatalf("list --rule unique: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "exceptions", "show", costID, "--plan", plan); code != exitOK || !strings.Contains(out, `"12x.50" is not a decimal number`) || !strings.Contains(out, "created") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "exceptions", "resolve", costID, "--plan", plan); code != exitUsage {
		t.Fatal("resolve without --set accepted")
	}
	if code, _, stderr := runCLI(t, "exceptions", "resolve", costID, "--set", "cost=12.50", "--by", "ops", "--plan", plan); code != exitOK {
		t.Fatalf("resolve: %s", stderr)
	}
	// A fix that still fails: the date is still impossible.
	if code, _, stderr := runCLI(t, "exceptions", "resolve", dateID, "--set", "inspected_on=2026-02-31", "--by", "ops", "--plan", plan); code != exitOK {
		t.Fatalf("resolve: %s", stderr)
	}
	if code, _, stderr := runCLI(t, "exceptions", "waive", dupID, "--reason", "the March re-inspection is the same lot", "--by", "ops", "--plan", plan); code != exitOK {
		t.Fatalf("waive: %s", stderr)
	}
	if code, _, _ := runCLI(t, "exceptions", "assign", dupID, "--owner", "someone", "--plan", plan); code == exitOK {
		t.Fatal("assigning a waived exception was accepted")
	}
	code, out, stderr := runCLI(t, "exceptions", "replay", "--plan", plan, "--by", "ops")
	if code != exitOK {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	rep := readReport(t, strings.TrimSpace(out))
	if len(rep.Tables) != 1 || rep.Tables[0].RowsRead != 2 || rep.Tables[0].RowsLoaded != 1 || rep.Tables[0].RowsQuarantined != 1 || !rep.Tables[0].Balanced {
		t.Fatalf("replay report %+v", rep.Tables)
	}
	code, out, _ = runCLI(t, "exceptions", "show", dateID, "--plan", plan, "--json")
	var shown struct {
		Status   string `json:"status"`
		Failures []struct {
			Reason string `json:"reason"`
		} `json:"failures"`
	}
	if json.Unmarshal([]byte(out), &shown); code != exitOK || shown.Status != "open" || len(shown.Failures) == 0 || !strings.Contains(shown.Failures[0].Reason, "not a real date") {
		t.Fatalf("the still-failing fix was not reopened with the new reason: %s", out)
	}
	// Export escapes cells a spreadsheet would run.
	exp := filepath.Join(t.TempDir(), "x.csv")
	if code, _, stderr := runCLI(t, "exceptions", "export", "--format", "csv", "--out", exp, "--plan", plan); code != exitOK {
		t.Fatalf("export: %s", stderr)
	}
	fh, _ := os.Open(exp)
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(recs) != 14 { // header + the demo's 13 exceptions
		t.Fatalf("export: %d records, %v", len(recs), err)
	}
	for _, rec := range recs[1:] {
		for _, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q would run in a spreadsheet", cell)
			}
		}
	}
	if got := csvSafe("=HYPERLINK(\"x\")"); got != "'=HYPERLINK(\"x\")" {
		t.Errorf("csvSafe = %q", got)
	}
	if got := csvSafe("-150.000"); got != "'-150.000" {
		t.Errorf("csvSafe(-150.000) = %q", got)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func readReport(t *testing.T, path string) struct {
	Tables []struct {
		RowsRead        int64 `json:"rows_read"`
		RowsLoaded      int64 `json:"rows_loaded"`
		RowsQuarantined int64 `json:"rows_quarantined"`
		Balanced        bool  `json:"balanced"`
	}
} {
	t.Helper()
	var r struct {
		Tables []struct {
			RowsRead        int64 `json:"rows_read"`
			RowsLoaded      int64 `json:"rows_loaded"`
			RowsQuarantined int64 `json:"rows_quarantined"`
			Balanced        bool  `json:"balanced"`
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// `exceptions replay --id` replays only the selected fixed exceptions: of
// the demo's two fixable inspections rows, fixed both, --id of one loads
// that one (rows read 1, loaded 1) and leaves the other fixed, which the
// next replay without --id loads. An open exception selected, or an id
// given without --id, is refused before anything is replayed.
func TestExceptionsReplaySelectedIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	plan := filepath.Join(dir, "platform.yaml")
	code, out, _ := runCLI(t, "exceptions", "list", "--plan", plan, "--table", "inspections", "--json")
	var list struct {
		Exceptions []struct {
			ID   int64  `json:"id"`
			File string `json:"file"`
			Line int64  `json:"line"`
		} `json:"exceptions"`
	}
	if err := json.Unmarshal([]byte(out), &list); code != exitOK || err != nil {
		t.Fatalf("list: %d %v %s", code, err, out)
	}
	var costID, dateID, otherID string
	for _, e := range list.Exceptions {
		switch {
		case e.File == "inspections_2026-02.csv" && e.Line == 5:
			costID = itoa(e.ID)
		case e.File == "inspections_2026-02.csv" && e.Line == 4:
			dateID = itoa(e.ID)
		default:
			otherID = itoa(e.ID)
		}
	}
	if costID == "" || dateID == "" || otherID == "" {
		t.Fatalf("demo exceptions: %+v", list.Exceptions)
	}
	for id, set := range map[string]string{costID: "cost=12.50", dateID: "inspected_on=2026-02-28"} {
		if code, _, stderr := runCLI(t, "exceptions", "resolve", id, "--set", set, "--by", "ops", "--plan", plan); code != exitOK {
			t.Fatalf("resolve %s: %s", id, stderr)
		}
	}
	status := func(id string) string {
		t.Helper()
		_, out, _ := runCLI(t, "exceptions", "show", id, "--plan", plan, "--json")
		var e struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			t.Fatalf("show %s: %v %s", id, err, out)
		}
		return e.Status
	}
	if code, _, stderr := runCLI(t, "exceptions", "replay", costID, "--plan", plan); code != exitUsage || !strings.Contains(stderr, "--id") {
		t.Fatalf("replay with a bare id: exit %d, %s; want a usage error naming --id", code, stderr)
	}
	if code, _, stderr := runCLI(t, "exceptions", "replay", "--id", "x1", "--plan", plan); code != exitUsage {
		t.Fatalf("replay --id x1: exit %d, %s; want a usage error", code, stderr)
	}
	if code, _, stderr := runCLI(t, "exceptions", "replay", "--id", costID, "--id", otherID, "--plan", plan); code == exitOK || !strings.Contains(stderr, "not fixed") {
		t.Fatalf("replay of a fixed and an open exception: exit %d, %s; want refused", code, stderr)
	}
	if s := status(costID); s != "fixed" {
		t.Fatalf("after the refused selection %s is %s, want fixed", costID, s)
	}
	code, out, stderr := runCLI(t, "exceptions", "replay", "--id", costID, "--plan", plan, "--by", "ops")
	if code != exitOK {
		t.Fatalf("replay --id %s: exit %d: %s", costID, code, stderr)
	}
	rep := readReport(t, strings.TrimSpace(out))
	if len(rep.Tables) != 1 || rep.Tables[0].RowsRead != 1 || rep.Tables[0].RowsLoaded != 1 || !rep.Tables[0].Balanced {
		t.Fatalf("replay --id report %+v, want one row read and loaded", rep.Tables)
	}
	if a, b := status(costID), status(dateID); a != "replayed" || b != "fixed" {
		t.Fatalf("after replay --id %s: it is %s, %s (not selected) is %s; want replayed, fixed", costID, a, dateID, b)
	}
	code, out, stderr = runCLI(t, "exceptions", "replay", "--plan", plan, "--by", "ops")
	if code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if rep := readReport(t, strings.TrimSpace(out)); len(rep.Tables) != 1 || rep.Tables[0].RowsLoaded != 1 {
		t.Fatalf("the later replay report %+v, want the one row left", rep.Tables)
	}
	if s := status(dateID); s != "replayed" {
		t.Fatalf("after the later replay %s is %s, want replayed", dateID, s)
	}
}
