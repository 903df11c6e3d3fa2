//go:build unix

package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2/ocf"
)

// The hostile-input corpus (issue 17): files, plans, command-line flags and
// names a user, a broken export or an attacker may hand to lima-tui. Every
// case runs the built binary in a workspace of its own, with a timeout and
// a bound on its peak memory, and states what the user is promised: the
// exit code (docs/operations.md: 0 ok, 1 error, 2 usage, 3 gate 4 failed,
// 4 precondition failed, nothing written), a message, and for loads the
// counts of report.json (read = loaded + held back + skipped). No case may
// panic, hang or exceed its memory bound, and no case's output may carry a
// raw control, C1 or BiDi character (inert).
//
// LIMA_HOSTILE_BIG=1 adds the full sizes: an NDJSON line of 100 MB
// under the default record limit (16 MiB) — the default corpus uses a 2 MB
// line under a 1 MiB etl.max_record_bytes, which takes the same path.

// corpusPlan is the plan of most cases: one CSV table, keyed.
const corpusPlan = `schema_version: 1
platform: {prefix: hostile}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(10,2)"}
      - {name: note, type: string}
    load: {keys: [id]}
`

// ndjsonPlan reads NDJSON with records bounded to 1 MiB.
const ndjsonPlan = `schema_version: 1
platform: {prefix: hostile}
etl: {max_record_bytes: 1048576}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["*.ndjson"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: note, type: string}
    load: {keys: [id]}
`

// counts are read, loaded, held back, skipped.
type counts [4]int64

type hostileCase struct {
	name    string
	plan    string            // platform.yaml; "" corpusPlan, "-" none
	approve bool              // approve the data model first
	files   map[string]string // workspace-relative path → content
	setup   func(t *testing.T, ws string)
	args    []string // {ws} is the workspace folder
	code    int
	msg     string  // must be in stderr or stdout
	counts  *counts // of table orders in report.json, when set
	rule    string  // an exception rule report.json must count
	nothing bool    // no report may be written
	rssMiB  int64   // peak RSS bound; default 300
	timeout time.Duration
	term    time.Duration // SIGTERM after this long
}

func c4(read, loaded, held, skipped int64) *counts { return &counts{read, loaded, held, skipped} }

const hdr = "id,amount,note\n"

func runJSON(args ...string) []string { return append([]string{"run", "--force", "--json"}, args...) }

// fileCase is a load of the given files in the corpus plan.
func fileCase(name string, files map[string]string, code int, msg string, n *counts) hostileCase {
	return hostileCase{name: name, approve: true, files: files, args: runJSON(), code: code, msg: msg, counts: n}
}

// rows returns n good CSV rows with ids from first.
func rows(first, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d,%d.00,r%d\n", first+i, first+i, first+i)
	}
	return b.String()
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// bigFile writes size bytes made of prefix, fill bytes and suffix.
func bigFile(t *testing.T, path, prefix string, fill byte, size int, suffix string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(prefix)
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = fill
	}
	for left := size; left > 0; left -= len(chunk) {
		f.Write(chunk[:min(left, len(chunk))])
	}
	f.WriteString(suffix)
}

