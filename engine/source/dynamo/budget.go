package dynamo

import (
	"context"
	"sync"
	"time"
)

// Limiter is a token bucket over read capacity units, shared by the
// segments of one scan. A request waits until the bucket holds a positive
// balance, then the capacity the response says it consumed
// (ReturnConsumedCapacity TOTAL) is taken out, possibly into debt that
// later requests wait off. Over a scan of T seconds the capacity consumed
// is at most Rate×T + Burst + what the requests in flight at the end
// consume (one page per segment; the scan keeps pages small when the
// budget is small).
type Limiter struct {
	mu     sync.Mutex
	rate   float64 // units per second
	burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
}

// NewLimiter returns a limiter of rate units a second holding burst units
// at first (burst ≥ 1; 0 means one second's worth).
func NewLimiter(rate, burst float64) *Limiter {
	if burst <= 0 {
		burst = max(rate, 1)
	}
	l := &Limiter{rate: rate, burst: burst, tokens: burst, now: time.Now, sleep: sleepCtx}
	l.last = l.now()
	return l
}

// Rate is the limiter's units per second.
func (l *Limiter) Rate() float64 { return l.rate }

// Burst is the limiter's bucket size.
func (l *Limiter) Burst() float64 { return l.burst }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (l *Limiter) refill() {
	now := l.now()
	if el := now.Sub(l.last).Seconds(); el > 0 {
		l.tokens = min(l.burst, l.tokens+el*l.rate)
	}
	l.last = now
}

// Wait blocks until the bucket's balance is positive.
func (l *Limiter) Wait(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.Lock()
		l.refill()
		if l.tokens > 0 {
			l.mu.Unlock()
			return nil
		}
		d := time.Duration((-l.tokens + 0.001) / l.rate * float64(time.Second))
		l.mu.Unlock()
		if err := l.sleep(ctx, max(d, time.Millisecond)); err != nil {
			return err
		}
	}
}

// Spend takes consumed units out of the bucket.
func (l *Limiter) Spend(units float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refill()
	l.tokens -= units
}
