// Package ledgertest is the conformance suite every ledger.Store runs
// against itself:
//
//	func TestConformance(t *testing.T) {
//		ledgertest.Run(t, func(t *testing.T) ledger.Store {
//			s, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "state.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// open must return a new, empty store and arrange for it to be closed. The
// expected values below are written by hand, never computed by the store.
package ledgertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
)

// Open returns a new, empty store.
type Open = func(t *testing.T) ledger.Store

// Run runs the conformance suite.
func Run(t *testing.T, open Open) {
	t.Helper()
	t.Run("Runs", func(t *testing.T) { testRuns(t, open(t)) })
	t.Run("Watermark", func(t *testing.T) { testWatermark(t, open(t)) })
	t.Run("Stagings", func(t *testing.T) { testStagings(t, open(t)) })
	t.Run("Locks", func(t *testing.T) { testLocks(t, open(t)) })
	t.Run("LockRace", func(t *testing.T) { testLockRace(t, open(t)) })
	t.Run("AddPendingRoundTrip", func(t *testing.T) { testRoundTrip(t, open(t)) })
	t.Run("AddPendingValidation", func(t *testing.T) { testValidation(t, open(t)) })
	t.Run("RawBytes", func(t *testing.T) { testRawBytes(t, open(t)) })
	t.Run("TextNormalization", func(t *testing.T) { testText(t, open(t)) })
	t.Run("PendingLifecycle", func(t *testing.T) { testPending(t, open(t)) })
	t.Run("Transitions", func(t *testing.T) { testTransitions(t, open) })
	t.Run("AllOrNothing", func(t *testing.T) { testAllOrNothing(t, open(t)) })
	t.Run("History", func(t *testing.T) { testHistory(t, open(t)) })
	t.Run("FixedMerge", func(t *testing.T) { testFixedMerge(t, open(t)) })
	t.Run("Reopen", func(t *testing.T) { testReopen(t, open(t)) })
	t.Run("Queue", func(t *testing.T) { testQueue(t, open(t)) })
	t.Run("PagingConcurrentInserts", func(t *testing.T) { testPagingInserts(t, open(t)) })
	t.Run("BadInput", func(t *testing.T) { testBadInput(t, open(t)) })
	t.Run("Identity", func(t *testing.T) { testIdentity(t, open(t)) })
	t.Run("Supersede", func(t *testing.T) { testSupersede(t, open(t)) })
	t.Run("IdentityAnyPosition", func(t *testing.T) { testIdentityAnyPosition(t, open(t)) })
	t.Run("IdentityByOccurrence", func(t *testing.T) { testIdentityByOccurrence(t, open(t)) })
}

var ctx = context.Background()

// T0 is the reference "now" of the queue tests.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	past   = T0.Add(-48 * time.Hour)
	future = T0.Add(48 * time.Hour)
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

// exLine gives every exception ex makes its own line: distinct bad rows
// (a store keeps one exception per identity — table, position, rules).
var exLine atomic.Int64

func ex(table, load, owner string, deadline time.Time, rules ...string) ledger.Exception {
	line := 2 + exLine.Add(1)
	e := ledger.Exception{RunID: "run-1", LoadID: load, Table: table, Level: "row", File: table + ".csv", Line: line, Row: line,
		Raw: []byte("x,y\n"), Encoding: "utf-8", Owner: owner, Deadline: deadline}
	for _, r := range rules {
		e.Failures = append(e.Failures, ledger.Failure{Column: "c", Value: "v", Rule: r, Reason: r + " failed"})
	}
	return e
}

// add inserts pending exceptions and returns their ids.
func add(t *testing.T, s ledger.Store, es ...ledger.Exception) []int64 {
	t.Helper()
	must(t, s.AddPending(ctx, es))
	ids := make([]int64, len(es))
	for i, e := range es {
		if e.ID <= 0 {
			t.Fatalf("AddPending did not set the id of element %d", i)
		}
		ids[i] = e.ID
	}
	return ids
}

// committed inserts and publishes exceptions of one load.
func committed(t *testing.T, s ledger.Store, es ...ledger.Exception) []int64 {
	t.Helper()
	ids := add(t, s, es...)
	for _, l := range loadsOf(es) {
		if _, err := s.Publish(ctx, l.Table, l.LoadID); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func loadsOf(es []ledger.Exception) []ledger.LoadRef {
	var out []ledger.LoadRef
	for _, e := range es {
		l := ledger.LoadRef{Table: e.Table, LoadID: e.LoadID}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

func get(t *testing.T, s ledger.Store, id int64) ledger.Exception {
	t.Helper()
	e, err := s.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get(%d): %v", id, err)
	}
	return e
}

// listAll pages through f with the given page size and returns the ids.
func listAll(t *testing.T, s ledger.Store, f ledger.Filter, size int, desc bool) []int64 {
	t.Helper()
	var out []int64
	var after ledger.Cursor
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		es, next, err := s.List(ctx, f, ledger.Page{After: after, Limit: size, Desc: desc})
		if err != nil {
			t.Fatalf("List(%+v): %v", f, err)
		}
		if len(es) > size {
			t.Fatalf("page of %d rows, limit %d", len(es), size)
		}
		for _, e := range es {
			if e.State != ledger.StateCommitted {
				t.Fatalf("List returned exception %d in state %s", e.ID, e.State)
			}
			out = append(out, e.ID)
		}
		if next == "" {
			return out
		}
		if len(es) == 0 {
			t.Fatal("empty page with a next cursor")
		}
		after = next
	}
}

// ---- runs, watermarks, locks ----

func testRuns(t *testing.T, s ledger.Store) {
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	t2 := t1.Add(time.Hour)
	must(t, s.BeginRun(ctx, ledger.Run{ID: "r1", Started: t1, Status: "running", PlanHash: "sha256:aa"}))
	must(t, s.BeginRun(ctx, ledger.Run{ID: "r2", Started: t2, PlanHash: "sha256:bb"}))
	wantErr(t, "BeginRun twice", s.BeginRun(ctx, ledger.Run{ID: "r1", Started: t1}), ledger.ErrExists)
	wantErr(t, "BeginRun without id", s.BeginRun(ctx, ledger.Run{}), ledger.ErrInvalid)

	fin := t1.Add(90 * time.Second)
	sum := []byte(`{"rows_read": 10, "tables": ["a"]}`)
	must(t, s.FinishRun(ctx, "r1", "ok", fin, sum))
	wantErr(t, "FinishRun twice", s.FinishRun(ctx, "r1", "failed", fin, nil), ledger.ErrBadTransition)
	wantErr(t, "FinishRun unknown", s.FinishRun(ctx, "nope", "ok", fin, nil), ledger.ErrNotFound)
	wantErr(t, "FinishRun bad summary", s.FinishRun(ctx, "r2", "ok", fin, []byte("{not json")), ledger.ErrInvalid)

	runs, err := s.Runs(ctx, 0)
	must(t, err)
	if len(runs) != 2 || runs[0].ID != "r2" || runs[1].ID != "r1" {
		t.Fatalf("Runs = %+v, want r2 then r1", runs)
	}
	r1, r2 := runs[1], runs[0]
	if !r1.Started.Equal(t1) || !r1.Finished.Equal(fin) || r1.Status != "ok" || r1.PlanHash != "sha256:aa" || !bytes.Equal(r1.Summary, sum) {
		t.Errorf("r1 = %+v", r1)
	}
	if !r2.Started.Equal(t2) || !r2.Finished.IsZero() || r2.Status != "running" || r2.PlanHash != "sha256:bb" || len(r2.Summary) != 0 {
		t.Errorf("r2 = %+v (want status running, not finished)", r2)
	}
	if _, err := json.Marshal(runs); err != nil {
		t.Errorf("runs do not marshal: %v", err)
	}
	runs, err = s.Runs(ctx, 1)
	must(t, err)
	if len(runs) != 1 || runs[0].ID != "r2" {
		t.Fatalf("Runs(1) = %+v, want [r2]", runs)
	}
}

func testWatermark(t *testing.T, s ledger.Store) {
	_, ok, err := s.Watermark(ctx, "orders")
	must(t, err)
	if ok {
		t.Fatal("watermark of a new store")
	}
	must(t, s.SetWatermark(ctx, "orders", "2026-01-31T00:00:00Z", "load-1", 111))
	must(t, s.SetWatermark(ctx, "items", "42", "load-1", 7))
	must(t, s.SetWatermark(ctx, "orders", "2026-02-28T00:00:00Z", "load-2", 222))
	w, ok, err := s.Watermark(ctx, "orders")
	must(t, err)
	if !ok || w.Table != "orders" || w.Watermark != "2026-02-28T00:00:00Z" || w.LoadID != "load-2" || w.SnapshotID != 222 || w.UpdatedAt.IsZero() {
		t.Fatalf("orders watermark = %+v, %v", w, ok)
	}
	w, ok, err = s.Watermark(ctx, "items")
	must(t, err)
	if !ok || w.Watermark != "42" || w.LoadID != "load-1" || w.SnapshotID != 7 {
		t.Fatalf("items watermark = %+v, %v", w, ok)
	}
	wantErr(t, "SetWatermark without table", s.SetWatermark(ctx, "", "1", "l", 1), ledger.ErrInvalid)
}

func testStagings(t *testing.T, s ledger.Store) {
	got, err := s.Stagings(ctx)
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("stagings of a new store: %+v", got)
	}
	t1 := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)
	must(t, s.BeginStaging(ctx, ledger.Staging{WriteID: "w-2", Table: "orders", LoadID: "load-2", RunID: "r2", Started: t1.Add(time.Minute)}))
	must(t, s.BeginStaging(ctx, ledger.Staging{WriteID: "w-1", Table: "items", LoadID: "load-1", Started: t1}))
	must(t, s.BeginStaging(ctx, ledger.Staging{WriteID: "w-3", Table: "orders"})) // the load id is optional
	if err := s.BeginStaging(ctx, ledger.Staging{WriteID: "w-1", Table: "items", LoadID: "load-9"}); err == nil {
		t.Fatal("a write id recorded twice")
	}
	got, err = s.Stagings(ctx)
	must(t, err)
	if len(got) != 3 || got[0].WriteID != "w-1" || got[1].WriteID != "w-2" || got[2].WriteID != "w-3" {
		t.Fatalf("stagings = %+v, want w-1, w-2, w-3 (oldest first)", got)
	}
	if g := got[1]; g.Table != "orders" || g.LoadID != "load-2" || g.RunID != "r2" || !g.Started.Equal(t1.Add(time.Minute).Truncate(time.Microsecond)) {
		t.Fatalf("staging w-2 = %+v", g)
	}
	if got[2].Started.IsZero() {
		t.Fatal("a staging without a start time got none")
	}
	must(t, s.EndStaging(ctx, "w-2"))
	must(t, s.EndStaging(ctx, "w-2")) // a no-op
	must(t, s.EndStaging(ctx, "never-recorded"))
	got, err = s.Stagings(ctx)
	must(t, err)
	if len(got) != 2 || got[0].WriteID != "w-1" || got[1].WriteID != "w-3" {
		t.Fatalf("stagings after EndStaging(w-2) = %+v", got)
	}
	wantErr(t, "BeginStaging without write id", s.BeginStaging(ctx, ledger.Staging{Table: "t", LoadID: "l"}), ledger.ErrInvalid)
	wantErr(t, "BeginStaging without table", s.BeginStaging(ctx, ledger.Staging{WriteID: "w", LoadID: "l"}), ledger.ErrInvalid)
	wantErr(t, "EndStaging without write id", s.EndStaging(ctx, ""), ledger.ErrInvalid)
}

