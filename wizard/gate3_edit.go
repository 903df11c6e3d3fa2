package wizard

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/ui"
)

// Gate 3's edit screen (e on a column): every fix the findings suggest,
// for the focused column and its table — date/timestamp formats picked
// from the candidates the profile found, the type with a decimal's
// precision and scale, the currency, required, the key, a reference and
// the partition. Each change goes through gates.ApplyEdit (what `propose
// --set` applies) on a draft of the model, and a live preview casts the
// sampled values under the draft with clean's caster, as the load will:
// how many values parse, which would be held back, and how many sampled
// rows of the table would be held back. n renames the column and N its
// table in place (a text field prefilled with the name, checked as one
// types: gates.CheckColumnName / CheckTableName, the lake's tables read
// when gate 3 loads); the source column and the table's files are shown
// beside and stay as they are. enter keeps the draft, esc drops it.

// gate3EditState is what gate 3 keeps for editing: the sample the model
// was proposed from (kept after approval), the headlines of the tables
// that would hold back most of their sampled rows, and the open editor.
type gate3EditState struct {
	evidence  map[string]*gates.TableEvidence
	headlines []string
	ed        *gate3Editor
	// lake are the tables already in the lake, read when gate 3 loads
	// (renames need them); lakeErr says why they could not be read.
	lake    gates.Lake
	lakeErr error
}

type editRowKind int

const (
	erFormat editRowKind = iota
	erType
	erPrecision
	erScale
	erCurrency
	erRequired
	erKey
	erReferences
	erPartition
)

type editRow struct {
	kind   editRowKind
	format string // erFormat: the candidate layout
}

// editDone is what an edit of one field changed; a field edited again
// (→ through the types) keeps only its last change.
type editDone struct{ field, what string }

type gate3Editor struct {
	draft      *plan.Plan
	table, col string
	candidates []string // date/timestamp layouts to offer
	cur        int
	done       []editDone // what the edits changed, the last of each field
	msg        string     // the last refusal
	// opened is the table the editor was opened on (its sample moves
	// with a rename); rename is the open rename field, nil when none.
	opened string
	rename *renameField
}

// renameField is the text field of a rename: of the column, or (table)
// of its table, prefilled with the current name and checked as one types.
type renameField struct {
	table bool
	value string
	form  *huh.Form
}

// commonCurrencies are offered after the column's own and the sample's.
var commonCurrencies = []string{"KRW", "USD", "EUR", "JPY", "CNY", "GBP", "CHF"}

// editKeys are the edit screen's keys; in a rename field, its own.
func (s *gate3Screen) editKeys() []ui.Binding {
	rk := ui.DefaultRenameKeys()
	nb := ui.NewBinding
	if ed := s.edit.ed; ed != nil && ed.rename != nil {
		keep := rk.Keep.Act(s.rename)
		if p := ed.renameProblem(s.edit.lake); p != "" {
			keep = keep.Disable(p)
		}
		return []ui.Binding{keep, rk.Cancel.Act(func() tea.Cmd { ed.rename = nil; return nil })}
	}
	rk.Column = rk.Column.Act(func() tea.Cmd { return s.openRename(false) })
	rk.Table = rk.Table.Act(func() tea.Cmd { return s.openRename(true) })
	if err := s.edit.lakeErr; err != nil {
		why := "the lake could not be read (" + err.Error() + ")"
		rk.Column, rk.Table = rk.Column.Disable(why), rk.Table.Disable(why)
	}
	ed := s.edit.ed
	change := func(d int) func() tea.Cmd {
		return func() tea.Cmd { ed.change(d, s.edit.evidence[ed.opened]); return nil }
	}
	return []ui.Binding{nb("↑/↓", "field", "up", "down", "k", "j", "tab").Do(func(msg tea.KeyPressMsg) tea.Cmd {
		if k := msg.String(); k == "up" || k == "k" {
			ed.cur = max(0, ed.cur-1)
		} else {
			ed.cur = min(len(ed.rows())-1, ed.cur+1)
		}
		return nil
	}), nb("space", "toggle", "space").Act(change(0)),
		nb("←/→", "change", "left", "right", "-", "+", "h", "l").Do(func(msg tea.KeyPressMsg) tea.Cmd {
			if k := msg.String(); k == "left" || k == "-" || k == "h" {
				return change(-1)()
			}
			return change(1)()
		}), rk.Column, rk.Table,
		nb("enter", "keep the edits", "enter").Act(s.keepEdits), nb("esc", "drop them", "esc", "shift+tab").Act(func() tea.Cmd {
			s.mode, s.edit.ed = g3Browse, nil
			s.msg, s.msgOK = "edit dropped: nothing changed", false
			return nil
		})}
}

