package wizard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// Gate 3 is the data-model review: the model the plan holds (or, for a plan
// without tables, the model gates.ProposeDataModel proposes) as a readable
// plan in a scrollable view, edits of a column's type, the key and the
// partition, the diff against what was loaded, and approve / reject. The
// decisions and their evidence come from gates/; approval is recorded in
// platform.yaml as `lima-tui approve --gate data-model` records it.

type gate3State int

const (
	g3Loading gate3State = iota
	g3Ready
	g3Error
	g3Saving
)

type gate3Mode int

const (
	g3Browse gate3Mode = iota
	g3PickType
	g3ConfirmReject
	g3Edit // the edit screen of a column (gate3_edit.go)
)

// gate3LoadedMsg carries the plan and its model's findings.
type gate3LoadedMsg struct {
	gen      int
	p        *plan.Plan
	findings []gates.Finding
	proposal *gates.Proposal // non-nil when the tables were proposed now
	err      error
	// lake are the tables already in the lake (renames need them);
	// lakeErr why they could not be read (renames are then off).
	lake    gates.Lake
	lakeErr error
}

// gate3SavedMsg reports an approval or a rejection written to platform.yaml.
type gate3SavedMsg struct {
	gen      int
	p        *plan.Plan
	approved bool
	err      error
	// refused are the findings that refused the approval (the lake cannot
	// follow the model); shown with the model's findings.
	refused []gates.Finding
}

type gate3Keys struct {
	Approve, Reject, Type, Key, Partition, Undo, Back, Column, Page, Edit ui.Binding
}

// gate3Item is a focusable line: a column of a base table.
type gate3Item struct {
	table string
	col   int
}

// typeChoices are the column types the picker offers.
var typeChoices = []string{"string", "int", "long", "double", "decimal(18,2)", "date", "timestamp", "timestamptz", "boolean"}

// choices are the picker's types for the focused column: its own type
// first when the list lacks it (a decimal of another precision).
func (s *gate3Screen) choices() []string {
	_, c, _ := s.focused()
	if c == nil || c.Type == "" || slices.Contains(typeChoices, c.Type) {
		return typeChoices
	}
	return append([]string{c.Type}, typeChoices...)
}

type gate3Screen struct {
	app      *app
	theme    ui.Theme
	w, h     int
	keys     gate3Keys
	state    gate3State
	mode     gate3Mode
	gen      int
	base     *plan.Plan // as loaded (with the proposal applied)
	work     *plan.Plan // the edited model
	proposal *gates.Proposal
	findings []gates.Finding
	items    []gate3Item
	cur, top int
	follow   bool // keep the focused column in view on the next render
	pick     int
	msg      string
	msgOK    bool
	err      string
	// reject is the inline yes/no form that confirms a rejection;
	// rejectYes its answer (No, keep the model, until changed).
	reject    *huh.Form
	rejectYes bool
	// evolution checks an approval against the lake (Deps.Evolution bound
	// to the workspace at Start); nil checks nothing.
	evolution func(p *plan.Plan) ([]gates.Finding, error)
	// edit is the edit screen's state (gate3_edit.go).
	edit gate3EditState
}

func newGate3(a *app) *gate3Screen {
	nb := ui.NewBinding
	return &gate3Screen{app: a, theme: a.theme, keys: gate3Keys{
		Approve:   nb("enter", "approve", "enter"),
		Reject:    nb("x", "reject", "x"),
		Type:      nb("t", "type", "t"),
		Key:       nb("k", "key", "k"),
		Partition: nb("p", "partition", "p"),
		Undo:      nb("u", "undo", "u"),
		Back:      nb("esc", "back", "esc", "shift+tab"),
		Column:    nb("↑/↓", "column", "up", "down", "j").Quiet(),
		Page:      nb("pgup/pgdn", "page", "pgup", "pgdown", "space").Quiet(),
		Edit:      nb("e", "edit", "e"),
	}}
}

func (s *gate3Screen) SetSize(w, h int) { s.w, s.h = w, h }

// HelpText explains gate 3's keys on the help screen.
func (s *gate3Screen) HelpText() []string {
	return []string{
		"e edits the focused column as the findings suggest: date formats (with a live count of",
		"the sampled values that parse), decimal precision and scale, currency, required, key,",
		"reference and partition, and n / N rename the column / its table in place (the source",
		"keeps its name: source_name; references move with the name; a table already in the lake",
		"keeps its name); t picks another type; k puts it in or takes it out of the key;",
		"p cycles its partition (month, day, year of a date; the value of others; none).",
		"Edits show as a diff and stay in memory; enter writes them with the approval",
		"(gates.data_model: who, when, plan hash). x rejects: the approval is removed.",
	}
}
func (s *gate3Screen) Typing() bool {
	return s.mode == g3Edit && s.edit.ed != nil && s.edit.ed.rename != nil
}