func testLocks(t *testing.T, s ledger.Store) {
	try := func(name, owner string, ttl time.Duration, want bool) {
		t.Helper()
		got, err := s.TryLock(ctx, name, owner, ttl)
		must(t, err)
		if got != want {
			t.Fatalf("TryLock(%s, %s) = %v, want %v", name, owner, got, want)
		}
	}
	try("plan", "host-a", time.Hour, true)
	try("plan", "host-b", time.Hour, false)
	try("plan", "host-a", time.Hour, true) // renewal by the holder
	try("other", "host-b", time.Hour, true)
	wantErr(t, "Unlock by non-owner", s.Unlock(ctx, "plan", "host-b"), ledger.ErrLockNotHeld)
	try("plan", "host-b", time.Hour, false) // still held by a
	must(t, s.Unlock(ctx, "plan", "host-a"))
	must(t, s.Unlock(ctx, "plan", "host-a")) // nobody holds it: no-op
	try("plan", "host-b", time.Hour, true)

	// Expiry: a short lease is taken over once expired, not before.
	try("short", "host-a", 150*time.Millisecond, true)
	try("short", "host-b", time.Hour, false)
	time.Sleep(400 * time.Millisecond)
	try("short", "host-b", time.Hour, true)
	try("short", "host-a", time.Hour, false)
	wantErr(t, "Unlock after takeover", s.Unlock(ctx, "short", "host-a"), ledger.ErrLockNotHeld)
	must(t, s.Unlock(ctx, "short", "host-b"))

	_, err := s.TryLock(ctx, "x", "a", 0)
	wantErr(t, "TryLock ttl 0", err, ledger.ErrInvalid)
	_, err = s.TryLock(ctx, "", "a", time.Second)
	wantErr(t, "TryLock no name", err, ledger.ErrInvalid)
	_, err = s.TryLock(ctx, "x", "", time.Second)
	wantErr(t, "TryLock no owner", err, ledger.ErrInvalid)
}

func testLockRace(t *testing.T, s ledger.Store) {
	const n = 8
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			won[i], errs[i] = s.TryLock(ctx, "race", fmt.Sprintf("owner-%d", i), time.Hour)
		}()
	}
	wg.Wait()
	winners := 0
	for i := range n {
		must(t, errs[i])
		if won[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d owners took the same lock, want exactly 1", winners)
	}
}

// ---- adding ----

func testRoundTrip(t *testing.T, s ledger.Store) {
	dl := time.Date(2026, 4, 1, 8, 30, 0, 250000000, time.UTC)
	in := []ledger.Exception{{
		RunID: "run-7", LoadID: "load-7", Table: "orders", Level: "row", File: "in/orders_2026-01.csv", Line: 12, Row: 11,
		Key: "order_id=1001", Raw: []byte("1001;2026-13-01;12,50\r\n"), Encoding: "windows-1252",
		Failures: []ledger.Failure{
			{Column: "order_date", Value: "2026-13-01", Rule: "date", Reason: "month 13"},
			{Column: "amount", Value: "12,50", Rule: "decimal", Reason: "comma"},
			{Column: "amount2", Value: "x", Rule: "decimal", Reason: "not a number"},
		},
		Owner: "finance", Deadline: dl, Status: "waived", State: "committed", ReplayLoadID: "ignored",
		Fixed:  map[string]string{"amount": "12.50"},
		Values: map[string]string{"order_id": "1001", "order_date": "2026-13-01", "amount": "12,50", "note": ""},
	}, {
		LoadID: "load-7", Table: "orders", Level: "file", File: "in/broken.csv",
		Failures: []ledger.Failure{{Rule: "file", Reason: "unexpected EOF"}},
	}}
	ids := add(t, s, in...)
	if ids[0] >= ids[1] {
		t.Errorf("ids %v are not increasing in batch order", ids)
	}
	if in[0].Status != "open" || in[0].State != "pending" || in[0].CreatedAt.IsZero() || in[0].UpdatedAt.IsZero() {
		t.Errorf("AddPending set status %q state %q created %v", in[0].Status, in[0].State, in[0].CreatedAt)
	}
	got := get(t, s, ids[0])
	want := ledger.Exception{
		ID: ids[0], RunID: "run-7", LoadID: "load-7", Table: "orders", Level: "row", File: "in/orders_2026-01.csv", Line: 12, Row: 11,
		Key: "order_id=1001", Raw: []byte("1001;2026-13-01;12,50\r\n"), Encoding: "windows-1252",
		Failures: []ledger.Failure{
			{Column: "order_date", Value: "2026-13-01", Rule: "date", Reason: "month 13"},
			{Column: "amount", Value: "12,50", Rule: "decimal", Reason: "comma"},
			{Column: "amount2", Value: "x", Rule: "decimal", Reason: "not a number"},
		},
		Owner: "finance", Deadline: dl, Status: "open", State: "pending", Fixed: map[string]string{"amount": "12.50"},
		Values: map[string]string{"order_id": "1001", "order_date": "2026-13-01", "amount": "12,50", "note": ""},
	}
	compare(t, got, want)
	if !got.CreatedAt.Equal(in[0].CreatedAt) || !got.UpdatedAt.Equal(in[0].UpdatedAt) {
		t.Errorf("created/updated %v/%v, AddPending said %v/%v", got.CreatedAt, got.UpdatedAt, in[0].CreatedAt, in[0].UpdatedAt)
	}
	file := get(t, s, ids[1])
	if file.Level != "file" || len(file.Raw) != 0 || !file.Deadline.IsZero() || file.Owner != "" || file.Fixed != nil || file.Values != nil {
		t.Errorf("file exception = %+v", file)
	}
	// Level defaults to row.
	e := ex("t", "l", "", time.Time{}, "r")
	e.Level = ""
	id := add(t, s, e)[0]
	if got := get(t, s, id).Level; got != "row" {
		t.Errorf("default level = %q, want row", got)
	}
	must(t, s.AddPending(ctx, nil))
}