// keepEdits takes the edit screen's edits into the model.
func (s *gate3Screen) keepEdits() tea.Cmd {
	ed := s.edit.ed
	s.mode, s.edit.ed = g3Browse, nil
	if len(ed.done) == 0 {
		return nil
	}
	s.work = ed.draft
	if ed.table != ed.opened {
		if ev, ok := s.edit.evidence[ed.opened]; ok {
			delete(s.edit.evidence, ed.opened)
			s.edit.evidence[ed.table] = ev
		}
	}
	s.reindex()
	for i, it := range s.items {
		if it.table == ed.table && s.work.Tables[it.table].Columns[it.col].Name == ed.col {
			s.cur, s.follow = i, true
		}
	}
	var what []string
	for _, d := range ed.done {
		what = append(what, d.what)
	}
	s.edited(strings.Join(what, "; "))
	return nil
}

// openRename opens the rename field of the column, or of its table.
func (s *gate3Screen) openRename(table bool) tea.Cmd {
	ed := s.edit.ed
	r := &renameField{table: table, value: ed.col}
	if table {
		r.value = ed.table
	}
	in := huh.NewInput().Value(&r.value).CharLimit(128)
	r.form = huh.NewForm(huh.NewGroup(in)).WithTheme(ui.HuhTheme(s.theme)).WithKeyMap(ui.HuhKeyMap()).
		WithShowHelp(false).WithShowErrors(false).WithWidth(max(10, s.w-4))
	ed.rename, ed.msg = r, ""
	return r.form.Init()
}

// renameProblem is why the name typed cannot be taken ("" when it can).
func (ed *gate3Editor) renameProblem(lake gates.Lake) string {
	r := ed.rename
	v := strings.TrimSpace(r.value)
	if r.table {
		return gates.CheckTableName(ed.draft, ed.table, v, lake)
	}
	return gates.CheckColumnName(ed.tbl(), ed.col, v)
}

// rename takes the name typed in the rename field.
func (s *gate3Screen) rename() tea.Cmd {
	ed := s.edit.ed
	r := ed.rename
	v := strings.TrimSpace(r.value)
	if (r.table && v == ed.table) || (!r.table && v == ed.col) {
		ed.msg, ed.rename = "", nil // the name kept
		return nil
	}
	e := gates.Edit{Table: ed.table, Column: ed.col, Field: "name", Value: v}
	field := "name"
	if r.table {
		e.Column, field = "", "table name"
	}
	what, err := gates.ApplyEditIn(ed.draft, e, s.edit.lake)
	if err != nil {
		ed.msg = err.Error()
		return nil
	}
	if r.table {
		ed.table = v
	} else {
		ed.col = v
	}
	ed.msg, ed.rename = "", nil
	ed.done = append(ed.done, editDone{field, what})
	return nil
}

// refreshHeadlines recomputes the warnings for tables whose sampled rows
// would mostly be held back under the edited model.
func (s *gate3Screen) refreshHeadlines() {
	s.edit.headlines = nil
	if s.work == nil {
		return
	}
	for _, n := range s.work.TableNames() {
		t := s.work.Tables[n]
		if t.IsMart() {
			continue
		}
		held, sampled, err := gates.PreviewTable(t, s.edit.evidence[n])
		if err != nil {
			continue
		}
		if h := gates.HoldBackHeadline(n, held, sampled); h != "" {
			s.edit.headlines = append(s.edit.headlines, h)
		}
	}
}

