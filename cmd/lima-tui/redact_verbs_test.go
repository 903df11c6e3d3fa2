package main

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// redactPW is the password every DSN below carries; no output may show it.
const redactPW = "Zq9-PaSsWoRd-7x"

func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return strconv.Itoa(port)
}

// noPassword fails if text holds the password in any spelling.
func noPassword(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{redactPW, url.QueryEscape(redactPW), "PaSsWoRd"} {
		if strings.Contains(text, s) {
			i := strings.Index(text, s)
			t.Errorf("%s shows the password: …%s…", what, text[max(0, i-80):min(len(text), i+40)])
			return
		}
	}
}

// TestNoVerbPrintsADSNPassword points a database source at a closed
// loopback port through a DSN with a password, in every form, and runs the
// verbs that connect: check, run, propose, init --source env:NAME, and init
// given the DSN itself. The password appears in no stdout, no stderr and no
// file of the workspace.
func TestNoVerbPrintsADSNPassword(t *testing.T) {
	noTTY(t)
	port := closedLoopbackPort(t)
	host := "127.0.0.1:" + port
	forms := []struct{ name, kind, dsn string }{
		{"postgres url", "postgres", "postgres://alice:" + redactPW + "@" + host + "/erp?sslmode=disable&connect_timeout=3"},
		{"postgres kv", "postgres", "host=127.0.0.1 port=" + port + " user=alice password=" + redactPW + " dbname=erp sslmode=disable connect_timeout=3"},
		{"mysql url", "mysql", "mysql://alice:" + redactPW + "@" + host + "/erp"},
		{"go-sql-driver", "mysql", "alice:" + redactPW + "@tcp(" + host + ")/erp?timeout=3s"},
		{"sqlserver", "sqlserver", "sqlserver://alice:" + redactPW + "@" + host + "?database=erp&dial+timeout=3"},
		{"oracle", "oracle", "oracle://alice:" + redactPW + "@" + host + "/ORCLPDB1?CONNECTION TIMEOUT=3"},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Setenv("LIMA_TEST_REDACT_DSN", f.dsn)
			dir := t.TempDir()
			pp := filepath.Join(dir, "platform.yaml")
			planText := `schema_version: 1
platform: {prefix: acme, environment: prod, pattern: iceberg, catalog: sqlite}
storage: {warehouse: lake}
sources:
  erp: {kind: ` + f.kind + `, dsn_env: LIMA_TEST_REDACT_DSN}
tables:
  orders:
    source: {name: erp, table: orders, schema: erp}
    columns:
      - {name: id, type: long}
    load: {keys: [id]}
downstream: {consumer: bi}
`
			if err := os.WriteFile(pp, []byte(planText), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, _, errs := runCLI(t, "approve", "--plan", pp, "--gate", "data-model", "--by", "A"); code != exitOK {
				t.Fatalf("approve: %s", errs)
			}
			// A plan without tables: propose discovers the database.
			bare := filepath.Join(dir, "bare", "platform.yaml")
			os.MkdirAll(filepath.Dir(bare), 0o700)
			bareText := strings.Replace(planText[:strings.Index(planText, "tables:")], "", "", 1) + "tables: {}\ndownstream: {consumer: bi}\n"
			if err := os.WriteFile(bare, []byte(bareText), 0o600); err != nil {
				t.Fatal(err)
			}
			runs := [][]string{
				{"propose", "--plan", bare},
				{"propose", "--write", "--plan", bare},
				{"check", "--plan", pp},
				{"run", "--force", "--plan", pp},
				{"propose", "--plan", pp},
				{"propose", "--write", "--plan", pp},
				{"init", "--source", "env:LIMA_TEST_REDACT_DSN", "--dir", filepath.Join(dir, "init-env"), "--defaults", "--region", "eu-central-1"},
				{"init", "--source", f.dsn, "--dir", filepath.Join(dir, "init-lit"), "--defaults", "--region", "eu-central-1"},
			}
			for _, args := range runs {
				code, out, errs := runCLI(t, args...)
				if code == exitOK && args[0] != "propose" {
					t.Errorf("%s against a closed port: exit 0", args[0])
				}
				t.Logf("%s %s: exit %d\n%s\n%s", args[0], args[1], code, out, errs)
				noPassword(t, args[0]+" "+args[1]+" stdout", out)
				noPassword(t, args[0]+" "+args[1]+" stderr", errs)
			}
			filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				b, _ := os.ReadFile(path)
				if bytes.Contains(b, []byte("PaSsWoRd")) {
					noPassword(t, "file "+path, string(b))
				}
				return nil
			})
		})
	}
}
