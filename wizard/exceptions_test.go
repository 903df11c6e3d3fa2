package wizard

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/ui"
)

// countingStore counts the List calls and records their pages.
type countingStore struct {
	ledger.Store
	mu    sync.Mutex
	pages []ledger.Page
}

func (c *countingStore) List(ctx context.Context, f ledger.Filter, p ledger.Page) ([]ledger.Exception, ledger.Cursor, error) {
	c.mu.Lock()
	c.pages = append(c.pages, p)
	c.mu.Unlock()
	return c.Store.List(ctx, f, p)
}

func (c *countingStore) lists() []ledger.Page {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ledger.Page(nil), c.pages...)
}

var (
	bOwners = []string{"Ji-woo", "Mateo", "Aiko"}
	bTables = []string{"inspections", "suppliers"}
)

// seedLedger opens a SQLite ledger with n committed exceptions (ids 1..n,
// alternating tables, three owners, deadlines from two days ago to two
// days ahead of t0) plus the extra rows given, published last.
func seedLedger(t testing.TB, n int, extra ...ledger.Exception) ledger.Store {
	t.Helper()
	st, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	for ti, table := range bTables {
		var batch []ledger.Exception
		for i := 0; i < n; i++ {
			if i%len(bTables) != ti {
				continue
			}
			batch = append(batch, ledger.Exception{
				RunID: "run-1", LoadID: "load-" + table, Table: table, Level: ledger.LevelRow,
				File: table + "_2026-02.csv", Line: int64(i + 2), Key: fmt.Sprintf("id=%d", 1000+i),
				Raw:      []byte(fmt.Sprintf("%d;2026-02-30;12x.50\n", 1000+i)),
				Values:   map[string]string{"id": fmt.Sprint(1000 + i), "inspected_on": "2026-02-30", "cost": "12x.50"},
				Failures: []ledger.Failure{{Column: "inspected_on", Value: "2026-02-30", Rule: "date", Reason: "no such day"}},
				Owner:    bOwners[i%len(bOwners)],
				Deadline: t0.Add(time.Duration(i%5-2) * 24 * time.Hour),
			})
		}
		if len(batch) == 0 {
			continue
		}
		if err := st.AddPending(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Publish(ctx, table, "load-"+table); err != nil {
			t.Fatal(err)
		}
	}
	if len(extra) > 0 {
		for i := range extra {
			extra[i].LoadID = "load-extra"
			extra[i].Table = "extra"
		}
		if err := st.AddPending(ctx, extra); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Publish(ctx, "extra", "load-extra"); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

type bHarness struct {
	t *testing.T
	b *Exceptions
}

func newBrowserHarness(t *testing.T, st ledger.Store, o ExceptionsOptions) *bHarness {
	t.Helper()
	o.Store = st
	o.Theme = ui.MustTheme(ui.ThemeMono)
	o.Now = func() time.Time { return t0.Add(10 * time.Second) }
	o.Location = time.UTC
	o.By = "tester"
	h := &bHarness{t: t, b: NewExceptions(o)}
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.feed(h.b.Init())
	return h
}

func (h *bHarness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.b.Update(msg)
	h.feed(cmd)
}

func (h *bHarness) feed(cmd tea.Cmd) {
	h.t.Helper()
	for _, msg := range collect(cmd) {
		switch msg.(type) {
		case bPageMsg, bCountMsg, bDetailMsg, bActionMsg, bFilterMsg, bOwnersMsg:
			h.send(msg)
		}
	}
}

func (h *bHarness) key(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		switch k {
		case "pgdown":
			h.send(tea.KeyPressMsg{Code: tea.KeyPgDown})
		case "home":
			h.send(tea.KeyPressMsg{Code: tea.KeyHome})
		case "backspace":
			h.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
		default:
			h.send(keyMsg(k))
		}
	}
}

func (h *bHarness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *bHarness) screen() string {
	lines := strings.Split(ansi.Strip(h.b.Render()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func (h *bHarness) contains(want ...string) {
	h.t.Helper()
	s := h.screen()
	for _, w := range want {
		if !strings.Contains(s, w) {
			h.t.Errorf("screen lacks %q:\n%s", w, s)
		}
	}
}

func (h *bHarness) golden(name string) {
	h.t.Helper()
	compareGolden(h.t, name, func(m tea.Msg) { h.send(m) }, h.screen)
}

func TestBrowserListGolden(t *testing.T) {
	st := seedLedger(t, 40)
	ctx := context.Background()
	// One of each status.
	if err := st.Resolve(ctx, 2, map[string]string{"inspected_on": "2026-02-28"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	if err := st.Waive(ctx, 3, "duplicate of 1", "ops"); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, 4, map[string]string{"cost": "12.50"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkReplayed(ctx, []int64{4}, "replay-1", "ops"); err != nil {
		t.Fatal(err)
	}
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	h.contains("exceptions: 40 · row 1", "✓", "…", "–", "!", "overdue", "inspections_2026-02.csv:")
	h.key("down", "down")
	h.golden("exceptions_list")

	// Descending order, by the ledger.
	h.key("s")
	h.contains("sorted by id ↓", "row 1")
	if e, _ := h.b.row(0); e.ID != 40 {
		t.Errorf("first row descending = %d, want 40", e.ID)
	}
}

func TestBrowserFilterCountsThroughTheLedger(t *testing.T) {
	st := seedLedger(t, 60)
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	h.key("/")
	h.typeText("owner=Ji-woo table=inspections overdue")
	h.key("enter")
	f := ledger.Filter{Owner: "Ji-woo", Table: "inspections", Overdue: true, Now: t0.Add(10 * time.Second)}
	want, err := st.Count(context.Background(), f)
	if err != nil || want == 0 {
		t.Fatalf("count %d %v", want, err)
	}
	h.contains(fmt.Sprintf("matching owner=Ji-woo table=inspections overdue: %d · row 1", want))
	for i := 0; i < int(want); i++ {
		e, ok := h.b.row(i)
		if !ok || e.Owner != "Ji-woo" || e.Table != "inspections" || !e.Overdue(f.Now) {
			t.Errorf("row %d = %+v, %v", i, e, ok)
		}
	}
	h.golden("exceptions_filtered")

	// A bad filter says what to write and keeps the old one.
	h.key("/", "ctrl+u")
	h.typeText("colour=red")
	h.key("enter")
	h.contains(`filter "colour=red": use owner=, table=, rule=, status= or overdue`, "matching owner=Ji-woo")
	// esc clears the filter.
	h.key("esc")
	h.contains("exceptions: 60 · row 1")
}

func TestBrowserKeysetPagingFetchesOnlyWhatIsShown(t *testing.T) {
	cs := &countingStore{Store: seedLedger(t, 200)}
	h := newBrowserHarness(t, cs, ExceptionsOptions{})
	lh := h.b.listHeight()
	ps := h.b.pageSize
	if lh != 23 || ps != 2*lh { // 30 lines less the title, the head, two key lines, …
		t.Fatalf("list height %d, page size %d", lh, ps)
	}
	if got := cs.lists(); len(got) != 1 || got[0].After != "" || got[0].Limit != ps {
		t.Fatalf("first screen: List calls %+v, want one page of %d", got, ps)
	}
	// Moving within the first page fetches nothing.
	for i := 0; i < ps-1; i++ {
		h.key("down")
	}
	if n := len(cs.lists()); n != 1 {
		t.Fatalf("within the first page: %d List calls", n)
	}
	// One past it fetches the next page with the cursor.
	h.key("down")
	got := cs.lists()
	if len(got) != 2 || got[1].After == "" || got[1].Limit != ps {
		t.Fatalf("past the first page: %+v", got)
	}
	if e, ok := h.b.row(ps); !ok || e.ID != int64(ps+1) {
		t.Fatalf("row %d = %+v %v", ps, e, ok)
	}
	h.contains(fmt.Sprintf("row %d", ps+1))
	// Far down: one call a page, at most maxPages pages kept.
	for i := 0; i < 3; i++ {
		h.key("pgdown", "pgdown")
	}
	cur := h.b.cur
	wantCalls := 1 + (cur+lh)/ps // pages up to the one showing the bottom row
	if n := len(cs.lists()); n > wantCalls+1 {
		t.Errorf("at row %d: %d List calls, want at most %d", cur, n, wantCalls+1)
	}
	if len(h.b.pages) > maxPages {
		t.Errorf("%d pages in memory, want at most %d", len(h.b.pages), maxPages)
	}
	if e, ok := h.b.row(cur); !ok || e.ID != int64(cur+1) {
		t.Errorf("row %d = %+v %v", cur, e, ok)
	}
	// Back to the top refetches the evicted first page, once.
	before := len(cs.lists())
	h.key("home")
	got = cs.lists()
	if len(got) != before+1 || got[len(got)-1].After != "" {
		t.Errorf("home: %d → %d List calls (%+v)", before, len(got), got[len(got)-1])
	}
	h.contains("row 1", "    1 !")
	// The end of the list stops the cursor.
	for i := 0; i < 12; i++ {
		h.key("pgdown")
	}
	if h.b.cur != 199 {
		t.Errorf("cursor at %d after the end, want 199", h.b.cur)
	}
	h.contains("row 200")
}

func TestBrowserDetailSanitizes(t *testing.T) {
	evil := "\x1b[31mred\r\u202eevil"
	st := seedLedger(t, 0, ledger.Exception{RunID: "run-1", Level: ledger.LevelRow, File: "x.csv", Line: 2,
		Raw: []byte("1;" + evil + "\n"), Values: map[string]string{"name": evil},
		Failures: []ledger.Failure{{Column: "name", Value: evil, Rule: "text", Reason: "control characters " + evil}},
		Owner:    "Ji-woo"})
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	h.key("enter")
	h.contains("exception #1", `1;\e[31mred\r\u202eevil\n`, `name = \e[31mred\r\u202eevil`, "control characters", "history", "created")
	// The ledger stamps the history with the clock: masked, same width.
	stamp := regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}`)
	compareGolden(t, "exceptions_detail", func(m tea.Msg) { h.send(m) }, func() string { return stamp.ReplaceAllString(h.screen(), "YYYY-MM-DD hh:mm") })
	raw := h.b.Render()
	for _, bad := range []string{"\x1b[31m", "\r", "\u202e"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the screen carries %q raw", bad)
		}
	}
	// y copies the raw value (the exact bytes), not the escaped text.
	h.key("down", "y")
	h.contains("copied value name to the clipboard")
	h.key("esc")
	h.contains("exceptions: 1 · row 1")
}

func TestBrowserActionsReachTheLedger(t *testing.T) {
	st := seedLedger(t, 10)
	var replayed []string
	h := newBrowserHarness(t, st, ExceptionsOptions{Replay: func(_ context.Context, table string, _ []int64) (string, error) {
		replayed = append(replayed, table)
		return "reports/r1/report.md", nil
	}})
	ctx := context.Background()
	// assign
	h.key("down", "a")
	h.typeText("Mateo")
	h.key("enter")
	e, err := st.Get(ctx, 2)
	if err != nil || e.Owner != "Mateo" {
		t.Fatalf("after assign: %+v %v", e, err)
	}
	hist, _ := st.History(ctx, 2)
	if last := hist[len(hist)-1]; last.Action != ledger.ActionAssign || last.By != "tester" {
		t.Errorf("history %+v", last)
	}
	h.contains("#2 assigned to Mateo")
	// edit a value → fixed
	h.key("e")
	h.typeText("inspected_on=2026-02-28")
	h.key("enter")
	if e, _ := st.Get(ctx, 2); e.Status != ledger.StatusFixed || e.Fixed["inspected_on"] != "2026-02-28" {
		t.Errorf("after edit: %+v", e)
	}
	h.contains("   2 …")
	// waive asks first; anything but y changes nothing.
	h.key("down", "w")
	h.typeText("duplicate")
	h.key("enter")
	h.contains("waive #3 (it will never be loaded)?")
	h.key("n")
	if e, _ := st.Get(ctx, 3); e.Status != ledger.StatusOpen {
		t.Errorf("waived without confirmation: %+v", e)
	}
	h.contains("cancelled: nothing was changed")
	h.key("w")
	h.typeText("duplicate")
	h.key("enter", "y")
	if e, _ := st.Get(ctx, 3); e.Status != ledger.StatusWaived {
		t.Errorf("after waive: %+v", e)
	}
	// replay asks, then runs with the filter's table.
	h.key("/")
	h.typeText("table=inspections")
	h.key("enter", "R")
	h.contains("replay the fixed rows of inspections into the lake?")
	if len(replayed) != 0 {
		t.Fatal("replayed before the confirmation")
	}
	h.key("y")
	if len(replayed) != 1 || replayed[0] != "inspections" {
		t.Errorf("replay calls %v", replayed)
	}
	h.contains("replayed; report reports/r1/report.md")
}

// TestBrowserBulkActionsOnMarkedRows: space marks rows (and moves on);
// assign and waive then act on every marked exception and on nothing
// else, the fix is refused while rows are marked (it is typed for one),
// and esc, a new filter or an action done clears the marks. The ledger
// is read back row by row.
func TestBrowserBulkActionsOnMarkedRows(t *testing.T) {
	st := seedLedger(t, 10)
	ctx := context.Background()
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	owner := func(id int64) string {
		e, err := st.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return e.Owner
	}
	before := map[int64]string{}
	for id := int64(1); id <= 6; id++ {
		before[id] = owner(id)
	}
	// Mark #1, #2 and #4 (space moves down; down skips #3).
	h.key("space", "space", "down", "space")
	if got := markedIDs(h.screen()); strings.Join(got, ",") != "1,2,4" {
		t.Errorf("marked rows %v, want 1,2,4:\n%s", got, h.screen())
	}
	h.contains("esc clear 3 mark(s)")
	// e is disabled while rows are marked, and says why.
	h.key("e")
	h.contains("a fix is typed for one exception at a time")
	h.key("a")
	h.contains("assign 3 marked exceptions to owner")
	h.typeText("Ops Team")
	h.key("enter")
	h.contains("3 marked exceptions assigned to Ops Team")
	for id := int64(1); id <= 6; id++ {
		want := before[id]
		if id == 1 || id == 2 || id == 4 {
			want = "Ops Team"
		}
		if got := owner(id); got != want {
			t.Errorf("#%d owner %q, want %q", id, got, want)
		}
	}
	if got := markedIDs(h.screen()); len(got) > 0 {
		t.Errorf("the marks %v stay after the assign", got)
	}
	// A hostile owner is refused in the browser too.
	h.key("a")
	h.typeText("Ops\x1b[2J")
	h.key("enter")
	h.contains("control or direction characters")
	// Waive two marked rows: asked once, both waived, the rest open.
	h.key("home", "space", "down", "down", "space", "w")
	h.typeText("duplicate")
	h.key("enter")
	h.contains("waive 2 marked exceptions (they will never be loaded)?")
	h.key("y")
	for id := int64(1); id <= 4; id++ {
		e, _ := st.Get(ctx, id)
		if want := id == 1 || id == 4; (e.Status == ledger.StatusWaived) != want {
			t.Errorf("#%d status %s after waiving #1 and #4", id, e.Status)
		}
	}
	// esc clears marks before it clears a filter; a new filter clears them.
	h.key("space", "esc")
	if got := markedIDs(h.screen()); len(got) > 0 {
		t.Errorf("esc left the marks %v", got)
	}
	h.key("space", "/")
	h.typeText("table=inspections")
	h.key("enter")
	if len(markedIDs(h.screen())) > 0 || len(h.b.marked) > 0 {
		t.Error("a new filter kept the marks of rows no longer shown")
	}
}

// markedIDs are the ids of the rows the screen shows marked (a * in the
// marker's second cell: " *" or ">*").
func markedIDs(screen string) []string {
	var ids []string
	for _, l := range strings.Split(screen, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasSuffix(f[0], "*") && len([]rune(f[0])) <= 2 {
			ids = append(ids, f[1])
		}
	}
	return ids
}
