package redact

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

const pw = "Tr0ub4dor&3x!"

// forms are DSNs in every form Lima's drivers take, each carrying pw.
func forms() map[string]string {
	enc := url.QueryEscape(pw)
	return map[string]string{
		"postgres url":      "postgres://alice:" + enc + "@db.example:5432/erp?sslmode=disable",
		"postgresql url":    "postgresql://alice:" + enc + "@127.0.0.1:1/erp",
		"mysql url":         "mysql://alice:" + enc + "@127.0.0.1:1/erp",
		"postgres kv":       "host=127.0.0.1 port=1 user=alice password=" + pw + " dbname=erp sslmode=disable",
		"postgres kv quote": "host=127.0.0.1 user=alice password='" + pw + "' dbname=erp",
		"go-sql-driver":     "alice:" + pw + "@tcp(127.0.0.1:1)/erp?parseTime=true",
		"go-sql-driver unx": "alice:" + pw + "@unix(/tmp/mysql.sock)/erp",
		"sqlserver url":     "sqlserver://alice:" + enc + "@127.0.0.1:1?database=erp&encrypt=disable",
		"sqlserver query":   "sqlserver://127.0.0.1:1?database=erp&user%20id=alice&password=" + enc,
		"sqlserver ado":     "server=127.0.0.1;user id=alice;password=" + pw + ";database=erp",
		"oracle url":        "oracle://alice:" + enc + "@127.0.0.1:1521/ORCLPDB1",
	}
}

// quotes are the ways a driver or Lima itself may put a DSN in an error.
func quotes(dsn string) []string {
	dec, _ := url.QueryUnescape(dsn)
	return []string{
		"cannot parse `" + dsn + "`: failed to parse as DSN",
		fmt.Sprintf("connect %q: dial tcp 127.0.0.1:1: connection refused", dsn),
		"open " + dec + ": bad option",
		"login failed; password was " + pw,
	}
}

func TestEveryDSNFormIsRedacted(t *testing.T) {
	for name, dsn := range forms() {
		for _, q := range quotes(dsn) {
			got := String(q, dsn)
			if strings.Contains(got, pw) || strings.Contains(got, url.QueryEscape(pw)) || strings.Contains(got, "Tr0ub4dor") {
				t.Errorf("%s: %q\n  → %q still holds the password", name, q, got)
			}
			err := Error(errors.New(q), dsn)
			if strings.Contains(err.Error(), "Tr0ub4dor") {
				t.Errorf("%s: Error kept the password: %q", name, err)
			}
		}
		// Unknown DSN: the patterns alone hide the password where the
		// DSN is quoted whole.
		if got := Scrub("error for " + dsn + " (retrying)"); strings.Contains(got, "Tr0ub4dor") {
			t.Errorf("%s: Scrub(%q) = %q", name, dsn, got)
		}
	}
}

func TestRedactKeepsWhatIsNotSecret(t *testing.T) {
	dsn := "postgres://alice:" + pw + "@db.example:5432/erp"
	msg := "dial tcp db.example:5432: connection refused"
	if got := String(msg, dsn); got != msg {
		t.Errorf("String changed a message without secrets: %q", got)
	}
	if got := Scrub("see a@b.example, x = 1, time=3"); got != "see a@b.example, x = 1, time=3" {
		t.Errorf("Scrub changed harmless text: %q", got)
	}
	wrapped := Error(fmt.Errorf("connect %s: %w", dsn, context.Canceled), dsn)
	if !errors.Is(wrapped, context.Canceled) || strings.Contains(wrapped.Error(), pw) {
		t.Errorf("Error lost the chain or kept the password: %v", wrapped)
	}
	if Error(nil, dsn) != nil {
		t.Error("Error(nil) is not nil")
	}
}
