//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The canary and escape tests (issue 17) run every verb of lima-tui, as a
// child process, over one workspace: a files table with bad rows (so the
// exception queue, replay, compaction and teardown have work) beside a
// database table whose DSN, with a password, is in the environment.

// canaryPlan: files table orders, database table dbt (its DSN in
// $LIMA_CANARY_DSN), a cron so schedule has something to wait for.
func canaryPlan(kind string) string {
	return `schema_version: 1
platform: {prefix: canary}
schedule: {cron: "0 0 1 1 *", timezone: UTC}
sources:
  in: {kind: files, path: in}
  erp: {kind: ` + kind + `, dsn_env: LIMA_CANARY_DSN}
tables:
  orders:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(10,2)"}
      - {name: note, type: string}
    load: {keys: [id]}
  dbt:
    source: {name: erp, table: orders, schema: erp}
    columns:
      - {name: id, type: long}
    load: {keys: [id]}
`
}

// everyVerb is what the tests run, in order, in a workspace holding
// canaryPlan's platform.yaml and its files: every verb of the registry,
// the exception verbs, and the waiting verbs ended by SIGTERM. dsn is the
// DSN itself, handed where a user might paste it.
func everyVerb(dsn string) []struct {
	args []string
	term time.Duration
} {
	type v = struct {
		args []string
		term time.Duration
	}
	return []v{
		{args: []string{"help"}},
		{args: []string{"wizard"}},
		{args: []string{}},
		{args: []string{"init", "--source", "env:LIMA_CANARY_DSN", "--dir", "init-env", "--defaults", "--region", "eu-central-1"}},
		{args: []string{"init", "--source", dsn, "--dir", "init-lit", "--defaults", "--region", "eu-central-1"}},
		{args: []string{"check", "--timeout", "5s"}},
		{args: []string{"check", "--json", "--timeout", "5s"}},
		{args: []string{"propose"}},
		{args: []string{"propose", "--json"}},
		{args: []string{"approve", "--gate", "data-model", "--by", "A"}},
		{args: []string{"run", "--force", "--json"}},
		{args: []string{"approve", "--plan", "files.yaml", "--gate", "data-model", "--by", "A"}},
		{args: []string{"run", "--plan", "files.yaml", "--force"}},
		{args: []string{"run", "--plan", "files.yaml", "--force", "--json", "--full-refresh"}},
		{args: []string{"reconcile", "--plan", "files.yaml"}},
		{args: []string{"reconcile"}},
		{args: []string{"report"}},
		{args: []string{"report", "--json"}},
		{args: []string{"exceptions", "list"}},
		{args: []string{"exceptions", "list", "--json"}},
		{args: []string{"exceptions", "show", "1"}},
		{args: []string{"exceptions", "show", "1", "--json"}},
		{args: []string{"exceptions", "assign", "1", "2", "--owner", "Ops \x1b[31mteam\u202e"}},
		{args: []string{"exceptions", "resolve", "1", "--set", "note=fixed \x1b]0;t\x07", "--note", "n\u2066"}},
		{args: []string{"exceptions", "waive", "2", "--reason", "r\x9b"}},
		{args: []string{"exceptions", "replay", "--plan", "files.yaml", "--table", "orders"}},
		{args: []string{"exceptions", "export", "--format", "csv"}},
		{args: []string{"exceptions", "export", "--format", "json"}},
		{args: []string{"exceptions", "export", "--out", "export.csv"}},
		{args: []string{"exceptions"}},
		{args: []string{"compact", "--plan", "files.yaml", "--json"}},
		{args: []string{"compact"}},
		{args: []string{"schedule", "--once"}, term: 2 * time.Second},
		{args: []string{"run", "--plan", "files.yaml", "--watch", "--force", "--interval", "1s"}, term: 3 * time.Second},
		{args: []string{"schedule", "--plan", "files.yaml"}, term: 2 * time.Second},
		{args: []string{"adopt"}},
		{args: []string{"adopt", "--plan", "files.yaml", "--confirm", "canary", "--json"}},
		{args: []string{"demo", "--dir", "demo", "--headless", "--json"}},
		{args: []string{"report", dsn}},
		{args: []string{"reconcile", "--run", dsn}},
		{args: []string{"run", "--plan", dsn}},
		{args: []string{dsn}},
		{args: []string{"exceptions", "list", "--owner", dsn}},
		{args: []string{"teardown", "--json"}},
		{args: []string{"teardown", "--plan", "files.yaml"}},
		{args: []string{"teardown", "--plan", "files.yaml", "--confirm", "canary", "--json"}},
	}
}