func compare(t *testing.T, got, want ledger.Exception) {
	t.Helper()
	if got.ID != want.ID || got.RunID != want.RunID || got.LoadID != want.LoadID || got.Table != want.Table || got.Level != want.Level ||
		got.File != want.File || got.Line != want.Line || got.Row != want.Row || got.Key != want.Key || got.Encoding != want.Encoding ||
		got.Owner != want.Owner || got.Status != want.Status || got.State != want.State || got.ReplayLoadID != want.ReplayLoadID {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if !bytes.Equal(got.Raw, want.Raw) {
		t.Errorf("raw = %q, want %q", got.Raw, want.Raw)
	}
	if !got.Deadline.Equal(want.Deadline) {
		t.Errorf("deadline = %v, want %v", got.Deadline, want.Deadline)
	}
	if !slices.Equal(got.Failures, want.Failures) {
		t.Errorf("failures = %+v, want %+v", got.Failures, want.Failures)
	}
	if !maps.Equal(got.Fixed, want.Fixed) {
		t.Errorf("fixed = %v, want %v", got.Fixed, want.Fixed)
	}
	if !maps.Equal(got.Values, want.Values) {
		t.Errorf("values = %q, want %q", got.Values, want.Values)
	}
}

func testValidation(t *testing.T, s ledger.Store) {
	good := ex("t", "l1", "", time.Time{}, "r")
	cases := []struct {
		name string
		bad  func(e *ledger.Exception)
	}{
		{"no table", func(e *ledger.Exception) { e.Table = "" }},
		{"blank table", func(e *ledger.Exception) { e.Table = "  " }},
		{"no load id", func(e *ledger.Exception) { e.LoadID = "" }},
		{"bad level", func(e *ledger.Exception) { e.Level = "cell" }},
		{"no failures", func(e *ledger.Exception) { e.Failures = nil }},
		{"failure without rule", func(e *ledger.Exception) { e.Failures = []ledger.Failure{{Column: "a", Reason: "?"}} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := ex("t", "l1", "", time.Time{}, "r")
			c.bad(&bad)
			batch := []ledger.Exception{good, bad}
			wantErr(t, "AddPending", s.AddPending(ctx, batch), ledger.ErrInvalid)
			if batch[0].ID != 0 {
				t.Errorf("a failed batch set ids")
			}
		})
	}
	loads, err := s.PendingLoads(ctx)
	must(t, err)
	if len(loads) != 0 {
		t.Fatalf("a failed batch left pending rows: %v", loads)
	}
}

func testRawBytes(t *testing.T, s ledger.Store) {
	all := make([]byte, 0, 512)
	for i := range 512 {
		all = append(all, byte(i))
	}
	big := bytes.Repeat([]byte("a\x00b\xff\r\n"), 20000)
	cases := [][]byte{
		[]byte("\xff\xfe\xfd invalid utf-8 \xc3\x28"),
		[]byte("nul\x00inside\x00"),
		[]byte("a,b,c\r\n"),
		[]byte("\r\n\r\n"),
		[]byte("\xef\xbb\xbfbom,first\n"),
		[]byte("caf\xe9;na\xefve\n"), // latin-1
		[]byte("\x00"),
		all,
		big,
	}
	var es []ledger.Exception
	for _, raw := range cases {
		e := ex("raw", "l", "", time.Time{}, "r")
		e.Raw = raw
		es = append(es, e)
	}
	ids := committed(t, s, es...)
	for i, id := range ids {
		if got := get(t, s, id).Raw; !bytes.Equal(got, cases[i]) {
			t.Errorf("case %d: Get raw = %q (len %d), want len %d", i, trunc(got), len(got), len(cases[i]))
		}
	}
	list, _, err := s.List(ctx, ledger.Filter{Table: "raw"}, ledger.Page{Limit: 100})
	must(t, err)
	if len(list) != len(cases) {
		t.Fatalf("List = %d rows, want %d", len(list), len(cases))
	}
	for i, e := range list {
		if !bytes.Equal(e.Raw, cases[i]) {
			t.Errorf("case %d: List raw = %q", i, trunc(e.Raw))
		}
	}
	// JSON keeps them too (base64).
	b, err := json.Marshal(list[0])
	must(t, err)
	var back ledger.Exception
	must(t, json.Unmarshal(b, &back))
	if !bytes.Equal(back.Raw, cases[0]) {
		t.Errorf("raw through JSON = %q", back.Raw)
	}
}

func trunc(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// Text fields hold valid UTF-8 without NUL in every store: invalid bytes and
// NUL become U+FFFD (Raw keeps the bytes).
func testText(t *testing.T, s ledger.Store) {
	e := ex("t\x00x", "l\xff", "own\xfeer", time.Time{}, "r")
	e.Key = "k\x00\xff"
	e.File = "caf\xe9.csv"
	e.Failures = []ledger.Failure{{Column: "c\x00", Value: "\xffv\x00", Rule: "r\xff", Reason: "\x00bad\x00"}}
	e.Raw = []byte("k\x00\xff")
	e.Values = map[string]string{"k": "k\x00\xff"}
	e.Line, e.Row = 2, 2
	id := committed(t, s, e)[0]
	got := get(t, s, id)
	want := ledger.Exception{
		ID: id, RunID: "run-1", LoadID: "l\uFFFD", Table: "t\uFFFDx", Level: "row", File: "caf\uFFFD.csv", Line: 2, Row: 2,
		Key: "k\uFFFD\uFFFD", Raw: []byte("k\x00\xff"), Encoding: "utf-8", Owner: "own\uFFFDer", Status: "open", State: "committed",
		Failures: []ledger.Failure{{Column: "c\uFFFD", Value: "\uFFFDv\uFFFD", Rule: "r\uFFFD", Reason: "\uFFFDbad\uFFFD"}},
		Values:   map[string]string{"k": "k\uFFFD\uFFFD"},
	}
	compare(t, got, want)
	n, err := s.Count(ctx, ledger.Filter{Table: "t\x00x", Owner: "own\xfeer", Rule: "r\xff"})
	must(t, err)
	if n != 1 {
		t.Errorf("filter with the raw text: count %d, want 1", n)
	}
	must(t, s.Resolve(ctx, id, map[string]string{"c\x00": "v\xff"}, "ann\x00", "note\xff"))
	if got := get(t, s, id).Fixed; !maps.Equal(got, map[string]string{"c\uFFFD": "v\uFFFD"}) {
		t.Errorf("fixed = %q", got)
	}
	h, err := s.History(ctx, id)
	must(t, err)
	if last := h[len(h)-1]; last.By != "ann\uFFFD" || last.Note != "note\uFFFD" {
		t.Errorf("event = %+v", last)
	}
}

// ---- pending → committed ----

func testPending(t *testing.T, s ledger.Store) {
	a := add(t, s,
		ex("orders", "L1", "alice", past, "r1"),
		ex("orders", "L1", "alice", past, "r1", "r2"),
		ex("orders", "L1", "bob", past, "r2"))
	b := add(t, s, ex("orders", "L2", "alice", past, "r1"), ex("orders", "L2", "alice", past, "r1"))
	c := add(t, s, ex("items", "L1", "alice", past, "r1")) // same load id, other table

	loads, err := s.PendingLoads(ctx)
	must(t, err)
	wantLoads := []ledger.LoadRef{{Table: "items", LoadID: "L1"}, {Table: "orders", LoadID: "L1"}, {Table: "orders", LoadID: "L2"}}
	if !slices.Equal(loads, wantLoads) {
		t.Fatalf("PendingLoads = %v, want %v", loads, wantLoads)
	}
	counts := func(want int64, f ledger.Filter) {
		t.Helper()
		n, err := s.Count(ctx, f)
		must(t, err)
		if n != want {
			t.Fatalf("Count(%+v) = %d, want %d", f, n, want)
		}
		es, _, err := s.List(ctx, f, ledger.Page{Limit: 100})
		must(t, err)
		if int64(len(es)) != want {
			t.Fatalf("List(%+v) = %d rows, want %d", f, len(es), want)
		}
	}
	// Pending rows are invisible to List, Count and CountBy.
	counts(0, ledger.Filter{})
	counts(0, ledger.Filter{Rule: "r1"})
	counts(0, ledger.Filter{Owner: "alice", Overdue: true, Now: T0})
	by, err := s.CountBy(ctx, ledger.Filter{}, "rule")
	must(t, err)
	if len(by) != 0 {
		t.Fatalf("CountBy(rule) of pending rows = %v", by)
	}
	// … but Get shows them, as pending.
	if st := get(t, s, a[0]).State; st != "pending" {
		t.Fatalf("state = %s", st)
	}

	n, err := s.Publish(ctx, "orders", "L1")
	must(t, err)
	if n != 3 {
		t.Fatalf("Publish = %d, want 3", n)
	}
	counts(3, ledger.Filter{})
	counts(2, ledger.Filter{Rule: "r1"})
	counts(2, ledger.Filter{Rule: "r2"})
	counts(2, ledger.Filter{Owner: "alice", Overdue: true, Now: T0})
	if e := get(t, s, a[1]); e.State != "committed" || e.Status != "open" {
		t.Fatalf("published exception: state %s status %s", e.State, e.Status)
	}
	n, err = s.Publish(ctx, "orders", "L1")
	must(t, err)
	if n != 0 {
		t.Fatalf("second Publish = %d, want 0", n)
	}

	// DiscardPending removes only that load of that table.
	n, err = s.DiscardPending(ctx, "orders", "L2")
	must(t, err)
	if n != 2 {
		t.Fatalf("DiscardPending = %d, want 2", n)
	}
	for _, id := range b {
		_, err := s.Get(ctx, id)
		wantErr(t, "Get discarded", err, ledger.ErrNotFound)
	}
	get(t, s, c[0])
	n, err = s.DiscardPending(ctx, "orders", "L1") // already committed: untouched
	must(t, err)
	if n != 0 {
		t.Fatalf("DiscardPending of a committed load = %d, want 0", n)
	}
	counts(3, ledger.Filter{})
	loads, err = s.PendingLoads(ctx)
	must(t, err)
	if want := []ledger.LoadRef{{Table: "items", LoadID: "L1"}}; !slices.Equal(loads, want) {
		t.Fatalf("PendingLoads = %v, want %v", loads, want)
	}
	// Ids of discarded rows are not reused.
	d := add(t, s, ex("orders", "L3", "", past, "r"))
	if d[0] <= b[1] {
		t.Errorf("new id %d reuses the range of discarded ids %v", d[0], b)
	}
	// A pending exception cannot change status.
	wantErr(t, "Resolve pending", s.Resolve(ctx, c[0], nil, "ann", ""), ledger.ErrBadTransition)
	wantErr(t, "Assign pending", s.Assign(ctx, []int64{c[0]}, "bob", "ann"), ledger.ErrBadTransition)
	_, err = s.History(ctx, c[0])
	must(t, err)
}

// ---- transitions ----

const bad = "BAD"

func testTransitions(t *testing.T, open Open) {
	// start status × action → resulting status, or BAD (ErrBadTransition).
	table := []struct {
		start                                  string
		resolve, waive, replay, reopen, assign string
	}{
		{"open", "fixed", "waived", bad, bad, "open"},
		{"fixed", "fixed", "waived", "replayed", "open", "fixed"},
		{"replayed", bad, bad, bad, bad, bad},
		{"waived", bad, bad, bad, bad, bad},
	}
	s := open(t)
	setup := func(t *testing.T, start string) int64 {
		id := committed(t, s, ex("t", "l-"+start, "alice", future, "r"))[0]
		switch start {
		case "fixed":
			must(t, s.Resolve(ctx, id, map[string]string{"c": "1"}, "ann", ""))
		case "replayed":
			must(t, s.Resolve(ctx, id, map[string]string{"c": "1"}, "ann", ""))
			must(t, s.MarkReplayed(ctx, []int64{id}, "replay-1", "lima"))
		case "waived":
			must(t, s.Waive(ctx, id, "known issue", "ann"))
		}
		if got := get(t, s, id).Status; got != start {
			t.Fatalf("setup %s: status %s", start, got)
		}
		return id
	}
	for _, row := range table {
		actions := []struct {
			name, want string
			do         func(id int64) error
		}{
			{"resolve", row.resolve, func(id int64) error { return s.Resolve(ctx, id, map[string]string{"c": "2"}, "ann", "fixed") }},
			{"waive", row.waive, func(id int64) error { return s.Waive(ctx, id, "accepted", "ann") }},
			{"replay", row.replay, func(id int64) error { return s.MarkReplayed(ctx, []int64{id}, "replay-2", "lima") }},
			{"reopen", row.reopen, func(id int64) error {
				return s.Reopen(ctx, id, []ledger.Failure{{Column: "c", Value: "2", Rule: "r", Reason: "still bad"}}, "lima")
			}},
			{"assign", row.assign, func(id int64) error { return s.Assign(ctx, []int64{id}, "bob", "ann") }},
		}
		for _, a := range actions {
			t.Run(row.start+"/"+a.name, func(t *testing.T) {
				id := setup(t, row.start)
				before, err := s.History(ctx, id)
				must(t, err)
				err = a.do(id)
				after := get(t, s, id)
				h, herr := s.History(ctx, id)
				must(t, herr)
				if a.want == bad {
					wantErr(t, a.name, err, ledger.ErrBadTransition)
					if after.Status != row.start {
						t.Fatalf("refused %s changed status to %s", a.name, after.Status)
					}
					if len(h) != len(before) {
						t.Fatalf("refused %s recorded an event", a.name)
					}
					return
				}
				must(t, err)
				if after.Status != a.want {
					t.Fatalf("%s from %s: status %s, want %s", a.name, row.start, after.Status, a.want)
				}
				if len(h) != len(before)+1 {
					t.Fatalf("%s recorded %d events, want 1", a.name, len(h)-len(before))
				}
				last := h[len(h)-1]
				if last.From != row.start || last.To != a.want || last.By == "" || last.At.IsZero() {
					t.Fatalf("event = %+v", last)
				}
			})
		}
	}
	t.Run("not found", func(t *testing.T) {
		const missing = 987654321
		wantErr(t, "Get", func() error { _, err := s.Get(ctx, missing); return err }(), ledger.ErrNotFound)
		wantErr(t, "Resolve", s.Resolve(ctx, missing, nil, "ann", ""), ledger.ErrNotFound)
		wantErr(t, "Waive", s.Waive(ctx, missing, "x", "ann"), ledger.ErrNotFound)
		wantErr(t, "MarkReplayed", s.MarkReplayed(ctx, []int64{missing}, "r", "ann"), ledger.ErrNotFound)
		wantErr(t, "Reopen", s.Reopen(ctx, missing, []ledger.Failure{{Rule: "r"}}, "ann"), ledger.ErrNotFound)
		wantErr(t, "Assign", s.Assign(ctx, []int64{missing}, "bob", "ann"), ledger.ErrNotFound)
		wantErr(t, "History", func() error { _, err := s.History(ctx, missing); return err }(), ledger.ErrNotFound)
	})
	t.Run("arguments", func(t *testing.T) {
		id := setup(t, "open")
		wantErr(t, "Waive without reason", s.Waive(ctx, id, "  ", "ann"), ledger.ErrInvalid)
		wantErr(t, "Resolve without who", s.Resolve(ctx, id, nil, "", ""), ledger.ErrInvalid)
		wantErr(t, "Assign without who", s.Assign(ctx, []int64{id}, "bob", ""), ledger.ErrInvalid)
		wantErr(t, "MarkReplayed without load", s.MarkReplayed(ctx, []int64{id}, "", "ann"), ledger.ErrInvalid)
		fid := setup(t, "fixed")
		wantErr(t, "Reopen without reasons", s.Reopen(ctx, fid, nil, "lima"), ledger.ErrInvalid)
		wantErr(t, "Reopen reason without rule", s.Reopen(ctx, fid, []ledger.Failure{{Reason: "x"}}, "lima"), ledger.ErrInvalid)
		if get(t, s, id).Status != "open" || get(t, s, fid).Status != "fixed" {
			t.Fatal("a refused call changed a status")
		}
		must(t, s.Assign(ctx, nil, "bob", "ann"))
		must(t, s.MarkReplayed(ctx, nil, "r", "ann"))
	})
}

func testAllOrNothing(t *testing.T, s ledger.Store) {
	ids := committed(t, s, ex("t", "l", "alice", future, "r"), ex("t", "l", "alice", future, "r"), ex("t", "l", "alice", future, "r"))
	must(t, s.Resolve(ctx, ids[0], nil, "ann", ""))
	must(t, s.Waive(ctx, ids[2], "dup", "ann"))
	// ids[1] is open: the batch is refused and ids[0] stays fixed.
	wantErr(t, "MarkReplayed", s.MarkReplayed(ctx, []int64{ids[0], ids[1]}, "replay", "lima"), ledger.ErrBadTransition)
	if e := get(t, s, ids[0]); e.Status != "fixed" || e.ReplayLoadID != "" {
		t.Fatalf("partial MarkReplayed: %s %q", e.Status, e.ReplayLoadID)
	}
	// ids[2] is waived: Assign is refused for all.
	wantErr(t, "Assign", s.Assign(ctx, []int64{ids[0], ids[1], ids[2]}, "bob", "ann"), ledger.ErrBadTransition)
	for _, id := range ids {
		if o := get(t, s, id).Owner; o != "alice" {
			t.Fatalf("partial Assign: owner of %d is %s", id, o)
		}
	}
	must(t, s.Assign(ctx, []int64{ids[0], ids[1], ids[1]}, "bob", "ann"))
	if get(t, s, ids[0]).Owner != "bob" || get(t, s, ids[1]).Owner != "bob" {
		t.Fatal("Assign did not assign")
	}
	// Counts by rule follow owners and statuses.
	n, err := s.Count(ctx, ledger.Filter{Rule: "r", Owner: "bob"})
	must(t, err)
	if n != 2 {
		t.Fatalf("Count(rule r, owner bob) = %d, want 2", n)
	}
	for _, c := range []struct {
		field string
		f     ledger.Filter
		want  map[string]int64
	}{
		{"owner", ledger.Filter{Rule: "r"}, map[string]int64{"bob": 2, "alice": 1}},
		{"rule", ledger.Filter{Owner: "bob"}, map[string]int64{"r": 2}},
		{"status", ledger.Filter{Rule: "r"}, map[string]int64{"fixed": 1, "open": 1, "waived": 1}},
		{"rule", ledger.Filter{Owner: "alice", Status: "waived"}, map[string]int64{"r": 1}},
	} {
		got, err := s.CountBy(ctx, c.f, c.field)
		must(t, err)
		if !maps.Equal(got, c.want) {
			t.Fatalf("CountBy(%s, %+v) = %v, want %v", c.field, c.f, got, c.want)
		}
	}
	must(t, s.MarkReplayed(ctx, []int64{ids[0]}, "replay-9", "lima"))
	if e := get(t, s, ids[0]); e.Status != "replayed" || e.ReplayLoadID != "replay-9" {
		t.Fatalf("MarkReplayed: %s %q", e.Status, e.ReplayLoadID)
	}
}

func testHistory(t *testing.T, s ledger.Store) {
	e := ex("orders", "L1", "alice", future, "date")
	e.RunID = "R1"
	id := committed(t, s, e)[0]
	must(t, s.Assign(ctx, []int64{id}, "bob", "ann"))
	must(t, s.Resolve(ctx, id, map[string]string{"order_date": "2026-01-13"}, "bob", "swapped day and month"))
	must(t, s.Reopen(ctx, id, []ledger.Failure{{Column: "order_date", Value: "2026-01-13", Rule: "range", Reason: "after ship date"}}, "lima-replay"))
	must(t, s.Resolve(ctx, id, map[string]string{"ship_date": "2026-01-20"}, "bob", ""))
	must(t, s.MarkReplayed(ctx, []int64{id}, "L9", "lima-replay"))
	h, err := s.History(ctx, id)
	must(t, err)
	want := []struct {
		action, by, from, to string
		fixed                map[string]string
		noteHas              string
	}{
		{"created", "run R1", "", "open", nil, ""},
		{"assign", "ann", "open", "open", nil, "bob"},
		{"resolve", "bob", "open", "fixed", map[string]string{"order_date": "2026-01-13"}, "swapped day and month"},
		{"reopen", "lima-replay", "fixed", "open", nil, "range"},
		{"resolve", "bob", "open", "fixed", map[string]string{"ship_date": "2026-01-20"}, ""},
		{"replayed", "lima-replay", "fixed", "replayed", nil, "L9"},
	}
	if len(h) != len(want) {
		t.Fatalf("History = %d events, want %d: %+v", len(h), len(want), h)
	}
	var prev time.Time
	for i, w := range want {
		g := h[i]
		if g.ExceptionID != id || g.Action != w.action || g.By != w.by || g.From != w.from || g.To != w.to ||
			!maps.Equal(g.Fixed, w.fixed) || !strings.Contains(g.Note, w.noteHas) {
			t.Errorf("event %d = %+v, want %+v", i, g, w)
		}
		if g.At.IsZero() || g.At.Before(prev) {
			t.Errorf("event %d at %v (previous %v)", i, g.At, prev)
		}
		prev = g.At
	}
	final := get(t, s, id)
	if final.Status != "replayed" || final.ReplayLoadID != "L9" || final.Owner != "bob" {
		t.Errorf("final = %+v", final)
	}
	if !maps.Equal(final.Fixed, map[string]string{"order_date": "2026-01-13", "ship_date": "2026-01-20"}) {
		t.Errorf("fixed = %v", final.Fixed)
	}
	if !slices.Equal(final.Failures, []ledger.Failure{{Column: "order_date", Value: "2026-01-13", Rule: "range", Reason: "after ship date"}}) {
		t.Errorf("failures = %v", final.Failures)
	}
}

func testFixedMerge(t *testing.T, s ledger.Store) {
	id := committed(t, s, ex("t", "l", "", future, "r"))[0]
	must(t, s.Resolve(ctx, id, map[string]string{"a": "1", "b": "2"}, "ann", ""))
	must(t, s.Resolve(ctx, id, map[string]string{"b": "3", "c": ""}, "ann", "")) // fixed → fixed refines
	must(t, s.Resolve(ctx, id, nil, "ann", "no new values"))
	if got, want := get(t, s, id).Fixed, map[string]string{"a": "1", "b": "3", "c": ""}; !maps.Equal(got, want) {
		t.Fatalf("fixed = %v, want %v", got, want)
	}
	// A file-level exception may be resolved without values (fixed upstream).
	id2 := committed(t, s, ex("t", "l2", "", future, "r"))[0]
	must(t, s.Resolve(ctx, id2, nil, "ann", "source re-sent"))
	if e := get(t, s, id2); e.Status != "fixed" || len(e.Fixed) != 0 {
		t.Fatalf("resolve without values: %+v", e)
	}
}

func testReopen(t *testing.T, s ledger.Store) {
	id := committed(t, s, ex("t", "l", "alice", future, "old1", "old2"))[0]
	other := committed(t, s, ex("t", "l2", "alice", future, "old1"))[0]
	_ = other
	must(t, s.Resolve(ctx, id, map[string]string{"c": "x"}, "ann", ""))
	must(t, s.Reopen(ctx, id, []ledger.Failure{{Column: "c", Value: "x", Rule: "new", Reason: "x is not a number"}}, "lima"))
	e := get(t, s, id)
	if e.Status != "open" || !maps.Equal(e.Fixed, map[string]string{"c": "x"}) {
		t.Fatalf("reopened = %+v", e)
	}
	for _, c := range []struct {
		rule string
		want int64
	}{{"old1", 1}, {"old2", 0}, {"new", 1}} {
		n, err := s.Count(ctx, ledger.Filter{Rule: c.rule})
		must(t, err)
		if n != c.want {
			t.Errorf("Count(rule %s) = %d, want %d", c.rule, n, c.want)
		}
	}
	by, err := s.CountBy(ctx, ledger.Filter{Status: "open"}, "rule")
	must(t, err)
	if want := map[string]int64{"old1": 1, "new": 1}; !maps.Equal(by, want) {
		t.Errorf("CountBy(rule, open) = %v, want %v", by, want)
	}
}

// ---- the queue: filters, paging, counts ----

// queue builds ten committed exceptions (index = position in id order) and
// two pending ones, then moves some through their life cycle:
//
//	#  table      owner  rules               deadline  final status
//	0  orders     alice  not_null            past      open
//	1  orders     bob    bad_date            future    open
//	2  orders     alice  bad_date, not_null  past      fixed
//	3  customers  alice  dup_key             future    open
//	4  customers  bob    not_null            past      waived
//	5  customers  -      bad_date            none      open
//	6  orders     carol  dup_key             past      replayed
//	7  items      alice  not_null (twice)    past      open
//	8  items      bob    bad_num             future    fixed
//	9  orders     alice  bad_num             past      open
//	P  orders     alice  not_null            past      pending (load LP), twice
func queue(t *testing.T, s ledger.Store) []int64 {
	rows := []ledger.Exception{
		ex("orders", "L1", "alice", past, "not_null"),
		ex("orders", "L1", "bob", future, "bad_date"),
		ex("orders", "L1", "alice", past, "bad_date", "not_null"),
		ex("customers", "L2", "alice", future, "dup_key"),
		ex("customers", "L2", "bob", past, "not_null"),
		ex("customers", "L2", "", time.Time{}, "bad_date"),
		ex("orders", "L1", "carol", past, "dup_key"),
		ex("items", "L3", "alice", past, "not_null", "not_null"),
		ex("items", "L3", "bob", future, "bad_num"),
		ex("orders", "L1", "alice", past, "bad_num"),
	}
	ids := add(t, s, rows[:5]...)
	add(t, s, ex("orders", "LP", "alice", past, "not_null"), ex("orders", "LP", "alice", past, "not_null"))
	ids = append(ids, add(t, s, rows[5:]...)...)
	for _, l := range []ledger.LoadRef{{Table: "orders", LoadID: "L1"}, {Table: "customers", LoadID: "L2"}, {Table: "items", LoadID: "L3"}} {
		_, err := s.Publish(ctx, l.Table, l.LoadID)
		must(t, err)
	}
	must(t, s.Resolve(ctx, ids[2], map[string]string{"c": "1"}, "ann", ""))
	must(t, s.Waive(ctx, ids[4], "test data", "ann"))
	must(t, s.Resolve(ctx, ids[6], map[string]string{"c": "1"}, "ann", ""))
	must(t, s.MarkReplayed(ctx, []int64{ids[6]}, "LR", "lima"))
	must(t, s.Resolve(ctx, ids[8], map[string]string{"c": "1"}, "ann", ""))
	return ids
}

func testQueue(t *testing.T, s ledger.Store) {
	ids := queue(t, s)
	pick := func(idx ...int) []int64 {
		out := make([]int64, len(idx))
		for i, x := range idx {
			out[i] = ids[x]
		}
		return out
	}
	filters := []struct {
		name string
		f    ledger.Filter
		want []int64
	}{
		{"all", ledger.Filter{}, pick(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"owner", ledger.Filter{Owner: "alice"}, pick(0, 2, 3, 7, 9)},
		{"owner+overdue", ledger.Filter{Owner: "alice", Overdue: true, Now: T0}, pick(0, 2, 7, 9)},
		{"table", ledger.Filter{Table: "orders"}, pick(0, 1, 2, 6, 9)},
		{"table+owner", ledger.Filter{Table: "orders", Owner: "alice"}, pick(0, 2, 9)},
		{"rule", ledger.Filter{Rule: "not_null"}, pick(0, 2, 4, 7)},
		{"rule2", ledger.Filter{Rule: "bad_date"}, pick(1, 2, 5)},
		{"rule+overdue", ledger.Filter{Rule: "not_null", Overdue: true, Now: T0}, pick(0, 2, 7)},
		{"rule+status", ledger.Filter{Rule: "dup_key", Status: "replayed"}, pick(6)},
		{"rule+table", ledger.Filter{Rule: "bad_num", Table: "items"}, pick(8)},
		{"rule+owner+table", ledger.Filter{Rule: "not_null", Owner: "alice", Table: "orders"}, pick(0, 2)},
		{"status open", ledger.Filter{Status: "open"}, pick(0, 1, 3, 5, 7, 9)},
		{"status fixed", ledger.Filter{Status: "fixed"}, pick(2, 8)},
		{"status waived", ledger.Filter{Status: "waived"}, pick(4)},
		{"status replayed", ledger.Filter{Status: "replayed"}, pick(6)},
		{"overdue", ledger.Filter{Overdue: true, Now: T0}, pick(0, 2, 7, 9)},
		{"overdue later", ledger.Filter{Overdue: true, Now: future.Add(time.Hour)}, pick(0, 1, 2, 3, 7, 8, 9)},
		{"overdue+status fixed", ledger.Filter{Overdue: true, Status: "fixed", Now: T0}, pick(2)},
		{"load", ledger.Filter{LoadID: "L2"}, pick(3, 4, 5)},
		{"rule+load", ledger.Filter{Rule: "not_null", LoadID: "L1"}, pick(0, 2)},
		{"pending load", ledger.Filter{LoadID: "LP"}, nil},
		{"nobody", ledger.Filter{Owner: "nobody"}, nil},
		{"unknown rule", ledger.Filter{Rule: "nope"}, nil},
	}
	for _, c := range filters {
		t.Run("List/"+c.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 100} {
				if got := listAll(t, s, c.f, size, false); !slices.Equal(got, c.want) {
					t.Fatalf("page size %d: ids %v, want %v", size, got, c.want)
				}
				rev := slices.Clone(c.want)
				slices.Reverse(rev)
				if got := listAll(t, s, c.f, size, true); !slices.Equal(got, rev) {
					t.Fatalf("desc, page size %d: ids %v, want %v", size, got, rev)
				}
			}
			n, err := s.Count(ctx, c.f)
			must(t, err)
			if n != int64(len(c.want)) {
				t.Fatalf("Count = %d, want %d", n, len(c.want))
			}
		})
	}
	t.Run("PageShape", func(t *testing.T) {
		es, next, err := s.List(ctx, ledger.Filter{}, ledger.Page{Limit: 10})
		must(t, err)
		if len(es) != 10 || next != "" {
			t.Fatalf("exact page: %d rows, next %q; want 10 rows and no cursor", len(es), next)
		}
		es, next, err = s.List(ctx, ledger.Filter{}, ledger.Page{Limit: 4})
		must(t, err)
		if len(es) != 4 || next == "" {
			t.Fatalf("first page: %d rows, next %q", len(es), next)
		}
		// A cursor can be replayed: same page again.
		es2, _, err := s.List(ctx, ledger.Filter{}, ledger.Page{After: next, Limit: 4})
		must(t, err)
		es3, _, err := s.List(ctx, ledger.Filter{}, ledger.Page{After: next, Limit: 4})
		must(t, err)
		if len(es2) != 4 || es2[0].ID != ids[4] || es3[0].ID != ids[4] {
			t.Fatalf("second page starts at %d, want %d", es2[0].ID, ids[4])
		}
		es, _, err = s.List(ctx, ledger.Filter{}, ledger.Page{})
		must(t, err)
		if len(es) != 10 {
			t.Fatalf("default page size returned %d rows", len(es))
		}
		if e := es[2]; e.Status != "fixed" || e.Fixed["c"] != "1" || e.Table != "orders" || len(e.Failures) != 2 {
			t.Fatalf("listed exception = %+v", e)
		}
	})
	countBy := []struct {
		field string
		f     ledger.Filter
		want  map[string]int64
	}{
		{"rule", ledger.Filter{}, map[string]int64{"not_null": 4, "bad_date": 3, "dup_key": 2, "bad_num": 2}},
		{"table", ledger.Filter{}, map[string]int64{"orders": 5, "customers": 3, "items": 2}},
		{"owner", ledger.Filter{}, map[string]int64{"alice": 5, "bob": 3, "carol": 1, "": 1}},
		{"status", ledger.Filter{}, map[string]int64{"open": 6, "fixed": 2, "waived": 1, "replayed": 1}},
		{"rule", ledger.Filter{Owner: "alice"}, map[string]int64{"not_null": 3, "bad_date": 1, "dup_key": 1, "bad_num": 1}},
		{"rule", ledger.Filter{Status: "open"}, map[string]int64{"not_null": 2, "bad_date": 2, "dup_key": 1, "bad_num": 1}},
		{"rule", ledger.Filter{Rule: "bad_date"}, map[string]int64{"bad_date": 3, "not_null": 1}},
		{"rule", ledger.Filter{Overdue: true, Now: T0}, map[string]int64{"not_null": 3, "bad_date": 1, "bad_num": 1}},
		{"table", ledger.Filter{Overdue: true, Now: T0}, map[string]int64{"orders": 3, "items": 1}},
		{"status", ledger.Filter{Rule: "not_null"}, map[string]int64{"open": 2, "fixed": 1, "waived": 1}},
		{"owner", ledger.Filter{Table: "customers"}, map[string]int64{"alice": 1, "bob": 1, "": 1}},
		{"owner", ledger.Filter{Rule: "bad_num", Status: "open"}, map[string]int64{"alice": 1}},
		{"table", ledger.Filter{LoadID: "LP"}, map[string]int64{}},
		{"rule", ledger.Filter{Rule: "bad_date", LoadID: "L1"}, map[string]int64{"bad_date": 2, "not_null": 1}},
		{"table", ledger.Filter{Rule: "not_null", LoadID: "L2"}, map[string]int64{"customers": 1}},
		{"rule", ledger.Filter{LoadID: "L3", Status: "fixed"}, map[string]int64{"bad_num": 1}},
		{"owner", ledger.Filter{Overdue: true, Now: T0, Status: "open"}, map[string]int64{"alice": 3}},
	}
	for _, c := range countBy {
		t.Run(fmt.Sprintf("CountBy/%s/%+v", c.field, c.f), func(t *testing.T) {
			got, err := s.CountBy(ctx, c.f, c.field)
			must(t, err)
			if !maps.Equal(got, c.want) {
				t.Fatalf("CountBy(%s) = %v, want %v", c.field, got, c.want)
			}
		})
	}
}

func testPagingInserts(t *testing.T, s ledger.Store) {
	ids := queue(t, s)
	f := ledger.Filter{Owner: "alice"}
	want := []int64{ids[0], ids[2], ids[3], ids[7], ids[9]}
	var got []int64
	var after ledger.Cursor
	for round := 0; ; round++ {
		es, next, err := s.List(ctx, f, ledger.Page{After: after, Limit: 2})
		must(t, err)
		for _, e := range es {
			got = append(got, e.ID)
		}
		if next == "" {
			break
		}
		after = next
		if round < 3 {
			// New committed rows (and another pending load) between pages.
			committed(t, s, ex("orders", fmt.Sprintf("N%d", round), "alice", past, "not_null"),
				ex("orders", fmt.Sprintf("N%d", round), "bob", past, "not_null"))
			add(t, s, ex("orders", fmt.Sprintf("P%d", round), "alice", past, "not_null"))
		}
	}
	seen := map[int64]bool{}
	for i, id := range got {
		if seen[id] {
			t.Fatalf("id %d listed twice: %v", id, got)
		}
		seen[id] = true
		if i > 0 && id <= got[i-1] {
			t.Fatalf("ids not in order: %v", got)
		}
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("id %d missing from %v", id, got)
		}
	}
	// 5 original rows and, since new ids are larger, the 3 new alice rows.
	if len(got) != 8 {
		t.Fatalf("listed %d rows, want 8: %v", len(got), got)
	}
	for _, id := range got {
		if e := get(t, s, id); e.Owner != "alice" || e.State != "committed" {
			t.Fatalf("listed %+v", e)
		}
	}
}

