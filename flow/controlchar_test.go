package flow_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/flow"
)

// One NUL inside a quoted remark near the top of a file does not make the
// file "binary": its row is held back under control_char, every other row
// loads, and every row is counted. allow_control_chars keeps such a value.
func TestAStrayNULHoldsBackItsRowNotTheFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,amount,note\n1,1.00,\"a \x00 remark\"\n")
	for i := 2; i <= 200; i++ {
		fmt.Fprintf(&b, "%d,2.50,fine\n", 2000+i)
	}
	b.WriteString("3001,1.00,\"bell\x07\"\n")
	ws, p := workspace(t, map[string][]byte{"a.csv": []byte(b.String())}, badInputPlan)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	// read 201 rows = loaded 199 + held 2 (the NUL and the BEL) + the header.
	if len(tr.FileExceptions) != 0 || tr.RowsRead != 202 || tr.RowsLoaded != 199 || tr.RowsQuarantined != 2 || tr.RowsSkipped != 1 || !tr.Balanced() {
		t.Fatalf("file exceptions %d; read %d loaded %d held %d skipped %d", len(tr.FileExceptions), tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
	}
	if n := tr.QuarantinedBy[clean.RuleControlChar]; n != 2 {
		t.Fatalf("held back by %v, want 2 under %s", tr.QuarantinedBy, clean.RuleControlChar)
	}
	// Declared as allowed, the same file loads whole.
	ws2, p2 := workspace(t, map[string][]byte{"a.csv": []byte(b.String())},
		strings.Replace(badInputPlan, "{name: note, type: string}", "{name: note, type: string, allow_control_chars: true}", 1))
	tr2 := runOnce(t, ws2, p2, flow.RunOptions{}).Result.Tables[0]
	if tr2.RowsLoaded != 201 || tr2.RowsQuarantined != 0 {
		t.Fatalf("allow_control_chars: loaded %d held %d", tr2.RowsLoaded, tr2.RowsQuarantined)
	}
}
