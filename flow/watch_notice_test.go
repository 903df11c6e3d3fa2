package flow_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/flow"
)

// TestWatchSaysWhatItRecovered: a watcher that starts over a run a killed
// process left "running" records it as interrupted and says so before its
// first poll (it used to do it silently).
func TestWatchSaysWhatItRecovered(t *testing.T) {
	ws, p := newWorkspace(t, watchPlan)
	ctx := context.Background()
	st, err := flow.OpenLedger(ctx, ws, p)
	if err != nil {
		t.Fatal(err)
	}
	const killed = "20261204T010203.000000Z-dead01"
	if err := st.BeginRun(ctx, ledger.Run{ID: killed, Started: time.Now().UTC().Add(-time.Hour), Status: "running", PlanHash: p.Hash()}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var mu sync.Mutex
	var notices []string
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := flow.Watch(wctx, flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second},
		Interval: 50 * time.Millisecond, OnNotice: func(n string) { mu.Lock(); notices = append(notices, n); mu.Unlock() }}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notices) != 1 || !strings.Contains(notices[0], "run "+killed+" was interrupted") {
		t.Fatalf("notices %q, want one naming run %s as interrupted", notices, killed)
	}
}
