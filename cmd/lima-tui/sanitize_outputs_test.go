package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds what a terminal must never receive raw: ESC, CSI and OSC
// sequences (7- and 8-bit), C1 controls as characters and as raw bytes,
// every kind of BiDi control, BEL and CR.
const hostile = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\u009b1m\u0085\u009f" +
	"\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\r"

// mustBeInert fails if out holds a C0 control other than newline (and tab,
// which the tables use as nothing but layout), DEL, a C1 control, a BiDi
// control or a byte that is not UTF-8.
func mustBeInert(t *testing.T, what, out string) {
	t.Helper()
	bidi := "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		bad := r == utf8.RuneError && size <= 1 || r < 0x20 && r != '\n' || r == 0x7f ||
			r >= 0x80 && r < 0xa0 || strings.ContainsRune(bidi, r)
		if bad {
			lo, hi := max(0, i-40), min(len(out), i+40)
			t.Errorf("%s: raw %q at byte %d: …%q…", what, out[i:i+size], i, out[lo:hi])
			return
		}
		i += size
	}
}

// TestHostileTextNeverReachesTheTerminal plants hostile characters in a file
// name, in the values of a row that is held back and in an owner, then
// reads every output that shows them: the run's summary, report.md,
// exceptions list and show (text and JSON), and the export to a terminal.
func TestHostileTextNeverReachesTheTerminal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	pp := filepath.Join(dir, "platform.yaml")
	name := "inspections_2026-05" + strings.ReplaceAll(hostile, "\r", "") + ".csv"
	rows := "inspection_id;supplier_id;inspected_on;lot_qty;defect_qty;cost;result;inspector\n" +
		"5001;0010010015;2026-05-02;450;1;320.000;PASS;J. Park\n" +
		"5002;0010010015;2026-05-03;450;1;9" + strings.ReplaceAll(hostile, "\r", "") + ";P" + strings.ReplaceAll(hostile, "\r", "") + ";K" + strings.ReplaceAll(hostile, "\r", "") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "data", "erp", name), []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	// C1 controls as raw bytes (not UTF-8): in a name and in a row.
	rawC1 := "\x9b31m\x85\x9f\x1b[2J"
	rows = "inspection_id;supplier_id;inspected_on;lot_qty;defect_qty;cost;result;inspector\n" +
		"5003;0010010015;2026-06-02;450;1;3" + rawC1 + ";PASS;J" + rawC1 + "\n"
	if err := os.WriteFile(filepath.Join(dir, "data", "erp", "inspections_2026-06"+rawC1+".csv"), []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "run", "--force", "--plan", pp, "--table", "inspections")
	t.Logf("run: exit %d\n%s\n%s", code, out, errs)
	mustBeInert(t, "run stdout", out)
	mustBeInert(t, "run stderr", errs)
	if code == exitUsage {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	// A foreign file with a hostile name in the warehouse: teardown lists
	// it as kept.
	if err := os.WriteFile(filepath.Join(dir, "lake", "notes"+strings.ReplaceAll(hostile, "/", "")+".txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--force", "--json", "--plan", pp, "--table", "inspections"},
		{"report", "--plan", pp},
		{"report", "--json", "--plan", pp},
		{"check", "--json", "--plan", pp},
		{"propose", "--json", "--plan", pp},
		{"teardown", "--json", "--plan", pp},
	} {
		_, out, errs := runCLI(t, args...)
		mustBeInert(t, strings.Join(args[:2], " ")+" stdout", out)
		mustBeInert(t, strings.Join(args[:2], " ")+" stderr", errs)
		// Escaped, --json output stays JSON (report --json once came out
		// with its newlines escaped, which no reader parses).
		if slices.Contains(args, "--json") && !json.Valid([]byte(out)) {
			t.Errorf("%s: stdout is not valid JSON: %.300q", strings.Join(args[:2], " "), out)
		}
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(out)), "report.md"))
	if err != nil {
		t.Fatalf("report.md: %v (stdout %q)", err, out)
	}
	mustBeInert(t, "report.md", string(md))

	// The held-back row of the planted file.
	code, out, _ = runCLI(t, "exceptions", "list", "--plan", pp, "--json", "--limit", "1000")
	if code != exitOK {
		t.Fatalf("list --json: exit %d", code)
	}
	mustBeInert(t, "exceptions list --json", out)
	var list struct {
		Exceptions []struct {
			ID   int64  `json:"id"`
			File string `json:"file"`
		} `json:"exceptions"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	id := ""
	for _, e := range list.Exceptions {
		if e.File == name {
			id = itoa(e.ID)
		}
		if strings.HasPrefix(e.File, "inspections_2026-0") && e.File > "inspections_2026-05" {
			ids = append(ids, itoa(e.ID))
		}
	}
	if id == "" || len(ids) != 2 {
		t.Fatalf("want one exception from each planted file (%q found: %v) in %s", name, ids, out)
	}
	// A name with control or direction characters is refused (exit 2),
	// and the refusal that quotes it is inert.
	if code, _, errs := runCLI(t, "exceptions", "assign", id, "--owner", "Ops"+hostile+"\x9b\x9f", "--plan", pp); code != exitUsage {
		t.Fatalf("assign with a hostile owner: exit %d: %s", code, errs)
	} else {
		mustBeInert(t, "assign with a hostile owner: stderr", errs)
	}
	if code, _, errs := runCLI(t, "exceptions", "resolve", id, "--set", "cost=1", "--by", "x"+hostile, "--plan", pp); code != exitUsage {
		t.Fatalf("resolve --by hostile: exit %d: %s", code, errs)
	} else if !strings.Contains(errs, "control or direction characters") || strings.ContainsAny(errs, "\x1b\x07\r\u0085\u009b\u202e\u2066") {
		// (flag's usage text that follows indents with tabs)
		t.Errorf("resolve --by hostile: the refusal is not inert or does not say why: %q", errs)
	}
	if code, _, errs := runCLI(t, "exceptions", "assign", id, "--owner", "Ops Ünal", "--plan", pp); code != exitOK {
		t.Fatalf("assign: %s", errs)
	}
	if code, _, errs := runCLI(t, "exceptions", "resolve", id, "--set", "cost=1"+hostile, "--note", "n"+hostile, "--by", "x", "--plan", pp); code != exitOK {
		t.Fatalf("resolve: %s", errs)
	}
	for _, args := range [][]string{
		{"exceptions", "list", "--plan", pp},
		{"exceptions", "list", "--plan", pp, "--json"},
		{"exceptions", "show", id, "--plan", pp},
		{"exceptions", "show", id, "--plan", pp, "--json"},
		{"exceptions", "show", ids[0], ids[1], "--plan", pp},
	} {
		code, out, errs := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		mustBeInert(t, strings.Join(args[:2], " ")+" "+args[len(args)-1], out)
		mustBeInert(t, strings.Join(args, " ")+" stderr", errs)
	}
	// show names the row's text: escaped, yet there.
	if _, out, _ := runCLI(t, "exceptions", "show", id, "--plan", pp); !strings.Contains(out, `\e]0;pwned\x07`) || !strings.Contains(out, `\u202e`) {
		t.Errorf("show does not show the escaped row:\n%s", out)
	}

	// The export to a terminal is escaped; to a file it keeps the data.
	old := stdoutIsTerminal
	stdoutIsTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { stdoutIsTerminal = old })
	for _, format := range []string{"csv", "json"} {
		code, out, errs := runCLI(t, "exceptions", "export", "--plan", pp, "--format", format)
		if code != exitOK {
			t.Fatalf("export %s: %s", format, errs)
		}
		mustBeInert(t, "export "+format+" to a terminal", out)
	}
	stdoutIsTerminal = old
	file := filepath.Join(t.TempDir(), "x.csv")
	if code, _, errs := runCLI(t, "exceptions", "export", "--plan", pp, "--out", file); code != exitOK {
		t.Fatalf("export --out: %s", errs)
	}
	f, _ := os.Open(file)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if len(r) > 3 && r[3] == name {
			found = true
		}
	}
	if !found {
		t.Errorf("the export to a file lost the file's real name %q", name)
	}
}