// headlineLines are the headlines as screen lines.
func (s *gate3Screen) headlineLines() []string {
	var out []string
	for _, h := range s.edit.headlines {
		out = append(out, ui.Fit(s.theme.Warn.Render("⚠")+" "+ui.Sanitize(h), s.w))
	}
	return out
}

// keepEvidence remembers the sample of a proposal made now.
func (s *gate3Screen) keepEvidence(pr *gates.Proposal) {
	if pr != nil {
		s.edit.evidence = pr.Evidence
	}
}

// openEdit opens the editor on the focused column.
func (s *gate3Screen) openEdit() {
	_, c, tn := s.focused()
	if c == nil {
		return
	}
	draft, err := clonePlan(s.work)
	if err != nil {
		s.msg, s.msgOK = "cannot edit: "+err.Error(), false
		return
	}
	ed := &gate3Editor{draft: draft, table: tn, col: c.Name, opened: tn}
	ed.candidates = gates.FormatCandidates(c, gates.SampleColumn(s.edit.evidence[tn], c))
	s.edit.ed = ed
	s.mode = g3Edit
}

func (ed *gate3Editor) tbl() *plan.Table { return ed.draft.Tables[ed.table] }

func (ed *gate3Editor) column() *plan.Column {
	c, _ := ed.tbl().Column(ed.col)
	return c
}

// rows are the editor's fields for the column as it now is.
func (ed *gate3Editor) rows() []editRow {
	c := ed.column()
	typ, _ := c.ParsedType()
	var out []editRow
	if typ.IsTemporal() || c.Type == "" || typ.Kind == plan.String {
		for _, f := range ed.candidates {
			out = append(out, editRow{kind: erFormat, format: f})
		}
	}
	out = append(out, editRow{kind: erType})
	if typ.Kind == plan.Decimal {
		out = append(out, editRow{kind: erPrecision}, editRow{kind: erScale})
	}
	if typ.IsNumeric() {
		out = append(out, editRow{kind: erCurrency})
	}
	return append(out, editRow{kind: erRequired}, editRow{kind: erKey}, editRow{kind: erReferences}, editRow{kind: erPartition})
}

func (ed *gate3Editor) apply(field, value string, table bool) {
	e := gates.Edit{Table: ed.table, Column: ed.col, Field: field, Value: value}
	if table {
		e.Column = ""
	}
	what, err := gates.ApplyEdit(ed.draft, e)
	if err != nil {
		ed.msg = err.Error()
		return
	}
	ed.msg = ""
	ed.done = slices.DeleteFunc(ed.done, func(d editDone) bool { return d.field == field })
	ed.done = append(ed.done, editDone{field, what})
}

// cycle steps through options from the current value.
func cycle(opts []string, cur string, d int) string {
	i := slices.Index(opts, cur)
	if i < 0 {
		i = 0
		if d < 0 {
			i = 1
		}
	}
	return opts[((i+d)%len(opts)+len(opts))%len(opts)]
}

func (ed *gate3Editor) currencies(ev *gates.TableEvidence) []string {
	opts := []string{"none"}
	c := ed.column()
	if c.Currency != "" {
		opts = append(opts, c.Currency)
	}
	if ce := gates.SampleColumn(ev, c); ce != nil {
		if code, mixed := ce.Profile.Currencies.Code(); code != "" && !mixed {
			opts = append(opts, code)
		}
	}
	opts = append(opts, commonCurrencies...)
	return slices.Compact(opts)
}

// references are what a column may refer to: none, and the key columns
// (else the same-named column) of the other base tables.
func (ed *gate3Editor) references() []string {
	opts := []string{"none"}
	for _, n := range ed.draft.TableNames() {
		t := ed.draft.Tables[n]
		if n == ed.table || t.IsMart() {
			continue
		}
		for _, k := range t.Load.Keys {
			opts = append(opts, n+"."+k)
		}
		if _, ok := t.Column(ed.col); ok && !slices.Contains(t.Load.Keys, ed.col) {
			opts = append(opts, n+"."+ed.col)
		}
	}
	return opts
}

