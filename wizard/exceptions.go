package wizard

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/ui"
)

// ExceptionsOptions start the exception browser.
type ExceptionsOptions struct {
	// Store is the ledger; the browser reads and acts only through it.
	Store ledger.Store
	Theme ui.Theme
	// Filter is the initial filter.
	Filter ledger.Filter
	// By is recorded in the history of every action.
	By string
	// Replay replays the fixed rows of table ("" for every table), or
	// only the fixed exceptions ids when given (the marked rows), and
	// returns what to show (the report path); nil disables R.
	Replay func(ctx context.Context, table string, ids []int64) (string, error)
	// PlanOwners are the owners the plan names (its routing), offered by
	// the owner picker with the ledger's owners; it is called in a
	// command, never in Update (nil: the ledger's owners only).
	PlanOwners func() ([]string, error)
	// Now is the clock of "overdue" (default time.Now).
	Now func() time.Time
	// Location shows deadlines (default time.Local).
	Location *time.Location
	// Context is the parent of every ledger call (default Background).
	Context context.Context
	// Back, when set, is what esc does in the unfiltered list (the
	// wizard's way back to the reconciliation), shown in the help line;
	// OnBack does it.
	Back   string
	OnBack func() tea.Cmd
}

// Browser is the exception browser: a virtual list over the ledger. Only
// the rows on screen are fetched, a page (about twice the list's height)
// at a time with the ledger's keyset cursor; at most maxPages pages are
// kept. Filtering, ordering (by id, either way: the ledger orders by id
// only) and counting are done by the ledger. Update does no I/O.
type Browser struct {
	// showHelp: ? lists every key of the screen, one a line (the key line
	// at the bottom is cut on narrow terminals).
	showHelp bool
	o        ExceptionsOptions
	t        ui.Theme
	w, h     int

	filter ledger.Filter
	desc   bool
	gen    int // bumped by every reset/refresh; older results are dropped

	total    int64
	counted  bool
	pageSize int
	cursors  []ledger.Cursor // cursors[k] starts page k
	lastPage int             // the index of the last page, -1 while unknown
	pages    map[int][]ledger.Exception
	inflight map[int]bool

	cur, top int

	detail     *browserDetail
	detailID   int64
	detailFoc  int
	showDetail bool

	mode    browserMode
	input   []rune
	prompt  string
	pending func() tea.Cmd // the action a confirmation runs
	confirm string

	msg   string
	msgOK bool
	err   string

	// marked are the exceptions space marked: assign, waive and replay
	// act on all of them (on the focused one, or the table, when none is
	// marked).
	marked map[int64]bool

	// The owner picker (o, and under the assign field): the known owners
	// (nil while they are read) and the highlighted match (-1: the name
	// typed, assign only).
	owners    []ownerCount
	ownersErr string
	pick      int
}

// ownerCount is a known owner and how many open exceptions it has.
type ownerCount struct {
	name string
	open int64
}

type browserMode int

const (
	modeList browserMode = iota
	modeFilter
	modeAssign
	modeEdit
	modeWaive
	modeConfirm
	// modeOwner: the owner picker of the filter (o).
	modeOwner
)

// maxPages is how many pages the browser keeps in memory.
const maxPages = 3

type browserDetail struct {
	e    ledger.Exception
	hist []ledger.Event
}

type (
	bPageMsg struct {
		gen, page int
		rows      []ledger.Exception
		next      ledger.Cursor
		err       error
	}
	bCountMsg struct {
		gen   int
		total int64
		err   error
	}
	bDetailMsg struct {
		id     int64
		detail browserDetail
		err    error
	}
	bActionMsg struct {
		done   string
		err    error
		unmark bool // the marks were acted on
	}
	// bFilterMsg is a filter whose owner was looked up in the ledger.
	bFilterMsg struct {
		f   ledger.Filter
		err error
	}
	// bOwnersMsg are the known owners for the picker.
	bOwnersMsg struct {
		owners []ownerCount
		err    error
	}
)

// Exceptions is the exception browser as a program of its own (lima-tui
// exceptions): the screen alone, its keys dispatched to its bindings as
// the wizard dispatches them.
type Exceptions struct{ *Browser }

// NewExceptions returns the browser program; Init counts and fetches the
// first page.
func NewExceptions(o ExceptionsOptions) *Exceptions { return &Exceptions{newBrowser(o)} }

// Update dispatches a key to the browser's bindings; other messages go to
// the browser.
func (x *Exceptions) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return x, x.Browser.Update(msg)
	}
	cmd, refused, claimed := dispatch(x.Keys(), x.Typing(), k)
	switch {
	case refused != nil:
		x.Refuse(*refused)
	case !claimed && x.Typing():
		cmd = x.Browser.Update(k)
	}
	return x, cmd
}