func hostileCorpus(t *testing.T) []hostileCase {
	var cs []hostileCase
	add := func(c ...hostileCase) { cs = append(cs, c...) }

	// ── Flags: unknown flags, missing values, absurd numbers ──
	verbsWithPlan := []string{"check", "run", "reconcile", "report", "approve", "propose", "exceptions", "compact", "schedule", "teardown", "adopt", "wizard"}
	for _, v := range append([]string{"init", "demo"}, verbsWithPlan...) {
		add(hostileCase{name: "flag/unknown/" + v, args: []string{v, "--no-such-flag"}, code: exitUsage, msg: "flag provided but not defined: -no-such-flag", nothing: true})
	}
	for _, v := range verbsWithPlan {
		add(hostileCase{name: "flag/missing-value/" + v, args: []string{v, "--plan"}, code: exitUsage, msg: "flag needs an argument: -plan", nothing: true})
	}
	add(
		hostileCase{name: "flag/unknown-with-escape", args: []string{"run", "--\x1b[31mred\u202e"}, code: exitUsage, msg: `flag provided but not defined: -\e[31mred\u202e`, nothing: true},
		hostileCase{name: "flag/unknown-verb-with-escape", args: []string{"\x1b]0;pwned\x07"}, code: exitUsage, msg: `unknown command "\e]0;pwned\x07"`},
		hostileCase{name: "flag/bad-value-with-escape", args: []string{"check", "--timeout", "\x1b[2J"}, code: exitUsage, msg: `invalid value "\x1b[2J" for flag -timeout`, nothing: true},
		hostileCase{name: "flag/extra-argument", args: []string{"run", "extra"}, code: exitUsage, nothing: true},
		hostileCase{name: "flag/exceptions-unknown-verb", args: []string{"exceptions", "frobnicate"}, code: exitUsage, msg: `unknown verb "frobnicate"`},
		hostileCase{name: "flag/approve-without-by", args: []string{"approve", "--gate", "data-model"}, code: exitUsage, msg: "--by NAME are required"},
		hostileCase{name: "flag/approve-empty-by", args: []string{"approve", "--gate", "data-model", "--by", ""}, code: exitUsage, msg: "--by NAME are required"},
		hostileCase{name: "flag/approve-by-with-bidi", args: []string{"approve", "--gate", "scope", "--by", "Ana \u202egnp.exe"}, code: exitUsage, msg: "control or direction characters", nothing: true},
		hostileCase{name: "flag/approve-by-too-long", args: []string{"approve", "--gate", "scope", "--by", strings.Repeat("A", 81)}, code: exitUsage, msg: "at most 80 characters", nothing: true},
		hostileCase{name: "flag/waive-by-with-newline", approve: true, args: []string{"exceptions", "waive", "1", "--reason", "x", "--by", "Ana\nadmin"}, code: exitUsage, msg: "control or direction characters"},
		hostileCase{name: "flag/assign-owner-with-escape", approve: true, args: []string{"exceptions", "assign", "1", "--owner", "\x1b[2JOps"}, code: exitUsage, msg: "control or direction characters"},
		hostileCase{name: "flag/teardown-by-with-c1", approve: true, args: []string{"teardown", "--confirm", "x", "--by", "Ana\u009b"}, code: exitUsage, msg: "control or direction characters"},
		hostileCase{name: "flag/approve-bad-gate", args: []string{"approve", "--gate", "../../etc", "--by", "A"}, code: exitUsage},
		hostileCase{name: "flag/assign-without-owner", approve: true, args: []string{"exceptions", "assign", "1"}, code: exitUsage, msg: "give ids and --owner"},
		hostileCase{name: "flag/resolve-without-set", approve: true, args: []string{"exceptions", "resolve", "1"}, code: exitUsage, msg: "--set col=value"},
		hostileCase{name: "flag/waive-without-reason", approve: true, args: []string{"exceptions", "waive", "1"}, code: exitUsage, msg: "give ids and --reason"},
		hostileCase{name: "flag/init-without-source", plan: "-", args: []string{"init", "--dir", "{ws}/new", "--defaults"}, code: exitUsage, msg: "--source is required"},
		hostileCase{name: "flag/teardown-empty-confirm", approve: true, args: []string{"teardown", "--confirm", ""}, code: exitUsage, msg: "nothing was removed"},
		hostileCase{name: "flag/teardown-wrong-confirm", approve: true, args: []string{"teardown", "--confirm", "HOSTILE"}, code: exitUsage, msg: "nothing was removed"},
		hostileCase{name: "flag/adopt-wrong-confirm", approve: true, args: []string{"adopt", "--confirm", "x"}, code: exitUsage, msg: "nothing was changed"},
		hostileCase{name: "flag/wizard-without-terminal", args: []string{}, code: exitUsage, msg: "needs a terminal"},
		hostileCase{name: "flag/browser-without-terminal", args: []string{"exceptions"}, code: exitUsage, msg: "needs a terminal"},
		// Absurd numbers.
		hostileCase{name: "number/propose-rows-overflow", args: []string{"propose", "--rows", "99999999999999999999999"}, code: exitUsage, msg: "value out of range"},
		hostileCase{name: "number/propose-rows-negative", args: []string{"propose", "--rows", "-1"}, code: exitUsage, msg: "--rows"},
		hostileCase{name: "number/list-limit-overflow", approve: true, args: []string{"exceptions", "list", "--limit", "99999999999999999999"}, code: exitUsage, msg: "value out of range"},
		hostileCase{name: "number/list-limit-negative", approve: true, args: []string{"exceptions", "list", "--limit", "-5"}, code: exitUsage, msg: "--limit"},
		hostileCase{name: "number/show-id-overflow", approve: true, args: []string{"exceptions", "show", "99999999999999999999"}, code: exitUsage, msg: "is not an exception id"},
		hostileCase{name: "number/show-id-text", approve: true, args: []string{"exceptions", "show", "abc"}, code: exitUsage, msg: "is not an exception id"},
		hostileCase{name: "number/check-timeout-zero", args: []string{"check", "--timeout", "0s"}, code: exitUsage, msg: "--timeout must be positive"},
		hostileCase{name: "number/check-timeout-negative", args: []string{"check", "--timeout", "-1s"}, code: exitUsage, msg: "--timeout must be positive"},
		hostileCase{name: "number/run-wait-overflow", args: []string{"run", "--wait", "99999999999h"}, code: exitUsage, msg: "invalid value", nothing: true},
		hostileCase{name: "number/run-wait-negative", approve: true, args: []string{"run", "--force", "--wait", "-5s"}, code: exitUsage, msg: "--wait -5s", nothing: true},
		hostileCase{name: "number/compact-wait-negative", approve: true, args: []string{"compact", "--wait", "-1s"}, code: exitUsage, msg: "--wait -1s"},
		hostileCase{name: "number/schedule-wait-negative", approve: true, args: []string{"schedule", "--once", "--wait", "-1s"}, code: exitUsage, msg: "--wait -1s"},
		hostileCase{name: "number/watch-interval-zero", args: []string{"run", "--watch", "--interval", "0s"}, code: exitUsage, msg: "--interval must be positive", nothing: true},
		hostileCase{name: "number/watch-interval-negative", args: []string{"run", "--watch", "--interval", "-1s"}, code: exitUsage, msg: "--interval must be positive", nothing: true},
		hostileCase{name: "number/watch-batch-rows-negative", args: []string{"run", "--watch", "--batch-rows", "-1"}, code: exitUsage, msg: "cannot be negative", nothing: true},
		hostileCase{name: "number/watch-compact-every-negative", args: []string{"run", "--watch", "--compact-every", "-3"}, code: exitUsage, msg: "cannot be negative", nothing: true},
		hostileCase{name: "number/demo-rows-negative", plan: "-", args: []string{"demo", "--dir", "{ws}/demo", "--rows", "-5"}, code: exitUsage, msg: "--rows takes a positive number"},
		// 10^14 rows would be a 6 PB file: refused at once, never generated.
		hostileCase{name: "number/demo-rows-absurd", plan: "-", args: []string{"demo", "--dir", "{ws}/demo", "--headless", "--rows", "99999999999999"}, code: exitUsage, msg: "--rows", timeout: 30 * time.Second},
		hostileCase{name: "number/export-format", approve: true, args: []string{"exceptions", "export", "--format", "xml"}, code: exitUsage, msg: `--format "xml"`},
		hostileCase{name: "number/list-status-bogus", approve: true, args: []string{"exceptions", "list", "--status", "bogus"}, code: exitUsage, msg: `status "bogus"`},
		hostileCase{name: "number/list-after-garbage", approve: true, args: []string{"exceptions", "list", "--after", "garbage"}, code: exitUsage, msg: "cursor"},
	)

	// ── Names: run ids with path characters, hostile names and prefixes ──
	for _, id := range []string{"../x", "/etc/passwd", "a/b", ".", "..", "..\\..", "\x1b[31mrid"} {
		shown := strings.ReplaceAll(strings.ReplaceAll(id, "\x1b", `\x1b`), "\\", `\\`)
		add(hostileCase{name: "name/report-id/" + id, approve: true, args: []string{"report", id}, code: exitUsage, msg: "is not a run id"},
			hostileCase{name: "name/reconcile-run/" + id, approve: true, args: []string{"reconcile", "--run", id}, code: exitUsage, msg: "is not a run id"})
		_ = shown
	}
	add(
		hostileCase{name: "name/report-unknown-id", approve: true, args: []string{"report", "20260101T000000.000000Z-000000"}, code: exitError, msg: "no such file"},
		hostileCase{name: "name/reconcile-before-any-run", approve: true, args: []string{"reconcile"}, code: exitError},
		hostileCase{name: "name/run-table-escape", approve: true, args: []string{"run", "--force", "--table", "\x1b[2J\u202e"}, code: exitUsage, msg: `no table "\x1b[2J\u202e"`, nothing: true},
		hostileCase{name: "name/run-table-unknown", approve: true, args: []string{"run", "--table", "nosuch"}, code: exitUsage, msg: `no table "nosuch" in the plan (tables: `, nothing: true},
		hostileCase{name: "name/approve-by-escape", args: []string{"approve", "--gate", "data-model", "--by", "\x1b]0;x\x07\u202eA"}, code: exitUsage, msg: `invalid value "\x1b]0;x\a\u202eA" for flag -by: the name holds control or direction characters`, nothing: true},
	)
	for _, p := range []string{"a%#?b", "a\x1b[31m", "../x", "A\u202eB", "a/b", strings.Repeat("p", 200)} {
		add(hostileCase{name: "name/init-prefix/" + p[:min(len(p), 12)], plan: "-", files: map[string]string{"in/a.csv": hdr + rows(1, 2)},
			args: []string{"init", "--source", "in", "--dir", "{ws}/new", "--defaults", "--prefix", p}, code: exitUsage, msg: "is not allowed"})
	}
	hostileTable := func(name, table, col string) hostileCase {
		plan := strings.Replace(strings.Replace(corpusPlan, "  orders:", "  "+table+":", 1), "{name: note,", "{name: "+col+",", 1)
		return hostileCase{name: name, plan: plan, args: []string{"approve", "--gate", "data-model", "--by", "A"}, code: exitUsage, msg: "platform.yaml"}
	}
	add(
		hostileTable("name/table-escape", `"ord\x1b[31mers"`, "note"),
		hostileTable("name/table-bidi", "\"ord\u202eers\"", "note"),
		hostileTable("name/table-url-chars", `"a%#?b"`, "note"),
		hostileTable("name/table-dotdot", `"../x"`, "note"),
		hostileTable("name/table-slash", `"a/b"`, "note"),
		hostileTable("name/column-escape", "orders", `"no\x1b]0;x\x07te"`),
		hostileTable("name/column-bidi", "orders", "\"no\u2066te\""),
		hostileTable("name/column-nul", "orders", `"no\0te"`),
	)

	// ── Plans ──
	add(
		hostileCase{name: "plan/fifo", plan: "-", setup: func(t *testing.T, ws string) { mkfifo(t, filepath.Join(ws, "platform.yaml")) },
			args: []string{"run", "--force"}, code: exitUsage, msg: "is not a regular file", timeout: 20 * time.Second},
		hostileCase{name: "plan/link-to-fifo", plan: "-", setup: func(t *testing.T, ws string) {
			mkfifo(t, filepath.Join(ws, "p.fifo"))
			symlink(t, "p.fifo", filepath.Join(ws, "platform.yaml"))
		}, args: []string{"check"}, code: exitUsage, msg: "is not a regular file", timeout: 20 * time.Second},
		hostileCase{name: "plan/device", plan: "-", args: []string{"run", "--force", "--plan", "/dev/zero"}, code: exitUsage, msg: "is not a regular file", timeout: 20 * time.Second},
		hostileCase{name: "plan/folder", plan: "-", setup: func(t *testing.T, ws string) { os.Mkdir(filepath.Join(ws, "platform.yaml"), 0o700) },
			args: []string{"propose"}, code: exitUsage, msg: "is not a regular file"},
		hostileCase{name: "plan/missing", plan: "-", args: []string{"run", "--force"}, code: exitUsage, msg: "no such file"},
		hostileCase{name: "plan/empty", plan: "", setup: func(t *testing.T, ws string) { os.WriteFile(filepath.Join(ws, "platform.yaml"), nil, 0o600) },
			args: []string{"check"}, code: exitUsage, msg: "empty file"},
		hostileCase{name: "plan/huge", plan: "-", setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "platform.yaml"), "schema_version: 1\n# ", 'x', 1<<20, "\n")
		}, args: []string{"run", "--force"}, code: exitUsage, msg: "larger than 1 MiB", rssMiB: 200},
		hostileCase{name: "plan/binary", plan: "\x00\x01\x02\xff\xfe\x1b[2J\x00", args: []string{"check"}, code: exitUsage, msg: "platform.yaml"},
		hostileCase{name: "plan/alias-bomb", plan: "schema_version: 1\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n",
			args: []string{"run", "--force"}, code: exitUsage, msg: "platform.yaml", rssMiB: 300},
		hostileCase{name: "plan/deep-nesting", plan: "schema_version: 1\nx: " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n",
			args: []string{"check"}, code: exitUsage, msg: "platform.yaml", rssMiB: 300},
		hostileCase{name: "plan/two-documents", plan: corpusPlan + "---\n" + corpusPlan, args: []string{"check"}, code: exitUsage, msg: "a second YAML document"},
		hostileCase{name: "plan/unknown-field", plan: strings.Replace(corpusPlan, "sources:", "sourcse: {}\nsources:", 1), args: []string{"check"}, code: exitUsage, msg: "sourcse"},
		hostileCase{name: "plan/schema-version-future", plan: strings.Replace(corpusPlan, "schema_version: 1", "schema_version: 999", 1), args: []string{"check"}, code: exitUsage, msg: "999"},
		hostileCase{name: "plan/schema-version-absurd", plan: strings.Replace(corpusPlan, "schema_version: 1", "schema_version: 99999999999999999999999", 1), args: []string{"check"}, code: exitUsage, msg: "schema_version"},
		hostileCase{name: "plan/duplicate-key", plan: strings.Replace(corpusPlan, "platform: {prefix: hostile}", "platform: {prefix: hostile}\nplatform: {prefix: other}", 1), args: []string{"check"}, code: exitUsage, msg: "platform"},
		hostileCase{name: "plan/wrong-type", plan: strings.Replace(corpusPlan, "{name: in, files: [\"*.csv\"]}", "{name: in, files: 7}", 1), args: []string{"check"}, code: exitUsage, msg: "files"},
		hostileCase{name: "plan/max-record-negative", plan: strings.Replace(corpusPlan, "sources:", "etl: {max_record_bytes: -1}\nsources:", 1), args: []string{"approve", "--gate", "data-model", "--by", "A"}, code: exitUsage, msg: "etl.max_record_bytes"},
		hostileCase{name: "plan/max-record-absurd", plan: strings.Replace(corpusPlan, "sources:", "etl: {max_record_bytes: 99999999999999}\nsources:", 1), args: []string{"approve", "--gate", "data-model", "--by", "A"}, code: exitUsage, msg: "etl.max_record_bytes"},
		hostileCase{name: "plan/key-memory-absurd", plan: strings.Replace(corpusPlan, "sources:", "etl: {key_memory_mb: 99999999}\nsources:", 1), args: []string{"approve", "--gate", "data-model", "--by", "A"}, code: exitUsage, msg: "etl.key_memory_mb"},
		hostileCase{name: "plan/nul-in-value", plan: strings.Replace(corpusPlan, "prefix: hostile", "prefix: \"host\\0ile\"", 1), args: []string{"approve", "--gate", "data-model", "--by", "A"}, code: exitUsage, msg: "prefix"},
		// A warehouse at /, in a system folder or at the home folder is
		// refused before anything is written there (docs/operations.md).
		hostileCase{name: "plan/warehouse-root", plan: strings.Replace(corpusPlan, "sources:", "storage: {warehouse: /}\nsources:", 1), approve: true,
			files: map[string]string{"in/a.csv": hdr + rows(1, 2)}, args: runJSON(), code: exitPrecondition, nothing: true},
		hostileCase{name: "plan/warehouse-etc", plan: strings.Replace(corpusPlan, "sources:", "storage: {warehouse: /etc}\nsources:", 1), approve: true,
			files: map[string]string{"in/a.csv": hdr + rows(1, 2)}, args: runJSON(), code: exitPrecondition, nothing: true},
		hostileCase{name: "plan/warehouse-dotdot-root", plan: strings.Replace(corpusPlan, "sources:", "storage: {warehouse: ../../../../../../../../..}\nsources:", 1), approve: true,
			files: map[string]string{"in/a.csv": hdr + rows(1, 2)}, args: runJSON(), code: exitPrecondition, nothing: true},
		hostileCase{name: "plan/warehouse-root-check", plan: strings.Replace(corpusPlan, "sources:", "storage: {warehouse: /}\nsources:", 1), approve: true,
			args: []string{"check"}, code: exitPrecondition, msg: "/"},
		hostileCase{name: "plan/warehouse-root-teardown", plan: strings.Replace(corpusPlan, "sources:", "storage: {warehouse: /}\nsources:", 1), approve: true,
			args: []string{"teardown", "--confirm", "hostile"}, code: exitPrecondition},
		hostileCase{name: "plan/source-path-escape", plan: strings.Replace(corpusPlan, "path: in", "path: \"in\\e[2J\"", 1), approve: true,
			args: runJSON(), code: exitPrecondition, nothing: true},
		hostileCase{name: "plan/unapproved", files: map[string]string{"in/a.csv": hdr + rows(1, 2)}, args: runJSON(), code: exitPrecondition, msg: "approve", nothing: true},
	)

	// ── Files a glob matches ──
	nineteen := rows(1, 9) + "10,10.00,caf\xe9\n" + rows(11, 9) // one Latin-1 row in ASCII
	add(
		fileCase("file/header-only", map[string]string{"in/a.csv": hdr}, exitOK, "", c4(1, 0, 0, 1)),
		fileCase("file/empty", map[string]string{"in/a.csv": ""}, exitOK, "", c4(0, 0, 0, 0)),
		fileCase("file/header-only-no-newline", map[string]string{"in/a.csv": strings.TrimSuffix(hdr, "\n")}, exitOK, "", c4(1, 0, 0, 1)),
		fileCase("file/bom-only", map[string]string{"in/a.csv": "\ufeff"}, exitOK, "", c4(0, 0, 0, 0)),
		fileCase("file/only-blank-lines", map[string]string{"in/a.csv": "\n\n\n"}, exitOK, "", nil),
		fileCase("file/one-invalid-utf8-row", map[string]string{"in/a.csv": hdr + nineteen}, exitOK, "", c4(20, 18, 1, 1)),
		fileCase("file/crlf", map[string]string{"in/a.csv": strings.ReplaceAll(hdr+rows(1, 3), "\n", "\r\n")}, exitOK, "", c4(4, 3, 0, 1)),
		fileCase("file/nul-bytes", map[string]string{"in/a.csv": "\x00\x00\x00\x00\x01\x02\xff"}, exitOK, "", c4(0, 0, 0, 0)),
		// A NUL byte marks the file as binary: held back whole.
		withRule(fileCase("file/nul-in-cell", map[string]string{"in/a.csv": hdr + "1,1.00,a\x00b\n2,2.00,b\n"}, exitOK, "", c4(0, 0, 0, 0)), "unreadable_file"),
		fileCase("file/unterminated-quote", map[string]string{"in/a.csv": hdr + "1,1.00,a\n2,2.00,\"never\n3,3.00,c\n"}, exitOK, "", c4(3, 1, 1, 1)),
		fileCase("file/ragged", map[string]string{"in/a.csv": hdr + "1,1.00,a,extra\n2,2.00\n3,3.00,c\n"}, exitOK, "", c4(4, 1, 2, 1)),
		fileCase("file/duplicate-keys", map[string]string{"in/a.csv": hdr + "1,1.00,a\n1,2.00,b\n"}, exitOK, "", c4(3, 1, 1, 1)),
		fileCase("file/missing-column", map[string]string{"in/a.csv": "id,note\n1,a\n", "in/b.csv": hdr + rows(5, 1)}, exitOK, "", c4(2, 1, 0, 1)),
		fileCase("file/duplicate-header", map[string]string{"in/a.csv": "id,amount,note,note\n1,1.00,a,b\n", "in/b.csv": hdr + rows(5, 1)}, exitOK, "", nil),
		// Control characters in text are held back (rule control_char).
		fileCase("file/hostile-cells", map[string]string{"in/a.csv": hdr + "1,1.00,\"\x1b]0;pwned\x07\x1b[2J\u202e\u0085\"\n2,\x9b31m,b\n"}, exitOK, "", c4(3, 0, 2, 1)),
		fileCase("file/absurd-numbers", map[string]string{"in/a.csv": hdr + "99999999999999999999999999,1.00,a\n2,1e99999,b\n3,-0.00,c\n4,NaN,d\n5,99999999999.99,e\n"}, exitOK, "", c4(6, 1, 4, 1)),
		fileCase("file/wide-header", map[string]string{"in/a.csv": hdr[:len(hdr)-1] + strings.Repeat(",x", 20000) + "\n1,1.00,a" + strings.Repeat(",", 20000) + "\n"}, exitOK, "", c4(2, 1, 0, 1)),
		fileCase("file/dotdot-name", map[string]string{"in/..csv": hdr + rows(1, 2)}, exitOK, "", c4(3, 2, 0, 1)),
		fileCase("file/hostile-names", map[string]string{
			"in/a%#?b.csv": hdr + rows(1, 1), "in/e\x1b[31m.csv": hdr + rows(2, 1), "in/b\u202eb.csv": hdr + rows(3, 1),
			"in/n\nl.csv": hdr + rows(4, 1), "in/ \t.csv": hdr + rows(5, 1), "in/x\x9by.csv": hdr + rows(6, 1),
		}, exitOK, "", c4(12, 6, 0, 6)),
		fileCase("file/binary-as-csv", map[string]string{"in/a.csv": "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00", "in/b.csv": hdr + rows(1, 1)}, exitOK, "", c4(2, 1, 0, 1)),
		hostileCase{name: "file/fifo", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1)}, setup: func(t *testing.T, ws string) { mkfifo(t, filepath.Join(ws, "in", "f.csv")) },
			args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1), timeout: 60 * time.Second},
		hostileCase{name: "file/link-inside", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1), "in/sub/x.txt": hdr + rows(2, 1)},
			setup: func(t *testing.T, ws string) { symlink(t, "sub/x.txt", filepath.Join(ws, "in", "l.csv")) }, args: runJSON(), code: exitOK, counts: c4(4, 2, 0, 2)},
		hostileCase{name: "file/link-outside", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1), "secret.csv": hdr + rows(9, 1)},
			setup: func(t *testing.T, ws string) { symlink(t, "../secret.csv", filepath.Join(ws, "in", "l.csv")) }, args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1)},
		hostileCase{name: "file/link-to-etc-passwd", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1)},
			setup: func(t *testing.T, ws string) { symlink(t, "/etc/passwd", filepath.Join(ws, "in", "p.csv")) }, args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1)},
		hostileCase{name: "file/link-dangling", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1)},
			setup: func(t *testing.T, ws string) { symlink(t, "nowhere.csv", filepath.Join(ws, "in", "l.csv")) }, args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1)},
		hostileCase{name: "file/link-loop", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1)},
			setup: func(t *testing.T, ws string) {
				symlink(t, "l2.csv", filepath.Join(ws, "in", "l1.csv"))
				symlink(t, "l1.csv", filepath.Join(ws, "in", "l2.csv"))
			}, args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1)},
		hostileCase{name: "file/link-to-fifo", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1)},
			setup: func(t *testing.T, ws string) {
				mkfifo(t, filepath.Join(ws, "in", "p.fifo"))
				symlink(t, "p.fifo", filepath.Join(ws, "in", "l.csv"))
			}, args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1), timeout: 60 * time.Second},
		hostileCase{name: "file/link-to-dev-zero", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1)},
			setup: func(t *testing.T, ws string) { symlink(t, "/dev/zero", filepath.Join(ws, "in", "z.csv")) }, args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1), timeout: 60 * time.Second},
		hostileCase{name: "file/folder-named-csv", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 1), "in/d.csv/x": "x"}, args: runJSON(), code: exitOK, counts: c4(2, 1, 0, 1)},
		// 50 MB on one line, no newline: the first record is longer than the
		// 16 MiB limit, so the file is held back whole before any row.
		hostileCase{name: "file/50MB-single-line", approve: true, setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "in", "a.csv"), "", 'x', 50_000_000, "")
		}, args: runJSON(), code: exitOK, counts: c4(0, 0, 0, 0), rule: "unreadable_file", rssMiB: 400},
		// A 50 MB row between good rows: that row is held back
		// (record_too_large), the others load.
		hostileCase{name: "file/50MB-row", approve: true, setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "in", "a.csv"), hdr+"1,1.00,", 'x', 50_000_000, "\n2,2.00,b\n")
		}, args: runJSON(), code: exitOK, counts: c4(3, 1, 1, 1), rule: "record_too_large", rssMiB: 400},
		hostileCase{name: "file/50MB-quoted-cell-with-newlines", approve: true, setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "in", "a.csv"), hdr+"1,1.00,\"", '\n', 50_000_000, "\"\n2,2.00,b\n")
		}, args: runJSON(), code: exitOK, counts: c4(3, 1, 1, 1), rule: "record_too_large", rssMiB: 400},
		hostileCase{name: "file/many-tiny-rows", approve: true, setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "in", "a.csv"), hdr, '\n', 5_000_000, rows(1, 1))
		}, args: runJSON(), code: exitOK, counts: c4(5_000_002, 1, 0, 5_000_001), rssMiB: 400, timeout: 180 * time.Second},
	)
	// NDJSON.
	ndjsonLine := func(id int, note string) string { return fmt.Sprintf("{\"id\":%d,\"note\":%q}\n", id, note) }
	add(
		hostileCase{name: "ndjson/line-over-limit", plan: ndjsonPlan, approve: true, setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "in", "a.ndjson"), ndjsonLine(1, "a")+`{"id":2,"note":"`, 'x', 2_000_000, "\"}\n"+ndjsonLine(3, "c"))
		}, args: runJSON(), code: exitOK, counts: c4(3, 2, 1, 0), rule: "record_too_large", rssMiB: 300},
		hostileCase{name: "ndjson/first-line-over-limit-no-newline", plan: ndjsonPlan, approve: true, setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "in", "a.ndjson"), `{"id":2,"note":"`, 'x', 3_000_000, "")
		}, args: runJSON(), code: exitOK, counts: c4(1, 0, 1, 0), rule: "record_too_large", rssMiB: 300},
		hostileCase{name: "ndjson/deep-nesting", plan: ndjsonPlan, approve: true, files: map[string]string{
			"in/a.ndjson": ndjsonLine(1, "a") + `{"id":2,"note":` + strings.Repeat("[", 500_000) + strings.Repeat("]", 500_000) + "}\n" + ndjsonLine(3, "c"),
		}, args: runJSON(), code: exitOK, counts: c4(3, 2, 1, 0), rssMiB: 300},
		fileCaseP("ndjson/malformed-lines", ndjsonPlan, map[string]string{"in/a.ndjson": ndjsonLine(1, "a") + "{bad json\n[1,2]\n\"str\"\nnull\n" + ndjsonLine(2, "b")}, c4(6, 2, 4, 0)),
		fileCaseP("ndjson/blank-lines", ndjsonPlan, map[string]string{"in/a.ndjson": "\n" + ndjsonLine(1, "a") + "\n\n" + ndjsonLine(2, "b")}, c4(5, 2, 0, 3)),
		fileCaseP("ndjson/duplicate-keys-in-object", ndjsonPlan, map[string]string{"in/a.ndjson": "{\"id\":1,\"id\":2,\"note\":\"a\"}\n" + ndjsonLine(3, "c")}, nil),
		fileCaseP("ndjson/hostile-values", ndjsonPlan, map[string]string{"in/a.ndjson": ndjsonLine(1, "\x1b]0;pwned\x07\u202e\u0085") + "{\"id\":2,\"note\":\"\\u001b[2J\\u009b\"}\n"}, c4(2, 0, 2, 0)),
		fileCaseP("ndjson/invalid-utf8", ndjsonPlan, map[string]string{"in/a.ndjson": "{\"id\":1,\"note\":\"caf\xe9\"}\n" + ndjsonLine(2, "b")}, nil),
		fileCaseP("ndjson/huge-number", ndjsonPlan, map[string]string{"in/a.ndjson": "{\"id\":1" + strings.Repeat("0", 100_000) + ",\"note\":\"a\"}\n" + ndjsonLine(2, "b")}, c4(2, 1, 1, 0)),
	)
	if os.Getenv("LIMA_HOSTILE_BIG") != "" {
		add(hostileCase{name: "ndjson/100MB-line-default-limit", plan: strings.Replace(ndjsonPlan, "etl: {max_record_bytes: 1048576}\n", "", 1), approve: true, setup: func(t *testing.T, ws string) {
			bigFile(t, filepath.Join(ws, "in", "a.ndjson"), ndjsonLine(1, "a")+`{"id":2,"note":"`, 'x', 100_000_000, "\"}\n"+ndjsonLine(3, "c"))
		}, args: runJSON(), code: exitOK, counts: c4(3, 2, 1, 0), rule: "record_too_large", rssMiB: 500, timeout: 300 * time.Second})
	}

	// ── Saved state: damaged expected.json and report.json ──
	damage := func(name, file, content string, args []string, code int, msg string) hostileCase {
		return hostileCase{name: name, approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 2)}, setup: func(t *testing.T, ws string) {
			c := runBin(t, childOpts{dir: ws}, runJSON()...)
			if c.code != exitOK {
				t.Fatalf("the first run: exit %d: %s", c.code, c.stderr)
			}
			r, _ := latestReport(t, ws)
			if err := os.WriteFile(filepath.Join(ws, "reports", r.RunID, file), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}, args: args, code: code, msg: msg}
	}
	for _, d := range []struct{ name, content string }{
		{"truncated", `{"tables":[{"name":"orders","rows`},
		{"not-json", "\x1b[2J\x00garbage\u202e"},
		{"null", "null"},
		{"wrong-types", `{"tables":"orders","run_id":7}`},
		{"huge-numbers", `{"tables":[{"name":"orders","rows_accepted":1e999}]}`},
		{"empty", ""},
	} {
		add(damage("state/expected-"+d.name, "expected.json", d.content, []string{"reconcile"}, exitError, "expected.json"))
	}
	add(
		damage("state/report-json-garbage", "report.json", "\x1b[2Jnot json\u202e", []string{"report", "--json"}, exitError, "report.json"),
		damage("state/report-md-escapes", "report.md", "# run\n\x1b]0;pwned\x07\x1b[2J\u202e\u0085\n", []string{"report"}, exitOK, `\e]0;pwned`),
		hostileCase{name: "state/state-db-garbage", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 2), ".lima/state.db": "\x1b[2J this is not SQLite \x00\x01"},
			args: runJSON(), code: exitPrecondition, msg: "state.db", nothing: true},
		hostileCase{name: "state/catalog-db-garbage", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 2), ".lima/catalog.db": strings.Repeat("not a database ", 1000)},
			args: runJSON(), code: exitPrecondition, msg: "catalog.db", nothing: true},
		hostileCase{name: "state/dot-lima-is-a-file", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 2)},
			setup: func(t *testing.T, ws string) {
				os.RemoveAll(filepath.Join(ws, ".lima"))
				os.WriteFile(filepath.Join(ws, ".lima"), []byte("x"), 0o600)
			},
			args: runJSON(), code: exitPrecondition, msg: ".lima", nothing: true},
	)

	// ── Avro: damaged containers are one file exception each, read within
	// the memory bound, never half loaded ──
	good := avroCorpusFile(t, 300, ocf.Null)
	sync := good[len(good)-16:]
	header := good[:bytes.Index(good, sync)+16]
	block := func(count, size int64, data []byte) string {
		b := append(append([]byte{}, header...), zigzag(count)...)
		b = append(append(b, zigzag(size)...), data...)
		return string(append(b, sync...))
	}
	var bomb bytes.Buffer
	zw, _ := flate.NewWriter(&bomb, flate.BestSpeed)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	deflated := avroCorpusFile(t, 2, ocf.Deflate)
	dsync := deflated[len(deflated)-16:]
	dheader := deflated[:bytes.Index(deflated, dsync)+16]
	bombFile := append(append(append([]byte{}, dheader...), zigzag(1)...), zigzag(int64(bomb.Len()))...)
	bombFile = append(append(bombFile, bomb.Bytes()...), dsync...)
	two := string(avroCorpusFile(t, 2, ocf.Snappy))
	add(
		withRule(fileCaseP("avro/cut-short", avroPlan, map[string]string{"in/a.avro": string(good[:len(good)*2/3]), "in/b.avro": two}, c4(2, 2, 0, 0)), "unreadable_file"),
		withRule(fileCaseP("avro/csv-named-avro", avroPlan, map[string]string{"in/a.avro": hdr + rows(1, 3), "in/b.avro": two}, c4(2, 2, 0, 0)), "unreadable_file"),
		withRule(fileCaseP("avro/block-claims-1TiB", avroPlan, map[string]string{"in/a.avro": block(1, 1<<40, nil), "in/b.avro": two}, c4(2, 2, 0, 0)), "unreadable_file"),
		withRule(fileCaseP("avro/10^12-records-in-3-bytes", avroPlan, map[string]string{"in/a.avro": block(1_000_000_000_000, 3, []byte{2, 0, 0}), "in/b.avro": two}, c4(2, 2, 0, 0)), "unreadable_file"),
		withRule(fileCaseP("avro/string-claims-1TiB", avroPlan, map[string]string{"in/a.avro": block(1, 8, append(zigzag(1), zigzag(1<<40)...)), "in/b.avro": two}, c4(2, 2, 0, 0)), "unreadable_file"),
		withRule(fileCaseP("avro/deflate-bomb-65MiB", avroPlan, map[string]string{"in/a.avro": string(bombFile), "in/b.avro": two}, c4(2, 2, 0, 0)), "unreadable_file"),
	)

	// ── Signals: a verb that waits honours SIGTERM ──
	add(
		// 90M rows take minutes to generate: SIGTERM ends it at once,
		// before any row is loaded (exit 1, nothing half-visible).
		hostileCase{name: "signal/demo-rows-sigterm", plan: "-", args: []string{"demo", "--dir", "{ws}/demo", "--headless", "--rows", "90000000"},
			term: 3 * time.Second, code: exitError, msg: "context canceled", timeout: 30 * time.Second},
		hostileCase{name: "signal/watch-sigterm", approve: true, files: map[string]string{"in/a.csv": hdr + rows(1, 2)},
			args: []string{"run", "--watch", "--force", "--interval", "1s"}, term: 3 * time.Second, code: exitOK, timeout: 40 * time.Second},
		hostileCase{name: "signal/schedule-sigterm", plan: strings.Replace(corpusPlan, "sources:", "schedule: {cron: \"0 0 1 1 *\", timezone: UTC}\nsources:", 1), approve: true,
			args: []string{"schedule"}, term: 2 * time.Second, code: exitOK, timeout: 40 * time.Second},
		hostileCase{name: "signal/schedule-once-sigterm", plan: strings.Replace(corpusPlan, "sources:", "schedule: {cron: \"0 0 1 1 *\", timezone: UTC}\nsources:", 1), approve: true,
			args: []string{"schedule", "--once"}, term: 2 * time.Second, code: exitError, timeout: 40 * time.Second},
	)
	return cs
}

