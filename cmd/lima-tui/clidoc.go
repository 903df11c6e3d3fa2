package main

// The command-line reference, docs/cli.md, generated from the verb
// registry (verbs) and the flags each verb defines: `lima-tui help
// --markdown` prints it and `make docs` writes it. TestCLIReferenceIsCurrent
// fails with a diff when docs/cli.md is not what this prints.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unicode"
)

// exceptionsVerbs are the headless verbs of `lima-tui exceptions`.
var exceptionsVerbs = []string{"list", "show", "assign", "resolve", "waive", "replay", "export"}

// flagCapture is the stderr handed to a verb while the reference is
// generated: newFlags records every FlagSet built with it, and it keeps
// what the verb prints for -h.
type flagCapture struct {
	sets []*flag.FlagSet
	text strings.Builder
}

func (c *flagCapture) Write(b []byte) (int, error) { return c.text.Write(b) }

// verbFlags runs the verb with args followed by -h, which builds its
// FlagSet and returns before doing anything else (TestHelpExitsZero), and
// gives back the FlagSet it built and the text its help prints above the
// flags when it has its own ("" for flag's plain "Usage of …:").
func verbFlags(v verb, args ...string) (*flag.FlagSet, string, error) {
	c := &flagCapture{}
	code := v.run(context.Background(), append(append([]string{}, args...), "-h"), io.Discard, c)
	if code != exitOK || len(c.sets) == 0 {
		return nil, "", fmt.Errorf("lima-tui %s -h: exit %d, %d flag set(s)", strings.TrimSpace(v.name+" "+strings.Join(args, " ")), code, len(c.sets))
	}
	fs := c.sets[len(c.sets)-1]
	var defaults strings.Builder
	fs.SetOutput(&defaults)
	fs.PrintDefaults()
	head := strings.TrimSuffix(c.text.String(), defaults.String())
	if strings.HasPrefix(head, "Usage of ") {
		head = ""
	}
	return fs, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(head), "Flags:")), nil
}

// synopsis is the lines of usage that describe the verb: each entry
// starting "  lima-tui NAME" (the wizard: "  lima-tui [") with the lines
// indented below it.
func synopsis(name string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  lima-tui "):
			rest := strings.TrimPrefix(line, "  lima-tui ")
			first, _, _ := strings.Cut(rest, " ")
			in = first == name || (name == "wizard" && strings.HasPrefix(rest, "["))
		case !strings.HasPrefix(line, "   "):
			in = false
		}
		if in {
			out = append(out, strings.TrimPrefix(line, "  "))
		}
	}
	return out
}

// anchor is the GitHub anchor of a markdown heading: lower case, spaces
// to hyphens, punctuation other than - and _ dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cliMarkdown is docs/cli.md.
func cliMarkdown() string {
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("<!-- Generated from the flag definitions in cmd/lima-tui by `make docs`\n")
	b.WriteString("     (lima-tui help --markdown). Do not edit: TestCLIReferenceIsCurrent fails when it drifts. -->\n\n")
	b.WriteString("`lima-tui` with no verb opens the wizard; `lima-tui help` prints an overview. Every verb\n")
	b.WriteString("prints its flags and exits 0 on `-h` or `--help`. Flags are written `--name` or `-name`.\n\n")
	b.WriteString("Exit codes, and what `--json` prints: [running headless](operations.md#running-headless).\n\n")
	b.WriteString("| verb | what it does |\n|---|---|\n")
	for _, v := range verbs() {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", v.name, anchor("lima-tui "+v.name), cell(v.summary))
	}
	for _, v := range verbs() {
		fmt.Fprintf(&b, "\n## lima-tui %s\n\n%s.\n\n", v.name, v.summary)
		_, help, _ := verbFlags(v)
		if help != "" {
			// The verb's own help says more than its line in usage.
			b.WriteString("```\n" + help + "\n```\n\n")
		} else if syn := synopsis(v.name); len(syn) > 0 {
			b.WriteString("```\n" + strings.Join(syn, "\n") + "\n```\n\n")
		}
		writeFlags(&b, v)
		if v.name == "exceptions" {
			writeExceptionsVerbs(&b, v)
		}
	}
	return b.String()
}

func writeFlags(b *strings.Builder, v verb, args ...string) {
	fs, _, err := verbFlags(v, args...)
	if err != nil {
		fmt.Fprintf(b, "(no flags: %s)\n", err)
		return
	}
	var rows []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { rows = append(rows, f) })
	if len(rows) == 0 {
		b.WriteString("No flags.\n")
		return
	}
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	for _, f := range rows {
		name, use := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if name != "" {
			left += " " + name
		}
		def := ""
		if !isZeroDefault(f) {
			def = "`" + f.DefValue + "`"
			if f.Name == "by" && f.DefValue == defaultBy() {
				def = "the OS user" // machine-dependent: said, not printed
			}
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", left, cell(def), cell(use))
	}
}

// writeExceptionsVerbs documents the headless exception verbs; verbs
// that share one set of flags share one table.
func writeExceptionsVerbs(b *strings.Builder, v verb) {
	b.WriteString("\n### lima-tui exceptions VERB\n\n```\n" + strings.TrimSuffix(exceptionsUsage, "\n") + "\n```\n\n")
	groups := map[string][]string{}
	var order []string
	for _, sub := range exceptionsVerbs {
		fs, _, err := verbFlags(v, sub)
		key := "error"
		if err == nil {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name+"="+f.DefValue+"="+f.Usage) })
			sort.Strings(names)
			key = strings.Join(names, "\n")
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], sub)
	}
	for _, key := range order {
		subs := groups[key]
		if len(order) > 1 {
			fmt.Fprintf(b, "#### lima-tui exceptions %s\n\n", strings.Join(subs, ", "))
		} else {
			fmt.Fprintf(b, "%s share one set of flags:\n\n", strings.Join(subs, ", "))
		}
		writeFlags(b, v, subs[0])
	}
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// isZeroDefault reports whether the flag's default is its type's zero
// value, which flag.PrintDefaults leaves unsaid too.
func isZeroDefault(f *flag.Flag) bool {
	typ := reflect.TypeOf(f.Value)
	var z reflect.Value
	if typ.Kind() == reflect.Pointer {
		z = reflect.New(typ.Elem())
	} else {
		z = reflect.Zero(typ)
	}
	zv, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == zv.String()
}
