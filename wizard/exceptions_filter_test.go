package wizard

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/ledger"
)

func TestParseFilterValuesWithSpaces(t *testing.T) {
	for in, want := range map[string]ledger.Filter{
		"owner=Ji-woo Park (quality)":                           {Owner: "Ji-woo Park (quality)"},
		"owner=Ji-woo Park (quality) table=inspections":         {Owner: "Ji-woo Park (quality)", Table: "inspections"},
		"table=inspections owner=Ji-woo Park (quality) overdue": {Owner: "Ji-woo Park (quality)", Table: "inspections", Overdue: true},
		`owner="Ana overdue Lopez" status=open`:                 {Owner: "Ana overdue Lopez", Status: "open"},
		`owner='Ana Lopez'`:                                     {Owner: "Ana Lopez"},
		`owner=" Ana " rule=date`:                               {Owner: "Ana", Rule: "date"},
		"rule=date  overdue":                                    {Rule: "date", Overdue: true},
		"":                                                      {},
	} {
		got, err := ParseFilter(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseFilter(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{`owner="Ana Lopez`, "colour=red", "status=gone", "owner=a status=gone"} {
		if f, err := ParseFilter(bad); err == nil {
			t.Errorf("ParseFilter(%q) = %+v, want an error", bad, f)
		}
	}
}

// Real owners have spaces and parentheses, and ops type part of a name:
// the browser finds "Ji-woo Park (quality)" by its whole name or by
// "park"; text that fits several owners names them.
func TestBrowserFilterFindsOwnersWithSpaces(t *testing.T) {
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
	want, err := st.Count(ctx, ledger.Filter{Owner: "Ji-woo Park (quality)", Now: t0.Add(10 * time.Second)})
	if err != nil || want != int64(len(park)) {
		t.Fatalf("test setup: count %d %v, want %d", want, err, len(park))
	}
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	// The owner column shows whole names (on a 120-column projector;
	// at 100 columns it takes 20 and the file column keeps 20).
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	h.contains("Ji-woo Park (quality)", "Ana Lopez (ops)")
	for _, typed := range []string{"owner=Ji-woo Park (quality)", "owner=park", `owner="ji-woo park"`} {
		h.key("/", "ctrl+u")
		h.typeText(typed)
		h.key("enter")
		h.contains(fmt.Sprintf("matching owner=Ji-woo Park (quality): %d · row 1", want))
		for i := 0; i < int(want); i++ {
			if e, ok := h.b.row(i); !ok || e.Owner != "Ji-woo Park (quality)" {
				t.Errorf("%s: row %d = %+v, %v", typed, i, e, ok)
			}
		}
	}
	h.key("/", "ctrl+u")
	h.typeText("owner=o")
	h.key("enter")
	h.contains(`owner "o" matches`, "Ana Lopez (ops)", "Ji-woo Park (quality)")
	h.key("/", "ctrl+u")
	h.typeText("owner=nobody")
	h.key("enter")
	h.contains(`no owner matches "nobody"`)
}

// ? lists every key of the browser, those the cut key line hides
// included (R replay, q quit); esc closes the help and quits nothing.
func TestBrowserHelpListsEveryKey(t *testing.T) {
	h := newBrowserHarness(t, seedLedger(t, 5), ExceptionsOptions{})
	h.contains("? all keys")
	h.key("?")
	h.contains("Keys", "R replay (disabled: no plan)", "q quit", "w waive", "/ filter", "esc, ? or q closes this help")
	h.key("esc")
	h.contains("exceptions: 5 · row 1")
	if strings.Contains(h.screen(), "closes this help") {
		t.Fatal("esc did not close the help")
	}
	// q in the help closes the help, it does not quit.
	h.key("?")
	_, cmd := h.b.Update(keyMsg("q"))
	if cmd != nil {
		t.Fatal("q in the help returned a command (quit?)")
	}
	h.contains("exceptions: 5 · row 1")
}