func testBadInput(t *testing.T, s ledger.Store) {
	committed(t, s, ex("t", "l", "alice", past, "r"), ex("t", "l", "alice", past, "r"))
	// Not base64; "not a cursor"; "k1.-5"; "k1.x"; "zz.5" (a number after
	// another prefix).
	for _, c := range []ledger.Cursor{"%%%", "bm90IGEgY3Vyc29y", "azEuLTU", "azEueA", "enouNQ"} {
		_, _, err := s.List(ctx, ledger.Filter{}, ledger.Page{After: c})
		wantErr(t, fmt.Sprintf("List after %q", c), err, ledger.ErrInvalid)
	}
	_, err := s.CountBy(ctx, ledger.Filter{}, "colour")
	wantErr(t, "CountBy colour", err, ledger.ErrInvalid)
	_, err = s.CountBy(ctx, ledger.Filter{}, "")
	wantErr(t, "CountBy empty", err, ledger.ErrInvalid)
	_, err = s.Count(ctx, ledger.Filter{Status: "closed"})
	wantErr(t, "Count status closed", err, ledger.ErrInvalid)
	_, _, err = s.List(ctx, ledger.Filter{Status: "closed"}, ledger.Page{})
	wantErr(t, "List status closed", err, ledger.ErrInvalid)
	_, err = s.Get(ctx, -1)
	wantErr(t, "Get(-1)", err, ledger.ErrNotFound)
	_, err = s.Get(ctx, 0)
	wantErr(t, "Get(0)", err, ledger.ErrNotFound)
	es, _, err := s.List(ctx, ledger.Filter{}, ledger.Page{Limit: -5})
	must(t, err)
	if len(es) != 2 {
		t.Fatalf("negative limit: %d rows", len(es))
	}
	es, _, err = s.List(ctx, ledger.Filter{}, ledger.Page{Limit: 1 << 30})
	must(t, err)
	if len(es) != 2 {
		t.Fatalf("huge limit: %d rows", len(es))
	}
	// SQL-looking text is data.
	evil := `x'); DROP TABLE exceptions; --"`
	id := committed(t, s, ex(evil, evil, evil, past, evil))[0]
	n, err := s.Count(ctx, ledger.Filter{Table: evil, Owner: evil, Rule: evil, LoadID: evil})
	must(t, err)
	if n != 1 {
		t.Fatalf("count with quoting = %d", n)
	}
	must(t, s.Waive(ctx, id, evil, evil))
	// A cancelled context is an error, not a hang or a panic.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Count(cctx, ledger.Filter{}); err == nil {
		t.Error("Count with a cancelled context succeeded")
	}
	if err := s.AddPending(cctx, []ledger.Exception{ex("t", "lc", "", past, "r")}); err == nil {
		t.Error("AddPending with a cancelled context succeeded")
	}
}

