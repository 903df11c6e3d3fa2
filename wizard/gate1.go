package wizard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

type gate1Keys struct {
	Up, Down, Choose, Toggle, Defaults, Back, Next ui.Binding
}

// otherValue is the select option that turns a free question into a
// typed answer.
const otherValue = "\x00other"

// gate1Screen asks the gate 1 questions one at a time, each as a huh form
// of one field embedded in the screen: a select for choices, a multi-select
// for a list of choices, an input with validation for free text.
type gate1Screen struct {
	app   *app
	theme ui.Theme
	w, h  int
	keys  gate1Keys
	// start opens the last run's gate 4 and the queue (the root acts on
	// them; enabled when the workspace has a run).
	start ui.StartKeys

	qs       []gates.Question
	answers  gates.Answers
	answered map[string]bool
	idx      int // current question; len(qs): all answered
	history  []int

	form    *huh.Form
	other   bool     // a free question's "other…": its answer is typed
	choice  string   // the select's value
	multi   []string // the multi-select's value
	text    string   // the input's value
	editing bool     // the input has the focus: keys are text

	problem  string
	fix      string
	status   string
	statusOK ui.Status

	// by is who approves the scope; scope the approval recorded in the
	// plan (nil: none); approving: enter was pressed on the summary and
	// the approval is being written.
	by        *string // the root's
	scope     *plan.Approval
	approving bool

	// dir is the workspace (relative source folders are read from it);
	// checking is the source answer being looked for on disk (in a Cmd),
	// and whether the defaults for the rest follow once it is found;
	// checked is the last answer found.
	dir      string
	zone     string // the machine's time zone, the recommended one
	checking *sourceCheck
	checked  string
}

// sourceCheck is a source answer being looked for on disk.
type sourceCheck struct {
	idx      int
	answer   string
	defaults bool
}

// sourceCheckedMsg says whether a source answer's folders exist.
type sourceCheckedMsg struct {
	check sourceCheck
	err   error
}

// checkSources looks for the folders of a sources answer (relative ones
// in dir): a folder that is missing is refused where it is answered, not
// at gate 2. S3 prefixes and databases are checked by gate 2.
func checkSources(dir, answer string) error {
	for _, u := range (gates.Answers{gates.QSources: answer}).List(gates.QSources) {
		src, err := gates.ParseSource(u)
		if err != nil || src.Kind != "folder" {
			continue
		}
		p := src.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			where := ""
			if !filepath.IsAbs(src.Path) {
				where = " in " + dir
			}
			return &gates.AnswerError{Problem: fmt.Sprintf("the folder %s does not exist%s", src.Path, where),
				Fix: "answer a folder that holds the files, or create it and answer again"}
		case err != nil:
			return &gates.AnswerError{Problem: fmt.Sprintf("the folder %s cannot be read: %v", src.Path, err),
				Fix: "answer a folder this user may read"}
		case !fi.IsDir():
			return &gates.AnswerError{Problem: fmt.Sprintf("%s is a file, not a folder", src.Path),
				Fix: "answer the folder that holds it"}
		}
	}
	return nil
}

// lookFor starts the check of a source answer.
func (s *gate1Screen) lookFor(answer string, defaults bool) tea.Cmd {
	c := sourceCheck{idx: s.idx, answer: answer, defaults: defaults}
	s.checking = &c
	s.status, s.statusOK = "looking for the folder…", ui.StatusPending
	dir := s.dir
	return func() tea.Msg { return sourceCheckedMsg{check: c, err: checkSources(dir, c.answer)} }
}

func newGate1(a *app) *gate1Screen {
	t := a.theme
	return &gate1Screen{app: a, theme: t, qs: gates.Questions(), answers: gates.Answers{}, answered: map[string]bool{}, start: ui.DefaultStartKeys(),
		keys: gate1Keys{
			Up:       ui.NewBinding("↑/↓", "move", "up", "k"),
			Down:     ui.NewBinding("↓/j", "down", "down", "j"),
			Choose:   ui.NewBinding("enter", "choose", "enter"),
			Toggle:   ui.NewBinding("space", "tick", "space", "x"),
			Defaults: ui.NewBinding("d", "defaults for the rest", "d", "ctrl+d"),
			Back:     ui.NewBinding("esc", "back", "esc", "shift+tab"),
			Next:     ui.NewBinding("enter", "continue to gate 2", "enter"),
		}}
}

