package flow

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A webhook retry does not sleep through cancellation: once the run is
// cancelled (ctrl+c, SIGTERM), the next attempt is not waited for.
func TestWebhookRetryStopsOnCancel(t *testing.T) {
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		cancel() // the run is interrupted while the first answer is on its way
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	start := time.Now()
	err := postJSON(ctx, srv.URL, []byte(`{}`))
	if took := time.Since(start); took > 300*time.Millisecond {
		t.Errorf("postJSON took %v after the cancellation (the retries slept through it)", took)
	}
	if err == nil || !strings.Contains(err.Error(), "not retried") {
		t.Errorf("err = %v, want the retry refused by the cancellation", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
	// Without a cancellation the three attempts are made.
	calls.Store(0)
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv2.Close()
	if err := postJSON(context.Background(), srv2.URL, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
}
