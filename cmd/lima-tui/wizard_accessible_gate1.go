package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"charm.land/huh/v2"

	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
	"github.com/lima-lake/lima/wizard"
)

// lineReader hands its reader out one line per Read. huh's accessible
// prompts read each answer through a new bufio.Scanner; with a pipe a
// scanner would otherwise swallow the lines meant for the next questions.
// It also records that the input ended.
type lineReader struct {
	r       *bufio.Reader
	partial bool // the last line returned had no newline yet
	eof     bool // a read found nothing left
}

func (l *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				l.partial = true
				return n, nil
			}
			if l.partial {
				// The scanner's read that ends a last line without a
				// newline: that line is still an answer.
				l.partial = false
				return 0, err
			}
			l.eof = true
			return 0, err
		}
		p[n] = b
		n++
		if b == '\n' {
			break
		}
	}
	return n, nil
}

// notAccepted words a refused answer for a line prompt.
func notAccepted(err error) error {
	var ae *gates.AnswerError
	if errors.As(err, &ae) {
		//lint:ignore ST1005 the prompt shows this sentence as the answer to the person typing
		return fmt.Errorf("Not accepted: %s. Fix: %s.", ui.Sanitize(ae.Problem), ui.Sanitize(ae.Fix))
	}
	//lint:ignore ST1005 the prompt shows this sentence as the answer to the person typing
	return fmt.Errorf("Not accepted: %s.", ui.Sanitize(err.Error()))
}

// plainHuhTheme draws nothing but text: accessible mode writes no escape
// sequences.
func plainHuhTheme() huh.Theme {
	return huh.ThemeFunc(func(bool) *huh.Styles { return &huh.Styles{} })
}

// accessibleGate1 asks the gate 1 questions as huh forms in accessible
// mode: plain line prompts that read from in (a terminal or a pipe), a
// refused answer asked again. Enter takes the recorded answer, else the
// recommended one. It returns the answers, or false when the input ended.
func accessibleGate1(recorded gates.Answers, in *lineReader, out io.Writer) (gates.Answers, bool) {
	given := gates.Answers{}
	run := func(f huh.Field) bool {
		err := huh.NewForm(huh.NewGroup(f)).WithTheme(plainHuhTheme()).WithAccessible(true).
			WithInput(in).WithOutput(out).Run()
		return err == nil && !in.eof
	}
	n := 0
	for _, q := range gates.Questions() {
		if !q.Applies(given) {
			continue
		}
		n++
		rec := q.Recommended(given)
		def := recorded[q.ID]
		if def == "" {
			def = rec
		}
		if n == 1 {
			fmt.Fprintln(out) // huh ends every later question with a blank line
		}
		fmt.Fprintf(out, "Question %d: %s\n", n, ui.Sanitize(q.Prompt))
		if q.Help != "" {
			fmt.Fprintf(out, "  %s\n", ui.Sanitize(q.Help))
		}
		if q.Explain != nil {
			if x := q.Explain(given); x != "" {
				fmt.Fprintf(out, "  %s\n", ui.Sanitize(x))
			}
		}
		check := func(v string) error {
			if in.eof {
				return nil // the input ended: nothing more can be asked
			}
			if err := q.Check(v, given); err != nil {
				return notAccepted(err)
			}
			return nil
		}
		vw := wizard.ChoiceWidth(q)
		var opts []huh.Option[string]
		for _, c := range q.Choices {
			opts = append(opts, huh.NewOption(wizard.ChoiceLabel(c, rec, vw), c.Value))
		}
		var answer string
		typed := len(q.Choices) == 0
		switch {
		case len(q.Choices) > 0 && q.Multi:
			ticked := (gates.Answers{"x": def}).List("x")
			for i := range opts {
				opts[i] = opts[i].Selected(slices.Contains(ticked, q.Choices[i].Value))
			}
			fmt.Fprintln(out, "  A number ticks or unticks its option; 0 ends the list.")
			vals := slices.Clone(ticked)
			f := huh.NewMultiSelect[string]().Title("Options:").Options(opts...).Value(&vals).
				Validate(func(v []string) error { return check(strings.Join(inOrder(q, v), ", ")) })
			if !run(f) {
				return nil, false
			}
			answer = strings.Join(inOrder(q, vals), ", ")
		case len(q.Choices) > 0:
			const other = "\x00other"
			choice := def
			if !slices.ContainsFunc(q.Choices, func(c gates.Choice) bool { return c.Value == def }) {
				choice = ""
				if q.Free && def != "" {
					// The recorded answer is not in the list: it is an
					// option of its own, so enter keeps it.
					opts = append(opts, huh.NewOption(wizard.ChoiceLabel(gates.Choice{Value: def, Help: "the recorded answer"}, "", vw), def))
					choice = def
				}
			}
			if q.Free {
				opts = append(opts, huh.NewOption(fmt.Sprintf("%-*s  %s", vw, "other…", "type another answer"), other))
			}
			if choice == "" {
				fmt.Fprintln(out, "  There is no recommended answer: a person must choose.")
			} else if i := slices.IndexFunc(opts, func(o huh.Option[string]) bool { return o.Value == choice }); i >= 0 {
				fmt.Fprintf(out, "  Enter takes option %d.\n", i+1)
			}
			f := huh.NewSelect[string]().Title("Options:").Options(opts...).Value(&choice).
				Validate(func(v string) error {
					if v == other {
						return nil
					}
					return check(v)
				})
			if !run(f) {
				return nil, false
			}
			answer, typed = choice, choice == other
			if typed {
				def = ""
			}
		}
		if typed {
			text := def
			title := "Answer:"
			if def != "" {
				title = fmt.Sprintf("Answer (enter for %s):", ui.Sanitize(def))
			}
			f := huh.NewInput().Title(title).Value(&text).CharLimit(400).
				Validate(func(v string) error {
					if v = strings.TrimSpace(v); v == "" {
						v = def
					}
					return check(v)
				})
			if !run(f) {
				return nil, false
			}
			answer = strings.TrimSpace(text)
		}
		given[q.ID] = answer
	}
	return given, true
}

// inOrder is the ticked values in the order of q's choices.
func inOrder(q gates.Question, v []string) []string {
	var out []string
	for _, c := range q.Choices {
		if slices.Contains(v, c.Value) {
			out = append(out, c.Value)
		}
	}
	return out
}