func (ed *gate3Editor) reference() string {
	for _, j := range ed.tbl().JoinKeys {
		if j.Column == ed.col {
			return j.References
		}
	}
	return "none"
}

// change acts on the focused field: d is -1 or +1 (←/→), 0 for space.
func (ed *gate3Editor) change(d int, ev *gates.TableEvidence) {
	rows := ed.rows()
	if ed.cur >= len(rows) {
		return
	}
	c, t := ed.column(), ed.tbl()
	typ, _ := c.ParsedType()
	switch r := rows[ed.cur]; r.kind {
	case erFormat:
		fs := slices.Clone(c.Formats)
		if i := slices.Index(fs, r.format); i >= 0 {
			fs = slices.Delete(fs, i, i+1)
		} else {
			fs = append(fs, r.format)
		}
		ed.apply("formats", strings.Join(fs, ","), false)
	case erType:
		if d == 0 {
			d = 1
		}
		choices := typeChoices
		if c.Type != "" && !slices.Contains(choices, c.Type) {
			choices = append([]string{c.Type}, choices...)
		}
		ed.apply("type", cycle(choices, c.Type, d), false)
	case erPrecision, erScale:
		p, sc := typ.Precision, typ.Scale
		if r.kind == erPrecision {
			p = max(1, min(38, p+d))
			sc = min(sc, p)
		} else {
			sc = max(0, min(p, sc+d))
		}
		ed.apply("type", fmt.Sprintf("decimal(%d,%d)", p, sc), false)
	case erCurrency:
		if d == 0 {
			d = 1
		}
		cur := c.Currency
		if cur == "" {
			cur = "none"
		}
		ed.apply("currency", cycle(ed.currencies(ev), cur, d), false)
	case erRequired:
		ed.apply("required", fmt.Sprint(!c.Required), false)
	case erKey:
		keys := slices.Clone(t.Load.Keys)
		if i := slices.Index(keys, ed.col); i >= 0 {
			keys = slices.Delete(keys, i, i+1)
		} else {
			keys = append(keys, ed.col)
		}
		ed.apply("key", orNone(strings.Join(keys, ",")), true)
	case erReferences:
		if d == 0 {
			d = 1
		}
		ed.apply("references", cycle(ed.references(), ed.reference(), d), false)
	case erPartition:
		if d == 0 {
			d = 1
		}
		opts := partitionChoices(c)
		ed.apply("partition", orNone(cycle(opts, strings.Join(t.Partition, ", "), d)), true)
	}
	// Keep the cursor on the field changed: the fields shown follow the
	// type (formats for dates, precision and scale for decimals).
	focused := rows[ed.cur]
	rows = ed.rows()
	if i := slices.Index(rows, focused); i >= 0 {
		ed.cur = i
	}
	ed.cur = min(ed.cur, len(rows)-1)
}