func (s *gate1Screen) SetSize(w, h int) {
	s.w, s.h = w, h
	switch {
	case s.form == nil || s.done():
	case s.editing:
		s.form.WithWidth(max(10, w))
		// The form rebuilds its view on any message.
		s.form.Update(tea.WindowSizeMsg{Width: w, Height: h})
	case s.question().Multi:
		// The option lines are fitted to the width: draw them again, the
		// ticks and the answer kept.
		s.build(strings.Join(s.multi, ", "))
	default:
		s.build(s.choice)
	}
}

func (s *gate1Screen) Typing() bool { return s.editing }

func (s *gate1Screen) done() bool { return s.idx >= len(s.qs) }

// Start takes the loaded session: the first question not answered yet.
func (s *gate1Screen) Start(m sessionMsg) tea.Cmd {
	s.answers, s.answered = m.answers, m.answered
	if m.lastReport != "" {
		s.start.LastRun, s.start.Queue = s.start.LastRun.Enable(), s.start.Queue.Enable()
	}
	s.scope, s.approving = m.scope, false
	// The recommended default owner is who approves.
	s.qs = withDefaults(gates.Questions(), map[string]string{gates.QTimezone: s.zone, gates.QOwner: s.approver()})
	s.history = nil
	s.idx = len(s.qs)
	for i, q := range s.qs {
		if q.Applies(s.answers) && !s.answered[q.ID] {
			s.idx = i
			break
		}
	}
	// The questions before it are the way back.
	for i := 0; i < s.idx && i < len(s.qs); i++ {
		if s.qs[i].Applies(s.answers) {
			s.history = append(s.history, i)
		}
	}
	if s.done() {
		s.history = nil
		for i, q := range s.qs {
			if q.Applies(s.answers) {
				s.history = append(s.history, i)
			}
		}
		if m.exists {
			s.status, s.statusOK = "answers recorded in platform.yaml", ui.StatusOK
		}
	}
	return s.setup()
}

// approver is who approves the scope.
func (s *gate1Screen) approver() string {
	if s.by == nil || *s.by == "" {
		return "lima-tui"
	}
	return *s.by
}

// Reopen is called when gate 2 goes back to gate 1.
func (s *gate1Screen) Reopen() { s.problem, s.fix = "", "" }

func (s *gate1Screen) question() gates.Question { return s.qs[s.idx] }

// current is the answer the current question starts from: the recorded
// one, else the recommended one.
func (s *gate1Screen) current() string {
	q := s.question()
	if s.answered[q.ID] {
		return s.answers[q.ID]
	}
	return q.Recommended(s.answers)
}

func isChoice(q gates.Question, v string) bool {
	return slices.ContainsFunc(q.Choices, func(c gates.Choice) bool { return c.Value == v })
}

// setup prepares the current question's form, starting from the current or
// the recommended answer.
func (s *gate1Screen) setup() tea.Cmd {
	s.problem, s.fix = "", ""
	s.other = false
	if s.done() {
		s.form, s.editing = nil, false
		return nil
	}
	return s.build(s.current())
}

// ChoiceLabel is an option's line in a gate 1 select: the value in a
// column vw wide, "(recommended)" on the recommended one, and its one-line
// help.
func ChoiceLabel(c gates.Choice, rec string, vw int) string {
	help := c.Help
	if c.Value == rec && !strings.Contains(help, "(recommended)") {
		help = "(recommended) " + help
	}
	return strings.TrimRight(fmt.Sprintf("%-*s  %s", vw, ui.Sanitize(c.Value), ui.Sanitize(help)), " ")
}

// ChoiceWidth is the value column's width for q's options.
func ChoiceWidth(q gates.Question) int {
	vw := 0
	for _, c := range q.Choices {
		vw = max(vw, ui.Width(c.Value))
	}
	return min(max(vw, 6), 20)
}

