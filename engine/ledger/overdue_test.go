package ledger_test

import (
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
)

// TestOverdue: an exception is overdue when its deadline has passed (strictly)
// while it is still open or fixed; closed ones and those without a deadline
// never are.
func TestOverdue(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	for _, c := range []struct {
		deadline time.Time
		status   string
		want     bool
	}{
		{past, ledger.StatusOpen, true},
		{past, ledger.StatusFixed, true},
		{past, ledger.StatusWaived, false},
		{past, ledger.StatusReplayed, false},
		{past, ledger.StatusSuperseded, false},
		{now, ledger.StatusOpen, false}, // due now is not yet overdue
		{future, ledger.StatusOpen, false},
		{future, ledger.StatusFixed, false},
		{time.Time{}, ledger.StatusOpen, false},
		{time.Time{}, ledger.StatusFixed, false},
	} {
		e := ledger.Exception{Deadline: c.deadline, Status: c.status}
		if got := e.Overdue(now); got != c.want {
			t.Errorf("deadline %v, %s: Overdue = %v, want %v", c.deadline, c.status, got, c.want)
		}
	}
}
