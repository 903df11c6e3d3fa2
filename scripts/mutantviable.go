//go:build ignore

// mutantviable: the post-pass of make mutate (scripts/mutate.sh). gremlins
// v0.6.0 counts a mutant whose test run fails to build or fails go test's
// vet checks as KILLED, so its kill rate counts mutants that never ran. This
// re-applies every KILLED mutant of one gremlins JSON result, alone, as an
// overlay of its file (go build -overlay: the work tree is not touched), and
// type-checks the package with its tests under the vet analyzers go test
// runs by default; a mutant that does not pass is rewritten NOT VIABLE.
//
//	go run scripts/mutantviable.go -dir gates -in gates.json -out gates.viable.json
//
// A mutation is gremlins' own: the token at file:line:column (a byte column,
// as go/token counts) replaced as gremlins' tokenMutations table says
// (internal/engine/mappings.go at v0.6.0). A token that is not where the
// result says, or not one the mutator type changes, stops the pass with an
// error: the result is then from other sources than the ones checked.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// mutations is gremlins v0.6.0's tokenMutations.
var mutations = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE": {
		token.ADD: token.SUB, token.MUL: token.QUO, token.QUO: token.MUL,
		token.REM: token.MUL, token.SUB: token.ADD,
	},
	"CONDITIONALS_BOUNDARY": {
		token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ,
	},
	"CONDITIONALS_NEGATION": {
		token.EQL: token.NEQ, token.GEQ: token.LSS, token.GTR: token.LEQ,
		token.LEQ: token.GTR, token.LSS: token.GEQ, token.NEQ: token.EQL,
	},
	"INCREMENT_DECREMENT": {token.DEC: token.INC, token.INC: token.DEC},
	"INVERT_ASSIGNMENTS": {
		token.ADD_ASSIGN: token.SUB_ASSIGN, token.MUL_ASSIGN: token.QUO_ASSIGN,
		token.QUO_ASSIGN: token.MUL_ASSIGN, token.REM_ASSIGN: token.REM_ASSIGN,
		token.SUB_ASSIGN: token.ADD_ASSIGN,
	},
	"INVERT_BITWISE": {
		token.AND: token.OR, token.OR: token.AND, token.XOR: token.AND,
		token.AND_NOT: token.AND, token.SHL: token.SHR, token.SHR: token.SHL,
	},
	"INVERT_BWASSIGN": {
		token.AND_ASSIGN: token.OR_ASSIGN, token.OR_ASSIGN: token.AND_ASSIGN,
		token.XOR_ASSIGN: token.AND_ASSIGN, token.AND_NOT_ASSIGN: token.AND_ASSIGN,
		token.SHL_ASSIGN: token.SHR_ASSIGN, token.SHR_ASSIGN: token.SHL_ASSIGN,
	},
	"INVERT_LOGICAL":   {token.LAND: token.LOR, token.LOR: token.LAND},
	"INVERT_LOOPCTRL":  {token.BREAK: token.CONTINUE, token.CONTINUE: token.BREAK},
	"INVERT_NEGATIVES": {token.SUB: token.ADD},
	"REMOVE_SELF_ASSIGNMENTS": {
		token.ADD_ASSIGN: token.ASSIGN, token.AND_ASSIGN: token.ASSIGN,
		token.AND_NOT_ASSIGN: token.ASSIGN, token.MUL_ASSIGN: token.ASSIGN,
		token.OR_ASSIGN: token.ASSIGN, token.QUO_ASSIGN: token.ASSIGN,
		token.REM_ASSIGN: token.ASSIGN, token.SHL_ASSIGN: token.ASSIGN,
		token.SHR_ASSIGN: token.ASSIGN, token.SUB_ASSIGN: token.ASSIGN,
		token.XOR_ASSIGN: token.ASSIGN,
	},
}

// vetFlags are the analyzers go test runs before a test (cmd/go's
// defaultVetFlags, Go 1.26): the checks whose failure gremlins takes for a
// kill. A full go vet would fail mutants that go test runs.
var vetFlags = []string{"-atomic", "-bool", "-buildtags", "-directive", "-errorsas",
	"-ifaceassert", "-nilfunc", "-printf", "-slog", "-stringintconv", "-tests"}

type result struct {
	Files []struct {
		Name      string            `json:"file_name"`
		Mutations []json.RawMessage `json:"mutations"`
	} `json:"files"`
}

