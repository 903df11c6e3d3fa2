package ledger

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// BenchResult is what SeedAndMeasure measured.
type BenchResult struct {
	Rows    int           `json:"rows"`
	Seed    time.Duration `json:"seed"`    // AddPending + Publish of all rows
	Analyze time.Duration `json:"analyze"` // Optimizer, when the store has it
	// Queries, each run once cold then timed again.
	ListFirstPage Timing `json:"list_first_page"` // owner + overdue, 50 rows
	ListDeepPage  Timing `json:"list_deep_page"`  // same filter after a cursor at 90% of the ids
	ListRulePage  Timing `json:"list_rule_page"`  // rule filter, first page
	Count         Timing `json:"count"`           // owner + overdue
	CountRule     Timing `json:"count_rule"`      // rule
	CountByRule   Timing `json:"count_by_rule"`   // no filter
	CountByOwner  Timing `json:"count_by_owner"`  // overdue
	// Sanity: what the queries answered.
	PageRows, DeepPageRows int
	Matched                int64 // Count(owner + overdue)
}

// Timing is one query's latency: the first run and the median of the next.
type Timing struct {
	First  time.Duration `json:"first"`
	Median time.Duration `json:"median"`
}

func (t Timing) String() string {
	return fmt.Sprintf("%v (first %v)", t.Median.Round(10*time.Microsecond), t.First.Round(10*time.Microsecond))
}

func (r BenchResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rows %d, seed %v, analyze %v\n", r.Rows, r.Seed.Round(time.Millisecond), r.Analyze.Round(time.Millisecond))
	fmt.Fprintf(&b, "  List owner+overdue first page : %v, %d rows\n", r.ListFirstPage, r.PageRows)
	fmt.Fprintf(&b, "  List owner+overdue deep page  : %v, %d rows\n", r.ListDeepPage, r.DeepPageRows)
	fmt.Fprintf(&b, "  List rule first page          : %v\n", r.ListRulePage)
	fmt.Fprintf(&b, "  Count owner+overdue           : %v = %d\n", r.Count, r.Matched)
	fmt.Fprintf(&b, "  Count rule                    : %v\n", r.CountRule)
	fmt.Fprintf(&b, "  CountBy rule                  : %v\n", r.CountByRule)
	fmt.Fprintf(&b, "  CountBy owner, overdue        : %v\n", r.CountByOwner)
	return b.String()
}

// Shape of the seeded queue.
const (
	benchTables = 20
	benchOwners = 50
	benchRules  = 10
	benchBatch  = 5000 // one load per batch
)

// SeedAndMeasure bulk-inserts n committed exceptions into s, spread over 20
// tables, 50 owners and 10 rules (every fourth row fails two rules), with
// deadlines from five days in the past to five days ahead, then measures
// the queries the exception browser runs. Use it on an empty store.
func SeedAndMeasure(ctx context.Context, s Store, n int) (BenchResult, error) {
	res := BenchResult{Rows: n}
	if n <= 0 {
		return res, invalid("n must be positive")
	}
	ref := now()
	start := time.Now()
	var deepID int64
	batch := make([]Exception, 0, benchBatch)
	for load := 0; load*benchBatch < n; load++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		table := fmt.Sprintf("table_%02d", load%benchTables)
		loadID := fmt.Sprintf("seed-%06d", load)
		batch = batch[:0]
		for j := 0; j < benchBatch && load*benchBatch+j < n; j++ {
			i := load*benchBatch + j
			h := uint32(i) * 2654435761 // rules independent of owners and deadlines
			rule := fmt.Sprintf("rule_%d", (h>>16)%benchRules)
			fs := []Failure{{Column: "amount", Value: fmt.Sprint(i), Rule: rule, Reason: "not a decimal"}}
			if i%4 == 0 {
				fs = append(fs, Failure{Column: "day", Value: "2026-13-01", Rule: fmt.Sprintf("rule_%d", ((h>>16)+3)%benchRules), Reason: "month 13"})
			}
			batch = append(batch, Exception{
				RunID: "bench", LoadID: loadID, Table: table, Level: LevelRow,
				File: table + ".csv", Line: int64(j + 2), Row: int64(j + 2), Key: fmt.Sprintf("id=%d", i),
				Raw:      fmt.Appendf(nil, "%d;2026-13-01;12,50;customer %d;some more text to look like a row\r\n", i, i%977),
				Encoding: "utf-8", Failures: fs,
				Owner:    fmt.Sprintf("owner_%02d", i%benchOwners),
				Deadline: ref.Add(time.Duration(i%11-5) * 24 * time.Hour),
			})
		}
		if err := s.AddPending(ctx, batch); err != nil {
			return res, err
		}
		if _, err := s.Publish(ctx, table, loadID); err != nil {
			return res, err
		}
		if i := n * 9 / 10; i >= load*benchBatch && i < load*benchBatch+len(batch) {
			deepID = batch[i-load*benchBatch].ID
		}
	}
	res.Seed = time.Since(start)
	if o, ok := s.(Optimizer); ok {
		t := time.Now()
		if err := o.Optimize(ctx); err != nil {
			return res, err
		}
		res.Analyze = time.Since(t)
	}

	f := Filter{Owner: "owner_07", Overdue: true, Now: ref}
	var err error
	if res.ListFirstPage, err = measure(func() error {
		es, _, err := s.List(ctx, f, Page{Limit: 50})
		res.PageRows = len(es)
		return err
	}); err != nil {
		return res, err
	}
	if res.ListDeepPage, err = measure(func() error {
		es, _, err := s.List(ctx, f, Page{After: encodeCursor(deepID), Limit: 50})
		res.DeepPageRows = len(es)
		return err
	}); err != nil {
		return res, err
	}
	if res.ListRulePage, err = measure(func() error {
		_, _, err := s.List(ctx, Filter{Rule: "rule_3"}, Page{Limit: 50})
		return err
	}); err != nil {
		return res, err
	}
	if res.Count, err = measure(func() error {
		res.Matched, err = s.Count(ctx, f)
		return err
	}); err != nil {
		return res, err
	}
	if res.CountRule, err = measure(func() error {
		_, err := s.Count(ctx, Filter{Rule: "rule_3"})
		return err
	}); err != nil {
		return res, err
	}
	if res.CountByRule, err = measure(func() error {
		_, err := s.CountBy(ctx, Filter{}, ByRule)
		return err
	}); err != nil {
		return res, err
	}
	if res.CountByOwner, err = measure(func() error {
		_, err := s.CountBy(ctx, Filter{Overdue: true, Now: ref}, ByOwner)
		return err
	}); err != nil {
		return res, err
	}
	return res, nil
}

// measure runs fn once (cold) and five more times (median).
func measure(fn func() error) (Timing, error) {
	var t Timing
	var runs []time.Duration
	for i := range 6 {
		start := time.Now()
		if err := fn(); err != nil {
			return t, err
		}
		d := time.Since(start)
		if i == 0 {
			t.First = d
			continue
		}
		runs = append(runs, d)
	}
	slices.Sort(runs)
	t.Median = runs[len(runs)/2]
	return t, nil
}
