package ledger_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/ledger"
)

// TestSeedAndMeasureSmall keeps the benchmark helper honest. The expected
// numbers are worked out by hand for n = 12000: owner_07 holds the rows
// i ≡ 7 (mod 50) and a row is overdue when i mod 11 ∈ {0,…,4}: 21 full
// cycles of 550 give 105, the last 450 rows add 4 (i = 11607, 11707, 11807,
// 11957); after the cursor at i = 10800 there are 24 owner_07 rows, 11 of
// them overdue.
func TestSeedAndMeasureSmall(t *testing.T) {
	s := openSQLite(t)
	res, err := ledger.SeedAndMeasure(context.Background(), s, 12000)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 109 || res.PageRows != 50 || res.DeepPageRows != 11 {
		t.Fatalf("matched %d, page %d, deep page %d; want 109, 50, 11", res.Matched, res.PageRows, res.DeepPageRows)
	}
	n, err := s.Count(context.Background(), ledger.Filter{})
	if err != nil || n != 12000 {
		t.Fatalf("Count = %d, %v", n, err)
	}
	t.Logf("\n%s", res)
}

// BenchmarkList1M seeds 1,000,000 exceptions and measures the browser's
// queries. It only runs with LIMA_BENCH_1M=1 (and not with -short):
//
//	LIMA_BENCH_1M=1 go test -run '^$' -bench List1M -benchtime 200x ./engine/ledger/
func BenchmarkList1M(b *testing.B) {
	s := bench1M(b)
	benchList(b, s)
}

// BenchmarkList1MPostgres is the same on PostgreSQL (LIMA_TEST_POSTGRES_DSN).
func BenchmarkList1MPostgres(b *testing.B) {
	if testing.Short() || os.Getenv("LIMA_BENCH_1M") != "1" {
		b.Skip("set LIMA_BENCH_1M=1 to seed 1,000,000 exceptions")
	}
	admin := postgresAdmin(b)
	schema := freshSchema(b, admin, "lima_bench_")
	s, err := ledger.OpenPostgres(context.Background(), postgresDSN(), ledger.WithSchema(schema))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	benchList(b, s)
}

func bench1M(b *testing.B) ledger.Store {
	if testing.Short() || os.Getenv("LIMA_BENCH_1M") != "1" {
		b.Skip("set LIMA_BENCH_1M=1 to seed 1,000,000 exceptions")
	}
	s, err := ledger.OpenSQLite(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func benchList(b *testing.B, s ledger.Store) {
	ctx := context.Background()
	res, err := ledger.SeedAndMeasure(ctx, s, 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", res)
	f := ledger.Filter{Owner: "owner_07", Overdue: true}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := s.List(ctx, f, ledger.Page{Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
}