// row is a bad row of a text file at a line, with its bytes and rules.
func row(table, load, file string, line int64, raw string, rules ...string) ledger.Exception {
	e := ledger.Exception{RunID: "run-" + load, LoadID: load, Table: table, Level: "row", File: file, Line: line, Row: line - 1, Raw: []byte(raw)}
	for _, r := range rules {
		e.Failures = append(e.Failures, ledger.Failure{Column: "c", Value: "v", Rule: r, Reason: r + " failed"})
	}
	return e
}

func publish(t *testing.T, s ledger.Store, table, load string, es ...ledger.Exception) int64 {
	t.Helper()
	if len(es) > 0 {
		must(t, s.AddPending(ctx, es))
	}
	n, err := s.Publish(ctx, table, load)
	must(t, err)
	return n
}

func loadCounts(t *testing.T, s ledger.Store, table, load string, want ledger.LoadCounts) {
	t.Helper()
	got, err := s.LoadCounts(ctx, table, load)
	must(t, err)
	if got != want {
		t.Fatalf("LoadCounts(%s, %s) = %+v, want %+v", table, load, got, want)
	}
}

// testIdentity: a load that meets a bad row already in the queue updates
// that exception (seen again) instead of opening another; a different
// position, different bytes at the same line, a different rule, another
// table or a database key are other rows. Counts are by hand.
func testIdentity(t *testing.T, s ledger.Store) {
	// L1: three bad rows of a.csv, one file exception, two database rows.
	dbRow := func(load, key string) ledger.Exception {
		return ledger.Exception{LoadID: load, Table: "t", Level: "row", File: "erp.inspections", Row: 7, Key: key,
			Raw: []byte("row as read " + load), Failures: []ledger.Failure{{Rule: "range", Reason: "too big"}}}
	}
	file := func(load, fp string) ledger.Exception {
		return ledger.Exception{LoadID: load, Table: "t", Level: "file", File: "b.csv", Fingerprint: fp,
			Failures: []ledger.Failure{{Rule: "file", Reason: "binary"}}}
	}
	if n := publish(t, s, "t", "L1",
		row("t", "L1", "a.csv", 3, "1,x", "cast"), row("t", "L1", "a.csv", 5, "2,y", "cast"), row("t", "L1", "a.csv", 9, "3,z", "cast", "range"),
		file("L1", "size=10;mtime=1"), dbRow("L1", "id=7"), dbRow("L1", "id=8")); n != 6 {
		t.Fatalf("Publish L1 = %d, want 6", n)
	}
	loadCounts(t, s, "t", "L1", ledger.LoadCounts{New: 6})
	first := listAll(t, s, ledger.Filter{Table: "t"}, 100, false)
	if len(first) != 6 {
		t.Fatalf("after L1: %d exceptions, want 6", len(first))
	}
	// L2 meets the same rows again — the database rows at other record
	// numbers, with other bytes — and resolves nothing.
	d7, d8 := dbRow("L2", "id=7"), dbRow("L2", "id=8")
	d7.Row, d8.Row = 1, 2
	if n := publish(t, s, "t", "L2",
		row("t", "L2", "a.csv", 3, "1,x", "cast"), row("t", "L2", "a.csv", 5, "2,y", "cast"), row("t", "L2", "a.csv", 9, "3,z", "range", "cast"),
		file("L2", "size=10;mtime=1"), d7, d8); n != 6 {
		t.Fatalf("Publish L2 = %d, want 6 settled", n)
	}
	if got := listAll(t, s, ledger.Filter{Table: "t"}, 100, false); !slices.Equal(got, first) {
		t.Fatalf("after the same rows again: exceptions %v, want still %v", got, first)
	}
	loadCounts(t, s, "t", "L2", ledger.LoadCounts{StillOpen: 6})
	loadCounts(t, s, "t", "L1", ledger.LoadCounts{New: 6})
	for _, id := range first {
		e := get(t, s, id)
		if e.LoadID != "L1" || e.LastLoadID != "L2" || e.Status != "open" || e.State != "committed" || e.LastSeenAt.Before(e.CreatedAt) {
			t.Fatalf("exception %d: first %s last %s status %s state %s seen %v created %v", id, e.LoadID, e.LastLoadID, e.Status, e.State, e.LastSeenAt, e.CreatedAt)
		}
	}
	// The filter by load finds what a load met: first seen or seen again.
	if n, err := s.Count(ctx, ledger.Filter{LoadID: "L2"}); err != nil || n != 6 {
		t.Fatalf("Count(load L2) = %d %v, want 6", n, err)
	}
	if n, err := s.Count(ctx, ledger.Filter{LoadID: "L2", Rule: "range"}); err != nil || n != 3 {
		t.Fatalf("Count(load L2, rule range) = %d %v, want 3", n, err)
	}
	// A fixed row stays fixed when met again.
	must(t, s.Resolve(ctx, first[0], map[string]string{"c": "1"}, "ops", ""))
	// L3: other bytes at line 3, line 5 moved to 6, another rule at line 9,
	// a new version of b.csv, a new key, the same rows in another table.
	publish(t, s, "t", "L3",
		row("t", "L3", "a.csv", 3, "1,xx", "cast"), row("t", "L3", "a.csv", 6, "2,y", "cast"), row("t", "L3", "a.csv", 9, "3,z", "cast"),
		file("L3", "size=11;mtime=2"), dbRow("L3", "id=9"))
	publish(t, s, "u", "L3", row("u", "L3", "a.csv", 5, "2,y", "cast"))
	loadCounts(t, s, "t", "L3", ledger.LoadCounts{New: 5})
	loadCounts(t, s, "u", "L3", ledger.LoadCounts{New: 1})
	if n, err := s.Count(ctx, ledger.Filter{Table: "t"}); err != nil || n != 11 {
		t.Fatalf("after L3: %d exceptions in t, want 6 + 5", n)
	}
	if e := get(t, s, first[0]); e.Status != "fixed" || e.LastLoadID != "L2" {
		t.Fatalf("fixed exception after L3: %s last seen %s", e.Status, e.LastLoadID)
	}
	// The same row twice in one load is one exception.
	dup := dbRow("L4", "id=9")
	if n := publish(t, s, "t", "L4", dup, dup); n != 2 {
		t.Fatalf("Publish L4 = %d, want 2 settled", n)
	}
	loadCounts(t, s, "t", "L4", ledger.LoadCounts{StillOpen: 1})
	if n, err := s.Count(ctx, ledger.Filter{Table: "t"}); err != nil || n != 11 {
		t.Fatalf("after L4: %d exceptions in t, want still 11", n)
	}
	if loads, err := s.PendingLoads(ctx); err != nil || len(loads) != 0 {
		t.Fatalf("pending after publishing: %v %v", loads, err)
	}
	// A keyless database row has no bytes: its values are its content — at
	// the same record number, other values are another row.
	keyless := func(load, v string) ledger.Exception {
		return ledger.Exception{LoadID: load, Table: "w", File: "erp.t", Row: 4, Values: map[string]string{"a": v, "b": "1"},
			Failures: []ledger.Failure{{Rule: "r", Reason: "x"}}}
	}
	publish(t, s, "w", "L7", keyless("L7", "1"))
	publish(t, s, "w", "L8", keyless("L8", "1"), keyless("L8", "2"))
	loadCounts(t, s, "w", "L8", ledger.LoadCounts{New: 1, StillOpen: 1})
	// Rows without any position cannot be recognised: each is its own.
	bare := ledger.Exception{LoadID: "L5", Table: "v", Failures: []ledger.Failure{{Rule: "r", Reason: "x"}}}
	publish(t, s, "v", "L5", bare, bare)
	again := bare
	again.LoadID = "L6"
	publish(t, s, "v", "L6", again)
	if n, err := s.Count(ctx, ledger.Filter{Table: "v"}); err != nil || n != 3 {
		t.Fatalf("exceptions without a position: %d, want 3", n)
	}
}