// View renders the browser in the alternate screen.
func (x *Exceptions) View() tea.View {
	v := tea.NewView(x.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeNone
	v.WindowTitle = "Lima exceptions"
	return v
}

// newBrowser returns the browser screen.
func newBrowser(o ExceptionsOptions) *Browser {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Theme.Name == "" {
		o.Theme = ui.MustTheme(ui.ThemeDark)
	}
	if o.By == "" {
		o.By = "lima-tui"
	}
	b := &Browser{o: o, t: o.Theme, w: 100, h: 30, filter: o.Filter}
	b.resetList()
	return b
}

// Init counts the filtered exceptions and fetches the first page.
func (b *Browser) Init() tea.Cmd { return b.reload() }

// listHeight is how many rows the list shows.
func (b *Browser) listHeight() int {
	_, bh := b.bodySize()
	return max(1, bh-3) // the count line, the header and the message line
}

func (b *Browser) bodySize() (int, int) {
	if ui.Classify(b.w, b.h) == ui.SizeFull {
		return b.w - 2, b.h - 3 - (helpLinesFull - 1) // the key line may take two
	}
	return b.w, b.h - 2
}

func (b *Browser) resetList() {
	b.marked = nil // marks are of the rows shown: a new filter or order drops them
	b.gen++
	b.pageSize = min(ledger.MaxPageSize, max(10, 2*b.listHeight()))
	b.cursors = []ledger.Cursor{""}
	b.lastPage = -1
	b.pages = map[int][]ledger.Exception{}
	b.inflight = map[int]bool{}
	b.cur, b.top = 0, 0
	b.counted = false
	b.filter.Now = b.o.Now()
}

// reload counts and fetches what the screen shows.
func (b *Browser) reload() tea.Cmd {
	return tea.Batch(b.countCmd(), b.ensure())
}

// refresh keeps the position but drops every page (after an action).
func (b *Browser) refresh() tea.Cmd {
	b.gen++
	b.pages = map[int][]ledger.Exception{}
	b.inflight = map[int]bool{}
	b.filter.Now = b.o.Now()
	cmds := []tea.Cmd{b.countCmd(), b.ensure()}
	if b.showDetail {
		cmds = append(cmds, b.detailCmd(b.detailID))
	}
	return tea.Batch(cmds...)
}

func (b *Browser) countCmd() tea.Cmd {
	st, ctx, f, gen := b.o.Store, b.o.Context, b.filter, b.gen
	return func() tea.Msg {
		n, err := st.Count(ctx, f)
		return bCountMsg{gen: gen, total: n, err: err}
	}
}

// ensure fetches the pages the visible rows need (only those whose start
// cursor is known) and evicts pages far from the cursor.
func (b *Browser) ensure() tea.Cmd {
	first := b.top / b.pageSize
	last := (b.top + b.listHeight() - 1) / b.pageSize
	if b.counted {
		last = min(last, int(max(0, b.total-1))/b.pageSize)
	}
	var cmds []tea.Cmd
	for k := first; k <= last; k++ {
		if _, ok := b.pages[k]; ok || b.inflight[k] || k >= len(b.cursors) || (b.lastPage >= 0 && k > b.lastPage) {
			continue
		}
		b.inflight[k] = true
		st, ctx, f, gen, after, limit, desc := b.o.Store, b.o.Context, b.filter, b.gen, b.cursors[k], b.pageSize, b.desc
		cmds = append(cmds, func() tea.Msg {
			rows, next, err := st.List(ctx, f, ledger.Page{After: after, Limit: limit, Desc: desc})
			return bPageMsg{gen: gen, page: k, rows: rows, next: next, err: err}
		})
	}
	return tea.Batch(cmds...)
}

func (b *Browser) evict() {
	cp := b.cur / b.pageSize
	for len(b.pages) > maxPages {
		far, dist := -1, -1
		for k := range b.pages {
			d := k - cp
			if d < 0 {
				d = -d
			}
			if d > dist {
				far, dist = k, d
			}
		}
		delete(b.pages, far)
	}
}

// reachable is the last row index the cursor may move to: rows of known
// pages, within the count.
func (b *Browser) reachable() int {
	n := len(b.cursors) * b.pageSize
	if b.lastPage >= 0 {
		n = b.lastPage*b.pageSize + len(b.pages[b.lastPage])
		if _, ok := b.pages[b.lastPage]; !ok {
			n = (b.lastPage + 1) * b.pageSize
		}
	}
	if b.counted {
		n = min(n, int(b.total))
	}
	return n - 1
}

func (b *Browser) row(i int) (ledger.Exception, bool) {
	p, ok := b.pages[i/b.pageSize]
	if !ok || i%b.pageSize >= len(p) {
		return ledger.Exception{}, false
	}
	return p[i%b.pageSize], true
}

func (b *Browser) move(d int) tea.Cmd {
	b.cur = max(0, min(b.cur+d, b.reachable()))
	lh := b.listHeight()
	if b.cur < b.top {
		b.top = b.cur
	}
	if b.cur >= b.top+lh {
		b.top = b.cur - lh + 1
	}
	cmd := b.ensure()
	b.evict()
	return cmd
}

// SetSize sets the terminal's size (the browser draws all of it).
func (b *Browser) SetSize(w, h int) { b.w, b.h = w, h }

// fullScreen: the browser draws its own title and key line.
func (b *Browser) fullScreen() {}

// Update handles sizes, the ledger's answers and, in a text field, the
// keys typed.
func (b *Browser) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		b.w, b.h = msg.Width, msg.Height
		return b.move(0)
	case bFilterMsg:
		if msg.err != nil {
			b.err = msg.err.Error()
			return nil
		}
		b.filter = msg.f
		b.resetList()
		return b.reload()
	case bOwnersMsg:
		if msg.err != nil {
			b.ownersErr = msg.err.Error()
		}
		b.owners = msg.owners
		if b.owners == nil {
			b.owners = []ownerCount{}
		}
		b.pickFirst()
		return nil
	case bCountMsg:
		if msg.gen != b.gen {
			return nil
		}
		if msg.err != nil {
			b.err = msg.err.Error()
			return nil
		}
		b.total, b.counted = msg.total, true
		return b.move(0)
	case bPageMsg:
		if msg.gen != b.gen {
			return nil
		}
		delete(b.inflight, msg.page)
		if msg.err != nil {
			b.err = msg.err.Error()
			return nil
		}
		b.pages[msg.page] = msg.rows
		if msg.next == "" || len(msg.rows) < b.pageSize {
			b.lastPage = msg.page
		} else if msg.page+1 == len(b.cursors) {
			b.cursors = append(b.cursors, msg.next)
		}
		b.evict()
		return b.move(0)
	case bDetailMsg:
		if msg.err != nil {
			b.err = msg.err.Error()
			return nil
		}
		if msg.id == b.detailID {
			d := msg.detail
			b.detail = &d
			b.detailFoc = min(b.detailFoc, max(0, len(b.detailItems())-1))
		}
		return nil
	case bActionMsg:
		if msg.unmark {
			b.marked = nil
		}
		if msg.err != nil {
			b.err, b.msg = msg.err.Error(), ""
		} else {
			b.err, b.msg, b.msgOK = "", msg.done, true
		}
		return b.refresh()
	case tea.KeyPressMsg:
		if b.typing() {
			return b.typeKey(msg)
		}
	}
	return nil
}

func (b *Browser) typing() bool { return b.mode != modeList && b.mode != modeConfirm }

// Typing: a text field (the filter, an owner, a fix, a reason) has the
// focus.
func (b *Browser) Typing() bool { return b.typing() }