// avroPlan reads Avro files: id, amount (a decimal), note.
const avroPlan = `schema_version: 1
platform: {prefix: hostile}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["*.avro"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(10,2)"}
      - {name: note, type: string}
    load: {keys: [id]}
`

// avroCorpusFile writes ids 1..n with the Avro library's own writer, ten
// records a block.
func avroCorpusFile(t *testing.T, n int, codec ocf.CodecName) []byte {
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(`{"type":"record","name":"o","fields":[{"name":"id","type":"long"},`+
		`{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},{"name":"note","type":"string"}]}`,
		&buf, ocf.WithCodec(codec), ocf.WithBlockLength(10))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := enc.Encode(map[string]any{"id": int64(i), "amount": big.NewRat(int64(i), 1), "note": fmt.Sprint("r", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zigzag is Avro's encoding of a long.
func zigzag(v int64) []byte {
	return binary.AppendUvarint(nil, uint64(v<<1)^uint64(v>>63))
}

func withRule(c hostileCase, rule string) hostileCase { c.rule = rule; return c }

func fileCaseP(name, plan string, files map[string]string, n *counts) hostileCase {
	c := fileCase(name, files, exitOK, "", n)
	c.plan = plan
	return c
}

// inert fails if out holds a raw C0 control other than newline and tab
// (the layout of lima-tui's own tables and flag lists), DEL, a C1
// control, a BiDi control or a byte that is not UTF-8.
func inert(t *testing.T, what, out string) {
	t.Helper()
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		bad := r == utf8.RuneError && size <= 1 || r < 0x20 && r != '\n' && r != '\t' || r == 0x7f ||
			r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
		if bad {
			lo, hi := max(0, i-60), min(len(out), i+40)
			t.Errorf("%s: raw %q at byte %d: …%q…", what, out[i:i+size], i, out[lo:hi])
			return
		}
		i += size
	}
}

func TestHostileInputCorpus(t *testing.T) {
	cases := hostileCorpus(t)
	if len(cases) < 100 {
		t.Fatalf("the corpus has %d cases; issue 17 asks for at least 100", len(cases))
	}
	t.Logf("%d cases", len(cases))
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("two cases named %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			if err := os.MkdirAll(filepath.Join(ws, "in"), 0o700); err != nil {
				t.Fatal(err)
			}
			switch c.plan {
			case "-":
			case "":
				os.WriteFile(filepath.Join(ws, "platform.yaml"), []byte(corpusPlan), 0o600)
			default:
				os.WriteFile(filepath.Join(ws, "platform.yaml"), []byte(c.plan), 0o600)
			}
			for name, content := range c.files {
				p := filepath.Join(ws, name)
				os.MkdirAll(filepath.Dir(p), 0o700)
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.approve {
				if a := runBin(t, childOpts{dir: ws}, "approve", "--gate", "data-model", "--by", "A"); a.code != exitOK {
					t.Fatalf("approve: exit %d: %s", a.code, a.stderr)
				}
			}
			if c.setup != nil {
				c.setup(t, ws)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "{ws}", ws)
			}
			before, _ := latestReport(t, ws)
			res := runBin(t, childOpts{dir: ws, timeout: c.timeout, term: c.term}, args...)
			rss := c.rssMiB
			if rss == 0 {
				rss = 300
			}
			checkSane(t, c.name, res, rss)
			t.Logf("exit %d in %s, peak RSS %d MiB\nstdout: %.600s\nstderr: %.600s", res.code, res.elapsed.Round(time.Millisecond), res.maxRSSKiB>>10, res.stdout, res.stderr)
			if res.code != c.code {
				t.Errorf("exit %d, want %d; stderr: %.800s", res.code, c.code, res.stderr)
			}
			if c.msg != "" && !strings.Contains(res.stderr+res.stdout, c.msg) {
				t.Errorf("the output does not say %q:\nstderr: %.800s\nstdout: %.300s", c.msg, res.stderr, res.stdout)
			}
			inert(t, "stdout", res.stdout)
			inert(t, "stderr", res.stderr)
			after, found := latestReport(t, ws)
			if c.nothing && found && after.RunID != before.RunID {
				t.Errorf("a refused command wrote report %s", after.RunID)
			}
			if c.counts != nil || c.rule != "" {
				if !found || after.RunID == before.RunID {
					t.Fatalf("no report.json was written")
				}
				var tc *tableCounts
				for i := range after.Tables {
					if after.Tables[i].Name == "orders" {
						tc = &after.Tables[i]
					}
				}
				if tc == nil {
					t.Fatalf("report.json has no table orders: %+v", after)
				}
				if tc.RowsRead != tc.RowsLoaded+tc.RowsQuarantined+tc.RowsSkipped || !tc.Balanced {
					t.Errorf("orders does not balance: %+v", *tc)
				}
				got := counts{tc.RowsRead, tc.RowsLoaded, tc.RowsQuarantined, tc.RowsSkipped}
				if c.counts != nil && got != *c.counts {
					t.Errorf("read/loaded/held/skipped = %v, want %v", got, *c.counts)
				}
				if c.rule != "" && after.Exceptions.ByRule[c.rule] == 0 {
					t.Errorf("report.json counts no exception under rule %s: %v", c.rule, after.Exceptions.ByRule)
				}
			}
			if found {
				for _, tc := range after.Tables {
					if tc.RowsRead != tc.RowsLoaded+tc.RowsQuarantined+tc.RowsSkipped {
						t.Errorf("%s does not balance: %+v", tc.Name, tc)
					}
				}
			}
		})
	}
}
