package reports

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestLatencySummary compares Latency with a median found by counting,
// a maximum and a mean computed here, on random samples of odd and even
// sizes; report.md carries the micro-batch's line.
func TestLatencySummary(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	for n := 1; n <= 40; n++ {
		ms := make([]int64, n)
		var total, maxMS int64
		for i := range ms {
			ms[i] = int64(rng.IntN(5000))
			total += ms[i]
			maxMS = max(maxMS, ms[i])
		}
		// The median by nearest rank: at least ⌈n/2⌉ values ≤ it, fewer below.
		k := (n + 1) / 2
		want := int64(-1)
		for _, v := range ms {
			le, lt := 0, 0
			for _, w := range ms {
				if w <= v {
					le++
				}
				if w < v {
					lt++
				}
			}
			if le >= k && lt < k {
				want = v
			}
		}
		before := fmt.Sprint(ms)
		p50, gotMax, avg := Latency(ms)
		if p50 != want || gotMax != maxMS || avg != total/int64(n) {
			t.Fatalf("n=%d %v: Latency = %d %d %d, want %d %d %d", n, ms, p50, gotMax, avg, want, maxMS, total/int64(n))
		}
		if fmt.Sprint(ms) != before {
			t.Fatal("Latency reordered its input")
		}
	}
	if a, b, c := Latency(nil); a != 0 || b != 0 || c != 0 {
		t.Fatal("no latencies must give zeros")
	}

	now := time.Now().UTC()
	w := &WatchReport{}
	for i, l := range []int64{300, 100, 900, 200} {
		w.Files = append(w.Files, WatchFile{Table: "t", Name: fmt.Sprintf("f%d.csv", i), FirstSeen: now, VisibleAt: now.Add(time.Duration(l) * time.Millisecond), LatencyMS: l})
	}
	w.Summarize()
	md := Markdown(&Report{RunID: "r1", Status: "ok", Watch: w})
	if want := "latency from arrival (first seen) to visible: p50 200 ms, max 900 ms, average 375 ms over 4 file(s)"; !strings.Contains(md, want) {
		t.Fatalf("report.md lacks %q:\n%s", want, md)
	}
}
