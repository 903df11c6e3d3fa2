package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestOneSetOfNumbers: the run summary, report.md and report.json count
// the same things with the same words (issue 16's "one set of numbers").
// The demo holds back rows and one whole file and has a check that warns;
// the expected words are built here from counts taken elsewhere — rows
// held back from the tables' columns, whole files from the exception
// queue's levels, checks from report.json's statuses — never from the
// code that writes them. And every sample row's text as read is the
// source file's own field, byte for byte, where cleaning changed it.
func TestOneSetOfNumbers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	code, _, stderr := runCLI(t, "demo", "--dir", dir, "--headless")
	if code != exitOK {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	plan := filepath.Join(dir, "platform.yaml")
	reps, _ := filepath.Glob(filepath.Join(dir, "reports", "*", "report.json"))
	if len(reps) != 1 {
		t.Fatalf("reports: %v", reps)
	}
	b, err := os.ReadFile(reps[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Tables []struct {
			Name            string `json:"name"`
			RowsQuarantined int64  `json:"rows_quarantined"`
			Checks          []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"checks"`
			Samples []struct {
				Locator string            `json:"locator"`
				Source  map[string]string `json:"source"`
				Raw     map[string]string `json:"raw"`
			} `json:"samples"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(reps[0]), "report.md"))
	if err != nil {
		t.Fatal(err)
	}

	// Rows from the tables' held-back column, files from the queue.
	var rows int64
	for _, tb := range rep.Tables {
		rows += tb.RowsQuarantined
	}
	code, out, errOut := runCLI(t, "exceptions", "list", "--json", "--limit", "1000", "--plan", plan)
	if code != exitOK {
		t.Fatalf("exceptions list exit %d: %s", code, errOut)
	}
	var q struct {
		Exceptions []struct {
			Level string `json:"level"`
		} `json:"exceptions"`
	}
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatal(err)
	}
	var files, rowExc int64
	for _, e := range q.Exceptions {
		switch e.Level {
		case "file":
			files++
		case "row":
			rowExc++
		}
	}
	if rows == 0 || files == 0 || rowExc != rows {
		t.Fatalf("the demo should hold back rows and a whole file, one row exception per held-back row: rows %d, row exceptions %d, files %d", rows, rowExc, files)
	}
	fileWord := "whole files"
	if files == 1 {
		fileWord = "whole file"
	}
	want := fmt.Sprintf("%d rows and %d %s held back as %d exceptions", rows, files, fileWord, rows+files)
	if !strings.Contains(stderr, "! "+want+" — owners: ") {
		t.Errorf("the run summary lacks %q:\n%s", want, stderr)
	}
	if !strings.Contains(string(md), "## Exceptions\n\n"+want+".\n") {
		t.Errorf("report.md lacks %q", want)
	}
	for _, bad := range []string{"quarantined", "row(s) held back"} {
		if strings.Contains(stderr, bad) || strings.Contains(string(md), bad) {
			t.Errorf("the summary or report.md says %q", bad)
		}
	}

	// Checks: every one counted, in report.md as report.json lists them.
	warned := false
	for _, tb := range rep.Tables {
		pass, warn, fail := 0, 0, 0
		for _, c := range tb.Checks {
			switch c.Status {
			case "pass":
				pass++
			case "warn":
				warn++
			case "fail":
				fail++
			}
		}
		warned = warned || warn > 0
		line := fmt.Sprintf("Checks: %d of %d checks pass", pass, len(tb.Checks))
		if fail > 0 {
			line += fmt.Sprintf(", %d failed", fail)
		}
		if warn > 0 {
			line += fmt.Sprintf(", %d warned", warn)
		}
		if !strings.Contains(string(md), "## "+tb.Name+"\n") || !strings.Contains(string(md), line+".\n") {
			t.Errorf("%s: report.md lacks %q", tb.Name, line)
		}
	}
	if !warned {
		t.Error("no demo table has a warning check: the warn count is not tested")
	}

	// Samples: the text as read is the file's field where it differs from
	// the cleaned value, and absent where it does not (CSV files in UTF-8).
	srcFiles := map[string]string{}
	filepath.WalkDir(filepath.Join(dir, "data"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			srcFiles[d.Name()] = p
		}
		return nil
	})
	checked, differing := 0, 0
	for _, tb := range rep.Tables {
		for _, s := range tb.Samples {
			name, lineNo, ok := strings.Cut(s.Locator, ":")
			n, err := strconv.Atoi(lineNo)
			path := srcFiles[name]
			if !ok || err != nil || !strings.HasSuffix(name, ".csv") || path == "" {
				continue
			}
			body, err := os.ReadFile(path)
			if err != nil || !utf8.Valid(body) {
				continue
			}
			// The records by the line they start on (a quoted field may
			// hold line breaks).
			sep := ','
			if head, _, _ := strings.Cut(string(body), "\n"); strings.Count(head, ";") > strings.Count(head, ",") {
				sep = ';'
			}
			r := csv.NewReader(strings.NewReader(string(body)))
			r.Comma, r.LazyQuotes, r.FieldsPerRecord = sep, true, -1
			var cols, fields []string
			for {
				rec, err := r.Read()
				if err != nil {
					break
				}
				if cols == nil {
					cols = rec
					continue
				}
				if line, _ := r.FieldPos(0); line == n {
					fields = rec
					break
				}
			}
			if fields == nil {
				t.Errorf("%s: no record starts on line %d of %s", s.Locator, n, path)
				continue
			}
			for i, c := range cols {
				if i >= len(fields) {
					break
				}
				v, inLake := s.Source[c]
				if !inLake || fields[i] == "" {
					continue
				}
				raw, hasRaw := s.Raw[c]
				// encoding/csv turns CRLF inside a quoted field into LF;
				// Lima keeps the bytes.
				lf := strings.NewReplacer("\r\n", "\n")
				v, raw = lf.Replace(v), lf.Replace(raw)
				switch {
				case fields[i] != v && raw != fields[i]:
					t.Errorf("%s %s: read %q, cleaned %q, the sample's text as read %q", s.Locator, c, fields[i], v, raw)
				case fields[i] == v && hasRaw:
					t.Errorf("%s %s: unchanged %q, yet the sample gives a text as read %q", s.Locator, c, v, raw)
				}
				if fields[i] != v {
					differing++
					if !strings.Contains(string(md), fmt.Sprintf("%s=%s (read %q)", c, s.Source[c], s.Raw[c])) {
						t.Errorf("report.md lacks %s=%s (read %q)", c, v, fields[i])
					}
				}
				checked++
			}
		}
	}
	if checked < 20 || differing < 5 {
		t.Errorf("only %d sample values checked against the files, %d changed by cleaning", checked, differing)
	}
}