// renderEdit is the edit screen.
func (s *gate3Screen) renderEdit() string {
	t := s.theme
	ed := s.edit.ed
	c, tb := ed.column(), ed.tbl()
	ev := s.edit.evidence[ed.opened]
	var out []string
	add := func(l ...string) {
		for _, x := range l {
			out = append(out, ui.Fit(x, s.w))
		}
	}
	add(t.Title.Render("Gate 3 · edit "+ui.Sanitize(ed.table+"."+ed.col))+t.Muted.Render(ui.Sanitize(" · source column "+c.Header())), "")
	if r := ed.rename; r != nil {
		what := "column " + ed.table + "." + ed.col
		if r.table {
			what = "table " + ed.table
		}
		add(t.Text.Bold(true).Render("Rename " + ui.Sanitize(what) + " (the source keeps its name):"))
		if r.form != nil {
			for _, l := range strings.Split(strings.TrimRight(r.form.View(), "\n "), "\n") {
				add("  " + l)
			}
		}
		switch p := ed.renameProblem(s.edit.lake); {
		case p != "": // wrapped: the rule is the answer, never cut
			g := ui.StatusFailed.Glyph()
			lines := ui.Wrap(g+" "+ui.Sanitize(p), s.w, "  ")
			lines[0] = t.Failed.Render(g) + strings.TrimPrefix(lines[0], g)
			add(lines...)
		case r.table:
			add(t.OK.Render(ui.StatusOK.Glyph()) + ui.Sanitize(" the rows still come from "+gates.SourceOf(tb)+"; references to the table move with it"))
		case s.edit.lake[ed.table] != nil && slices.Contains(s.edit.lake[ed.table], ed.col) && c.RenamedFrom == "":
			add(t.OK.Render(ui.StatusOK.Glyph()) + ui.Sanitize(" the load reads source column "+c.Header()+"; the lake's column "+ed.col+" is renamed by schema evolution (values kept)"))
		default:
			add(t.OK.Render(ui.StatusOK.Glyph()) + ui.Sanitize(" the load still reads source column "+c.Header()+"; key, partition, checks and references move with the name"))
		}
		add("")
	}
	typ, _ := c.ParsedType()
	cursor := 0
	line := func(label, value string) {
		marker := t.Blank
		if cursor == ed.cur {
			marker = t.FocusMarker
			label = t.Focus.Render(label)
		}
		cursor++
		add(fmt.Sprintf("%s %-s %s", marker, label, ui.Sanitize(value)))
	}
	rows := ed.rows()
	if len(rows) > 0 && rows[0].kind == erFormat {
		add(t.Muted.Render("  formats (space picks; tried in the order picked):"))
		for _, r := range rows {
			if r.kind != erFormat {
				break
			}
			box := "[ ]"
			if i := slices.Index(c.Formats, r.format); i >= 0 {
				box = fmt.Sprintf("[%d]", i+1)
			}
			line(fmt.Sprintf("  %s %-26s", box, ui.Sanitize(r.format)), "")
		}
	}
	for _, r := range rows {
		switch r.kind {
		case erType:
			line(fmt.Sprintf("%-12s", "type"), "‹ "+orNone(c.Type)+" ›")
		case erPrecision:
			line(fmt.Sprintf("%-12s", "precision"), fmt.Sprintf("‹ %d › digits in all", typ.Precision))
		case erScale:
			line(fmt.Sprintf("%-12s", "scale"), fmt.Sprintf("‹ %d › after the point", typ.Scale))
		case erCurrency:
			line(fmt.Sprintf("%-12s", "currency"), "‹ "+orNone(c.Currency)+" ›")
		case erRequired:
			line(fmt.Sprintf("%-12s", "required"), map[bool]string{true: "[x]", false: "[ ]"}[c.Required || tb.IsKey(c.Name)])
		case erKey:
			line(fmt.Sprintf("%-12s", "key"), fmt.Sprintf("%s (%s)", map[bool]string{true: "[x]", false: "[ ]"}[tb.IsKey(c.Name)], orNone(strings.Join(tb.Load.Keys, ", "))))
		case erReferences:
			line(fmt.Sprintf("%-12s", "references"), "‹ "+ed.reference()+" ›")
		case erPartition:
			line(fmt.Sprintf("%-12s", "partition"), "‹ "+orNone(strings.Join(tb.Partition, ", "))+" ›")
		}
	}
	add("", t.Title.Render("Preview")+t.Muted.Render(" · the sampled values cast as the load casts them"))
	ce := gates.SampleColumn(ev, c)
	switch {
	case ce == nil:
		add(t.Muted.Render("  no sample: the model was read from platform.yaml (propose reads one; the load decides)"))
	default:
		pv, err := gates.PreviewColumn(tb, c, ce.Values)
		switch {
		case err != nil:
			add(t.Failed.Render(ui.StatusFailed.Glyph()) + " " + ui.Sanitize(err.Error()))
		case pv.Parsed == pv.Values:
			add(t.OK.Render(ui.StatusOK.Glyph()) + fmt.Sprintf(" %d of %d sampled values parse as %s", pv.Parsed, pv.Values, ui.Sanitize(describeColumn(c))))
		default:
			var ex []string
			for _, v := range pv.Failed {
				ex = append(ex, fmt.Sprintf("%q", v))
			}
			add(t.Warn.Render(ui.StatusWarn.Glyph()) + fmt.Sprintf(" %d of %d sampled values parse as %s", pv.Parsed, pv.Values, ui.Sanitize(describeColumn(c))))
			add(ui.Sanitize(fmt.Sprintf("  %d would be held back, e.g. %s: %s", pv.Values-pv.Parsed, strings.Join(ex, ", "), pv.Reason)))
		}
		if held, sampled, err := gates.PreviewTable(tb, ev); err == nil && sampled > 0 {
			switch {
			case gates.HoldsBackMost(int64(held), int64(sampled)):
				add(t.Warn.Render("⚠") + " " + ui.Sanitize(gates.HoldBackHeadline(ed.table, held, sampled)))
			case held > 0:
				add(t.Warn.Render(ui.StatusWarn.Glyph()) + ui.Sanitize(fmt.Sprintf(" %s: %d of %d sampled rows would be held back", ed.table, held, sampled)))
			default:
				add(t.OK.Render(ui.StatusOK.Glyph()) + ui.Sanitize(fmt.Sprintf(" %s: none of %d sampled rows would be held back", ed.table, sampled)))
			}
		}
	}
	for len(out) < s.h-1 {
		out = append(out, "")
	}
	if len(out) > s.h-1 {
		out = out[:max(1, s.h-1)]
	}
	switch {
	case ed.rename != nil && (ed.msg == "" || ed.msg == ed.renameProblem(s.edit.lake)): // the problem is shown above
		out = append(out, ui.Fit(t.Muted.Render("type the new name: enter renames, esc keeps the name"), s.w))
	case ed.msg != "":
		out = append(out, ui.Fit(t.Failed.Render(ui.StatusFailed.Glyph())+" "+ui.Sanitize(ed.msg), s.w))
	case len(ed.done) > 0:
		out = append(out, ui.Fit(t.Muted.Render(ui.Sanitize(fmt.Sprintf("%d edit(s): %s — enter keeps them", len(ed.done), ed.done[len(ed.done)-1].what))), s.w))
	default:
		out = append(out, ui.Fit(t.Muted.Render("space picks a format or toggles; ←/→ changes a value; n renames the column, N the table; enter keeps the edits, esc drops them"), s.w))
	}
	return strings.Join(out, "\n")
}