// Start loads the plan (and proposes a model when it has no tables), in a Cmd.
func (s *gate3Screen) Start() tea.Cmd {
	d, ws, planPath, ctx := s.app.deps, s.app.ws, s.app.planPath, s.app.ctx
	s.gen++
	gen := s.gen
	s.state, s.mode, s.err, s.msg = g3Loading, g3Browse, "", ""
	s.evolution = nil
	if d.Evolution != nil {
		s.evolution = func(p *plan.Plan) ([]gates.Finding, error) { return d.Evolution(ctx, ws, p) }
	}
	return func() tea.Msg {
		p, err := plan.Load(planPath)
		if err != nil {
			return gate3LoadedMsg{gen: gen, err: err}
		}
		if len(p.Tables) == 0 {
			pr, err := d.Propose(ctx, ws, p)
			if err != nil {
				return gate3LoadedMsg{gen: gen, err: err}
			}
			pr.Apply(p)
			m := gate3LoadedMsg{gen: gen, p: p, proposal: pr, findings: append(pr.Findings, gates.ValidateGrain(p)...)}
			m.lake, m.lakeErr = lakeOf(ctx, d, ws, p)
			return m
		}
		m := gate3LoadedMsg{gen: gen, p: p, findings: gates.ValidateGrain(p)}
		m.lake, m.lakeErr = lakeOf(ctx, d, ws, p)
		return m
	}
}

// lakeOf reads the lake's tables for gate 3's renames.
func lakeOf(ctx context.Context, d Deps, ws flow.Workspace, p *plan.Plan) (gates.Lake, error) {
	if d.Lake == nil {
		return nil, errors.New("no way to read the lake")
	}
	return d.Lake(ctx, ws, p)
}

// clonePlan copies a plan through its YAML form.
func clonePlan(p *plan.Plan) (*plan.Plan, error) {
	b, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	return plan.Parse(b, "platform.yaml")
}

func (s *gate3Screen) setPlan(p *plan.Plan) {
	s.base = p
	w, err := clonePlan(p)
	if err != nil {
		s.state, s.err = g3Error, err.Error()
		return
	}
	s.work = w
	s.reindex()
}

// reindex lists the focusable columns of the edited model.
func (s *gate3Screen) reindex() {
	w := s.work
	s.items = nil
	for _, n := range w.TableNames() {
		t := w.Tables[n]
		if t.IsMart() {
			continue
		}
		for i := range t.Columns {
			s.items = append(s.items, gate3Item{table: n, col: i})
		}
	}
	s.cur = min(s.cur, max(0, len(s.items)-1))
	s.refreshHeadlines()
}

// changes is the diff of the edited model against the loaded one.
// approvedAsIs reports whether the model shown is the approved one,
// unedited: enter then goes on without writing anything.
func (s *gate3Screen) approvedAsIs() bool {
	return s.base != nil && s.proposal == nil && s.base.ModelApproved() && len(s.changes()) == 0
}

func (s *gate3Screen) changes() []string {
	if s.base == nil || s.work == nil {
		return nil
	}
	return ModelDiff(s.base, s.work)
}

