package gates

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/lima-lake/lima/engine/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// copyTree copies the files of src into dst, names byte for byte (the demo
// has a file name in Unicode NFD).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// goldenFinding renders a finding with stable YAML keys.
type goldenFinding struct {
	Name   string `yaml:"name"`
	Status string `yaml:"status"`
	Detail string `yaml:"detail"`
	Fix    string `yaml:"fix,omitempty"`
}

// renderProposal is the golden form of a proposal: the plan it writes into
// a plan with only sources, then its findings.
func renderProposal(t *testing.T, p *plan.Plan, pr *Proposal) []byte {
	t.Helper()
	if !pr.Apply(p) {
		t.Fatal("the proposal was not applied to a plan without tables")
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("the proposed plan does not validate: %v", err)
	}
	body, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var fs []goldenFinding
	for _, f := range pr.Findings {
		fs = append(fs, goldenFinding(f))
	}
	var buf bytes.Buffer
	buf.Write(body)
	buf.WriteString("\n# gate 3 findings\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(map[string][]goldenFinding{"findings": fs}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDemoProposalGolden(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("..", "engine", "demo", "data", "erp"), filepath.Join(dir, "data", "erp"))
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Prefix: "erp_quality"},
		Sources: map[string]*plan.Source{"erp": {Kind: plan.SourceFiles, Path: "data/erp"}}}
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := renderProposal(t, p, pr)
	golden := filepath.Join("testdata", "demo_proposal.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./gates -run TestDemoProposalGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the proposal for the demo data changed; review the diff and rerun with -update if it is right:\n%s", lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first lines that differ.
func lineDiff(want, got string) string {
	w, g := bytes.Split([]byte(want), []byte("\n")), bytes.Split([]byte(got), []byte("\n"))
	var out bytes.Buffer
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 20; i++ {
		var a, b []byte
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if !bytes.Equal(a, b) {
			out.WriteString("line " + strconv.Itoa(i+1) + "\n  want: " + string(a) + "\n  got:  " + string(b) + "\n")
			shown++
		}
	}
	return out.String()
}
