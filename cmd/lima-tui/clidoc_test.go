package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const cliDocPath = "../../docs/cli.md"

// TestCLIReferenceIsCurrent: docs/cli.md is exactly what the flag
// definitions generate. A flag added, removed or reworded without `make
// docs` fails here with the lines that differ.
func TestCLIReferenceIsCurrent(t *testing.T) {
	b, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatalf("%v (run make docs)", err)
	}
	if want := cliMarkdown(); string(b) != want {
		t.Errorf("docs/cli.md is not what the flag definitions generate; run `make docs` and commit it:\n%s",
			lineDiff(string(b), want))
	}
}

// TestCLIReferenceMatchesHelp: for every verb (and every verb of
// exceptions) the flags docs/cli.md lists in its section are the flags its
// --help prints, read from the help text, not from the generator.
func TestCLIReferenceMatchesHelp(t *testing.T) {
	b, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	cases := map[string][]string{} // section heading → args
	for _, v := range verbs() {
		cases["## lima-tui "+v.name] = []string{v.name}
	}
	cases["### lima-tui exceptions VERB"] = []string{"exceptions", "list"}
	for _, sub := range exceptionsVerbs {
		if !strings.Contains(exceptionsUsage, "lima-tui exceptions "+sub) {
			t.Errorf("exceptionsVerbs names %q, which exceptions' usage does not", sub)
		}
	}
	helpFlag := regexp.MustCompile(`(?m)^  -(\S+)`)
	rowFlag := regexp.MustCompile("(?m)^\\| `--([^` ]+)")
	for heading, args := range cases {
		code, _, stderr := runCLI(t, append(append([]string{}, args...), "--help")...)
		if code != exitOK {
			t.Errorf("lima-tui %s --help: exit %d", strings.Join(args, " "), code)
			continue
		}
		var help []string
		for _, m := range helpFlag.FindAllStringSubmatch(stderr, -1) {
			help = append(help, m[1])
		}
		if head, _, ok := strings.Cut(stderr, "\nFlags:\n"); ok && !strings.Contains(section(doc, heading), strings.TrimSpace(head)) {
			t.Errorf("docs/cli.md %q lacks the help text of lima-tui %s: %q", heading, strings.Join(args, " "), head)
		}
		var listed []string
		for _, m := range rowFlag.FindAllStringSubmatch(section(doc, heading), -1) {
			listed = append(listed, m[1])
		}
		sort.Strings(help)
		sort.Strings(listed)
		if len(help) == 0 || strings.Join(help, " ") != strings.Join(listed, " ") {
			t.Errorf("lima-tui %s --help prints the flags %v; docs/cli.md %q lists %v", strings.Join(args, " "), help, heading, listed)
		}
	}
}

// section is the text of doc from the heading to the next heading.
func section(doc, heading string) string {
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n#"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestVerbRegistryMatchesUsage: the registry and `lima-tui help` name the
// same verbs, each verb has a synopsis there, and an unknown verb is still
// a usage error.
func TestVerbRegistryMatchesUsage(t *testing.T) {
	registered := map[string]bool{"wizard": true}
	for _, v := range verbs() {
		registered[v.name] = true
		if len(synopsis(v.name)) == 0 {
			t.Errorf("verb %s has no line in usage", v.name)
		}
		if v.summary == "" || strings.Contains(v.summary, "\n") {
			t.Errorf("verb %s: summary %q, want one line", v.name, v.summary)
		}
	}
	for _, line := range strings.Split(usage, "\n") {
		if rest, ok := strings.CutPrefix(line, "  lima-tui "); ok && !strings.HasPrefix(rest, "[") {
			if name, _, _ := strings.Cut(rest, " "); !registered[name] {
				t.Errorf("usage names verb %q, which is not in the registry", name)
			}
		}
	}
	if code, _, _ := runCLI(t, "no-such-verb"); code != exitUsage {
		t.Errorf("unknown verb: exit %d, want 2", code)
	}
	if code, out, _ := runCLI(t, "help"); code != exitOK || out != usage {
		t.Errorf("lima-tui help: exit %d, printed %q", code, out)
	}
}

// TestDocsLinksResolve: every relative link in README.md and docs/*.md
// points at a file that exists, and its #anchor at a heading of that file;
// the README stays a short front door and keeps the two commands CI and
// the tests rely on.
func TestDocsLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	if len(files) < 2 {
		t.Fatalf("docs: %v", files)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		b, err := os.ReadFile(path)
		if err == nil {
			fence := false
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "```") {
					fence = !fence
				}
				if !fence && strings.HasPrefix(line, "#") {
					a[anchor(strings.TrimLeft(line, "#"))] = true
				}
			}
		}
		anchors[path] = a
		return a
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			full := f
			if path != "" {
				full = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(full); err != nil {
					t.Errorf("%s: link %q: %v", f, target, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(full, ".md") && !anchorsOf(full)[frag] {
				t.Errorf("%s: link %q: no heading with anchor #%s in %s", f, target, frag, full)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no relative links found")
	}
	readme, _ := os.ReadFile("../../README.md")
	if n := strings.Count(string(readme), "\n"); n > 200 {
		t.Errorf("README.md has %d lines: it is the front door (at most 200); move the detail to docs/", n)
	}
	for _, want := range []string{"make demo", "make test", "make docs", "docs/cli.md"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	mk, _ := os.ReadFile("../../Makefile")
	for _, target := range []string{"demo:", "test:", "docs:"} {
		if !regexp.MustCompile(`(?m)^` + target).Match(mk) {
			t.Errorf("the Makefile has no target %s", target)
		}
	}
	if ci, _ := os.ReadFile("../../.ci/run"); !strings.Contains(string(ci), "make test") {
		t.Error(".ci/run does not run make test")
	}
}

// lineDiff is a short line diff of got against want (- got, + want).
func lineDiff(got, want string) string {
	a, b := strings.Split(got, "\n"), strings.Split(want, "\n")
	// Longest common subsequence, then walk it.
	n, m := len(a), len(b)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j, shown := 0, 0, 0
	for (i < n || j < m) && shown < 60 {
		switch {
		case i < n && j < m && a[i] == b[j]:
			i, j = i+1, j+1
		case j < m && (i == n || l[i][j+1] >= l[i+1][j]):
			fmt.Fprintf(&out, "+%d: %s\n", j+1, b[j])
			j, shown = j+1, shown+1
		default:
			fmt.Fprintf(&out, "-%d: %s\n", i+1, a[i])
			i, shown = i+1, shown+1
		}
	}
	return out.String()
}
