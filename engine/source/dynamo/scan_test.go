package dynamo_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/dynamo"
	"github.com/lima-lake/lima/engine/source/sourcetest"
	"github.com/lima-lake/lima/internal/dynamotest"
)

func TestConformance(t *testing.T) {
	cl := dynamotest.Client(t)
	cols := []string{"id", "a", "b", "c"}
	sourcetest.RunTable(t, cols, func(t *testing.T, rows []map[string]string) (source.Source, string) {
		table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "id", HashType: "S"})
		var items []map[string]types.AttributeValue
		for _, r := range rows {
			it := map[string]types.AttributeValue{}
			for k, v := range r {
				it[k] = &types.AttributeValueMemberS{Value: v}
			}
			items = append(items, it)
		}
		dynamotest.Seed(t, cl, table, items)
		return dynamo.New(cl, table, dynamo.Options{Segments: 3}), table
	})
}

// TestScanEveryTypeExactly scans a generated table in parallel segments
// and checks every item arrives once, the types the profile proposes,
// the values' text and the scan's own totals against the generator's.
func TestScanEveryTypeExactly(t *testing.T) {
	cl := dynamotest.Client(t)
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			n := 3000
			table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 100000})
			items, exp := dynamotest.Generate(seed, n)
			t0 := time.Now()
			dynamotest.Seed(t, cl, table, items)
			t.Logf("seeded %d items in %v", n, time.Since(t0))
			ctx := context.Background()
			src := dynamo.New(cl, table, dynamo.Options{Segments: 4})
			cols, typs, _, err := src.ColumnTypes(ctx, source.Unit{Name: table})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"pk": "string", "sk": "long", "qty": "long", "amount": "", "big": "decimal(20,0)", "name": "string",
				"blob": "binary", "flag": "boolean", "gone": "string", "tags": "string", "scores": "string", "bins": "string", "attrs": "string", "list": "string", "note": "string"}
			if len(cols) != len(want) || cols[0] != "pk" || cols[1] != "sk" {
				t.Fatalf("columns %q: want the 15 attributes, key (pk, sk) first", cols)
			}
			idx := map[string]int{}
			for i, c := range cols {
				idx[c] = i
				if w, ok := want[c]; !ok || (w != "" && typs[i] != w) {
					t.Errorf("column %s: type %s, want %s", c, typs[i], w)
				}
			}
			if at := typs[idx["amount"]]; at != "decimal(9,2)" && at != "decimal(8,2)" && at != "decimal(7,2)" {
				t.Errorf("amount: type %s, want decimal(p,2)", at)
			}
			t1 := time.Now()
			rr, err := src.Open(ctx, source.Unit{Name: table}, source.Options{Columns: cols, ColumnTypes: typs})
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Close()
			rows, err := sourcetest.ReadAll(rr)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("scanned %d items in %v", len(rows), time.Since(t1))
			if int64(len(rows)) != exp.Items {
				t.Fatalf("%d rows, want %d", len(rows), exp.Items)
			}
			seen := map[int]bool{}
			var qty, cents, notes int64
			for _, r := range rows {
				sk, err := strconv.Atoi(r.Values[idx["sk"]])
				if err != nil || seen[sk] {
					t.Fatalf("sk %q read twice or not an integer", r.Values[idx["sk"]])
				}
				seen[sk] = true
				q, _ := strconv.ParseInt(r.Values[idx["qty"]], 10, 64)
				qty += q
				if !r.Nulls[idx["note"]] {
					notes++
				}
				if !r.Nulls[idx["gone"]] {
					t.Fatalf("gone (NULL) read as %q, want null", r.Values[idx["gone"]])
				}
				it := items[sk]
				if got, w := r.Values[idx["amount"]], it["amount"].(*types.AttributeValueMemberN).Value; trimZeros(w) != got {
					t.Fatalf("item %d: amount %q, want %q", sk, got, w)
				} else {
					cents += centsOf(t, w)
				}
				if got, w := r.Values[idx["blob"]], string(it["blob"].(*types.AttributeValueMemberB).Value); got != w {
					t.Fatalf("item %d: blob %q, want its bytes %q", sk, got, w)
				}
				wantTags := fmt.Sprintf(`["a","t%d","z"]`, sk%7)
				if got := r.Values[idx["tags"]]; got != wantTags {
					t.Fatalf("item %d: tags %s, want %s", sk, got, wantTags)
				}
				if got, w := r.Values[idx["attrs"]], `{"a":"x","m":{"k":true},"z":1}`; got != w {
					t.Fatalf("item %d: attrs %s, want %s", sk, got, w)
				}
				// sorted bytewise: [1 x] < [2] always
				if got, w := r.Values[idx["bins"]], fmt.Sprintf(`[%q,"Ag=="]`, base64.StdEncoding.EncodeToString([]byte{1, byte(sk)})); got != w {
					t.Fatalf("item %d: bins %s, want %s", sk, got, w)
				}
			}
			if qty != exp.QtySum || cents != exp.AmountCents || notes != exp.WithNote {
				t.Fatalf("rows sum qty %d, amount %d cents, %d notes; generator: %d, %d, %d", qty, cents, notes, exp.QtySum, exp.AmountCents, exp.WithNote)
			}
			items2, sums := src.ReadTotals()
			if items2 != exp.Items || sums["qty"] != fmt.Sprint(exp.QtySum) || sums["amount"] != trimZeros(dynamotest.Amount(exp.AmountCents)) || sums["big"] != exp.BigSum.String() {
				t.Fatalf("ReadTotals = %d, qty %s, amount %s, big %s; generator: %d, %d, %s, %s", items2, sums["qty"], sums["amount"], sums["big"],
					exp.Items, exp.QtySum, dynamotest.Amount(exp.AmountCents), exp.BigSum)
			}
		})
	}
}

