package flow_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/flow"
)

// TestMaintainThenWatchLoadsNoFileTwice: the watcher recognises the files
// it loaded from the commits' lima.files; after maintain expired all but
// the newest micro-batch, a restarted watcher still loads none of them
// again (their identities were carried forward into lima.retired), and a
// new file lands once.
func TestMaintainThenWatchLoadsNoFileTwice(t *testing.T) {
	ws, p := newWorkspace(t, `schema_version: 1
platform: {prefix: mbm}
sources: {in: {kind: files, path: in}}
tables:
  events:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    columns: [{name: id, type: long}, {name: qty, type: long}]
maintenance: {retain_last: 1, max_snapshot_age: 0s}
`)
	want := map[int64]int{}
	var wantSum int64
	drop := func(f int) {
		var b strings.Builder
		b.WriteString("id,qty\n")
		for r := 1; r <= 4; r++ {
			id := int64(f*10 + r)
			fmt.Fprintf(&b, "%d,%d\n", id, id*7)
			want[id]++
			wantSum += id * 7
		}
		dropFile(t, ws.Dir, fmt.Sprintf("w%d.csv", f), b.String())
	}
	// watch runs a watcher until the lake holds every wanted id (or
	// settle has passed), then stops it.
	watch := func(settle time.Duration) *flow.WatchSummary {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		o := flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second},
			Interval: 100 * time.Millisecond}
		type res struct {
			s   *flow.WatchSummary
			err error
		}
		done := make(chan res, 1)
		go func() { s, err := flow.Watch(ctx, o); done <- res{s, err} }()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got, _ := lakeIDs(t, ws, p, "events")
			if len(got) >= len(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(settle)
		cancel()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.s
	}
	for f := 1; f <= 4; f++ {
		drop(f)
		watch(0) // one micro-batch per file
	}
	_, tbl := loadIceberg(t, ws, p, "events")
	if n := len(tbl.Metadata().Snapshots()); n != 4 {
		t.Fatalf("%d snapshots after 4 micro-batches, want 4", n)
	}
	res, err := flow.Maintain(context.Background(), flow.MaintainOptions{Workspace: ws, Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Expired != 3 || res[0].Kept != 1 {
		t.Fatalf("maintain: %+v", res)
	}
	// Restarted: nothing again, for a second of polls.
	if s := watch(time.Second); s.Files != 0 {
		t.Fatalf("after maintain a restarted watcher loaded %d files again", s.Files)
	}
	drop(5)
	if s := watch(500 * time.Millisecond); s.Files != 1 {
		t.Fatalf("the new file: %d files loaded, want 1", s.Files)
	}
	got, sum := lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != fmt.Sprint(want) || sum != wantSum {
		t.Fatalf("lake %v (sum %d), want %v (sum %d)", got, sum, want, wantSum)
	}
}
