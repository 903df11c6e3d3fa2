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

// TestSecretsSpellings pins Secrets for one DSN of each shape: the DSN and
// its password as written, percent-decoded and percent-encoded, worked out by
// hand — and nothing else (a host, port or user masked in a message makes the
// message useless).
func TestSecretsSpellings(t *testing.T) {
	const (
		P  = "Tr0ub4dor&3x!"
		QE = "Tr0ub4dor%263x%21" // url.QueryEscape(P)
		PE = "Tr0ub4dor&3x%21"   // url.PathEscape(P)
	)
	for _, c := range []struct {
		dsn  string
		want []string
	}{
		// URL user info, percent-encoded as written: the decoded password,
		// its two encodings, and the encoding of what is written.
		{"postgres://alice:" + QE + "@db.example:5432/erp?sslmode=disable",
			[]string{P, QE, PE, "Tr0ub4dor%25263x%2521"}},
		// libpq key=value: the value runs to the next space, & and ; included.
		{"host=db user=alice password=" + P + " dbname=erp",
			[]string{"Tr0ub4dor", P, QE, PE}},
		// quoted value: with and without its quotes.
		{"host=db password='" + P + "' dbname=erp",
			[]string{"'" + P + "'", "%27Tr0ub4dor%263x%21%27", "%27Tr0ub4dor&3x%21%27", P, QE, PE}},
		// ADO: the value ends at the ;.
		{"server=db;user id=alice;password=" + P + ";database=erp",
			[]string{"Tr0ub4dor", P, QE, PE, P + ";database=erp", "Tr0ub4dor%263x%21%3Bdatabase%3Derp", "Tr0ub4dor&3x%21%3Bdatabase=erp"}},
		// go-sql-driver: user:password@tcp(...).
		{"alice:" + P + "@tcp(127.0.0.1:3306)/erp?parseTime=true",
			[]string{P, QE, PE}},
		// URL query: + is a space there.
		{"sqlserver://db:1433?database=erp&password=my+secret%21pw",
			[]string{"my secret!pw", "my+secret%21pw", "my%20secret%21pw", "my+secret!pw", "my%2Bsecret%2521pw", "my+secret%2521pw"}},
		// No password, an @ in the query: nothing but the DSN.
		{"postgres://alice@db.example:5432/erp?application_name=a@b", nil},
		{"host=db user=alice dbname=erp", nil},
		{"alice@tcp(db:3306)/erp", nil},
	} {
		got := map[string]bool{}
		for _, s := range Secrets(c.dsn) {
			got[s] = true
		}
		want := map[string]bool{c.dsn: true}
		for _, s := range c.want {
			want[s] = true
		}
		for s := range want {
			if !got[s] {
				t.Errorf("Secrets(%q) lacks %q", c.dsn, s)
			}
		}
		for s := range got {
			if !want[s] {
				t.Errorf("Secrets(%q) has %q, which is no secret", c.dsn, s)
			}
		}
		if HasPassword(c.dsn) != (len(c.want) > 0) {
			t.Errorf("HasPassword(%q) = %v", c.dsn, HasPassword(c.dsn))
		}
	}
}

// TestRedactPasswordSpellings: a message that quotes the password alone —
// in each spelling, whatever characters it holds — shows none of it.
func TestRedactPasswordSpellings(t *testing.T) {
	for _, c := range []struct{ dsn, msg string }{
		// libpq ends a value only at a space: & and ; are the password's.
		{"host=db user=alice password=Tr0ub4dor&3x! dbname=erp", "password was Tr0ub4dor&3x!, refused"},
		{"host=db user=alice password=Tr0ub4dor;3x! dbname=erp", "password was Tr0ub4dor;3x!, refused"},
		// libpq takes the last of two password keys.
		{"host=db password=old password=Tr0ub4dor&3x! dbname=erp", "password was Tr0ub4dor&3x!, refused"},
		// a % that is no escape (the DSN is no URL).
		{"host=db password=100%Tr0ub4dor dbname=erp", "password 100%Tr0ub4dor refused"},
		// the URL password as written (! left unencoded), decoded, encoded.
		{"postgres://alice:Tr0ub4dor%263x!@db/erp", "bad secret Tr0ub4dor%263x! for alice"},
		{"postgres://alice:Tr0ub4dor%263x!@db/erp", "bad secret Tr0ub4dor&3x! for alice"},
		{"postgres://alice:Tr0ub4dor%263x!@db/erp", "bad secret Tr0ub4dor%263x%21 for alice"},
		// a space in a query password is a +.
		{"sqlserver://db:1433?database=erp&password=Tr0ub4dor+3x", "login failed: Tr0ub4dor 3x"},
		// three bytes are enough to be a secret.
		{"postgres://alice:Tr0@db/erp", "auth failed: Tr0 rejected"},
	} {
		got := String(c.msg, c.dsn)
		for _, leak := range []string{"Tr0", "3x"} {
			if strings.Contains(got, leak) {
				t.Errorf("String(%q, %q) = %q: %q left", c.msg, c.dsn, got, leak)
			}
		}
	}
}

// TestRedactMasks: the DSN quoted whole becomes [dsn] (not a DSN with a
// masked password: it is replaced before its password), the password
// [redacted]; a password under three bytes is left to the patterns, not
// replaced inside other words.
func TestRedactMasks(t *testing.T) {
	dsn := "postgres://alice:Tr0ub4dor@db.example:5432/erp"
	for msg, want := range map[string]string{
		"connect " + dsn + ": refused":         "connect [dsn]: refused",
		"auth failed for Tr0ub4dor":            "auth failed for [redacted]",
		"connect '" + dsn + "', Tr0ub4dor bad": "connect '[dsn]', [redacted] bad",
	} {
		if got := String(msg, dsn); got != want {
			t.Errorf("String(%q) = %q, want %q", msg, got, want)
		}
	}
	if got := String("the server stopped", "postgres://alice:op@db/erp"); got != "the server stopped" {
		t.Errorf("a two-byte password was replaced inside a word: %q", got)
	}
}

func TestCandidates(t *testing.T) {
	var vals []string
	for _, dsn := range forms() {
		vals = append(vals, dsn)
	}
	plain := []string{"", "--json", "postgres://alice@db/erp", "host=db user=alice", "alice@tcp(db)/erp", "platform.yaml"}
	got := Candidates(append(append([]string{}, plain...), vals...)...)
	if len(got) != len(vals) {
		t.Fatalf("Candidates = %q, want the %d DSNs with a password", got, len(vals))
	}
	for i := range got {
		if got[i] != vals[i] {
			t.Errorf("Candidates[%d] = %q, want %q", i, got[i], vals[i])
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriter(t *testing.T) {
	dsn := "postgres://alice:Tr0ub4dor@db/erp"
	var b strings.Builder
	w := Writer(&b, dsn)
	msg := "error: connect " + dsn + " failed; password=Tr0ub4dor\n"
	n, err := w.Write([]byte(msg))
	if err != nil || n != len(msg) {
		t.Errorf("Write = %d, %v; want %d, nil (the caller's bytes, all written)", n, err, len(msg))
	}
	if want := "error: connect [dsn] failed; password=[redacted]\n"; b.String() != want {
		t.Errorf("written %q, want %q", b.String(), want)
	}
	if n, err := Writer(failingWriter{}, dsn).Write([]byte(msg)); err == nil || n != 0 {
		t.Errorf("Write to a failing writer = %d, %v; want 0 and its error", n, err)
	}
}