// build makes the form of the current question with cur as its value.
func (s *gate1Screen) build(cur string) tea.Cmd {
	q := s.question()
	rec := q.Recommended(s.answers)
	var field huh.Field
	s.editing = false
	lw := max(10, s.w-ui.Width(s.theme.FocusMarker))
	switch {
	case len(q.Choices) > 0 && q.Multi:
		s.multi = (gates.Answers{"x": cur}).List("x")
		vw := ChoiceWidth(q)
		var opts []huh.Option[string]
		for _, c := range q.Choices {
			opts = append(opts, huh.NewOption(ui.Fit(ChoiceLabel(c, rec, vw), lw-4), c.Value).Selected(slices.Contains(s.multi, c.Value)))
		}
		field = huh.NewMultiSelect[string]().Options(opts...).Value(&s.multi)
	case len(q.Choices) > 0 && !s.other:
		vw := ChoiceWidth(q)
		var opts []huh.Option[string]
		for _, c := range q.Choices {
			opts = append(opts, huh.NewOption(ui.Fit(ChoiceLabel(c, rec, vw), lw), c.Value))
		}
		s.choice = cur
		if q.Free && !q.Multi {
			if cur != "" && cur != otherValue && !isChoice(q, cur) {
				// A recorded answer not in the list is an option of its
				// own: enter keeps it.
				opts = append(opts, huh.NewOption(ui.Fit(ChoiceLabel(gates.Choice{Value: cur, Help: "the recorded answer"}, "", vw), lw), cur))
			}
			opts = append(opts, huh.NewOption(fmt.Sprintf("%-*s  %s", vw, "other…", "type another answer"), otherValue))
		}
		if s.choice == "" || (!isChoice(q, s.choice) && s.choice != otherValue && !q.Free) {
			s.choice = q.Choices[0].Value
		}
		field = huh.NewSelect[string]().Options(opts...).Value(&s.choice)
	default:
		s.text = cur
		if s.other && isChoice(q, cur) {
			s.text = ""
		}
		in := huh.NewInput().Value(&s.text).CharLimit(400).
			Validate(func(v string) error { return q.Check(strings.TrimSpace(v), s.answers) })
		field = in
		s.editing = true
	}
	theme := ui.HuhTheme(s.theme)
	if _, multi := field.(*huh.MultiSelect[string]); multi {
		theme = ui.HuhMultiTheme(s.theme)
	}
	s.form = huh.NewForm(huh.NewGroup(field)).
		WithTheme(theme).WithKeyMap(ui.HuhKeyMap()).
		WithShowHelp(false).WithShowErrors(false).WithWidth(max(10, s.w))
	return s.form.Init()
}

// Keys is the screen's key map, disabled bindings with their reason.
func (s *gate1Screen) Keys() []ui.Binding {
	k := s.keys
	// A key while the folder is looked for: the look is forgotten, the
	// key acts on the question.
	act := func(run func(tea.KeyPressMsg) tea.Cmd) func(tea.KeyPressMsg) tea.Cmd {
		return func(msg tea.KeyPressMsg) tea.Cmd {
			s.forgetCheck()
			return run(msg)
		}
	}
	form := act(func(msg tea.KeyPressMsg) tea.Cmd { _, cmd := s.form.Update(msg); return cmd })
	back := act(func(tea.KeyPressMsg) tea.Cmd { return s.back() })
	defaults := act(func(tea.KeyPressMsg) tea.Cmd { return s.defaults(s.app.saver) })
	k.Back, k.Defaults = k.Back.Do(back), k.Defaults.Do(defaults)
	if len(s.history) == 0 {
		k.Back = k.Back.Disable("this is the first question")
	}
	if s.done() {
		k.Next = k.Next.Act(s.approve)
		if s.scope == nil {
			k.Next = ui.NewBinding("enter", "approve the scope, go to gate 2", "enter").Act(s.approve)
		}
		if s.approving {
			// The approval is being written: it decides where enter
			// leads, so nothing moves meanwhile.
			k.Next = k.Next.Disable("recording the approval")
			k.Back = k.Back.Disable("recording the approval")
		}
		if failed := gates.FailedFindings(gates.CheckAnswers(s.answers)); len(failed) > 0 {
			k.Next = k.Next.Disable(fmt.Sprintf("%d answer(s) do not pass gate 1", len(failed)))
		}
		last := s.app.lastReport
		lastRun := s.start.LastRun.Act(func() tea.Cmd { return readLastRun(last, false) })
		queue := s.start.Queue.Act(func() tea.Cmd { return readLastRun(last, true) })
		return []ui.Binding{k.Next, lastRun, queue, k.Back}
	}
	q := s.question()
	if s.editing {
		k.Choose = ui.NewBinding("enter", "answer", "enter").Do(act(s.enter))
		k.Defaults = ui.NewBinding("ctrl+d", "defaults for the rest", "ctrl+d").Do(defaults)
		if s.other {
			k.Back = ui.NewBinding("esc", "back to the list", "esc", "shift+tab").Do(act(func(tea.KeyPressMsg) tea.Cmd {
				// Back from the typed answer to the list.
				s.other = false
				s.problem, s.fix = "", ""
				return s.build(otherValue)
			}))
		}
		return []ui.Binding{k.Choose, k.Defaults, k.Back}
	}
	k.Choose = k.Choose.Do(act(s.enter))
	if !q.Multi {
		k.Toggle = k.Toggle.Disable("one answer only: enter chooses it")
	} else {
		k.Choose = ui.NewBinding("enter", "confirm the ticked", "enter").Do(act(s.enter))
	}
	return []ui.Binding{k.Up.Do(form), k.Choose, k.Toggle.Do(form), k.Defaults, k.Back, k.Down.Quiet().Do(form)}
}