// Keys are the browser's bindings: of the question asked, of the field
// typed into, of the help, or of the list or the detail.
func (b *Browser) Keys() []ui.Binding {
	nb := ui.NewBinding
	quit := interruptKey()
	switch {
	case b.mode == modeConfirm:
		return []ui.Binding{nb("y", "confirm", "y", "Y").Act(func() tea.Cmd {
			run := b.pending
			b.mode, b.pending, b.confirm = modeList, nil, ""
			return run()
		}), nb("n/esc", "cancel", "n", "N", "esc").Act(func() tea.Cmd {
			b.mode, b.pending, b.confirm, b.msg, b.msgOK = modeList, nil, "", "cancelled: nothing was changed", false
			return nil
		}), quit}
	case b.mode == modeOwner || b.mode == modeAssign:
		enter := "filter by owner"
		if b.mode == modeAssign {
			enter = "assign"
		}
		return []ui.Binding{nb("↑/↓", "choose", "up", "down").Do(func(msg tea.KeyPressMsg) tea.Cmd {
			if msg.String() == "up" {
				b.movePick(-1)
			} else {
				b.movePick(1)
			}
			return nil
		}), nb("enter", enter, "enter").Act(b.choose),
			nb("esc", "cancel", "esc").Act(func() tea.Cmd { b.mode, b.input = modeList, nil; return nil }), quit}
	case b.typing():
		return []ui.Binding{nb("enter", "apply", "enter").Act(func() tea.Cmd { return b.submit(strings.TrimSpace(string(b.input))) }),
			nb("esc", "cancel", "esc").Act(func() tea.Cmd { b.mode, b.input = modeList, nil; return nil }), quit}
	}
	keys := b.screenKeys()
	if !b.showHelp {
		return append(keys, quit)
	}
	// On the help any key closes it; esc, ? and q only that, the others
	// then act as they do on the list.
	out := []ui.Binding{nb("esc/?", "close the help", "esc", "?", "q").Act(func() tea.Cmd { b.showHelp = false; return nil })}
	for _, k := range keys {
		run := k.Run
		k.Run = func(msg tea.KeyPressMsg) tea.Cmd { b.showHelp = false; return run(msg) }
		out = append(out, k.Quiet())
	}
	return append(out, quit)
}

// interruptKey quits from wherever the browser is.
func interruptKey() ui.Binding {
	return ui.NewBinding("ctrl+c", "quit", "ctrl+c").Quiet().Act(func() tea.Cmd { return tea.Quit })
}

// Refuse says why a disabled key does nothing, on the status line.
func (b *Browser) Refuse(k ui.Binding) {
	b.msg, b.msgOK = k.Help().Key+": "+k.Reason, false
	if k.Help().Key == "R" {
		b.msg = "replay is not available here (" + k.Reason + "): use lima-tui exceptions replay"
	}
}

// act is a handler of the list or the detail: a key there clears the last
// error first.
func (b *Browser) act(run func() tea.Cmd) func(tea.KeyPressMsg) tea.Cmd {
	return func(tea.KeyPressMsg) tea.Cmd { b.err = ""; return run() }
}

// prompt opens the field of an action on the marked exceptions, or the
// focused one; format names them ("#12", "3 marked").
func (b *Browser) promptFor(mode browserMode, format string) func() tea.Cmd {
	return func() tea.Cmd {
		if _, ok := b.targets(); !ok {
			return nil
		}
		b.input = nil
		b.mode, b.prompt = mode, fmt.Sprintf(format, b.targetsName())
		if mode == modeAssign {
			return b.openPicker()
		}
		return nil
	}
}

// targets are the exceptions an action acts on: the marked ones, in id
// order, or the focused one.
func (b *Browser) targets() ([]int64, bool) {
	if len(b.marked) > 0 && !b.showDetail {
		return slices.Sorted(maps.Keys(b.marked)), true
	}
	id, ok := b.focusedID()
	return []int64{id}, ok
}

// targetsName names the targets: "#12" or "3 marked exceptions".
func (b *Browser) targetsName() string {
	ids, _ := b.targets()
	if len(ids) == 1 {
		return fmt.Sprintf("#%d", ids[0])
	}
	return fmt.Sprintf("%d marked exceptions", len(ids))
}

// toggleMark marks the focused exception (or unmarks it) and moves on.
func (b *Browser) toggleMark() tea.Cmd {
	e, ok := b.row(b.cur)
	if !ok {
		return nil
	}
	if b.marked == nil {
		b.marked = map[int64]bool{}
	}
	if b.marked[e.ID] {
		delete(b.marked, e.ID)
	} else {
		b.marked[e.ID] = true
	}
	return b.move(1)
}

// replay asks, then replays the marked exceptions (when rows are marked)
// or the fixed rows of the filter's table (of every table when none).
// Marked rows that are shown not fixed are refused before asking; the
// engine refuses the others.
func (b *Browser) replay() tea.Cmd {
	table := b.filter.Table
	what := "the fixed rows of every table"
	if table != "" {
		what = "the fixed rows of " + ui.Sanitize(table)
	}
	var ids []int64
	if len(b.marked) > 0 && !b.showDetail {
		ids = slices.Sorted(maps.Keys(b.marked))
		var notFixed []string
		for _, id := range ids {
			if st, ok := b.knownStatus(id); ok && st != ledger.StatusFixed {
				notFixed = append(notFixed, fmt.Sprintf("#%d is %s", id, st))
			}
		}
		if len(notFixed) > 0 {
			if len(notFixed) > 3 {
				notFixed = append(notFixed[:3], "…")
			}
			b.msg, b.msgOK = "R: only fixed rows replay; "+strings.Join(notFixed, ", ")+": unmark them (space) or fix them first", false
			return nil
		}
		what = fmt.Sprintf("the %d marked exceptions", len(ids))
		if len(ids) == 1 {
			what = fmt.Sprintf("the marked exception #%d", ids[0])
		}
	}
	b.ask("replay "+what+" into the lake", func() tea.Cmd {
		b.msg, b.msgOK = "replaying …", true
		ctx, replay := b.o.Context, b.o.Replay
		return func() tea.Msg {
			out, err := replay(ctx, table, ids)
			if err != nil {
				return bActionMsg{err: fmt.Errorf("replay: %w", err)}
			}
			if ids == nil {
				return bActionMsg{done: "replayed; report " + out}
			}
			return bActionMsg{done: "replayed " + what + "; report " + out, unmark: true}
		}
	})
	return nil
}

