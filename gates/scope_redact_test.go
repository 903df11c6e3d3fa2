package gates

import (
	"strings"
	"testing"
)

// TestParseSourceNeverEchoesADSNPassword: a DSN typed where a source is
// asked for (init --source, the wizard's gate 1) is refused without its
// password in the problem or the fix, in every DSN form.
func TestParseSourceNeverEchoesADSNPassword(t *testing.T) {
	const pw = "Hx7-SeCrEt-pw"
	for _, dsn := range []string{
		"postgres://alice:" + pw + "@127.0.0.1:5432/erp",
		"mysql://alice:" + pw + "@127.0.0.1:3306/erp",
		"sqlserver://alice:" + pw + "@127.0.0.1:1433?database=erp",
		"oracle://alice:" + pw + "@127.0.0.1:1521/svc",
		"alice:" + pw + "@tcp(127.0.0.1:3306)/erp",
		"host=127.0.0.1 user=alice password=" + pw + " dbname=erp",
	} {
		_, err := ParseSource(dsn)
		if err == nil {
			t.Errorf("%s: accepted as a source", dsn)
			continue
		}
		msg := err.Error()
		if ae, ok := err.(*AnswerError); ok {
			msg += " " + ae.Problem + " " + ae.Fix
		}
		if strings.Contains(msg, "SeCrEt") {
			t.Errorf("the refusal echoes the password: %s", msg)
		}
		if !strings.Contains(msg, "env:") {
			t.Errorf("the refusal does not say to use env:NAME: %s", msg)
		}
	}
}
