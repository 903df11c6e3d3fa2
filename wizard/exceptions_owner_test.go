package wizard

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/ledger"
)

// ownerLedger is seedLedger(t, 30) with owners that have spaces and
// parentheses, and statuses that make the open count differ from the
// total: ids ≡ 0 (mod 3) are Ji-woo Park (quality)'s, ≡ 1 Ana Lopez
// (ops)'s, the rest keep their seeded owner; #3 and #4 waived, #6 fixed.
func ownerLedger(t *testing.T) ledger.Store {
	t.Helper()
	st := seedLedger(t, 30)
	ctx := context.Background()
	var park, lopez []int64
	for id := int64(1); id <= 30; id++ {
		switch id % 3 {
		case 0:
			park = append(park, id)
		case 1:
			lopez = append(lopez, id)
		}
	}
	if err := st.Assign(ctx, park, "Ji-woo Park (quality)", "ops"); err != nil {
		t.Fatal(err)
	}
	if err := st.Assign(ctx, lopez, "Ana Lopez (ops)", "ops"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{3, 4} {
		if err := st.Waive(ctx, id, "duplicate", "ops"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Resolve(ctx, 6, map[string]string{"inspected_on": "2026-02-28"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	return st
}

// ledgerRows reads every committed exception of the ledger, page by page.
func ledgerRows(t *testing.T, st ledger.Store) []ledger.Exception {
	t.Helper()
	var out []ledger.Exception
	var after ledger.Cursor
	for {
		page, next, err := st.List(context.Background(), ledger.Filter{}, ledger.Page{After: after, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if next == "" || len(page) == 0 {
			return out
		}
		after = next
	}
}

var pickerRow = regexp.MustCompile(`^\s*>?\s*(\S.*?)\s+(\d+) open$`)

// pickerRows are the owner rows the picker shows: "name N open".
func pickerRows(screen string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if m := pickerRow.FindStringSubmatch(l); m != nil {
			out = append(out, m[1]+"="+m[2])
		}
	}
	return out
}

// TestBrowserOwnerPickerListsKnownOwnersAndFilters: o lists the owners of
// the ledger's exceptions and of the plan, each with its open exceptions
// — counted here from the ledger's rows — typing narrows the list, ↑/↓
// move, enter filters by the chosen owner exactly (spaces, parentheses)
// and esc closes it, changing nothing.
func TestBrowserOwnerPickerListsKnownOwnersAndFilters(t *testing.T) {
	st := ownerLedger(t)
	open := map[string]int{"Nobody Yet (finance)": 0} // the plan's owner without exceptions
	all := map[string]int{}
	for _, e := range ledgerRows(t, st) {
		all[e.Owner]++
		if _, ok := open[e.Owner]; !ok {
			open[e.Owner] = 0
		}
		if e.Status == ledger.StatusOpen {
			open[e.Owner]++
		}
	}
	var names, want []string
	for o := range open {
		names = append(names, o)
	}
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	for _, o := range names {
		want = append(want, o+"="+strconv.Itoa(open[o]))
	}
	if len(want) != 5 {
		t.Fatalf("test setup: owners %v, want 4 of the ledger and 1 of the plan", want)
	}
	h := newBrowserHarness(t, st, ExceptionsOptions{PlanOwners: func() ([]string, error) {
		return []string{"Nobody Yet (finance)", "Ji-woo Park (quality)"}, nil
	}})
	h.key("o")
	h.contains("owners · open exceptions", "filter by owner: █")
	if got := pickerRows(h.screen()); !slices.Equal(got, want) {
		t.Fatalf("the picker lists %v, want %v:\n%s", got, want, h.screen())
	}
	h.golden("exceptions_owner_picker")

	// esc closes it and changes nothing.
	h.key("esc")
	h.contains("exceptions: 30 · row 1")
	// Typing narrows (any case); enter filters by the owner exactly.
	h.key("o")
	h.typeText("PARK")
	if got := pickerRows(h.screen()); len(got) != 1 || !strings.HasPrefix(got[0], "Ji-woo Park (quality)=") {
		t.Fatalf("typed park: the picker lists %v", got)
	}
	h.key("enter")
	park := all["Ji-woo Park (quality)"]
	h.contains(fmt.Sprintf("matching owner=Ji-woo Park (quality): %d · row 1", park))
	for i := 0; i < park; i++ {
		if e, ok := h.b.row(i); !ok || e.Owner != "Ji-woo Park (quality)" {
			t.Errorf("row %d = %+v, %v", i, e, ok)
		}
	}
	if h.b.filter.Owner != "Ji-woo Park (quality)" {
		t.Errorf("filter owner %q", h.b.filter.Owner)
	}
	// ↓ chooses the second owner of the list; the filter's other terms stay.
	h.key("/", "ctrl+u")
	h.typeText("table=inspections")
	h.key("enter", "o", "down", "enter")
	second := strings.SplitN(want[1], "=", 2)[0]
	n, err := st.Count(context.Background(), ledger.Filter{Owner: second, Table: "inspections", Now: t0.Add(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	h.contains(fmt.Sprintf("matching owner=%s table=inspections: %d", second, n))
	// Nothing matches: enter does nothing, the picker says so.
	h.key("o")
	h.typeText("zzz")
	h.key("enter")
	h.contains(`no known owner matches "zzz"`)
	h.key("esc")
	h.contains(fmt.Sprintf("matching owner=%s table=inspections", second))
}

// TestBrowserAssignOffersTheKnownOwners: under the assign field the known
// owners are listed; ↓ and enter assign the chosen one to every marked
// exception, a new name typed is assigned as typed (checked by
// CheckName), and a known owner typed in another case is that owner.
func TestBrowserAssignOffersTheKnownOwners(t *testing.T) {
	st := ownerLedger(t)
	ctx := context.Background()
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	owner := func(id int64) string {
		t.Helper()
		e, err := st.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return e.Owner
	}
	// Mark #1 and #2; a, narrow to "park", ↓ to it, enter.
	h.key("space", "space", "a")
	h.contains("assign 2 marked exceptions to owner", "the name typed (none yet)", "Ana Lopez (ops)", "Ji-woo Park (quality)")
	h.golden("exceptions_assign_picker")
	h.typeText("park")
	h.key("down", "enter")
	h.contains("2 marked exceptions assigned to Ji-woo Park (quality)")
	if a, b, c := owner(1), owner(2), owner(5); a != "Ji-woo Park (quality)" || b != "Ji-woo Park (quality)" || c == "Ji-woo Park (quality)" {
		t.Errorf("owners of #1, #2, #5: %q %q %q", a, b, c)
	}
	// A new name, typed: assigned as typed.
	h.key("home", "down", "down", "down", "down", "a")
	h.typeText("Lee Min (finance)")
	h.contains("as typed: Lee Min (finance)")
	h.key("enter")
	if got := owner(5); got != "Lee Min (finance)" {
		t.Errorf("#5 owner %q, want the name typed", got)
	}
	// A known owner typed in another case is that owner.
	h.key("a")
	h.typeText("ana lopez (ops)")
	h.key("enter")
	if got := owner(5); got != "Ana Lopez (ops)" {
		t.Errorf("#5 owner %q, want Ana Lopez (ops)", got)
	}
	// A hostile name is still refused.
	h.key("a")
	h.typeText("Ops\x1b[2J")
	h.key("enter")
	h.contains("control or direction characters")
	if got := owner(5); got != "Ana Lopez (ops)" {
		t.Errorf("#5 owner %q after a refused name", got)
	}
}

// TestBrowserReplayActsOnMarkedRows: with rows marked, R asks once naming
// the count and replays exactly those exceptions; a marked row that is
// not fixed is refused before asking; without marks R replays the table.
func TestBrowserReplayActsOnMarkedRows(t *testing.T) {
	st := seedLedger(t, 10)
	ctx := context.Background()
	for _, id := range []int64{2, 3, 5} {
		if err := st.Resolve(ctx, id, map[string]string{"inspected_on": "2026-02-28"}, "ops", ""); err != nil {
			t.Fatal(err)
		}
	}
	type call struct {
		table string
		ids   []int64
	}
	var calls []call
	h := newBrowserHarness(t, st, ExceptionsOptions{Replay: func(_ context.Context, table string, ids []int64) (string, error) {
		calls = append(calls, call{table, ids})
		return "reports/r2/report.md", nil
	}})
	// Mark #2 and #5 (fixed), R: one question naming the count.
	h.key("down", "space", "down", "down", "space", "R")
	h.contains("replay the 2 marked exceptions into the lake?")
	if len(calls) != 0 {
		t.Fatal("replayed before the confirmation")
	}
	h.key("y")
	if len(calls) != 1 || !slices.Equal(calls[0].ids, []int64{2, 5}) {
		t.Fatalf("replay calls %+v, want one with ids [2 5]", calls)
	}
	h.contains("replayed the 2 marked exceptions; report reports/r2/report.md")
	if len(h.b.marked) != 0 {
		t.Error("the marks stay after the replay")
	}
	// A marked open row: refused, nothing asked.
	h.key("home", "space", "down", "down", "space", "R")
	h.contains("only fixed rows replay; #1 is open")
	if h.b.mode == modeConfirm || len(calls) != 1 {
		t.Fatalf("a marked open row was offered for replay (%d calls)", len(calls))
	}
	// No marks: the table (all), as before.
	h.key("esc", "R", "y")
	if len(calls) != 2 || calls[1].ids != nil || calls[1].table != "" {
		t.Fatalf("replay without marks: %+v", calls)
	}
}

// TestBrowserOwnerPickerScrollsToTheHighlight: more owners than the
// picker has lines at 80×24: ↓ to the last keeps it on screen, and
// enter filters by it.
func TestBrowserOwnerPickerScrollsToTheHighlight(t *testing.T) {
	st := seedLedger(t, 40)
	ctx := context.Background()
	for i := 1; i <= 40; i++ {
		name := fmt.Sprintf("Owner %02d (team)", i)
		if err := st.Assign(ctx, []int64{int64(i)}, name, "ops"); err != nil {
			t.Fatal(err)
		}
	}
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.key("o")
	h.contains("> Owner 01 (team)")
	for range 39 {
		h.key("down")
	}
	s := h.screen()
	if !strings.Contains(s, "> Owner 40 (team)") || strings.Contains(s, "Owner 01 (team)") {
		t.Fatalf("after 39 downs the last owner is not shown highlighted (or the first still is):\n%s", s)
	}
	if n := strings.Count(s, "\n"); n != 24 {
		t.Errorf("the picker draws %d lines at 80x24", n)
	}
	h.key("down", "enter")
	h.contains("matching owner=Owner 40 (team): 1 · row 1")
	if e, ok := h.b.row(0); !ok || e.ID != 40 {
		t.Errorf("row 0 = %+v %v, want #40", e, ok)
	}
}