// knownStatus is the status of exception id as the rows in memory show it.
func (b *Browser) knownStatus(id int64) (string, bool) {
	for _, p := range b.pages {
		for _, e := range p {
			if e.ID == id {
				return e.Status, true
			}
		}
	}
	return "", false
}

// openPicker starts the owner picker: it reads the known owners (the
// plan's and the ledger's) with their open exceptions in a command.
func (b *Browser) openPicker() tea.Cmd {
	b.owners, b.ownersErr, b.pick = nil, "", 0
	if b.mode == modeAssign {
		b.pick = -1
	}
	st, ctx, planOwners := b.o.Store, b.o.Context, b.o.PlanOwners
	return func() tea.Msg {
		owners, err := knownOwners(ctx, st, planOwners)
		return bOwnersMsg{owners: owners, err: err}
	}
}

// knownOwners are the owners the plan names and those the ledger's
// exceptions are assigned to, by name (any case), each with its open
// exceptions.
func knownOwners(ctx context.Context, st ledger.Store, planOwners func() ([]string, error)) ([]ownerCount, error) {
	all, err := st.CountBy(ctx, ledger.Filter{}, ledger.ByOwner)
	if err != nil {
		return nil, err
	}
	open, err := st.CountBy(ctx, ledger.Filter{Status: ledger.StatusOpen}, ledger.ByOwner)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for o := range all {
		names[o] = true
	}
	var perr error
	if planOwners != nil {
		var ps []string
		ps, perr = planOwners()
		for _, o := range ps {
			names[o] = true
		}
	}
	delete(names, "") // unassigned is no owner to choose
	out := make([]ownerCount, 0, len(names))
	for o := range names {
		out = append(out, ownerCount{name: o, open: open[o]})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := strings.ToLower(out[i].name), strings.ToLower(out[j].name)
		if a != b {
			return a < b
		}
		return out[i].name < out[j].name
	})
	if perr != nil {
		return out, fmt.Errorf("the plan's owners could not be read (%v); the ledger's are listed", perr)
	}
	return out, nil
}

// PlanOwnerNames are the names of the plan's owners (its routing).
func PlanOwnerNames(p *plan.Plan) []string {
	var out []string
	for _, o := range p.Owners {
		if o.Name != "" && !slices.Contains(out, o.Name) {
			out = append(out, o.Name)
		}
	}
	return out
}

// matches are the known owners whose name contains what is typed (any
// case).
func (b *Browser) matches() []ownerCount {
	text := strings.ToLower(strings.TrimSpace(string(b.input)))
	var out []ownerCount
	for _, o := range b.owners {
		if strings.Contains(strings.ToLower(o.name), text) {
			out = append(out, o)
		}
	}
	return out
}

// pickFirst puts the highlight on the first match (the filter's picker)
// or on the name typed (the assign field).
func (b *Browser) pickFirst() {
	b.pick = 0
	if b.mode == modeAssign {
		b.pick = -1
	}
}

// movePick moves the highlight among the matches (and, assigning, up to
// the name typed).
func (b *Browser) movePick(d int) {
	lo := 0
	if b.mode == modeAssign {
		lo = -1
	}
	b.pick = max(lo, min(b.pick+d, len(b.matches())-1))
}

// choose is enter in the picker: the filter's picker filters by the
// highlighted owner exactly; assigning, it assigns the highlighted owner,
// or the name typed.
func (b *Browser) choose() tea.Cmd {
	ms := b.matches()
	if b.mode == modeOwner {
		if b.owners == nil || b.pick < 0 || b.pick >= len(ms) {
			return nil // the picker says why (reading, nothing matches)
		}
		b.mode, b.input = modeList, nil
		b.filter.Owner = ms[b.pick].name
		b.resetList()
		return b.reload()
	}
	if b.pick >= 0 && b.pick < len(ms) {
		b.input = []rune(ms[b.pick].name)
	} else if typed := strings.TrimSpace(string(b.input)); typed != "" {
		// A known owner typed in another case is that owner.
		for _, o := range b.owners {
			if strings.EqualFold(o.name, typed) {
				b.input = []rune(o.name)
			}
		}
	}
	return b.submit(strings.TrimSpace(string(b.input)))
}

func (b *Browser) copyRow() tea.Cmd {
	e, ok := b.row(b.cur)
	if !ok {
		return nil
	}
	b.msg, b.msgOK = fmt.Sprintf("copied the raw row of #%d to the clipboard (OSC 52)", e.ID), true
	return tea.SetClipboard(string(e.Raw))
}

func (b *Browser) copyValue() tea.Cmd {
	items := b.detailItems()
	if b.detailFoc >= len(items) {
		return nil
	}
	it := items[b.detailFoc]
	b.msg, b.msgOK = "copied "+it.label+" to the clipboard (OSC 52)", true
	return tea.SetClipboard(it.value)
}

func (b *Browser) openDetail() tea.Cmd {
	e, ok := b.row(b.cur)
	if !ok {
		return nil
	}
	b.showDetail, b.detailID, b.detail, b.detailFoc = true, e.ID, nil, 0
	return b.detailCmd(e.ID)
}

func (b *Browser) ask(what string, run func() tea.Cmd) {
	b.mode, b.confirm, b.pending = modeConfirm, what, run
}

func (b *Browser) focusedID() (int64, bool) {
	if b.showDetail {
		return b.detailID, b.detailID != 0
	}
	e, ok := b.row(b.cur)
	return e.ID, ok
}

func (b *Browser) typeKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "backspace":
		if len(b.input) > 0 {
			b.input = b.input[:len(b.input)-1]
		}
		b.pickFirst()
		return nil
	case "ctrl+u":
		b.input = nil
		b.pickFirst()
		return nil
	}
	if k.Text != "" {
		b.input = append(b.input, []rune(k.Text)...)
	}
	b.pickFirst()
	return nil
}

