package flow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/s3test"
)

// countingObjects counts the DeleteObjects requests and their sizes.
type countingObjects struct {
	s3Objects
	mu      sync.Mutex
	batches []int
}

func (c *countingObjects) DeleteObjects(ctx context.Context, bucket string, keys []string) error {
	c.mu.Lock()
	c.batches = append(c.batches, len(keys))
	c.mu.Unlock()
	return c.s3Objects.DeleteObjects(ctx, bucket, keys)
}

// TestTeardownS3PrefixesOnly fills a warehouse on the loopback S3 server
// with more objects than one list page and one delete request hold, plants
// objects beside it (one under a look-alike prefix), and tears down: every
// object of the plan's prefixes goes in batches of at most 1000, every
// other object stays. A source under the warehouse blocks the teardown.
func TestTeardownS3PrefixesOnly(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	ctx := context.Background()
	put := func(k string) {
		if err := cl.Put(ctx, bucket, k, strings.NewReader("x"+k), nil); err != nil {
			t.Fatal(err)
		}
	}
	plan := map[string]bool{}
	for i := range 1205 {
		k := fmt.Sprintf("lake/raw/erp/t1/load_date=2026-11-30/ld-%04d/f.csv", i)
		put(k)
		plan[k] = true
	}
	for _, k := range []string{"lake/ns/t1/_lima/commits/00001-ld.json", "lake/ns/t1/load_date=2026-11-30/part-1.parquet", "lake/ns/t1/_lima/table.json", "lake/history/t1/a"} {
		put(k)
		plan[k] = true
	}
	keep := []string{"lakehouse/raw/x", "lake/other/keep", "lake/nsx/t1/_lima/commits/1.json", "outside.txt", "lake/raw.txt"}
	for _, k := range keep {
		put(k)
	}
	store := &countingObjects{s3Objects: s3Objects{c: cl}}
	scope := func() gates.TeardownScope {
		dir := t.TempDir()
		return gates.TeardownScope{Prefix: "ns", Namespace: "ns", Workspace: dir, Warehouse: "s3://" + bucket + "/lake", Layout: gates.LayoutHive,
			Objects: store, PlanTables: []string{"t1"}, StateDir: dir + "/.lima", ReportsDir: dir + "/reports"}
	}

	// A source inside the warehouse's raw/ blocks everything.
	s := scope()
	s.ProtectedURIs = []string{"s3://" + bucket + "/lake/raw/erp/"}
	inv, err := gates.BuildInventory(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gates.Teardown(ctx, inv, "ns", s); !errors.Is(err, gates.ErrTeardownBlocked) || len(store.batches) != 0 {
		t.Fatalf("a protected source under raw/: %v, %d delete requests", err, len(store.batches))
	}

	s = scope()
	inv, err = gates.BuildInventory(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range inv.Prefixes {
		for _, k := range p.Keys {
			listed[k] = true
		}
	}
	if len(listed) != len(plan) {
		t.Fatalf("the blast radius lists %d objects, the plan has %d", len(listed), len(plan))
	}
	for k := range plan {
		if !listed[k] {
			t.Errorf("%s not listed", k)
		}
	}
	res, err := gates.Teardown(ctx, inv, "ns", s)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Summary())
	}
	total := 0
	for _, n := range store.batches {
		if n > 1000 || n == 0 {
			t.Errorf("a delete request of %d keys", n)
		}
		total += n
	}
	if total != len(plan) || len(store.batches) < 2 {
		t.Errorf("%d keys deleted in %d requests, want %d in at least 2", total, len(store.batches), len(plan))
	}
	left, err := cl.List(ctx, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, o := range left {
		got[o.Key] = true
		if plan[o.Key] {
			t.Errorf("%s survived", o.Key)
		}
	}
	for _, k := range keep {
		if !got[k] {
			t.Errorf("%s was removed", k)
		}
	}
}