// forgetCheck forgets the look for a source folder (a key was pressed
// meanwhile).
func (s *gate1Screen) forgetCheck() {
	if s.checking != nil {
		s.checking, s.status = nil, ""
	}
}

// approve records the scope approval (gate 1 passes with a recorded human
// answer); gate 2 starts once it is written.
func (s *gate1Screen) approve() tea.Cmd {
	s.approving = true
	s.status, s.statusOK = "recording the approval…", ui.StatusPending
	return s.app.saver.Approve(s.answers, s.answered, s.approver())
}

// enter takes the current question's answer. The form sees enter (it
// validates and shows its mark); the screen records the answer, so the
// form never completes itself.
func (s *gate1Screen) enter(msg tea.KeyPressMsg) tea.Cmd {
	sv, q := s.app.saver, s.question()
	s.form.Update(msg)
	switch {
	case s.editing:
		if err := s.form.GetFocusedField().Error(); err != nil {
			s.showError(err)
			return nil
		}
		return s.answer(strings.TrimSpace(s.text), sv)
	case q.Multi:
		var vals []string
		for _, c := range q.Choices { // in the questions' order
			if slices.Contains(s.multi, c.Value) {
				vals = append(vals, c.Value)
			}
		}
		return s.answer(strings.Join(vals, ", "), sv)
	case s.choice == otherValue:
		s.other = true
		s.problem, s.fix = "", ""
		cur := s.current()
		if s.answered[q.ID] && isChoice(q, cur) || !s.answered[q.ID] {
			cur = ""
		}
		return s.build(cur)
	}
	return s.answer(s.choice, sv)
}

// Update handles the saves, the source checks and, while a field is
// typed into, its keys.
func (s *gate1Screen) Update(msg tea.Msg) tea.Cmd {
	sv := s.app.saver
	switch msg := msg.(type) {
	case savedMsg:
		if msg.seq < sv.seq {
			return nil
		}
		var nyet errNotYet
		if s.approving && s.done() {
			s.approving = false
			if msg.err != nil {
				s.status, s.statusOK = "scope not approved: "+ui.Sanitize(msg.err.Error()), ui.StatusFailed
				return nil
			}
			s.scope = msg.approval
			s.status, s.statusOK = "scope approved by "+ui.Sanitize(s.approver())+", recorded in platform.yaml", ui.StatusOK
			if msg.kept {
				s.status = "scope approval kept: the answers are the ones " + ui.Sanitize(msg.approval.ApprovedBy) + " approved"
			}
			if a := s.app; a.shown(s) {
				// The scope approval is recorded: gate 2 starts.
				a.push(a.gate2)
				return a.gate2.Start()
			}
			return nil
		}
		switch {
		case msg.err == nil:
			s.scope = msg.approval
			s.status, s.statusOK = "saved to platform.yaml", ui.StatusOK
		case errors.As(msg.err, &nyet):
			s.status, s.statusOK = "not saved yet: this answer completes the plan", ui.StatusWarn
		default:
			s.status, s.statusOK = "not saved: "+ui.Sanitize(msg.err.Error()), ui.StatusFailed
		}
		return nil
	case sourceCheckedMsg:
		if s.checking == nil || *s.checking != msg.check || s.idx != msg.check.idx {
			return nil // answered otherwise meanwhile
		}
		s.checking, s.status = nil, ""
		if msg.err != nil {
			s.showError(msg.err)
			return nil
		}
		s.checked = msg.check.answer
		if msg.check.defaults {
			return s.defaults(sv)
		}
		return s.answer(msg.check.answer, sv)
	case tea.KeyPressMsg:
		s.forgetCheck()
	case tea.WindowSizeMsg:
		return nil
	}
	// Typed text, cursor blinks and the like belong to the form.
	if s.form != nil {
		_, cmd := s.form.Update(msg)
		return cmd
	}
	return nil
}