func (b *Browser) submit(text string) tea.Cmd {
	mode := b.mode
	b.mode = modeList
	b.input = nil
	ids, _ := b.targets()
	name := b.targetsName()
	st, ctx, by := b.o.Store, b.o.Context, b.o.By
	switch mode {
	case modeFilter:
		f, err := ParseFilter(text)
		if err != nil {
			b.err = err.Error()
			return nil
		}
		if f.Owner != "" && st != nil {
			return func() tea.Msg {
				o, err := resolveOwner(ctx, st, f.Owner)
				f.Owner = o
				return bFilterMsg{f: f, err: err}
			}
		}
		b.filter = f
		b.resetList()
		return b.reload()
	case modeAssign:
		if text == "" {
			b.err = "an owner is required: nothing was changed"
			return nil
		}
		if err := CheckName(text); err != nil {
			b.err = "owner: " + err.Error() + ": nothing was changed"
			return nil
		}
		return func() tea.Msg {
			if err := st.Assign(ctx, ids, text, by); err != nil {
				return bActionMsg{err: err}
			}
			return bActionMsg{done: fmt.Sprintf("%s assigned to %s", name, text), unmark: true}
		}
	case modeEdit:
		id := ids[0]
		col, val, ok := strings.Cut(text, "=")
		col = strings.TrimSpace(col)
		if !ok || col == "" {
			b.err = "give col=value, e.g. cost=12.50: nothing was changed"
			return nil
		}
		return func() tea.Msg {
			if err := st.Resolve(ctx, id, map[string]string{col: val}, by, "set in the exception browser"); err != nil {
				return bActionMsg{err: err}
			}
			return bActionMsg{done: fmt.Sprintf("#%d fixed (%s); R replays it", id, col)}
		}
	case modeWaive:
		if text == "" {
			b.err = "a reason is required: nothing was changed"
			return nil
		}
		they := "it"
		if len(ids) > 1 {
			they = "they"
		}
		b.ask(fmt.Sprintf("waive %s (%s will never be loaded)", name, they), func() tea.Cmd {
			return func() tea.Msg {
				for i, id := range ids {
					if err := st.Waive(ctx, id, text, by); err != nil {
						return bActionMsg{err: fmt.Errorf("%d of %s waived; #%d: %w", i, name, id, err), unmark: i > 0}
					}
				}
				return bActionMsg{done: name + " waived", unmark: true}
			}
		})
	}
	return nil
}

func (b *Browser) detailCmd(id int64) tea.Cmd {
	st, ctx := b.o.Store, b.o.Context
	return func() tea.Msg {
		e, err := st.Get(ctx, id)
		if err != nil {
			return bDetailMsg{id: id, err: err}
		}
		h, err := st.History(ctx, id)
		return bDetailMsg{id: id, detail: browserDetail{e: e, hist: h}, err: err}
	}
}

// ParseFilter reads "owner=Ji-woo Park (quality) table=inspections
// rule=date status=open overdue" (any order, any subset). A value runs to
// the next key= or overdue, so owners, tables and rules with spaces need
// no quotes; "…" or '…' quote a value that holds such a word.
func ParseFilter(s string) (ledger.Filter, error) {
	var f ledger.Filter
	toks, err := filterTokens(s)
	if err != nil {
		return f, err
	}
	for _, tok := range toks {
		k, v, ok := tok.key, tok.value, tok.hasValue
		switch {
		case !ok && (k == "overdue" || k == "!overdue"):
			f.Overdue = true
		case ok && k == "owner":
			f.Owner = v
		case ok && k == "table":
			f.Table = v
		case ok && k == "rule":
			f.Rule = v
		case ok && k == "status":
			switch v {
			case ledger.StatusOpen, ledger.StatusFixed, ledger.StatusReplayed, ledger.StatusWaived:
				f.Status = v
			default:
				return f, fmt.Errorf("status %q: use open, fixed, replayed or waived", ui.Sanitize(v))
			}
		default:
			return f, fmt.Errorf("filter %q: use owner=, table=, rule=, status= or overdue", ui.Sanitize(tok.text))
		}
	}
	return f, nil
}

type filterToken struct {
	key, value, text string
	hasValue         bool
}

// filterKeys are the words that start a filter term.
var filterKeys = []string{"owner=", "table=", "rule=", "status="}

// startsTerm is whether the words from fields[i] on begin a new term.
func startsTerm(w string) bool {
	if w == "overdue" || w == "!overdue" {
		return true
	}
	for _, k := range filterKeys {
		if strings.HasPrefix(w, k) {
			return true
		}
	}
	return false
}

// filterTokens splits a filter into terms: key=value, where the value is
// quoted or runs over the following words up to the next term.
func filterTokens(s string) ([]filterToken, error) {
	var out []filterToken
	words := strings.Fields(s)
	for i := 0; i < len(words); i++ {
		w := words[i]
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			out = append(out, filterToken{key: k, text: w})
			continue
		}
		if v != "" && (v[0] == '"' || v[0] == '\'') {
			// A quoted value: up to the word that ends with the same quote.
			q, val := v[:1], v[1:]
			closed := val != "" && strings.HasSuffix(val, q)
			for !closed {
				i++
				if i >= len(words) {
					return nil, fmt.Errorf("filter %s: the quote %s is not closed", ui.Sanitize(k), q)
				}
				val += " " + words[i]
				closed = strings.HasSuffix(words[i], q)
			}
			out = append(out, filterToken{key: k, value: strings.TrimSpace(strings.TrimSuffix(val, q)), text: w, hasValue: true})
			continue
		}
		for i+1 < len(words) && !startsTerm(words[i+1]) {
			i++
			v += " " + words[i]
		}
		out = append(out, filterToken{key: k, value: v, text: w, hasValue: true})
	}
	return out, nil
}

// resolveOwner finds the owner a filter means among the ledger's owners:
// the exact name, else the one owner whose name contains the text (any
// case) — "owner=park" finds "Ji-woo Park (quality)". Several or none is
// an error that lists what there is.
func resolveOwner(ctx context.Context, st ledger.Store, text string) (string, error) {
	counts, err := st.CountBy(ctx, ledger.Filter{}, "owner")
	if err != nil {
		return "", err
	}
	if _, ok := counts[text]; ok {
		return text, nil
	}
	var found, all []string
	for o := range counts {
		all = append(all, o)
		if strings.Contains(strings.ToLower(o), strings.ToLower(text)) {
			found = append(found, o)
		}
	}
	sort.Strings(found)
	sort.Strings(all)
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return "", fmt.Errorf("owner %q matches %d owners: %s; type more of the name", ui.Sanitize(text), len(found), ui.Sanitize(strings.Join(found, ", ")))
	}
	if len(all) > 8 {
		all = append(all[:8], "…")
	}
	return "", fmt.Errorf("no owner matches %q (owners: %s)", ui.Sanitize(text), ui.Sanitize(strings.Join(all, ", ")))
}