// testSupersede: a load that replaced the table closes the open and fixed
// exceptions it did not meet as superseded by it; what it met, what a
// recorded fix carried in (met), replayed and waived ones stay; a
// superseded row met again is reopened (fixed if it had a fix).
func testSupersede(t *testing.T, s ledger.Store) {
	r := func(load string, line int64, raw string) ledger.Exception {
		return row("t", load, "a.csv", line, raw, "cast")
	}
	publish(t, s, "t", "L1", r("L1", 2, "a"), r("L1", 3, "b"), r("L1", 4, "c"), r("L1", 5, "d"), r("L1", 6, "e"), r("L1", 7, "f"))
	publish(t, s, "other", "L1", row("other", "L1", "a.csv", 2, "a", "cast"))
	ids := listAll(t, s, ledger.Filter{Table: "t"}, 100, false)
	must(t, s.Resolve(ctx, ids[1], map[string]string{"c": "b"}, "ops", "")) // b: fixed, gone
	must(t, s.Resolve(ctx, ids[2], map[string]string{"c": "c"}, "ops", "")) // c: fixed, carried in by a recorded fix
	must(t, s.Resolve(ctx, ids[3], map[string]string{"c": "d"}, "ops", "")) // d: replayed
	must(t, s.MarkReplayed(ctx, []int64{ids[3]}, "rp-1", "ops"))            //
	must(t, s.Waive(ctx, ids[4], "known", "ops"))                           // e: waived
	publish(t, s, "t", "L2", r("L2", 2, "a"))                               // a met again; f (open) gone
	n, err := s.Supersede(ctx, "t", "L2", []int64{ids[2]}, "lima")
	must(t, err)
	if n != 2 {
		t.Fatalf("Supersede = %d, want 2 (b and f)", n)
	}
	want := []string{"open", "superseded", "fixed", "replayed", "waived", "superseded"}
	for i, id := range ids {
		e := get(t, s, id)
		if e.Status != want[i] {
			t.Errorf("exception %c: %s, want %s", 'a'+i, e.Status, want[i])
		}
		if (e.Status == "superseded") != (e.SupersededBy == "L2") {
			t.Errorf("exception %c: superseded by %q", 'a'+i, e.SupersededBy)
		}
	}
	loadCounts(t, s, "t", "L2", ledger.LoadCounts{StillOpen: 2, Gone: 2})
	if n, err := s.Count(ctx, ledger.Filter{Status: "superseded"}); err != nil || n != 2 {
		t.Fatalf("Count(superseded) = %d %v, want 2", n, err)
	}
	if n, err := s.Count(ctx, ledger.Filter{Status: "superseded", Rule: "cast"}); err != nil || n != 2 {
		t.Fatalf("Count(superseded, rule) = %d %v, want 2", n, err)
	}
	if by, err := s.CountBy(ctx, ledger.Filter{Table: "t", Rule: "cast"}, ledger.ByStatus); err != nil || by["superseded"] != 2 || by["open"] != 1 {
		t.Fatalf("CountBy(status) = %v %v", by, err)
	}
	if e := get(t, s, listAll(t, s, ledger.Filter{Table: "other"}, 10, false)[0]); e.Status != "open" {
		t.Fatalf("another table's exception was touched: %s", e.Status)
	}
	h, err := s.History(ctx, ids[5])
	must(t, err)
	if last := h[len(h)-1]; last.Action != ledger.ActionSupersede || last.From != "open" || last.To != "superseded" || !strings.Contains(last.Note, "L2") {
		t.Fatalf("history of a superseded exception ends with %+v", last)
	}
	// A superseded exception cannot be resolved.
	wantErr(t, "resolve a superseded exception", s.Resolve(ctx, ids[5], map[string]string{"c": "1"}, "ops", ""), ledger.ErrBadTransition)
	// Superseding again changes nothing.
	if n, err := s.Supersede(ctx, "t", "L2", nil, "lima"); err != nil || n != 0 {
		t.Fatalf("second Supersede = %d %v", n, err)
	}
	// b and f come back: b had a fix (fixed again), f none (open).
	publish(t, s, "t", "L3", r("L3", 3, "b"), r("L3", 7, "f"))
	if e := get(t, s, ids[1]); e.Status != "fixed" || e.SupersededBy != "" || e.LastLoadID != "L3" {
		t.Fatalf("b back: %s superseded by %q last %s", e.Status, e.SupersededBy, e.LastLoadID)
	}
	if e := get(t, s, ids[5]); e.Status != "open" || e.SupersededBy != "" {
		t.Fatalf("f back: %s superseded by %q", e.Status, e.SupersededBy)
	}
	if n, err := s.Count(ctx, ledger.Filter{Table: "t", Status: "superseded"}); err != nil || n != 0 {
		t.Fatalf("superseded after they came back: %d %v", n, err)
	}
	if n, err := s.Count(ctx, ledger.Filter{Table: "t", Rule: "cast", Status: "open"}); err != nil || n != 2 {
		t.Fatalf("open by rule after they came back: %d %v, want 2 (a, f)", n, err)
	}
	_, err = s.Supersede(ctx, "", "L2", nil, "lima")
	wantErr(t, "supersede without a table", err, ledger.ErrInvalid)
}

