package flow_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

func TestOwnersGetDigestsWithoutSensitiveValues(t *testing.T) {
	var mu sync.Mutex
	var got []flow.Digest
	var rawBodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var d flow.Digest
		if err := json.Unmarshal(b, &d); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		got = append(got, d)
		rawBodies = append(rawBodies, string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	t.Setenv("LIMA_TEST_WEBHOOK", srv.URL)

	ws, p := newDemo(t)
	out := filepath.Join(t.TempDir(), "digest.json")
	for i := range p.Owners {
		switch p.Owners[i].Table {
		case "inspections":
			p.Owners[i].Notify = &plan.Notify{WebhookEnv: "LIMA_TEST_WEBHOOK"}
		case "suppliers":
			p.Owners[i].Notify = &plan.Notify{Command: []string{"sh", "-c", "cat > " + out}}
		}
	}
	// cost is sensitive: its bad value "12x.50" must not leave the machine.
	for i, c := range p.Tables["inspections"].Columns {
		if c.Name == "cost" {
			p.Tables["inspections"].Columns[i].Sensitive = true
		}
	}
	rep := runOnce(t, ws, p, flow.RunOptions{}).Report
	if len(rep.Notifications) != 2 {
		t.Fatalf("notifications %+v, want 2", rep.Notifications)
	}
	for _, n := range rep.Notifications {
		if n.Status != "sent" {
			t.Errorf("%+v", n)
		}
	}
	if len(got) != 1 || got[0].Owner != "Ji-woo Park (quality)" || got[0].Total != 5 || got[0].ByRule["unique"] != 1 {
		t.Fatalf("webhook digests %+v, want one for the quality owner with 5 exceptions", got)
	}
	if strings.Contains(rawBodies[0], "12x.50") || !strings.Contains(rawBodies[0], flow.MaskedValue) {
		t.Errorf("the sensitive value left the machine or was not masked: %s", rawBodies[0])
	}
	if strings.Contains(rawBodies[0], "J. Park") {
		t.Errorf("a raw row was sent: %s", rawBodies[0])
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d flow.Digest
	if err := json.Unmarshal(b, &d); err != nil || d.Owner != "Sven Weber (procurement data)" || d.Total != 2 {
		t.Fatalf("command digest %s (%v)", b, err)
	}
}