func filterText(f ledger.Filter) string {
	var parts []string
	for _, kv := range [][2]string{{"owner", f.Owner}, {"table", f.Table}, {"rule", f.Rule}, {"status", f.Status}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if f.Overdue {
		parts = append(parts, "overdue")
	}
	return strings.Join(parts, " ")
}

// ---- rendering ----

// Render is the screen as text (styled; tests strip the styles).
func (b *Browser) Render() string {
	t := b.t
	if ui.Classify(b.w, b.h) == ui.SizeTooSmall {
		return ui.TooSmall(t, b.w, b.h)
	}
	full := ui.Classify(b.w, b.h) == ui.SizeFull
	order := "id ↑"
	if b.desc {
		order = "id ↓"
	}
	title := t.Title.Render("Lima") + " " + t.Muted.Render("exceptions · sorted by "+order)
	bw, bh := b.bodySize()
	var body string
	if b.showHelp {
		var keys []ui.Binding
		for _, k := range append(b.screenKeys(), interruptKey()) {
			if k.Help().Key != "?" {
				keys = append(keys, k)
			}
		}
		body = t.Title.Render("Keys") + "\n" + ui.HelpFull(t, keys...) + "\n\n" + t.Muted.Render("esc, ? or q closes this help")
	} else if b.mode == modeOwner || b.mode == modeAssign {
		body = b.renderPicker(bw, bh-1)
	} else if b.showDetail {
		body = b.renderDetail(bw, bh-1)
	} else {
		body = b.renderList(bw)
	}
	if full {
		// At full size the key line has two lines (a short one sits on
		// the lower), so no key is cut.
		help := ui.HelpWrap(t, b.w-1, helpLinesFull, b.Keys()...)
		for len(help) < helpLinesFull {
			help = append([]string{""}, help...)
		}
		body = padLines(ui.FitLines(body, bw, bh-1), bh-1) + "\n" + ui.Fit(b.statusLine(), bw)
		return ui.Fit(" "+title, b.w) + "\n\n" + indent(body, " ") + "\n" + indent(strings.Join(help, "\n"), " ")
	}
	body = padLines(ui.FitLines(body, bw, bh-1), bh-1) + "\n" + ui.Fit(b.statusLine(), bw)
	help := ui.HelpLine(t, b.Keys()...)
	return ui.Fit(title, b.w) + "\n" + body + "\n" + ui.Fit(help, b.w)
}

func (b *Browser) statusLine() string {
	t := b.t
	switch {
	case b.mode == modeConfirm:
		return t.Warn.Render("! "+b.confirm+"?") + " " + t.Key.Render("y") + " yes · n or esc: no"
	case b.typing():
		return t.Key.Render(b.prompt+": ") + ui.Sanitize(string(b.input)) + "█"
	case b.err != "":
		return t.Failed.Render(ui.StatusFailed.Glyph() + " " + ui.Sanitize(b.err))
	case b.msg != "" && b.msgOK:
		return t.OK.Render(ui.StatusOK.Glyph()) + " " + ui.Sanitize(b.msg)
	case b.msg != "":
		return t.Warn.Render("! " + ui.Sanitize(b.msg))
	}
	return ""
}

// screenKeys are the keys of the list, or of the detail when it is shown.
func (b *Browser) screenKeys() []ui.Binding {
	nb := ui.NewBinding
	help := nb("?", "all keys", "?").Act(func() tea.Cmd { b.showHelp = true; return nil })
	replay := nb("R", "replay", "R").Do(b.act(b.replay))
	if b.o.Replay == nil {
		replay = replay.Disable("no plan")
	}
	assign := nb("a", "assign", "a").Do(b.act(b.promptFor(modeAssign, "assign %s to owner")))
	edit := nb("e", "edit", "e").Do(b.act(b.promptFor(modeEdit, "fix %s, col=value")))
	if len(b.marked) > 0 && !b.showDetail {
		edit = edit.Disable("a fix is typed for one exception at a time; esc clears the marks")
	}
	waive := nb("w", "waive", "w").Do(b.act(b.promptFor(modeWaive, "waive %s, reason")))
	if b.showDetail {
		value := nb("↑/↓", "value", "up", "k", "down", "j").Do(func(msg tea.KeyPressMsg) tea.Cmd {
			b.err = ""
			if k := msg.String(); k == "up" || k == "k" {
				b.detailFoc = max(0, b.detailFoc-1)
			} else {
				b.detailFoc = min(b.detailFoc+1, max(0, len(b.detailItems())-1))
			}
			return nil
		})
		back := nb("esc", "back", "esc", "backspace", "left", "h").Do(b.act(func() tea.Cmd { b.showDetail, b.detail = false, nil; return nil }))
		return []ui.Binding{help, value, nb("y", "copy", "y").Do(b.act(b.copyValue)), assign, edit, waive, replay, back}
	}
	move := nb("↑/↓", "move", "up", "k", "down", "j").Do(func(msg tea.KeyPressMsg) tea.Cmd {
		b.err = ""
		if k := msg.String(); k == "up" || k == "k" {
			return b.move(-1)
		}
		return b.move(1)
	})
	mark := nb("space", "mark", "space").Do(b.act(b.toggleMark))
	page := nb("pgup/pgdn", "page", "pgup", "b", "pgdown", "f").Quiet().Do(func(msg tea.KeyPressMsg) tea.Cmd {
		b.err = ""
		if k := msg.String(); k == "pgup" || k == "b" {
			return b.move(-b.listHeight())
		}
		return b.move(b.listHeight())
	})
	order := nb("s", "order", "s").Do(b.act(func() tea.Cmd {
		b.desc = !b.desc
		b.resetList()
		return b.reload()
	}))
	filter := nb("/", "filter", "/").Do(b.act(func() tea.Cmd {
		b.mode, b.prompt, b.input = modeFilter, "filter", []rune(filterText(b.filter))
		return nil
	}))
	byOwner := nb("o", "owner", "o").Do(b.act(func() tea.Cmd {
		b.mode, b.prompt, b.input = modeOwner, "filter by owner", nil
		return b.openPicker()
	}))
	keys := []ui.Binding{help, move, nb("enter", "detail", "enter").Do(b.act(b.openDetail)), filter, byOwner, order,
		mark, assign, edit, waive, replay, nb("y", "copy", "y").Do(b.act(b.copyRow)), nb("q", "quit", "q").Act(func() tea.Cmd { return tea.Quit }),
		page, nb("home/g", "first row", "home", "g").Quiet().Do(b.act(func() tea.Cmd { return b.move(-b.cur) })),
		nb("r", "refresh", "r").Quiet().Do(b.act(b.refresh))}
	switch {
	case len(b.marked) > 0:
		keys = append([]ui.Binding{nb("esc", fmt.Sprintf("clear %d mark(s)", len(b.marked)), "esc").Do(b.act(func() tea.Cmd { b.marked = nil; return nil }))}, keys...)
	case b.filter != (ledger.Filter{Now: b.filter.Now}):
		keys = append([]ui.Binding{nb("esc", "clear filter", "esc").Do(b.act(func() tea.Cmd {
			b.filter = ledger.Filter{}
			b.resetList()
			return b.reload()
		}))}, keys...)
	case b.o.Back != "" && b.o.OnBack != nil:
		keys = append([]ui.Binding{nb("esc", b.o.Back, "esc", "shift+tab").Act(b.o.OnBack)}, keys...)
	}
	return keys
}

// glyph is the status glyph of an exception: ✓ replayed, ! open, … fixed,
// – waived.
func glyph(status string) string {
	switch status {
	case ledger.StatusReplayed:
		return ui.StatusOK.Glyph()
	case ledger.StatusFixed:
		return ui.StatusRunning.Glyph()
	case ledger.StatusWaived:
		return ui.StatusSkipped.Glyph()
	}
	return ui.StatusWarn.Glyph()
}

func exWhere(e ledger.Exception) string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	case e.Row > 0:
		return fmt.Sprintf("%s#%d", e.File, e.Row)
	}
	return e.File
}