// answer records an answer to the current question when it passes, saves
// and moves on; otherwise it shows what is wrong and what to answer.
func (s *gate1Screen) answer(ans string, sv *saver) tea.Cmd {
	q := s.question()
	if err := q.Check(ans, s.answers); err != nil {
		s.showError(err)
		return nil
	}
	if q.ID == gates.QSources && s.checked != ans {
		return s.lookFor(ans, false)
	}
	s.answers[q.ID] = ans
	s.answered[q.ID] = true
	s.history = append(s.history, s.idx)
	s.idx = s.nextFrom(s.idx + 1)
	return tea.Batch(s.setup(), sv.Save(s.answers, s.answered))
}

func (s *gate1Screen) showError(err error) {
	var ae *gates.AnswerError
	if errors.As(err, &ae) {
		s.problem, s.fix = ae.Problem, ae.Fix
		return
	}
	s.problem, s.fix = err.Error(), ""
}

func (s *gate1Screen) nextFrom(i int) int {
	for ; i < len(s.qs); i++ {
		if s.qs[i].Applies(s.answers) {
			return i
		}
	}
	return len(s.qs)
}

// defaults answers the current and every later question with its
// recommended answer, stopping at one a person must answer.
func (s *gate1Screen) defaults(sv *saver) tea.Cmd {
	i := s.idx
	var stop error
	for i = s.nextFrom(i); i < len(s.qs); i = s.nextFrom(i + 1) {
		q := s.qs[i]
		rec := q.Recommended(s.answers)
		if rec == "" && !q.Multi {
			stop = &gates.AnswerError{Problem: "this question has no default", Fix: "a person must answer it: " + choicesText(q)}
			break
		}
		if err := q.Check(rec, s.answers); err != nil {
			stop = err
			break
		}
		if q.ID == gates.QSources && s.checked != rec {
			// The folder is looked for first; the defaults go on once
			// it is found.
			s.idx = i
			cmd := s.setup()
			return tea.Batch(cmd, s.lookFor(rec, true), sv.Save(s.answers, s.answered))
		}
		s.answers[q.ID] = rec
		s.answered[q.ID] = true
		s.history = append(s.history, i)
	}
	s.idx = i
	cmd := s.setup()
	if stop != nil {
		s.showError(stop)
	}
	return tea.Batch(cmd, sv.Save(s.answers, s.answered))
}

func choicesText(q gates.Question) string {
	var v []string
	for _, c := range q.Choices {
		v = append(v, c.Value)
	}
	if len(v) == 0 {
		return "type the answer"
	}
	return strings.Join(v, ", ")
}

func (s *gate1Screen) back() tea.Cmd {
	if len(s.history) == 0 {
		return nil
	}
	s.idx = s.history[len(s.history)-1]
	s.history = s.history[:len(s.history)-1]
	return s.setup()
}

// position is the current question's number and the number of questions
// that apply.
func (s *gate1Screen) position() (int, int) {
	full := completeAnswers(s.qs, s.answers, s.answered)
	n, total := 0, 0
	for i, q := range s.qs {
		if q.Applies(full) {
			total++
			if i <= s.idx {
				n++
			}
		}
	}
	return n, total
}