// describeColumn is a column's type with its formats and currency.
func describeColumn(c *plan.Column) string {
	s := orNone(c.Type)
	if len(c.Formats) > 0 {
		s += " (" + strings.Join(c.Formats, " | ") + ")"
	}
	if c.Currency != "" {
		s += " in " + c.Currency
	}
	return s
}

// columnDiff lists what the edit screen changes of a column besides its
// type (ModelDiff lists the type): formats, currency, required, the
// reference.
func columnDiff(table string, a, b *plan.Column) []string {
	var out []string
	ref := table + "." + b.Name
	if fa, fb := strings.Join(a.Formats, " | "), strings.Join(b.Formats, " | "); fa != fb {
		out = append(out, fmt.Sprintf("~ %s formats: %s → %s", ref, orNone(fa), orNone(fb)))
	}
	if a.Currency != b.Currency {
		out = append(out, fmt.Sprintf("~ %s currency: %s → %s", ref, orNone(a.Currency), orNone(b.Currency)))
	}
	if a.Required != b.Required {
		out = append(out, fmt.Sprintf("~ %s required: %v → %v", ref, a.Required, b.Required))
	}
	return out
}

// joinDiff lists the references added or removed between two versions of
// a table.
func joinDiff(table string, a, b *plan.Table) []string {
	var out []string
	for _, j := range b.JoinKeys {
		if !slices.Contains(a.JoinKeys, j) {
			out = append(out, fmt.Sprintf("+ %s.%s references %s", table, j.Column, j.References))
		}
	}
	for _, j := range a.JoinKeys {
		if !slices.Contains(b.JoinKeys, j) {
			out = append(out, fmt.Sprintf("- %s.%s references %s", table, j.Column, j.References))
		}
	}
	return out
}
