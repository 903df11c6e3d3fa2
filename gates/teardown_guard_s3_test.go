package gates

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/lima-lake/lima/internal/s3test"
	"github.com/lima-lake/lima/internal/s3x"
)

// s3Store is the object store of gate 5 over the test server's client
// (one request per deleted key: enough for a handful of objects).
type s3Store struct{ c *s3x.Client }

func (o s3Store) List(ctx context.Context, bucket, prefix string) ([]StoreObject, error) {
	objs, err := o.c.List(ctx, bucket, prefix)
	out := make([]StoreObject, len(objs))
	for i, ob := range objs {
		out[i] = StoreObject{Key: ob.Key, Size: ob.Size}
	}
	return out, err
}

func (o s3Store) DeleteObjects(ctx context.Context, bucket string, keys []string) error {
	for _, k := range keys {
		if err := o.c.Delete(ctx, bucket, k); err != nil {
			return err
		}
	}
	return nil
}

// s3Guard is a bucket on the loopback S3 server holding a small Hive-style
// lake under lake/ (namespace ns, table t1, raw/ and history/) and objects
// Lima never wrote, each with its own bytes.
type s3Guard struct {
	cl      *s3x.Client
	bucket  string
	lake    []string
	foreign []string
}

func newS3Guard(t *testing.T) *s3Guard {
	t.Helper()
	cl := s3test.Client(t)
	g := &s3Guard{cl: cl, bucket: s3test.Bucket(t, cl),
		lake: []string{"lake/ns/t1/_lima/table.json", "lake/ns/t1/_lima/commits/00001-ld.json", "lake/ns/t1/load_date=2026-11-30/part-1.parquet",
			"lake/raw/erp/t1/ld-1/f.csv", "lake/history/t1/h.parquet"},
		foreign: []string{"outside.txt", "lake/other/keep.bin", "lakehouse/raw/x", "src/in/orders.csv", "lake/nsx/t1/_lima/commits/1.json"}}
	for i, k := range append(slices.Clone(g.lake), g.foreign...) {
		body := "bytes of " + k + "\x00\xff" + strings.Repeat("x", i)
		if err := cl.Put(context.Background(), g.bucket, k, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// objects reads every object of the bucket: key → bytes.
func (g *s3Guard) objects(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	objs, err := g.cl.List(ctx, g.bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range objs {
		rc, err := g.cl.Get(ctx, g.bucket, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = string(b)
	}
	return out
}

func (g *s3Guard) scope(t *testing.T, protected ...string) TeardownScope {
	dir := t.TempDir()
	return TeardownScope{Prefix: "ns", Namespace: "ns", Workspace: dir, Warehouse: "s3://" + g.bucket + "/lake", Layout: LayoutHive,
		Objects: s3Store{c: g.cl}, PlanTables: []string{"t1"}, StateDir: dir + "/.lima", ReportsDir: dir + "/reports", ProtectedURIs: protected}
}

func sameObjects(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if a, ok := after[k]; !ok {
			t.Errorf("%s was deleted", k)
		} else if a != v {
			t.Errorf("%s changed", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s appeared", k)
		}
	}
}

// An inventory handed to the teardown whose prefix lists a key outside
// that prefix (an object beside the lake, or in the bucket's root) is
// refused before anything is deleted: every object, the lake's included,
// survives byte for byte.
func TestTeardownS3RefusesAKeyOutsideItsPrefix(t *testing.T) {
	ctx := context.Background()
	for _, stray := range []string{"outside.txt", "lake/other/keep.bin", "lake/nsx/t1/_lima/commits/1.json", "lakehouse/raw/x"} {
		t.Run(stray, func(t *testing.T) {
			g := newS3Guard(t)
			s := g.scope(t)
			inv, err := BuildInventory(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if inv.Blocked() || len(inv.Prefixes) == 0 {
				t.Fatalf("the honest inventory: blocked %v, %d prefixes", inv.Blocked(), len(inv.Prefixes))
			}
			for _, p := range inv.Prefixes {
				for _, k := range p.Keys {
					if slices.Contains(g.foreign, k) {
						t.Fatalf("the honest inventory lists the foreign %s under %s", k, p.URI)
					}
				}
			}
			// The last prefix deleted: every earlier prefix would go first.
			last := &inv.Prefixes[len(inv.Prefixes)-1]
			last.Keys = append(last.Keys, stray)
			before := g.objects(t)
			res, err := Teardown(ctx, inv, "ns", s)
			if !errors.Is(err, ErrTeardownBlocked) {
				t.Errorf("err %v, want ErrTeardownBlocked", err)
			}
			if !slices.ContainsFunc(res.Findings, func(f Finding) bool {
				return strings.Contains(f.Detail, "nothing was removed") && strings.Contains(f.Detail, "the key "+stray+" lies outside")
			}) {
				t.Errorf("no finding names the stray key: %+v", res.Findings)
			}
			sameObjects(t, before, g.objects(t))
		})
	}
}

// A protected source whose prefix contains the lake's (the whole bucket,
// the warehouse itself, a folder above a table) blocks the teardown:
// deleting the lake would delete objects of the source. Nothing is
// deleted. A source beside the lake under a look-alike name blocks
// nothing, and survives the teardown byte for byte.
func TestTeardownS3ProtectedSourceContainingTheLake(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		source  string
		blocked bool
	}{
		{"/", true},
		{"/lake", true},
		{"/lake/", true},
		{"/lake/ns", true},
		{"/lake/ns/t1/load_date=2026-11-30", true},
		{"/lakehouse", false},
		{"/lake/nsx", false},
	} {
		t.Run(c.source, func(t *testing.T) {
			g := newS3Guard(t)
			s := g.scope(t, "s3://"+g.bucket+c.source)
			inv, err := BuildInventory(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			before := g.objects(t)
			res, err := Teardown(ctx, inv, "ns", s)
			if c.blocked {
				if !errors.Is(err, ErrTeardownBlocked) || !inv.Blocked() {
					t.Errorf("err %v (inventory blocked %v), want ErrTeardownBlocked", err, inv.Blocked())
				}
				if !slices.ContainsFunc(res.Findings, func(f Finding) bool { return strings.Contains(f.Detail, "the source data") }) {
					t.Errorf("no finding names the source: %+v", res.Findings)
				}
				sameObjects(t, before, g.objects(t))
				return
			}
			if err != nil {
				t.Fatalf("teardown: %v %+v", err, res.Findings)
			}
			after := g.objects(t)
			for _, k := range g.lake {
				if _, ok := after[k]; ok {
					t.Errorf("%s survived", k)
				}
			}
			for _, k := range g.foreign {
				if after[k] != before[k] {
					t.Errorf("%s: %q, was %q", k, after[k], before[k])
				}
			}
		})
	}
}
