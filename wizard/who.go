package wizard

import (
	"errors"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	"github.com/lima-lake/lima/ui"
)

// whoScreen asks, once when the wizard starts, who is at the keyboard: the
// name recorded with the approvals of gate 1 (scope), gate 3 (data model)
// and gate 5 (teardown) and with the exception browser's actions. It
// starts from a suggestion (git config user.name, else the OS user) that
// can be edited.
type whoScreen struct {
	app   *app
	theme ui.Theme
	w, h  int
	// suggested is the name offered, from says where it came from.
	suggested, from string
	name            string
	form            *huh.Form
	problem         string
}

// maxNameLen bounds an approver's name (characters).
const maxNameLen = 80

func newWho(a *app, suggested, from string) *whoScreen {
	return &whoScreen{app: a, theme: a.theme, suggested: suggested, from: from}
}

// CheckName is nil for a name that can be recorded: not empty, at most
// maxNameLen characters, nothing a terminal would act on.
func CheckName(v string) error {
	switch {
	case v == "":
		return errors.New("a name is needed: it is recorded with every approval you give")
	case utf8.RuneCountInString(v) > maxNameLen:
		return errors.New("at most 80 characters, please")
	case ui.Sanitize(v) != v:
		return errors.New("the name holds control or direction characters; type it plainly")
	}
	return nil
}

// Start builds the input with the suggested name.
func (s *whoScreen) Start() tea.Cmd {
	s.name, s.problem = s.suggested, ""
	in := huh.NewInput().Value(&s.name).CharLimit(maxNameLen).
		Validate(func(v string) error { return CheckName(strings.TrimSpace(v)) })
	s.form = huh.NewForm(huh.NewGroup(in)).
		WithTheme(ui.HuhTheme(s.theme)).WithKeyMap(ui.HuhKeyMap()).
		WithShowHelp(false).WithShowErrors(false).WithWidth(max(10, s.w))
	return s.form.Init()
}

func (s *whoScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	if s.form != nil {
		s.form.WithWidth(max(10, w))
		s.form.Update(tea.WindowSizeMsg{Width: w, Height: h})
	}
}

// Typing: the name field has the focus.
func (s *whoScreen) Typing() bool { return true }

func (s *whoScreen) Keys() []ui.Binding {
	return []ui.Binding{ui.NewBinding("enter", "continue to gate 1", "enter").Act(s.done), ui.NewBinding("ctrl+u", "clear", "ctrl+u").Do(func(k tea.KeyPressMsg) tea.Cmd { return s.Update(k) })}
}

// done records the name, when it can be, and goes on to gate 1.
func (s *whoScreen) done() tea.Cmd {
	v := strings.TrimSpace(s.name)
	if err := CheckName(v); err != nil {
		s.problem = err.Error()
		return nil
	}
	a := s.app
	a.by, a.stack = v, []screen{a.gate1}
	start := a.gate1.Start(*a.session)
	a.saver.qs = a.gate1.qs
	return start
}

// Update hands the field what it types (and its cursor blinks).
func (s *whoScreen) Update(msg tea.Msg) tea.Cmd {
	if s.form == nil {
		return nil
	}
	if _, ok := msg.(tea.KeyPressMsg); ok {
		s.problem = ""
	}
	_, cmd := s.form.Update(msg)
	return cmd
}

func (s *whoScreen) Render() string {
	t := s.theme
	var b []string
	b = append(b, t.Title.Render("Who is approving?"), "")
	b = append(b, t.Text.Bold(true).Render("Your name, as it should stand beside your approvals:"))
	b = append(b, ui.Wrap("recorded in platform.yaml with the scope (gate 1), the data model (gate 3) and the teardown (gate 5), and with what you do in the exception queue", s.w, "")...)
	b = append(b, "")
	if s.form != nil {
		b = append(b, strings.Split(strings.TrimRight(s.form.View(), "\n "), "\n")...)
	}
	if s.suggested != "" {
		rec := t.Muted.Render("recommended: ") + t.Default.Render(ui.Sanitize(s.suggested))
		if s.from != "" {
			rec += t.Muted.Render(" (" + ui.Sanitize(s.from) + ")")
		}
		b = append(b, ui.Fit(rec, s.w))
	}
	if s.problem != "" {
		b = append(b, "", t.Failed.Render(ui.StatusFailed.Glyph())+" "+t.Error.Render(ui.Sanitize(s.problem)))
	}
	return strings.Join(b, "\n")
}