// testIdentityAnyPosition: an exception with any one part of a position —
// a file, a line, a record number, bytes, a key — is recognised when a later
// load meets it again; only one with none of them is new every time.
func testIdentityAnyPosition(t *testing.T, s ledger.Store) {
	fail := []ledger.Failure{{Rule: "r", Reason: "x"}}
	for name, c := range map[string]struct {
		e    ledger.Exception
		want ledger.LoadCounts
	}{
		"file":   {ledger.Exception{File: "erp.t", Values: map[string]string{"a": "1"}}, ledger.LoadCounts{StillOpen: 1}},
		"line":   {ledger.Exception{Line: 3}, ledger.LoadCounts{StillOpen: 1}},
		"record": {ledger.Exception{Row: 3}, ledger.LoadCounts{StillOpen: 1}},
		"bytes":  {ledger.Exception{Raw: []byte("1,x")}, ledger.LoadCounts{StillOpen: 1}},
		"key":    {ledger.Exception{Key: "id=1"}, ledger.LoadCounts{StillOpen: 1}},
		"none":   {ledger.Exception{}, ledger.LoadCounts{New: 1}},
	} {
		table := "t_" + name
		for _, load := range []string{"L1", "L2"} {
			e := c.e
			e.Table, e.LoadID, e.Level, e.Failures = table, load, "row", fail
			publish(t, s, table, load, e)
		}
		loadCounts(t, s, table, "L2", c.want)
		if n, err := s.Count(ctx, ledger.Filter{Table: table}); err != nil || n != 1+c.want.New {
			t.Errorf("%s: %d exceptions after two loads, want %d (%v)", name, n, 1+c.want.New, err)
		}
	}
}

