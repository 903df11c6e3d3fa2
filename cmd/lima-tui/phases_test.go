package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every table of report.json and of run --json carries its phases: each
// present and non-negative, adding up to no more than the table's seconds,
// which in turn fit in the run's wall time as the test measured it around
// the command. A table that read rows spent time reading and casting them;
// a reconciled table spent time in gate 4.
func TestRunReportsHonestPhases(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errs := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", errs)
	}
	start := time.Now()
	code, out, errs := runCLI(t, "run", "--force", "--full-refresh", "--json", "--plan", filepath.Join(dir, "platform.yaml"))
	wall := time.Since(start).Seconds()
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	names := []string{"open", "land", "read", "cast_check", "write_wait", "stage_other", "commit", "gate4", "write_busy"}
	sequential := names[:8]
	type table struct {
		Name           string             `json:"name"`
		RowsRead       int64              `json:"rows_read"`
		Reconciliation string             `json:"reconciliation"`
		Seconds        float64            `json:"seconds"`
		Phases         map[string]float64 `json:"phases"`
	}
	checkTables := func(what string, tables []table) {
		t.Helper()
		if len(tables) == 0 {
			t.Fatalf("%s: no tables", what)
		}
		for _, tb := range tables {
			var sum float64
			for _, n := range names {
				v, ok := tb.Phases[n]
				if !ok {
					t.Errorf("%s %s: phase %s missing: %v", what, tb.Name, n, tb.Phases)
				}
				if v < 0 {
					t.Errorf("%s %s: phase %s = %v < 0", what, tb.Name, n, v)
				}
			}
			for _, n := range sequential {
				sum += tb.Phases[n]
			}
			// 1 µs of slack for the rounding of each phase to float seconds.
			if sum > tb.Seconds+1e-6*float64(len(sequential)) {
				t.Errorf("%s %s: phases add up to %.6f s, more than the table's %.6f s: %v", what, tb.Name, sum, tb.Seconds, tb.Phases)
			}
			if tb.Seconds <= 0 || tb.Seconds > wall {
				t.Errorf("%s %s: seconds %.6f not within the run's measured wall time %.6f", what, tb.Name, tb.Seconds, wall)
			}
			if tb.RowsRead > 0 && (tb.Phases["read"] <= 0 || tb.Phases["cast_check"] <= 0) {
				t.Errorf("%s %s: read %d rows in no time: %v", what, tb.Name, tb.RowsRead, tb.Phases)
			}
			if tb.Reconciliation == "pass" && tb.Phases["gate4"] <= 0 {
				t.Errorf("%s %s: reconciled in no time: %v", what, tb.Name, tb.Phases)
			}
		}
	}
	var summary struct {
		Report string  `json:"report"`
		Tables []table `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	checkTables("run --json", summary.Tables)
	b, err := os.ReadFile(summary.Report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		StartedAt  time.Time `json:"started_at"`
		FinishedAt time.Time `json:"finished_at"`
		Tables     []table   `json:"tables"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	checkTables("report.json", rep.Tables)
	if got, want := len(rep.Tables), len(summary.Tables); got != want {
		t.Fatalf("report.json has %d tables, run --json %d", got, want)
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(summary.Report), "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "\nTime: "); n != len(rep.Tables) {
		t.Errorf("report.md: %d time lines for %d tables:\n%s", n, len(rep.Tables), md)
	}
}
