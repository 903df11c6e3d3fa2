package flow_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

// rewritingLister is a DirLister whose producer rewrites one file right
// after the watcher read it for its checksum, before the micro-batch loads
// it: the watcher checksummed one version, the load reads another.
type rewritingLister struct {
	flow.DirLister
	name, newContent string
	once             sync.Once
}

func (l *rewritingLister) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	rc, err := l.DirLister.Open(ctx, name)
	if err != nil || name != l.name {
		return rc, err
	}
	old, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	l.once.Do(func() {
		tmp := filepath.Join(l.Root, ".rewrite.tmp")
		if err = os.WriteFile(tmp, []byte(l.newContent), 0o600); err == nil {
			err = os.Rename(tmp, filepath.Join(l.Root, name))
		}
	})
	return io.NopCloser(bytes.NewReader(old)), err
}

// TestWatchRewriteBetweenChecksumAndLoad: the version a batch loaded is the
// one the commit records (lima.files), and the watcher marks that one as
// seen, so the rewritten file is loaded once, not again on the next polls.
func TestWatchRewriteBetweenChecksumAndLoad(t *testing.T) {
	// No key: a second load of the same rows would land, not be held back.
	noKeys := strings.Replace(watchPlan, "    load: {keys: [id]}\n", "", 1)
	if noKeys == watchPlan {
		t.Fatal("watchPlan changed; adapt the test")
	}
	ws, p := newWorkspace(t, noKeys)
	dropFile(t, ws.Dir, "a.csv", "id,qty\n1,10\n2,20\n")
	dropFile(t, ws.Dir, "b.csv", "id,qty\n3,30\n")
	l := &rewritingLister{DirLister: flow.DirLister{Root: filepath.Join(ws.Dir, "in")}, name: "a.csv", newContent: "id,qty\n4,40\n5,50\n6,60\n"}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var errs []error
	done := make(chan error, 1)
	go func() {
		_, err := flow.Watch(ctx, flow.WatchOptions{Run: flow.RunOptions{Workspace: ws, Plan: p, Force: true, LockWait: 5 * time.Second},
			Interval: 50 * time.Millisecond, Lister: func(*plan.Source, string) flow.Lister { return l },
			OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
		done <- err
	}()
	// What is on disk when the load reads: b.csv and the new a.csv.
	want := map[int64]int{3: 1, 4: 1, 5: 1, 6: 1}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := lakeIDs(t, ws, p, "events")
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond) // a dozen more polls: nothing may load again
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, sum := lakeIDs(t, ws, p, "events")
	if fmt.Sprint(got) != fmt.Sprint(want) || sum != 180 {
		t.Fatalf("lake %v (sum %d), want %v (sum 180)", got, sum, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("watch errors: %v", errs)
	}
}