// ModelDiff lists what differs between two plans' models, one change a
// line: column types, keys and partitions of the base tables, tables
// added or removed; "" parts read as "none".
func ModelDiff(a, b *plan.Plan) []string {
	var out []string
	none := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	names := append(a.TableNames(), b.TableNames()...)
	slices.Sort(names)
	names = slices.Compact(names)
	// A table renamed at gate 3 is the same table under a new name: one
	// gone from a, one new in b, reading the same source.
	renamed := map[string]string{} // b's name → a's
	for _, n := range names {
		if a.Tables[n] != nil || b.Tables[n] == nil || b.Tables[n].Source == nil {
			continue
		}
		for _, o := range names {
			if ta := a.Tables[o]; ta != nil && b.Tables[o] == nil && ta.Source != nil && !slices.Contains(slices.Collect(maps.Values(renamed)), o) &&
				gates.SourceOf(ta) == gates.SourceOf(b.Tables[n]) {
				renamed[n] = o
				break
			}
		}
	}
	gone := slices.Collect(maps.Values(renamed))
	for _, n := range names {
		an := n
		if o, ok := renamed[n]; ok {
			an = o
			out = append(out, fmt.Sprintf("~ table %s renamed %s", o, n))
		} else if slices.Contains(gone, n) {
			continue
		}
		ta, tb := a.Tables[an], b.Tables[n]
		switch {
		case ta == nil:
			out = append(out, "+ table "+n)
			continue
		case tb == nil:
			out = append(out, "- table "+n)
			continue
		}
		// A column renamed keeps its header (source_name).
		colIn := func(t *plan.Table, c *plan.Column, other *plan.Table) (*plan.Column, bool) {
			if x, ok := t.Column(c.Name); ok {
				return x, true
			}
			for i := range t.Columns {
				if x := &t.Columns[i]; x.Header() == c.Header() {
					if _, kept := other.Column(x.Name); !kept {
						return x, true
					}
				}
			}
			return nil, false
		}
		for _, cb := range tb.Columns {
			ca, ok := colIn(ta, &cb, tb)
			if ok && ca.Name != cb.Name {
				out = append(out, fmt.Sprintf("~ %s.%s renamed %s (source %s)", n, ca.Name, cb.Name, cb.Header()))
			}
			if !ok {
				out = append(out, fmt.Sprintf("+ %s.%s %s", n, cb.Name, cb.Type))
			} else {
				if ca.Type != cb.Type {
					out = append(out, fmt.Sprintf("~ %s.%s type: %s → %s", n, cb.Name, none(ca.Type), none(cb.Type)))
				}
				out = append(out, columnDiff(n, ca, &cb)...)
			}
		}
		for _, ca := range ta.Columns {
			if _, ok := colIn(tb, &ca, ta); !ok {
				out = append(out, fmt.Sprintf("- %s.%s", n, ca.Name))
			}
		}
		if ka, kb := strings.Join(ta.Load.Keys, ", "), strings.Join(tb.Load.Keys, ", "); ka != kb {
			out = append(out, fmt.Sprintf("~ %s key: %s → %s", n, none(ka), none(kb)))
		}
		if pa, pb := strings.Join(ta.Partition, ", "), strings.Join(tb.Partition, ", "); pa != pb {
			out = append(out, fmt.Sprintf("~ %s partition: %s → %s", n, none(pa), none(pb)))
		}
		out = append(out, joinDiff(n, ta, tb)...)
	}
	if len(out) == 0 && a.Hash() != b.Hash() {
		out = append(out, "~ other fields of platform.yaml")
	}
	return out
}