func trimZeros(s string) string {
	for len(s) > 0 && s[len(s)-1] == '0' && containsDot(s) {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

func containsDot(s string) bool {
	for i := range s {
		if s[i] == '.' {
			return true
		}
	}
	return false
}

// centsOf reads "-12.34" as -1234 (the generator writes two decimals).
func centsOf(t *testing.T, s string) int64 {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var whole, frac int64
	if _, err := fmt.Sscanf(s, "%d.%d", &whole, &frac); err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	c := whole*100 + frac
	if neg {
		c = -c
	}
	return c
}

// TestReadBudgetIsRespected scans a provisioned table whose budget (25% of
// 40 read units/s = 10/s) is far below what the emulator could serve, and
// checks the capacity consumed over the scan against the budget: at most
// rate × elapsed + the bucket (one second's worth) + one page a segment in
// flight — from the emulator's own ConsumedCapacity figures.
func TestReadBudgetIsRespected(t *testing.T) {
	cl := dynamotest.Client(t)
	table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 40})
	items, exp := dynamotest.Generate(7, 2500)
	dynamotest.Seed(t, cl, table, items)
	ctx := context.Background()
	src := dynamo.New(cl, table, dynamo.Options{Segments: 4})
	b, err := src.Budget(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.RCU != 10 {
		t.Fatalf("budget %g read units/s (%s), want 25%% of 40 = 10", b.RCU, b.Reason)
	}
	t0 := time.Now()
	rr, err := src.Open(ctx, source.Unit{Name: table}, source.Options{Columns: []string{"pk", "sk", "qty"}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sourcetest.ReadAll(rr)
	rr.Close()
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(t0).Seconds()
	if int64(len(rows)) != exp.Items {
		t.Fatalf("%d rows, want %d", len(rows), exp.Items)
	}
	used, reqs := src.Consumed()
	// One page a segment costs about the segment's share of a second.
	inflight := 4 * (b.RCU/4 + 1)
	allowed := b.RCU*el + b.RCU + inflight
	t.Logf("consumed %.1f read units in %d requests over %.2fs: %.1f/s against a budget of %g/s (allowed %.1f)", used, reqs, el, used/el, b.RCU, allowed)
	if used < 2*b.RCU {
		t.Fatalf("the scan consumed only %.1f units: too small a table to measure the budget", used)
	}
	if used > allowed {
		t.Fatalf("consumed %.1f read units in %.2fs, above the budget's %.1f (%g/s)", used, el, allowed, b.RCU)
	}
}

func TestBudgetFor(t *testing.T) {
	for _, tc := range []struct {
		ti        dynamo.TableInfo
		pct, max  float64
		want      float64
		wantOnDem bool
	}{
		{dynamo.TableInfo{ProvisionedRCU: 1000}, 0, 0, 250, false},
		{dynamo.TableInfo{ProvisionedRCU: 1000}, 10, 0, 100, false},
		{dynamo.TableInfo{ProvisionedRCU: 1000}, 50, 80, 80, false},
		{dynamo.TableInfo{ProvisionedRCU: 2}, 25, 0, 1, false},
		{dynamo.TableInfo{OnDemand: true}, 0, 0, dynamo.DefaultOnDemandRCU, true},
		{dynamo.TableInfo{OnDemand: true}, 25, 300, 300, true},
	} {
		b := dynamo.BudgetFor(tc.ti, tc.pct, tc.max)
		if b.RCU != tc.want || b.Reason == "" {
			t.Errorf("BudgetFor(%+v, %g, %g) = %+v, want %g", tc.ti, tc.pct, tc.max, b, tc.want)
		}
	}
}

// TestScanIsBounded: a reader that is not read holds at most a page per
// segment in its channel and one page per segment waiting to be sent, so
// the segments stop scanning instead of holding the table.
func TestScanIsBounded(t *testing.T) {
	cl := dynamotest.Client(t)
	table := dynamotest.Table(t, cl, dynamotest.TableSpec{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N", RCU: 100000})
	items, exp := dynamotest.Generate(9, 3000)
	dynamotest.Seed(t, cl, table, items)
	ctx := context.Background()
	src := dynamo.New(cl, table, dynamo.Options{Segments: 2, PageItems: 100})
	rr, err := src.Open(ctx, source.Unit{Name: table}, source.Options{Columns: []string{"pk", "sk"}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the segments run ahead as far as they may
	if _, reqs := src.Consumed(); reqs > 2*2 {
		t.Fatalf("%d Scan requests before the first row was read, want at most 4 (2 segments × (1 page queued + 1 waiting))", reqs)
	}
	rows, err := sourcetest.ReadAll(rr)
	rr.Close()
	if err != nil || int64(len(rows)) != exp.Items {
		t.Fatalf("%d rows, %v; want %d", len(rows), err, exp.Items)
	}
	if _, reqs := src.Consumed(); reqs < 30 {
		t.Fatalf("only %d requests for %d items in pages of 100: the bound above proves nothing", reqs, exp.Items)
	}
}