// cell fits a sanitized value into w cells, padded.
func cell(s string, w int) string {
	s = ui.Fit(ui.Sanitize(s), w)
	if n := ui.Width(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// cellTail is cell keeping the end (file:line), cut with a leading …
func cellTail(s string, w int) string {
	s = ui.Sanitize(s)
	if ui.Width(s) > w {
		r := []rune(s)
		for len(r) > 0 && ui.Width(string(r)) > w-1 {
			r = r[1:]
		}
		s = "…" + string(r)
	}
	return cell(s, w)
}

type column struct {
	name  string
	width int
}

func (b *Browser) columns(width int) []column {
	// id, glyph, table, where (flexible), rule, owner, due
	cols := []column{{"id", 7}, {"", 1}, {"table", 12}, {"where", 0}, {"rule", 12}, {"owner", 10}, {"due", 18}}
	if width < 90 {
		cols = []column{{"id", 6}, {"", 1}, {"table", 10}, {"where", 0}, {"rule", 8}, {"owner", 8}, {"due", 18}}
	}
	used := 2 + len(cols) - 1 // the focus marker, the gaps
	for _, c := range cols {
		used += c.width
	}
	// The due column is as wide as the dates on screen ("overdue" only
	// when a row is); then rule and owner grow to the longest value on
	// screen ("Ji-woo Park (quality)" is an owner ops filter by,
	// "unreadable_file" a rule), as long as where keeps room.
	dueW, ruleW, ow := len("due"), cols[4].width, cols[5].width
	ruleMost, most := 16, 24
	if width < 90 {
		ruleMost, most = 12, 16
	}
	for i := b.top; i < b.top+b.listHeight(); i++ {
		if e, ok := b.row(i); ok {
			dueW = max(dueW, ansi.StringWidth(b.due(e)))
			ruleW = max(ruleW, min(ruleMost, ansi.StringWidth(ui.Sanitize(strings.Join(e.Rules(), ",")))))
			ow = max(ow, min(most, ansi.StringWidth(ui.Sanitize(e.Owner))))
		}
	}
	used += dueW - cols[6].width
	cols[6].width = dueW
	for _, g := range []struct{ col, want int }{{4, ruleW}, {5, ow}} {
		if grow := min(g.want-cols[g.col].width, width-used-20); grow > 0 {
			cols[g.col].width += grow
			used += grow
		}
	}
	cols[3].width = max(8, width-used)
	return cols
}

func (b *Browser) due(e ledger.Exception) string {
	if e.Deadline.IsZero() {
		return "–"
	}
	s := e.Deadline.In(b.o.Location).Format("2006-01-02")
	if e.Overdue(b.filter.Now) {
		s += " overdue"
	}
	return s
}

func (b *Browser) renderList(width int) string {
	t := b.t
	var lines []string
	head := "exceptions"
	if f := filterText(b.filter); f != "" {
		head += " matching " + ui.Sanitize(f)
	}
	switch {
	case !b.counted:
		head += ": counting …"
	case b.total == 0:
		head += ": none"
	default:
		head += fmt.Sprintf(": %s · row %s", ui.Count(b.total), ui.Count(int64(b.cur+1)))
	}
	lines = append(lines, t.Title.Render(head))
	cols := b.columns(width)
	hdr := t.Blank
	for i, c := range cols {
		if i > 0 {
			hdr += " "
		}
		if i == 0 {
			hdr += fmt.Sprintf("%*s", c.width, c.name)
			continue
		}
		hdr += cell(c.name, c.width)
	}
	lines = append(lines, t.Muted.Render(strings.TrimRight(hdr, " ")))
	lh := b.listHeight()
	for i := b.top; i < b.top+lh; i++ {
		if b.counted && int64(i) >= b.total {
			break
		}
		e, ok := b.row(i)
		if !ok {
			if i > b.reachable() {
				break
			}
			lines = append(lines, t.Blank+t.Muted.Render("…"))
			continue
		}
		vals := []string{strconv.FormatInt(e.ID, 10), glyph(e.Status), e.Table, exWhere(e), strings.Join(e.Rules(), ","), e.Owner, b.due(e)}
		var parts []string
		for j, c := range cols {
			v := cell(vals[j], c.width)
			if j == 3 {
				v = cellTail(vals[j], c.width)
			}
			if j == 0 {
				v = fmt.Sprintf("%*s", c.width, vals[j])
			}
			parts = append(parts, v)
		}
		line := strings.TrimRight(strings.Join(parts, " "), " ")
		lead := t.Blank
		if i == b.cur {
			lead = t.FocusMarker
		}
		if b.marked[e.ID] { // marked: * in the marker's second cell
			lead = string([]rune(lead)[0]) + "*"
		}
		if i == b.cur {
			lines = append(lines, lead+t.Focus.Render(line))
		} else {
			lines = append(lines, lead+line)
		}
	}
	if b.counted && b.total == 0 {
		lines = append(lines, "", t.Muted.Render("nothing matches; / changes the filter, esc clears it"))
	}
	return strings.Join(lines, "\n")
}

type detailItem struct{ label, value string }

// detailItems are the values y can copy, in the order shown.
func (b *Browser) detailItems() []detailItem {
	if b.detail == nil {
		return nil
	}
	e := b.detail.e
	items := []detailItem{{"raw", string(e.Raw)}}
	for _, k := range slices.Sorted(maps.Keys(e.Values)) {
		items = append(items, detailItem{"value " + k, e.Values[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(e.Fixed)) {
		items = append(items, detailItem{"fixed " + k, e.Fixed[k]})
	}
	return items
}

func (b *Browser) renderDetail(width, height int) string {
	t := b.t
	if b.detail == nil {
		return t.Muted.Render(fmt.Sprintf("exception #%d: loading …", b.detailID))
	}
	e := b.detail.e
	var lines []string
	status := e.Status
	if e.Overdue(b.filter.Now) {
		status += ", overdue"
	}
	lines = append(lines, t.Title.Render(fmt.Sprintf("exception #%d", e.ID))+" "+glyph(e.Status)+" "+status+t.Muted.Render(" ("+e.Level+")"))
	lines = append(lines, "  table  "+ui.Sanitize(e.Table)+"   where "+ui.Sanitize(exWhere(e)))
	lines = append(lines, "  owner  "+ui.Sanitize(e.Owner)+"   due "+b.due(e)+t.Muted.Render("   load "+ui.Sanitize(e.LoadID)))
	if e.Key != "" {
		lines = append(lines, "  key    "+ui.Sanitize(e.Key))
	}
	focus := b.detailFoc
	n := 0
	item := func(label, v string) string {
		mark := t.Blank
		if n == focus {
			mark = t.FocusMarker
		}
		n++
		return mark + label + ui.Sanitize(v)
	}
	enc := e.Encoding
	if enc == "" {
		enc = "utf-8"
	}
	lines = append(lines, t.Title.Render(fmt.Sprintf("raw (%s, %d bytes)", enc, len(e.Raw))))
	lines = append(lines, item("", string(e.Raw)))
	if len(e.Values) > 0 {
		lines = append(lines, t.Title.Render("values"))
		for _, k := range slices.Sorted(maps.Keys(e.Values)) {
			lines = append(lines, item(ui.Sanitize(k)+" = ", e.Values[k]))
		}
	}
	lines = append(lines, t.Title.Render("failures"))
	for _, f := range e.Failures {
		col := f.Column
		if col == "" {
			col = "(row)"
		}
		lines = append(lines, "  "+cell(col, 14)+" "+cell(f.Rule, 12)+" "+ui.Sanitize(f.Reason))
	}
	if len(e.Fixed) > 0 {
		lines = append(lines, t.Title.Render("fixed values"))
		for _, k := range slices.Sorted(maps.Keys(e.Fixed)) {
			lines = append(lines, item(ui.Sanitize(k)+" = ", e.Fixed[k]))
		}
	}
	lines = append(lines, t.Title.Render("history"))
	for _, h := range b.detail.hist {
		l := "  " + h.At.In(b.o.Location).Format("2006-01-02 15:04") + "  " + cell(h.Action, 9) + " " + ui.Sanitize(h.By)
		if h.Note != "" {
			l += " — " + ui.Sanitize(h.Note)
		}
		lines = append(lines, l)
	}
	// Keep the focused value on screen.
	if len(lines) > height {
		fi := 0
		for i, l := range lines {
			if strings.HasPrefix(l, t.FocusMarker) {
				fi = i
			}
		}
		if fi >= height {
			lines = append(lines[:1], lines[fi-height+2:]...)
		}
	}
	return strings.Join(lines, "\n")
}

// renderPicker is the owner picker: the known owners that match what is
// typed, each with its open exceptions; assigning, the name typed first.
func (b *Browser) renderPicker(width, height int) string {
	t := b.t
	title := "owners · open exceptions"
	hint := "type to narrow the list; enter filters by the owner"
	if b.mode == modeAssign {
		title = ui.Sanitize(b.prompt)
		hint = "type a new name, or ↓ to a known owner"
	}
	lines := []string{t.Title.Render(title), t.Muted.Render(hint)}
	if b.ownersErr != "" {
		lines = append(lines, t.Warn.Render("! "+ui.Sanitize(b.ownersErr)))
	}
	if b.owners == nil {
		return strings.Join(append(lines, t.Muted.Render("reading the owners …")), "\n")
	}
	ms := b.matches()
	var rows []string
	mark := func(i int) string {
		if i == b.pick {
			return t.FocusMarker
		}
		return t.Blank
	}
	first := 0 // the row index of matches[0]
	if b.mode == modeAssign {
		typed := strings.TrimSpace(string(b.input))
		label := t.Muted.Render("the name typed (none yet)")
		if typed != "" {
			label = "as typed: " + ui.Sanitize(typed)
		}
		rows = append(rows, mark(-1)+label)
		first = 1
	}
	nw := 8
	for _, o := range ms {
		nw = max(nw, ui.Width(ui.Sanitize(o.name)))
	}
	nw = min(nw, max(8, width-16))
	for i, o := range ms {
		line := cell(o.name, nw) + fmt.Sprintf(" %6s open", ui.Count(o.open))
		if i == b.pick {
			line = t.Focus.Render(line)
		}
		rows = append(rows, mark(i)+line)
	}
	if len(ms) == 0 {
		msg := "no known owner"
		if typed := strings.TrimSpace(string(b.input)); typed != "" {
			msg = "no known owner matches " + strconv.Quote(ui.Sanitize(typed))
		}
		rows = append(rows, t.Muted.Render("  "+msg))
	}
	// Keep the highlight on screen (on the last line shown, once it is
	// below the first screenful).
	room := max(1, height-len(lines))
	top := max(0, b.pick+first-room+1)
	return strings.Join(append(lines, rows[top:min(len(rows), top+room)]...), "\n")
}
