package flow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/reports"
)

// Digest is what an owner is sent after a run: the new exceptions routed to
// them. It never carries raw rows, and values of sensitive columns are
// masked.
type Digest struct {
	RunID      string            `json:"run_id"`
	Owner      string            `json:"owner"`
	Total      int64             `json:"total"`
	ByTable    map[string]int64  `json:"by_table"`
	ByRule     map[string]int64  `json:"by_rule"`
	Earliest   time.Time         `json:"earliest_deadline,omitzero"`
	Exceptions []DigestException `json:"exceptions"`
	Truncated  bool              `json:"truncated,omitempty"`
}

// DigestException is one exception in a digest.
type DigestException struct {
	ID       int64            `json:"id"`
	Table    string           `json:"table"`
	File     string           `json:"file"`
	Line     int64            `json:"line,omitempty"`
	Row      int64            `json:"row,omitempty"`
	Deadline time.Time        `json:"deadline,omitzero"`
	Failures []ledger.Failure `json:"failures"`
}

// MaskedValue replaces the value of a sensitive column in a digest.
const MaskedValue = "(sensitive: not sent)"

const digestMax = 200

// BuildDigests gathers, per owner with a notify setting, the exceptions of
// the run's committed loads.
func BuildDigests(ctx context.Context, st ledger.Store, p *plan.Plan, runID string, tables []*run.TableResult) (map[string]*Digest, error) {
	sensitive := map[string]bool{}
	for name, t := range p.Tables {
		for _, c := range t.Columns {
			if c.Sensitive {
				sensitive[name+"."+c.Name] = true
			}
		}
	}
	out := map[string]*Digest{}
	for _, o := range p.Owners {
		if o.Notify != nil {
			out[o.Name] = &Digest{RunID: runID, Owner: o.Name, ByTable: map[string]int64{}, ByRule: map[string]int64{}, Exceptions: []DigestException{}}
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	for _, tr := range tables {
		if tr.LoadID == "" || tr.Status == run.StatusAlreadyLoaded {
			continue
		}
		var after ledger.Cursor
		for {
			page, next, err := st.List(ctx, ledger.Filter{Table: tr.Name, LoadID: tr.LoadID}, ledger.Page{After: after, Limit: ledger.MaxPageSize})
			if err != nil {
				return nil, err
			}
			for _, e := range page {
				d := out[e.Owner]
				if d == nil {
					continue
				}
				d.Total++
				d.ByTable[e.Table]++
				for _, r := range e.Rules() {
					d.ByRule[r]++
				}
				if !e.Deadline.IsZero() && (d.Earliest.IsZero() || e.Deadline.Before(d.Earliest)) {
					d.Earliest = e.Deadline
				}
				if len(d.Exceptions) >= digestMax {
					d.Truncated = true
					continue
				}
				fs := make([]ledger.Failure, len(e.Failures))
				for i, f := range e.Failures {
					if sensitive[e.Table+"."+f.Column] {
						// Reasons quote the value: take it out there too.
						if f.Value != "" {
							f.Reason = strings.ReplaceAll(f.Reason, strconv.Quote(f.Value), MaskedValue)
							f.Reason = strings.ReplaceAll(f.Reason, f.Value, MaskedValue)
						}
						f.Value = MaskedValue
					}
					fs[i] = f
				}
				d.Exceptions = append(d.Exceptions, DigestException{ID: e.ID, Table: e.Table, File: e.File, Line: e.Line, Row: e.Row, Deadline: e.Deadline, Failures: fs})
			}
			if next == "" || len(page) == 0 {
				break
			}
			after = next
		}
	}
	return out, nil
}

// Notify sends each digest that has exceptions through the owner's
// channels. Failures are reported, never fatal to the run.
func Notify(ctx context.Context, p *plan.Plan, digests map[string]*Digest) []reports.Notification {
	var outs []reports.Notification
	owners := make([]plan.Owner, len(p.Owners))
	copy(owners, p.Owners)
	sort.Slice(owners, func(i, j int) bool { return owners[i].Name < owners[j].Name })
	for _, o := range owners {
		d := digests[o.Name]
		if o.Notify == nil || d == nil || d.Total == 0 {
			continue
		}
		body, err := json.Marshal(d)
		if err != nil {
			continue
		}
		if len(o.Notify.Command) > 0 {
			n := reports.Notification{Owner: o.Name, Channel: "command", Exceptions: d.Total, Status: "sent"}
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			cmd := exec.CommandContext(cctx, o.Notify.Command[0], o.Notify.Command[1:]...)
			cmd.Stdin = bytes.NewReader(body)
			if out, err := cmd.CombinedOutput(); err != nil {
				n.Status, n.Error = "failed", fmt.Sprintf("%v: %.200s", err, out)
			}
			cancel()
			outs = append(outs, n)
		}
		if o.Notify.WebhookEnv != "" {
			n := reports.Notification{Owner: o.Name, Channel: "webhook $" + o.Notify.WebhookEnv, Exceptions: d.Total, Status: "sent"}
			if url := os.Getenv(o.Notify.WebhookEnv); url == "" {
				n.Status, n.Error = "failed", "the environment variable "+o.Notify.WebhookEnv+" is empty"
			} else if err := postJSON(ctx, url, body); err != nil {
				n.Status, n.Error = "failed", err.Error()
			}
			outs = append(outs, n)
		}
	}
	return outs
}

func postJSON(ctx context.Context, url string, body []byte) error {
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			if err := SleepContext(ctx, time.Duration(attempt)*500*time.Millisecond); err != nil {
				return fmt.Errorf("the webhook was not retried: %w (%v)", err, last)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		req, err := http.NewRequestWithContext(cctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			cancel()
			// The URL may carry a token: do not echo it.
			return fmt.Errorf("the webhook URL is not valid")
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "lima")
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err != nil {
			last = fmt.Errorf("the webhook did not answer")
			continue
		}
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return nil
		}
		last = fmt.Errorf("the webhook answered %s", resp.Status)
		if resp.StatusCode < 500 {
			return last
		}
	}
	return last
}
