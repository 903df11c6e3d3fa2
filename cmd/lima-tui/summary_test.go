package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lima-lake/lima/reports"
)

// TestSummaryPrintsWarnings: the headless summary names the run's
// warnings (an interrupted run found, a killed load's files removed) —
// they were only in report.json and report.md — sanitized like every
// other text from outside.
func TestSummaryPrintsWarnings(t *testing.T) {
	r := &reports.Report{RunID: "r1", Status: reports.StatusOK,
		Warnings: []string{"run r0 was interrupted", "4 data file(s) removed \x1b]0;title\x07"}}
	var b bytes.Buffer
	printSummary(&b, r)
	out := b.String()
	for _, want := range []string{"  ! run r0 was interrupted\n", "  ! 4 data file(s) removed "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("a raw control character reached the summary: %q", out)
	}
}