// Render draws the current question, or the summary when all are answered.
func (s *gate1Screen) Render() string {
	t := s.theme
	compact := ui.Classify(s.w+2, s.h+4) != ui.SizeFull
	var b []string
	add := func(l ...string) { b = append(b, l...) }
	gap := func() {
		if !compact {
			add("")
		}
	}
	if s.done() {
		add(t.Title.Render("Gate 1 · scope & residency")+"  "+t.Muted.Render("all questions answered"), "")
		findings := gates.CheckAnswers(s.answers)
		var rows []string
		for _, q := range s.qs {
			if !q.Applies(s.answers) {
				continue
			}
			v := s.answers[q.ID]
			if v == "" {
				v = "(none)"
			}
			rows = append(rows, fmt.Sprintf("  %-18s %s", q.ID, ui.Sanitize(v)))
		}
		// The answers, the findings and the verdict must all show: when
		// the answers would push the verdict off, they take two columns.
		if n := len(rows) + 8; n > s.h && s.w >= 70 {
			half := (len(rows) + 1) / 2
			cw := s.w / 2
			for i := range half {
				l := ui.Fit(rows[i], cw-1)
				if j := i + half; j < len(rows) {
					l += strings.Repeat(" ", max(0, cw-ui.Width(l))) + ui.Fit(rows[j], s.w-cw)
				}
				add(l)
			}
		} else {
			add(rows...)
		}
		gap()
		for _, f := range findings {
			if f.Status == gates.Fail || f.Name == "residency" {
				add(findingLines(t, f, s.w)...)
			}
		}
		gap()
		if a := s.scope; a != nil {
			add(t.OK.Render(ui.StatusOK.Glyph()) + " scope approved by " + ui.Sanitize(a.ApprovedBy) + " at " + ui.Sanitize(a.ApprovedAt))
		}
		if failed := gates.FailedFindings(findings); len(failed) == 0 {
			what := "enter approves the scope as " + ui.Sanitize(s.approver()) + " and runs gate 2"
			if s.scope != nil {
				what = "enter runs gate 2 (the preconditions)"
			}
			for i, l := range ui.Wrap(ui.StatusOK.Glyph()+" gate 1 passes: "+what, s.w, "  ") {
				if i == 0 {
					l = t.OK.Render(ui.StatusOK.Glyph()) + strings.TrimPrefix(l, ui.StatusOK.Glyph())
				}
				add(l)
			}
		}
		if s.status != "" {
			add(t.StatusText(s.statusOK, s.statusOK.Glyph()+" "+s.status))
		}
		return strings.Join(b, "\n")
	}
	q := s.question()
	n, total := s.position()
	add(t.Title.Render("Gate 1 · scope & residency") + "  " + t.Muted.Render(fmt.Sprintf("question %d of %d", n, total)))
	gap()
	add(t.Text.Bold(true).Render(q.Prompt))
	if q.Help != "" {
		for _, l := range ui.Wrap(q.Help, s.w, "") {
			add(t.Muted.Render(l))
		}
	}
	if q.Explain != nil {
		for _, l := range strings.Split(q.Explain(s.answers), "\n") {
			add(ui.Wrap(ui.Sanitize(l), s.w, "    ")...)
		}
	}
	gap()
	rec := q.Recommended(s.answers)
	if s.other {
		add(t.Muted.Render("another answer than the list's; esc goes back to the list"))
	}
	if s.form != nil {
		add(strings.Split(strings.TrimRight(s.form.View(), "\n "), "\n")...)
	}
	if s.editing && rec != "" {
		add(t.Muted.Render("recommended: ") + t.Default.Render(ui.Sanitize(rec)))
	}
	if s.problem != "" {
		gap()
		for i, l := range ui.Wrap(ui.StatusFailed.Glyph()+" "+ui.Sanitize(s.problem), s.w, "  ") {
			if i == 0 {
				l = t.Failed.Render(ui.StatusFailed.Glyph()) + t.Error.Render(strings.TrimPrefix(l, ui.StatusFailed.Glyph()))
			} else {
				l = t.Error.Render(l)
			}
			add(l)
		}
		if s.fix != "" {
			add(ui.Wrap("  fix: "+ui.Sanitize(s.fix), s.w, "       ")...)
		}
	}
	if s.status != "" {
		gap()
		add(ui.Fit(t.StatusText(s.statusOK, s.statusOK.Glyph()+" "+s.status), s.w))
	}
	return strings.Join(b, "\n")
}

// findingLines renders a finding: glyph, name, evidence; the fix below a
// finding that did not pass.
func findingLines(t ui.Theme, f gates.Finding, w int) []string {
	st := statusOf(f.Status)
	out := []string{ui.Fit(t.Status(st)+" "+t.Text.Bold(true).Render(ui.Sanitize(f.Name)), w)}
	if f.Detail != "" {
		out = append(out, ui.Wrap("    "+ui.Sanitize(f.Detail), w, "    ")...)
	}
	if f.Fix != "" && f.Status != gates.Pass {
		out = append(out, ui.Wrap("    fix: "+ui.Sanitize(f.Fix), w, "         ")...)
	}
	return out
}

func statusOf(s string) ui.Status {
	switch s {
	case gates.Pass:
		return ui.StatusOK
	case gates.Fail:
		return ui.StatusFailed
	case gates.Warn:
		return ui.StatusWarn
	case gates.Skip:
		return ui.StatusSkipped
	}
	return ui.StatusPending
}
