//go:build ignore

// mutantviable: the post-pass of make mutate (scripts/mutate.sh). gremlins
// v0.6.0 counts a mutant whose test run fails to build or fails go test's
// vet checks as KILLED, so its kill rate counts mutants that never ran. This
// re-applies every KILLED mutant of one gremlins JSON result, alone, as an
// overlay of its file (go build -overlay: the work tree is not touched), and
// type-checks the package with its tests under the vet analyzers go test
// runs by default; a mutant that does not pass is rewritten NOT VIABLE.
// Comparisons and ++/-- with no && or || on their line or the lines next to
// it always build and are not re-checked (alwaysBuilds).
//
//	go run scripts/mutantviable.go -dir gates -in gates.json -out gates.viable.json
//
// With -test it is a small mutant runner instead, for the lines of a file
// that a whole gremlins run is too slow to reach, or to re-run a result's
// survivors on new tests: every mutant of a gremlins result that is
// RUNNABLE (a dry run), NOT COVERED, LIVED or TIMED OUT, in -file (default
// every file) on -lines, is applied alone as an overlay and the package's
// tests run against it (go test -failfast, with $GOFLAGS, so -run narrows
// them): LIVED when they
// pass, NOT VIABLE when it does not build, TIMED OUT after -timeout, else
// KILLED — gremlins' statuses, without its switch-case blind spot.
//
//	MUTATE_DRY=1 bash scripts/mutate.sh 'engine/run:^run\.go$'
//	GOFLAGS=-run=Conservation go run scripts/mutantviable.go -test -dir engine/run \
//	  -in '.mutate/engine_run__run\.go_.json' -file run.go -lines 190-200,525-832 -out run.json
//
// A mutation is gremlins' own: the token at file:line:column (a byte column,
// as go/token counts) replaced as gremlins' tokenMutations table says
// (internal/engine/mappings.go at v0.6.0). A token that is not where the
// result says, or not one the mutator type changes, stops the pass with an
// error: the result is then from other sources than the ones checked.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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

var (
	testMode    bool
	testFile    string
	testTimeout time.Duration
	lineRanges  [][2]int
)

// picked reports whether -test runs m of file.
func picked(file string, m mutation) bool {
	switch m.Status {
	case "RUNNABLE", "NOT COVERED", "LIVED", "TIMED OUT":
	default:
		return false
	}
	if testFile != "" && file != testFile {
		return false
	}
	if len(lineRanges) == 0 {
		return true
	}
	for _, r := range lineRanges {
		if m.Line >= r[0] && m.Line <= r[1] {
			return true
		}
	}
	return false
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
	flag.BoolVar(&testMode, "test", false, "run the tests against each mutant of -file on -lines")
	flag.StringVar(&testFile, "file", "", "with -test: the file (in -dir) whose mutants run (default all)")
	lines := flag.String("lines", "", "with -test: line ranges, a-b,c-d (default all)")
	flag.DurationVar(&testTimeout, "timeout", 5*time.Minute, "with -test: a mutant's test run may take this long")
	flag.Parse()
	for _, r := range strings.Split(*lines, ",") {
		if r == "" {
			continue
		}
		a, b, _ := strings.Cut(r, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || hi < lo {
			fmt.Fprintln(os.Stderr, "mutantviable: -lines a-b,c-d")
			os.Exit(2)
		}
		lineRanges = append(lineRanges, [2]int{lo, hi})
	}
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
	checked, dropped, skipped := 0, 0, 0
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
			if testMode && !picked(f.Name, m) || !testMode && m.Status != "KILLED" {
				continue
			}
			mutated, err := apply(src, m)
			if err != nil {
				return fmt.Errorf("%s:%d:%d %s: %w", filepath.Join(dir, f.Name), m.Line, m.Column, m.Type, err)
			}
			if testMode {
				t0 := time.Now()
				st, err := tests(scratch, dir, path, mutated)
				if err != nil {
					return err
				}
				checked++
				fmt.Printf("    %-12s %s:%d:%d %s (%.0fs)\n", st, filepath.Join(dir, f.Name), m.Line, m.Column, m.Type, time.Since(t0).Seconds())
				if f.Mutations[mi], err = setStatus(rm, st); err != nil {
					return err
				}
				continue
			}
			if alwaysBuilds(src, m) {
				skipped++
				continue
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
			if f.Mutations[mi], err = setStatus(rm, "NOT VIABLE"); err != nil {
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
	if testMode {
		fmt.Printf("    (%d mutant(s) run)\n", checked)
	} else {
		fmt.Printf("    (%d killed mutant(s) re-built, %d do not build or fail vet; %d comparisons and ++/-- not re-built)\n", checked, dropped, skipped)
	}
	return os.WriteFile(out, b, 0o600)
}

// alwaysBuilds reports the mutants that build whenever the source does, so
// the re-check can skip them (each check compiles the package: seconds): a
// comparison turned into another (its operands are ordered or comparable
// either way) and ++ and -- swapped, unless the line or a line next to it
// has && or || — go
// vet's bool check rejects x == a && x == b, which a negated comparison
// can make.
func alwaysBuilds(src []byte, m mutation) bool {
	switch m.Type {
	case "CONDITIONALS_BOUNDARY", "CONDITIONALS_NEGATION", "INCREMENT_DECREMENT":
	default:
		return false
	}
	lines := bytes.Split(src, []byte("\n"))
	if m.Line < 1 || m.Line > len(lines) {
		return false
	}
	// The line and its neighbours: a condition split over lines.
	for i := max(m.Line-2, 0); i < min(m.Line+1, len(lines)); i++ {
		if bytes.Contains(lines[i], []byte("&&")) || bytes.Contains(lines[i], []byte("||")) {
			return false
		}
	}
	return true
}

// setStatus returns the mutation rm with its status st.
func setStatus(rm json.RawMessage, st string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(rm, &fields); err != nil {
		return nil, err
	}
	fields["status"], _ = json.Marshal(st)
	return json.Marshal(fields)
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
	of, err := overlay(scratch, path, mutated)
	if err != nil {
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

// overlay writes mutated and an overlay replacing path with it.
func overlay(scratch, path string, mutated []byte) (string, error) {
	mf := filepath.Join(scratch, "mutant.go")
	if err := os.WriteFile(mf, mutated, 0o600); err != nil {
		return "", err
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {path: mf}})
	if err != nil {
		return "", err
	}
	of := filepath.Join(scratch, "overlay.json")
	return of, os.WriteFile(of, ov, 0o600)
}

// tests runs dir's tests with path replaced by mutated and says what
// gremlins would: KILLED, LIVED, NOT VIABLE or TIMED OUT.
func tests(scratch, dir, path string, mutated []byte) (string, error) {
	of, err := overlay(scratch, path, mutated)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-overlay", of, "-failfast", "-count=1",
		"-timeout", (testTimeout + 5*time.Second).String(), "./"+filepath.Clean(dir))
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "TIMED OUT", nil
	case err == nil:
		return "LIVED", nil
	}
	if _, isExit := err.(*exec.ExitError); !isExit {
		return "", err
	}
	o := outb.String()
	if strings.Contains(o, "[build failed]") || strings.Contains(o, "[setup failed]") || strings.Contains(o, "vet: ") {
		return "NOT VIABLE", nil
	}
	return "KILLED", nil
}