// testIdentityByOccurrence: a bad row of a file that the loader marked with
// its occurrence (occ:N, the Nth time these bytes appear in the file) is its
// bytes and that occurrence, not its line: rows added or removed above it
// leave it the same exception; another occurrence of the same bytes, or
// other bytes, is another row.
func testIdentityByOccurrence(t *testing.T, s ledger.Store) {
	r := func(load string, line int64, raw, occ string) ledger.Exception {
		e := row("t", load, "a.csv", line, raw, "cast")
		e.Fingerprint = occ
		return e
	}
	publish(t, s, "t", "L1", r("L1", 3, "1,x", "occ:1"), r("L1", 7, "1,x", "occ:2"), r("L1", 9, "2,y", "occ:1"))
	// Two rows removed above: every line moved up by two.
	publish(t, s, "t", "L2", r("L2", 1, "1,x", "occ:1"), r("L2", 5, "1,x", "occ:2"), r("L2", 7, "2,y", "occ:1"))
	loadCounts(t, s, "t", "L2", ledger.LoadCounts{StillOpen: 3})
	// A third occurrence, and other bytes at a line already seen: new.
	publish(t, s, "t", "L3", r("L3", 1, "1,x", "occ:1"), r("L3", 8, "1,x", "occ:3"), r("L3", 5, "3,z", "occ:1"))
	loadCounts(t, s, "t", "L3", ledger.LoadCounts{New: 2, StillOpen: 1})
	if n, err := s.Count(ctx, ledger.Filter{Table: "t"}); err != nil || n != 5 {
		t.Fatalf("%d exceptions, want 3 + 2 (%v)", n, err)
	}
}