// canaryFiles are the files table's inputs: good rows, bad rows, a
// hostile file name and hostile cells.
var canaryFiles = map[string]string{
	"in/a.csv":               "id,amount,note\n1,1.00,a\n2,x,b\n3,3.00,c\n4,4.00,\"\x1b]0;pwned\x07\x1b[2J\u202e\u0085\"\n",
	"in/b\x1b[31m\u202e.csv": "id,amount,note\n5,5.00,e\n6,\x9b31m,f\n",
}

// canaryWorkspace writes canaryPlan and its files into a new folder.
func canaryWorkspace(t *testing.T, kind string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	for name, content := range canaryFiles {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "platform.yaml"), []byte(canaryPlan(kind)), 0o600); err != nil {
		t.Fatal(err)
	}
	// files.yaml: the same workspace without the database (gate 2 checks
	// every source, so the database's plan never loads): it fills the
	// lake and the queue that the other verbs then work on.
	files := canaryPlan(kind)
	files = files[:strings.Index(files, "  erp:")] + files[strings.Index(files, "tables:"):strings.Index(files, "  dbt:")]
	if err := os.WriteFile(filepath.Join(ws, "files.yaml"), []byte(files), 0o600); err != nil {
		t.Fatal(err)
	}
	return ws
}

// leaks returns the first spelling of pw found in text, with context.
func leaks(text []byte, spellings []string) string {
	for _, s := range spellings {
		if i := bytes.Index(text, []byte(s)); i >= 0 {
			return fmt.Sprintf("%q: …%q…", s, text[max(0, i-80):min(len(text), i+len(s)+40)])
		}
	}
	return ""
}

// TestCanaryPasswordNeverLeaks runs every verb with a unique password in
// the DSN, in every DSN form (PostgreSQL URL and key=value, MySQL URL,
// go-sql-driver, SQL Server, Oracle), pointed at a closed loopback port,
// with the DSN in the environment and pasted on the command line; after
// each verb it greps stdout, stderr and every file under the workspace
// (plan, reports, .lima's state and catalog, logs, the lake, the export)
// for the password as written, URL-encoded, and its random core.
func TestCanaryPasswordNeverLeaks(t *testing.T) {
	port := closedLoopbackPort(t)
	host := "127.0.0.1:" + port
	core := make([]byte, 6)
	rand.Read(core)
	coreHex := "c4nAry" + hex.EncodeToString(core)
	pw := coreHex + "&!x"
	enc := url.UserPassword("alice", pw).String() // alice:c4nAry…%26%21x
	spellings := []string{pw, coreHex, url.QueryEscape(pw), url.PathEscape(pw), strings.TrimPrefix(enc, "alice:")}
	forms := []struct{ name, kind, dsn string }{
		{"postgres-url", "postgres", "postgres://" + enc + "@" + host + "/erp?sslmode=disable&connect_timeout=2"},
		{"postgres-kv", "postgres", "host=127.0.0.1 port=" + port + " user=alice password=" + pw + " dbname=erp sslmode=disable connect_timeout=2"},
		{"mysql-url", "mysql", "mysql://" + enc + "@" + host + "/erp"},
		{"go-sql-driver", "mysql", "alice:" + pw + "@tcp(" + host + ")/erp?timeout=2s"},
		{"sqlserver", "sqlserver", "sqlserver://" + enc + "@" + host + "?database=erp&dial+timeout=2"},
		{"oracle", "oracle", "oracle://" + enc + "@" + host + "/ORCLPDB1?CONNECTION TIMEOUT=2"},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			ws := canaryWorkspace(t, f.kind)
			env := []string{"LIMA_CANARY_DSN=" + f.dsn, "LIMA_OTHER_DSN=" + f.dsn}
			for _, v := range everyVerb(f.dsn) {
				what := strings.Join(v.args, " ")
				c := runBin(t, childOpts{dir: ws, env: env, term: v.term, timeout: 60 * time.Second}, v.args...)
				checkSane(t, what, c, 400)
				if c.code < 0 || c.code > 4 {
					t.Errorf("%s: exit %d, outside the documented 0–4", what, c.code)
				}
				if l := leaks([]byte(c.stdout), spellings); l != "" {
					t.Errorf("%s: stdout shows the password %s", what, l)
				}
				if l := leaks([]byte(c.stderr), spellings); l != "" {
					t.Errorf("%s: stderr shows the password %s", what, l)
				}
				filepath.WalkDir(ws, func(path string, d os.DirEntry, err error) error {
					if err != nil || !d.Type().IsRegular() {
						return nil
					}
					b, _ := os.ReadFile(path)
					if l := leaks(b, spellings); l != "" {
						t.Errorf("after %s: %s holds the password %s", what, path, l)
					}
					return nil
				})
			}
		})
	}
}