// problems are the reasons the edited model cannot be approved: the plan
// does not validate, or a mart's grain check fails.
func (s *gate3Screen) problems() []string {
	if s.work == nil {
		return []string{"no model loaded"}
	}
	var out []string
	if err := s.work.Validate(); err != nil {
		for l := range strings.SplitSeq(err.Error(), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	for _, f := range gates.FailedFindings(gates.ValidateGrain(s.work)) {
		out = append(out, f.Name+": "+f.Detail)
	}
	return out
}

func (s *gate3Screen) Keys() []ui.Binding {
	k := s.keys
	nb := ui.NewBinding
	switch s.mode {
	case g3PickType:
		return []ui.Binding{nb("enter", "set the type", "enter").Act(s.setType), nb("↑/↓", "choose", "up", "k", "down", "j").Do(func(msg tea.KeyPressMsg) tea.Cmd {
			if d := msg.String(); d == "up" || d == "k" {
				s.pick = max(0, s.pick-1)
			} else {
				s.pick = min(len(s.choices())-1, s.pick+1)
			}
			return nil
		}), nb("esc", "cancel", "esc").Act(func() tea.Cmd { s.mode = g3Browse; return nil })}
	case g3Edit:
		return s.editKeys()
	case g3ConfirmReject:
		// The form takes y, n, ←/→ and enter; the screen acts on the
		// answer (the form's own completion is not waited for).
		answer := func(msg tea.KeyPressMsg) tea.Cmd {
			s.reject.Update(msg)
			if k := msg.String(); k == "y" || k == "Y" || k == "enter" {
				return s.answerReject()
			}
			return nil
		}
		keep := func() tea.Cmd { s.mode, s.msg, s.msgOK = g3Browse, "kept: nothing was changed", false; return nil }
		return []ui.Binding{nb("y", "reject the model", "y", "Y").Do(answer), nb("n/esc", "keep it", "n", "esc", "N", "shift+tab").Act(keep),
			nb("←/→", "choose", "left", "right", "h", "l").Do(answer), nb("enter", "answer", "enter").Do(answer)}
	}
	k.Approve, k.Reject, k.Back = k.Approve.Act(s.approve), k.Reject.Act(s.openReject), k.Back.Act(func() tea.Cmd { s.app.pop(); return nil })
	k.Type, k.Key, k.Partition, k.Edit = k.Type.Act(s.pickType), k.Key.Act(s.toggleKey), k.Partition.Act(s.cyclePartition), k.Edit.Act(func() tea.Cmd { s.openEdit(); return nil })
	k.Undo = k.Undo.Act(func() tea.Cmd {
		s.setPlan(s.base)
		s.msg, s.msgOK = "edits undone: the model is as loaded", true
		return nil
	})
	k.Column = k.Column.Do(func(msg tea.KeyPressMsg) tea.Cmd {
		if msg.String() == "up" {
			s.move(-1)
		} else {
			s.move(1)
		}
		return nil
	})
	k.Page = k.Page.Do(func(msg tea.KeyPressMsg) tea.Cmd {
		if msg.String() == "pgup" {
			s.move(-max(1, s.room()/2))
		} else {
			s.move(max(1, s.room()/2))
		}
		return nil
	})
	moving := []*ui.Binding{&k.Column, &k.Page}
	switch s.state {
	case g3Loading, g3Saving:
		why := "the model is loading"
		if s.state == g3Saving {
			why = "saving"
		}
		for _, b := range append(moving, &k.Approve, &k.Reject, &k.Type, &k.Key, &k.Partition, &k.Undo, &k.Edit) {
			*b = b.Disable(why)
		}
	case g3Error:
		for _, b := range append(moving, &k.Approve, &k.Reject, &k.Type, &k.Key, &k.Partition, &k.Undo, &k.Edit) {
			*b = b.Disable("the plan could not be read")
		}
	default:
		if s.approvedAsIs() {
			k.Approve = nb("enter", "continue", "enter").Act(s.approve)
		}
		if n := len(s.problems()); n > 0 {
			k.Approve = k.Approve.Disable(fmt.Sprintf("%d problem(s): fix them first (u undoes the edits)", n))
		}
		if len(s.changes()) == 0 {
			k.Undo = k.Undo.Disable("nothing edited")
		}
		if len(s.items) == 0 {
			for _, b := range []*ui.Binding{&k.Type, &k.Key, &k.Partition, &k.Edit} {
				*b = b.Disable("no base table column")
			}
		}
	}
	// ↑/↓ (column) is said by the hint line; e takes its place in the key
	// line, which stays whole at 100 columns.
	return []ui.Binding{k.Approve, k.Type, k.Key, k.Partition, k.Undo, k.Reject, k.Back, k.Edit, k.Column, k.Page}
}

// Refuse says why a disabled key does nothing, in the screen's message line.
func (s *gate3Screen) Refuse(b ui.Binding) {
	switch {
	case s.mode == g3Edit && s.edit.ed != nil && s.edit.ed.rename == nil && s.edit.lakeErr != nil:
		s.edit.ed.msg = "cannot rename: the lake could not be read (" + s.edit.lakeErr.Error() + "); a rename must know whether the table is there"
	case s.mode == g3Edit && s.edit.ed != nil:
		s.edit.ed.msg = b.Reason
	case s.mode == g3Browse && s.state == g3Ready && b.Help().Key == "enter":
		s.msg, s.msgOK = "cannot approve: "+strings.Join(s.problems(), "; "), false
	default:
		s.msg, s.msgOK = b.Help().Key+": "+b.Reason, false
	}
}

// approve writes the edited model with the approval; an approved model
// walked past unchanged keeps its approval.
func (s *gate3Screen) approve() tea.Cmd {
	s.err = ""
	if s.approvedAsIs() {
		// Walking past an approved, unchanged model keeps its
		// approval as recorded: who and when are not rewritten.
		a := s.base.Gates.DataModel
		s.msg, s.msgOK = "approval by "+a.ApprovedBy+" ("+a.ApprovedAt+") kept: the model is unchanged", true
		s.next()
		return nil
	}
	s.state = g3Saving
	return s.save(true)
}

// next goes on to the run with the approved model.
func (s *gate3Screen) next() {
	if a := s.app; a.shown(s) {
		a.push(a.run)
		a.run.Ready(s.base)
	}
}

func (s *gate3Screen) openReject() tea.Cmd {
	s.mode = g3ConfirmReject
	s.rejectYes = false
	s.reject = huh.NewForm(huh.NewGroup(huh.NewConfirm().Inline(true).
		Title("Reject the model? Nothing runs until one is approved. ").
		Affirmative("Reject").Negative("Keep").Value(&s.rejectYes).WithButtonAlignment(lipgloss.Left))).
		WithTheme(ui.HuhTheme(s.theme)).WithKeyMap(ui.HuhKeyMap()).WithShowHelp(false).WithWidth(max(10, s.w-2))
	return s.reject.Init()
}

// answerReject acts on the rejection's answer.
func (s *gate3Screen) answerReject() tea.Cmd {
	if s.rejectYes {
		s.mode, s.state = g3Browse, g3Saving
		return s.save(false)
	}
	s.mode, s.msg, s.msgOK = g3Browse, "kept: nothing was changed", false
	return nil
}

func (s *gate3Screen) setType() tea.Cmd {
	_, c, tn := s.focused()
	if ch := s.choices(); c != nil && c.Type != ch[s.pick] {
		c.Type = ch[s.pick]
		s.edited(fmt.Sprintf("%s.%s is now %s", tn, c.Name, c.Type))
	}
	s.mode = g3Browse
	return nil
}

func (s *gate3Screen) pickType() tea.Cmd {
	_, c, _ := s.focused()
	s.mode, s.pick = g3PickType, 0
	if i := slices.Index(s.choices(), c.Type); i >= 0 {
		s.pick = i
	}
	return nil
}

func (s *gate3Screen) toggleKey() tea.Cmd {
	t, c, tn := s.focused()
	if i := slices.Index(t.Load.Keys, c.Name); i >= 0 {
		t.Load.Keys = slices.Delete(t.Load.Keys, i, i+1)
		s.edited(fmt.Sprintf("%s: %s is no longer part of the key", tn, c.Name))
	} else {
		t.Load.Keys = append(t.Load.Keys, c.Name)
		s.edited(fmt.Sprintf("%s: key is now (%s)", tn, strings.Join(t.Load.Keys, ", ")))
	}
	return nil
}

func (s *gate3Screen) cyclePartition() tea.Cmd {
	t, c, tn := s.focused()
	opts := partitionChoices(c)
	cur := strings.Join(t.Partition, ", ")
	next := opts[0]
	if i := slices.Index(opts, cur); i >= 0 {
		next = opts[(i+1)%len(opts)]
	}
	t.Partition = nil
	if next != "" {
		t.Partition = []string{next}
	}
	s.edited(fmt.Sprintf("%s: partition %s", tn, orNone(next)))
	return nil
}

func (s *gate3Screen) focused() (*plan.Table, *plan.Column, string) {
	if s.work == nil || s.cur >= len(s.items) {
		return nil, nil, ""
	}
	it := s.items[s.cur]
	t := s.work.Tables[it.table]
	return t, &t.Columns[it.col], it.table
}

// Update handles gate 3's messages and, in a rename field, its keys.
func (s *gate3Screen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case gate3LoadedMsg:
		if msg.gen != s.gen {
			return nil
		}
		if msg.err != nil {
			s.state, s.err = g3Error, msg.err.Error()
			return nil
		}
		s.state, s.proposal, s.findings, s.cur, s.top, s.follow = g3Ready, msg.proposal, msg.findings, 0, 0, true
		s.keepEvidence(msg.proposal)
		s.edit.lake, s.edit.lakeErr = msg.lake, msg.lakeErr
		s.setPlan(msg.p)
	case gate3SavedMsg:
		if msg.gen != s.gen {
			return nil
		}
		s.state = g3Ready
		if msg.err != nil {
			s.msg, s.msgOK = "not saved: "+msg.err.Error(), false
			for _, f := range msg.refused {
				if !slices.Contains(s.findings, f) {
					s.findings = append(s.findings, f)
				}
			}
			return nil
		}
		s.proposal = nil
		s.setPlan(msg.p)
		s.findings = gates.ValidateGrain(msg.p)
		if msg.approved {
			s.msg, s.msgOK = "data model approved and recorded in platform.yaml", true
			s.next()
			return nil
		}
		s.msg, s.msgOK = "rejected: no approval is recorded, so nothing runs until a model is approved (edit here, or edit platform.yaml and come back)", false
	case tea.KeyPressMsg:
		if ed := s.edit.ed; s.mode == g3Edit && ed != nil && ed.rename != nil {
			ed.msg = ""
			_, cmd := ed.rename.form.Update(msg)
			return cmd
		}
	}
	return nil
}

// partitionChoices are what p cycles through for a column: by month, day
// or year of a date or timestamp, by value for other columns, and none.
func partitionChoices(c *plan.Column) []string {
	t, _ := c.ParsedType()
	if t.IsTemporal() {
		return []string{"month(" + c.Name + ")", "day(" + c.Name + ")", "year(" + c.Name + ")", ""}
	}
	return []string{c.Name, ""}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (s *gate3Screen) edited(what string) {
	s.refreshHeadlines()
	s.msg, s.msgOK = what+" (not saved until you approve)", true
	if p := s.problems(); len(p) > 0 {
		s.msg, s.msgOK = what+" — but: "+p[0], false
	}
}

func (s *gate3Screen) move(d int) {
	next := max(0, min(len(s.items)-1, s.cur+d))
	if len(s.items) == 0 || next == s.cur {
		// Past the first or last column the view scrolls on (to the
		// marts, joins and findings).
		s.top = max(0, s.top+d)
		return
	}
	s.cur, s.follow = next, true
}

// save records the approval (or clears it, for a rejection) in
// platform.yaml, in a Cmd. Approval writes the edited model with
// gates.data_model {approved_by, approved_at, plan_hash}, as
// `lima-tui approve --gate data-model` does.
func (s *gate3Screen) save(approve bool) tea.Cmd {
	by, now, planPath := s.app.by, s.app.deps.Now, s.app.planPath
	gen := s.gen
	work, err := clonePlan(s.work)
	if !approve {
		work, err = clonePlan(s.base)
	}
	proposal := s.proposal
	if err != nil {
		return func() tea.Msg { return gate3SavedMsg{gen: gen, err: err} }
	}
	ts := now().UTC().Format(time.RFC3339)
	evolution := s.evolution
	return func() tea.Msg {
		if approve {
			if f, empty := gates.EmptyDataModel(work); empty {
				return gate3SavedMsg{gen: gen, err: errors.New(f.Detail), refused: []gates.Finding{f}}
			}
		}
		if approve && evolution != nil {
			found, err := evolution(work)
			if err != nil {
				return gate3SavedMsg{gen: gen, err: err}
			}
			if failed := gates.FailedFindings(found); len(failed) > 0 {
				return gate3SavedMsg{gen: gen, err: evolutionRefusal(failed), refused: failed}
			}
		}
		if proposal != nil {
			for _, q := range proposal.Issues {
				if _, ok := work.Tables[q.Table]; ok && !slices.Contains(work.DataQualityIssues, q) {
					work.DataQualityIssues = append(work.DataQualityIssues, q)
				}
			}
		}
		if approve {
			work.Gates.DataModel = &plan.Approval{ApprovedBy: by, ApprovedAt: ts, PlanHash: work.Hash()}
		} else {
			work.Gates.DataModel = nil
		}
		work.Platform.Updated = ts
		if err := work.Validate(); err != nil {
			return gate3SavedMsg{gen: gen, err: err}
		}
		if err := work.Write(planPath); err != nil {
			return gate3SavedMsg{gen: gen, err: err}
		}
		return gate3SavedMsg{gen: gen, p: work, approved: approve}
	}
}

// room is the height of the scrolling model view.
func (s *gate3Screen) room() int {
	return max(3, s.h-4-min(len(s.changes()), 5)-boolInt(len(s.changes()) > 0)-len(s.edit.headlines))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// modelLines renders the model: base tables, marts, joins, findings; the
// index of the line of each focusable item.
func (s *gate3Screen) modelLines() ([]string, []int) {
	t := s.theme
	p := s.work
	var lines []string
	at := make([]int, len(s.items))
	item := 0
	add := func(l ...string) { lines = append(lines, l...) }
	var bases, marts []string
	for _, n := range p.TableNames() {
		if p.Tables[n].IsMart() {
			marts = append(marts, n)
		} else {
			bases = append(bases, n)
		}
	}
	nw := 10
	for _, it := range s.items {
		nw = max(nw, ui.Width(ui.Sanitize(p.Tables[it.table].Columns[it.col].Name)))
	}
	nw = min(nw, 24)
	add(t.Title.Render(fmt.Sprintf("Base tables (%d)", len(bases))))
	for _, n := range bases {
		tb := p.Tables[n]
		src := ""
		if tb.Source != nil {
			what := strings.Join(tb.Source.Files, ", ")
			if tb.Source.Table != "" {
				what = tb.Source.Table
			}
			src = " ← " + tb.Source.Name + ": " + what
		}
		add(t.Text.Bold(true).Render(ui.Sanitize(n)) + t.Muted.Render(ui.Sanitize(src)))
		facts := []string{"key (" + orNone(strings.Join(tb.Load.Keys, ", ")) + ")", "partition " + orNone(strings.Join(tb.Partition, ", ")), tb.Mode()}
		add("  " + t.Muted.Render(ui.Sanitize(strings.Join(facts, " · "))))
		for _, c := range tb.Columns {
			marker := t.Blank
			if item == s.cur {
				marker = t.FocusMarker
			}
			at[item] = len(lines)
			item++
			name := ui.Fit(ui.Sanitize(c.Name), nw)
			name += strings.Repeat(" ", max(0, nw-ui.Width(name)))
			var notes []string
			if tb.IsKey(c.Name) {
				notes = append(notes, "key")
			}
			if c.Required && !tb.IsKey(c.Name) {
				notes = append(notes, "required")
			}
			for _, pf := range tb.Partition {
				if strings.Contains(pf, "("+c.Name+")") || pf == c.Name {
					notes = append(notes, "partition "+pf)
				}
			}
			if c.SourceName != "" {
				notes = append(notes, "from "+c.SourceName)
			}
			if len(c.Formats) > 0 {
				notes = append(notes, strings.Join(c.Formats, " | "))
			}
			if len(c.Normalize) > 0 {
				notes = append(notes, strings.Join(c.Normalize, ", "))
			}
			if c.Sensitive {
				notes = append(notes, "sensitive")
			}
			typ := fmt.Sprintf("%-14s", ui.Sanitize(orNone(c.Type)))
			if ca := s.baseColumn(n, c.Name); ca != nil && ca.Type != c.Type {
				typ = fmt.Sprintf("%-14s", ui.Sanitize(c.Type)+"*")
			}
			line := fmt.Sprintf("%s %s %s %s", marker, name, typ, t.Muted.Render(ui.Sanitize(strings.Join(notes, " · "))))
			if item-1 == s.cur {
				line = fmt.Sprintf("%s %s %s %s", marker, t.Focus.Render(name), t.Focus.Render(typ), t.Muted.Render(ui.Sanitize(strings.Join(notes, " · "))))
			}
			add(ui.Fit(line, s.w))
		}
	}
	add("", t.Title.Render(fmt.Sprintf("Marts (%d)", len(marts))))
	if len(marts) == 0 {
		add(t.Muted.Render("  none"))
	}
	for _, n := range marts {
		tb := p.Tables[n]
		add(t.Text.Bold(true).Render(ui.Sanitize(n)) + t.Muted.Render(ui.Sanitize(" ← "+strings.Join(tb.From, ", "))))
		add("  grain (" + ui.Sanitize(strings.Join(tb.Grain, ", ")) + ")")
		for _, m := range tb.Measures {
			what := m.Agg + "(*)"
			if m.Column != "" {
				what = m.Agg + "(" + m.Column + ")"
			}
			safe := t.Muted.Render("not SUM-safe: re-aggregate with care")
			if slices.Contains(tb.SumSafeColumns, m.Name) {
				safe = t.OK.Render(ui.StatusOK.Glyph()) + " SUM-safe"
			}
			add(ui.Fit(fmt.Sprintf("  %-22s %-28s %s", ui.Sanitize(m.Name), ui.Sanitize(what), safe), s.w))
		}
	}
	var joins []string
	for _, n := range bases {
		for _, j := range p.Tables[n].JoinKeys {
			joins = append(joins, "  "+ui.Sanitize(n+"."+j.Column+" → "+j.References))
		}
	}
	for _, n := range marts {
		for _, j := range p.Tables[n].Joins {
			joins = append(joins, "  "+ui.Sanitize(n+": "+j.Column+" → "+j.References))
		}
	}
	add("", t.Title.Render(fmt.Sprintf("Joins (%d)", len(joins))))
	if len(joins) == 0 {
		add(t.Muted.Render("  none"))
	}
	add(joins...)
	if len(s.findings) > 0 {
		add("", t.Title.Render("Findings"))
		for _, f := range s.findings {
			add(findingLines(t, f, s.w)...)
		}
	}
	return lines, at
}

func (s *gate3Screen) baseColumn(table, col string) *plan.Column {
	if s.base == nil || s.base.Tables[table] == nil {
		return nil
	}
	c, _ := s.base.Tables[table].Column(col)
	return c
}

func (s *gate3Screen) Render() string {
	t := s.theme
	head := t.Title.Render("Gate 3 · data model")
	switch s.state {
	case g3Loading:
		return head + "\n\n" + t.Muted.Render("reading the plan and profiling the sources…")
	case g3Error:
		return head + "\n\n" + strings.Join(ui.Wrap(t.Failed.Render(ui.StatusFailed.Glyph())+" cannot read the plan: "+ui.Sanitize(s.err), s.w, "    "), "\n") +
			"\n    fix: correct platform.yaml (lima-tui check shows the line), then esc and enter again"
	}
	status := t.Warn.Render(ui.StatusWarn.Glyph()) + " not approved"
	if s.proposal != nil {
		status = t.Warn.Render(ui.StatusWarn.Glyph()) + " proposed now, not approved"
	} else if s.base.ModelApproved() {
		a := s.base.Gates.DataModel
		status = t.OK.Render(ui.StatusOK.Glyph()) + " approved by " + ui.Sanitize(a.ApprovedBy) + fmt.Sprintf(" (hash %.8s)", a.PlanHash)
	}
	ch := s.changes()
	if len(ch) > 0 {
		status = t.Warn.Render(ui.StatusWarn.Glyph()) + fmt.Sprintf(" %d change(s), not approved", len(ch))
	}
	if s.mode == g3Edit {
		return s.renderEdit()
	}
	var out []string
	out = append(out, ui.Fit(head+"  "+status, s.w))
	out = append(out, s.headlineLines()...)
	if len(ch) > 0 {
		out = append(out, t.Muted.Render("Diff against platform.yaml:"))
		for i, c := range ch {
			if i == 4 && len(ch) > 5 {
				out = append(out, t.Muted.Render(fmt.Sprintf("  … %d more", len(ch)-4)))
				break
			}
			out = append(out, ui.Fit("  "+ui.Sanitize(c), s.w))
		}
	}
	lines, at := s.modelLines()
	room := s.room()
	if s.mode == g3PickType {
		room = max(3, room-len(s.choices())-1)
	}
	// Keep the focused column visible, with a line of context.
	if len(at) > 0 && s.follow {
		s.follow = false
		y := at[s.cur]
		if y < s.top+1 {
			s.top = max(0, y-1)
		}
		if y >= s.top+room-1 {
			s.top = y - room + 2
		}
	}
	s.top = max(0, min(s.top, len(lines)-room))
	out = append(out, "")
	view := lines[s.top:min(len(lines), s.top+room)]
	out = append(out, view...)
	if rest := len(lines) - s.top - len(view); rest > 0 {
		out[len(out)-1] = t.Muted.Render(fmt.Sprintf("… %d more line(s): ↓ or pgdn scrolls", rest+1))
	}
	if s.mode == g3PickType {
		_, c, tn := s.focused()
		out = append(out, t.Key.Render(ui.Sanitize(fmt.Sprintf("type of %s.%s:", tn, c.Name))))
		for i, ty := range s.choices() {
			marker := t.Blank
			if i == s.pick {
				marker = t.FocusMarker
			}
			out = append(out, marker+" "+ty)
		}
	}
	for len(out) < s.h-1 {
		out = append(out, "")
	}
	switch {
	case s.mode == g3ConfirmReject:
		out = append(out, ui.Fit(t.Warn.Render(ui.StatusWarn.Glyph())+" "+strings.TrimRight(s.reject.View(), " "), s.w))
	case s.state == g3Saving:
		out = append(out, t.Muted.Render("saving platform.yaml…"))
	case s.msg != "" && s.msgOK:
		out = append(out, ui.Fit(t.OK.Render(ui.StatusOK.Glyph())+" "+ui.Sanitize(s.msg), s.w))
	case s.msg != "":
		out = append(out, ui.Fit(t.Warn.Render(ui.StatusWarn.Glyph())+" "+ui.Sanitize(s.msg), s.w))
	default:
		hint := "enter approves this model and records it in platform.yaml; ↑/↓ picks a column to edit"
		if s.approvedAsIs() {
			hint = "enter goes on with the approved model (its approval is kept); ↑/↓ picks a column to edit"
		}
		if p := s.problems(); len(p) > 0 {
			hint = ui.StatusFailed.Glyph() + " cannot approve yet: " + p[0]
		}
		out = append(out, ui.Fit(t.Muted.Render(ui.Sanitize(hint)), s.w))
	}
	return strings.Join(out, "\n")
}

// ModelText is gate 3's model as plain text of the given width (base
// tables, marts, joins), without focus or colour: what accessible mode
// prints.
func ModelText(p *plan.Plan, width int) string {
	s := newGate3(&app{theme: ui.MustTheme(ui.ThemeMono)})
	s.w = width
	s.setPlan(p)
	s.cur = -1
	lines, _ := s.modelLines()
	for i, l := range lines {
		lines[i] = strings.TrimRight(ansi.Strip(l), " ")
	}
	return strings.Join(lines, "\n")
}

// evolutionRefusal is the error of an approval whose model changes tables
// in the lake in ways their data cannot follow; the findings (with their
// fixes) are listed with the model's.
func evolutionRefusal(failed []gates.Finding) error {
	var tables []string
	for _, f := range failed {
		tables = append(tables, strings.TrimPrefix(f.Name, "schema evolution of "))
	}
	return fmt.Errorf("the lake's %s cannot follow this model (see the findings; --rewrite with lima-tui approve)", strings.Join(tables, ", "))
}