type mutation struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

func main() {
	dir := flag.String("dir", "", "the package folder gremlins mutated")
	in := flag.String("in", "", "gremlins' JSON result")
	out := flag.String("out", "", "the result with the mutants that do not build NOT VIABLE")
	flag.Parse()
	if err := run(*dir, *in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mutantviable:", err)
		os.Exit(1)
	}
}

func run(dir, in, out string) error {
	if dir == "" || in == "" || out == "" {
		return fmt.Errorf("-dir, -in and -out are needed")
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	var res result
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "mutantviable-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	checked, dropped := 0, 0
	for fi := range res.Files {
		f := &res.Files[fi]
		path, err := filepath.Abs(filepath.Join(dir, f.Name))
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for mi, rm := range f.Mutations {
			var m mutation
			if err := json.Unmarshal(rm, &m); err != nil {
				return err
			}
			if m.Status != "KILLED" {
				continue
			}
			mutated, err := apply(src, m)
			if err != nil {
				return fmt.Errorf("%s:%d:%d %s: %w", filepath.Join(dir, f.Name), m.Line, m.Column, m.Type, err)
			}
			ok, msg, err := builds(scratch, dir, path, mutated)
			if err != nil {
				return err
			}
			checked++
			if ok {
				continue
			}
			dropped++
			fmt.Printf("    NOT VIABLE   %s:%d:%d %s: %s\n", filepath.Join(dir, f.Name), m.Line, m.Column, m.Type, msg)
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(rm, &fields); err != nil {
				return err
			}
			fields["status"] = json.RawMessage(`"NOT VIABLE"`)
			if f.Mutations[mi], err = json.Marshal(fields); err != nil {
				return err
			}
		}
	}
	files, err := json.Marshal(res.Files)
	if err != nil {
		return err
	}
	doc["files"] = files
	// gremlins' own totals are left as they were: the script counts from
	// the per-mutant statuses.
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	fmt.Printf("    (%d killed mutant(s) re-built, %d do not build or fail vet)\n", checked, dropped)
	return os.WriteFile(out, b, 0o600)
}

// apply returns src with the token at m's line and column mutated.
func apply(src []byte, m mutation) ([]byte, error) {
	table, ok := mutations[m.Type]
	if !ok {
		return nil, fmt.Errorf("unknown mutator type")
	}
	fset := token.NewFileSet()
	file := fset.AddFile("f.go", -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return nil, fmt.Errorf("no token at that position")
		}
		p := fset.Position(pos)
		if p.Line < m.Line || (p.Line == m.Line && p.Column < m.Column) {
			continue
		}
		if p.Line != m.Line || p.Column != m.Column {
			return nil, fmt.Errorf("no token starts at that position")
		}
		to, ok := table[tok]
		if !ok {
			return nil, fmt.Errorf("token %q is not one %s changes", lit+tok.String(), m.Type)
		}
		off := file.Offset(pos)
		text := tok.String()
		if !bytes.HasPrefix(src[off:], []byte(text)) {
			return nil, fmt.Errorf("token %s not found in the text", text)
		}
		var b bytes.Buffer
		b.Write(src[:off])
		// Spaces keep a mutated token from merging with its neighbours
		// (x = -1 made x = +1 is fine; a - -b made a + -b too).
		b.WriteString(" " + to.String() + " ")
		b.Write(src[off+len(text):])
		return b.Bytes(), nil
	}
}

// builds type-checks dir with path replaced by mutated, tests included,
// under go test's vet analyzers.
func builds(scratch, dir, path string, mutated []byte) (bool, string, error) {
	mf := filepath.Join(scratch, "mutant.go")
	if err := os.WriteFile(mf, mutated, 0o600); err != nil {
		return false, "", err
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {path: mf}})
	if err != nil {
		return false, "", err
	}
	of := filepath.Join(scratch, "overlay.json")
	if err := os.WriteFile(of, ov, 0o600); err != nil {
		return false, "", err
	}
	args := append([]string{"vet", "-overlay", of}, vetFlags...)
	cmd := exec.Command("go", append(args, "./"+filepath.Clean(dir))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if err == nil {
		return true, "", nil
	}
	if _, isExit := err.(*exec.ExitError); !isExit {
		return false, "", err
	}
	// The first diagnostic says why.
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		return false, strings.TrimSpace(line), nil
	}
	return false, strings.TrimSpace(stderr.String()), nil
}