// TestNoRawControlReachesAnyVerbsOutput runs every verb over a workspace
// whose file names, cells, owners, notes and reasons carry ESC/CSI/OSC
// sequences, C1 controls (characters and raw bytes) and BiDi controls, and
// asserts that no raw C0 (but newline and tab), C1 or BiDi byte reaches
// stdout or stderr; then exports the queue, and prints the report and the
// list, with stdout a real terminal (a pty).
func TestNoRawControlReachesAnyVerbsOutput(t *testing.T) {
	ws := canaryWorkspace(t, "postgres")
	env := []string{"LIMA_CANARY_DSN=postgres://alice:pw@127.0.0.1:" + closedLoopbackPort(t) + "/erp?connect_timeout=2"}
	for _, v := range everyVerb("postgres://alice:pw@\x1b[2J127.0.0.1:1/\u202eerp") {
		if len(v.args) > 0 && v.args[0] == "teardown" {
			continue // keep the queue for the terminal exports below
		}
		what := strings.Join(v.args, " ")
		c := runBin(t, childOpts{dir: ws, env: env, term: v.term, timeout: 60 * time.Second}, v.args...)
		checkSane(t, what, c, 400)
		if len(v.args) > 1 && v.args[0] == "exceptions" && v.args[1] == "export" && !strings.Contains(what, "--out") {
			// The export to a pipe is data (… > queue.csv): it keeps the
			// bytes (docs/exceptions.md); to a terminal it is escaped,
			// checked on the pty below.
			if !strings.Contains(c.stdout, "\x1b]0;pwned") && !strings.Contains(c.stdout, `\u001b]0;pwned`) {
				t.Errorf("%s to a pipe lost the raw cell:\n%.600s", what, c.stdout)
			}
		} else {
			inert(t, what+": stdout", c.stdout)
		}
		inert(t, what+": stderr", c.stderr)
	}
	// Hostile text must be in the queue for the terminal runs to mean
	// anything.
	if b, err := os.ReadFile(filepath.Join(ws, "export.csv")); err != nil || !bytes.Contains(b, []byte("\x1b]0;pwned")) {
		t.Fatalf("export --out lost the raw cell (it keeps the data): %v %.300q", err, b)
	}
	for _, args := range [][]string{
		{"exceptions", "export", "--format", "csv"},
		{"exceptions", "export", "--format", "json"},
		{"exceptions", "list"},
		{"exceptions", "show", "3"},
		{"report"},
		{"run", "--plan", "files.yaml", "--force", "--full-refresh"},
		{"run", "--\x1b[31mbad"},
	} {
		what := strings.Join(args, " ") + " (stdout a terminal)"
		out, errs, code := runOnPTY(t, ws, env, args...)
		if code < 0 || code > 4 {
			t.Errorf("%s: exit %d", what, code)
		}
		inert(t, what+": stdout", out)
		inert(t, what+": stderr", errs)
		if len(args) > 1 && args[1] == "export" && !strings.Contains(out, `\e]0;pwned\x07`) && !strings.Contains(out, `\u001b]0;pwned\u0007`) {
			t.Errorf("%s: the escaped cell is missing from the export:\n%.1000s", what, out)
		}
	}
}

// runOnPTY runs lima-tui with stdout on a pseudo-terminal (output
// post-processing off, so a newline stays a newline) and stderr on a pipe.
func runOnPTY(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(limaBin(t), args...)
	cmd.Dir = dir
	cmd.Env = childEnv(dir, env)
	cmd.Stdout = slave
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(master) // ends with EIO once the child is gone
		done <- b
	}()
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	var out []byte
	select {
	case out = <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("%v: the terminal did not close", args)
	}
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return string(out), errb.String(), code
}

func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals:", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return m, s
}
