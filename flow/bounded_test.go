package flow_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/flow"
)

const boundedPlan = `schema_version: 1
platform: {prefix: bnd}
sources:
  in: {kind: files, path: in}
tables:
  events:
    source: {name: in, files: ["*.ndjson"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: text, type: string}
    load: {keys: [id]}
etl: {max_record_bytes: 4096}
`

// A line longer than etl.max_record_bytes is one row exception holding
// only its start; the lines after it load, and every line is counted (it
// used to hold the whole file as an exception after committing rows 1–3,
// with rows 5–7 neither loaded nor counted).
func TestRecordTooLargeIsARowExceptionAndTheFileGoesOn(t *testing.T) {
	big := `{"id":4,"text":"` + strings.Repeat("x", 1<<20) + `"}`
	var b strings.Builder
	for _, l := range []string{`{"id":1,"text":"a"}`, `{"id":2,"text":"b"}`, `{"id":3,"text":"c"}`, big, `{"id":5,"text":"e"}`, `{"id":6,"text":"f"}`, `{"id":7,"text":"g"}`} {
		b.WriteString(l + "\n")
	}
	ws, p := workspace(t, map[string][]byte{"a.ndjson": []byte(b.String())}, boundedPlan)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	if len(tr.FileExceptions) != 0 || tr.RowsRead != 7 || tr.RowsLoaded != 6 || tr.RowsQuarantined != 1 || tr.RowsSkipped != 0 || !tr.Balanced() {
		t.Fatalf("file exceptions %d; read %d loaded %d held %d skipped %d", len(tr.FileExceptions), tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
	}
	if n := tr.QuarantinedBy[source.RuleRecordTooLarge]; n != 1 {
		t.Fatalf("held back by %v, want 1 under %s", tr.QuarantinedBy, source.RuleRecordTooLarge)
	}
	if len(tr.Exceptions) != 1 {
		t.Fatalf("%d exceptions, want 1", len(tr.Exceptions))
	}
	e := tr.Exceptions[0]
	if e.Loc.Line != 4 || e.Raw != big[:4096] || len(e.Errors) != 1 || !strings.Contains(e.Errors[0].Reason, "1,048,594 bytes") {
		t.Fatalf("exception at line %d, %d bytes of raw, errors %+v; want line 4, the first 4,096 bytes, the size 1,048,594", e.Loc.Line, len(e.Raw), e.Errors)
	}
	// Nothing of the huge line reaches the report.
	matches, _ := filepath.Glob(filepath.Join(ws.Dir, "reports", "*", "report.json"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err != nil || fi.Size() > 64<<10 {
			t.Fatalf("%s: %v, size %d", m, err, fi.Size())
		}
	}
	if len(matches) == 0 {
		t.Fatal("no report.json written")
	}
}
