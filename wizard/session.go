package wizard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

// progress is what the wizard records beside the plan so a session resumes
// where it stopped: the ids of the questions a person answered. Without
// it, a plan that exists counts as fully answered (written by lima-tui
// init or an earlier wizard).
type progress struct {
	Answered []string `json:"answered"`
}

func progressPath(planPath string) string {
	return filepath.Join(filepath.Dir(planPath), ".lima", "wizard.json")
}

// sessionMsg is the loaded session.
type sessionMsg struct {
	answers  gates.Answers
	answered map[string]bool
	exists   bool // the plan exists
	// scope is gate 1's recorded approval (nil: none).
	scope *plan.Approval
	// lastReport is the newest run's report.json ("" when none ran).
	lastReport string
	err        error
}

// loadSession reads the plan and the wizard's progress.
func loadSession(planPath string) tea.Cmd {
	return func() tea.Msg { return readSession(planPath) }
}

func readSession(planPath string) sessionMsg {
	s := sessionMsg{answers: gates.Answers{}, answered: map[string]bool{}}
	if _, err := os.Stat(planPath); errors.Is(err, fs.ErrNotExist) {
		return s
	}
	p, err := plan.Load(planPath)
	if err != nil {
		s.err = err
		return s
	}
	s.exists = true
	reportsDir := flow.Workspace{Dir: filepath.Dir(planPath)}.ReportsDir()
	if id, err := reports.Latest(reportsDir); err == nil {
		if rd, err := reports.RunDir(reportsDir, id); err == nil {
			s.lastReport = filepath.Join(rd, "report.json")
		}
	}
	s.answers = gates.AnswersOf(p)
	s.scope = p.Gates.Scope
	data, err := os.ReadFile(progressPath(planPath))
	if err != nil {
		for _, q := range gates.Questions() {
			if q.Applies(s.answers) {
				s.answered[q.ID] = true
			}
		}
		return s
	}
	var pr progress
	if err := json.Unmarshal(data, &pr); err != nil {
		s.err = fmt.Errorf("%s: %w", progressPath(planPath), err)
		return s
	}
	for _, id := range pr.Answered {
		s.answered[id] = true
	}
	return s
}

// savedMsg reports a save.
type savedMsg struct {
	seq int
	err error
	// approval is the scope approval (gate 1) the plan holds after the
	// save: nil when the answers changed since it was given; kept: an
	// approving save found the answers were those it approved.
	approval *plan.Approval
	kept     bool
}

// saver writes answers to platform.yaml, one save at a time; a save older
// than the last one written is dropped.
type saver struct {
	// qs are the questions as the wizard asks them (its recommended
	// answers); nil: gates.Questions().
	qs       []gates.Question
	planPath string
	now      func() time.Time
	mu       sync.Mutex
	seq      int // last seq handed out (Update only)
	written  int // last seq written (under mu)
}

// Save returns the Cmd that records the answers: the questions answered
// so far, the recommended answer for the others (so the plan is complete
// and valid at every step), and the progress file. The answers are copied:
// the Cmd shares nothing with the model.
func (s *saver) Save(a gates.Answers, answered map[string]bool) tea.Cmd {
	s.seq++
	seq := s.seq
	a = maps.Clone(a)
	answered = maps.Clone(answered)
	return func() tea.Msg {
		ap, _, err := s.write(seq, a, answered, "")
		return savedMsg{seq: seq, err: err, approval: ap}
	}
}

// Approve returns the Cmd that records the answers and gate 1's approval
// by the person named, as `lima-tui approve --gate scope --by NAME` does:
// only when gate 1 passes on the plan. When the plan already holds a scope
// approval and the answers are the ones it approved, nothing is written:
// walking past an approved gate keeps who approved it and when.
func (s *saver) Approve(a gates.Answers, answered map[string]bool, by string) tea.Cmd {
	s.seq++
	seq := s.seq
	a = maps.Clone(a)
	answered = maps.Clone(answered)
	return func() tea.Msg {
		ap, kept, err := s.write(seq, a, answered, by)
		return savedMsg{seq: seq, err: err, approval: ap, kept: kept}
	}
}

// write records the answers; with by set, it approves the scope too.
func (s *saver) write(seq int, a gates.Answers, answered map[string]bool, by string) (*plan.Approval, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq < s.written {
		return nil, false, nil
	}
	ap, kept, err := s.writeLocked(a, answered, by)
	if err == nil {
		s.written = seq
	}
	return ap, kept, err
}

func (s *saver) writeLocked(a gates.Answers, answered map[string]bool, by string) (*plan.Approval, bool, error) {
	full := completeAnswers(s.qs, a, answered)
	var p *plan.Plan
	if _, err := os.Stat(s.planPath); errors.Is(err, fs.ErrNotExist) {
		p = &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Catalog: plan.CatalogSQLite},
			Storage: plan.Storage{Warehouse: plan.DefaultWarehouse}, Tables: map[string]*plan.Table{}, ETL: plan.ETL{Tool: "lima"}}
	} else {
		var err error
		if p, err = plan.Load(s.planPath); err != nil {
			return nil, false, err
		}
	}
	before := gates.AnswersOf(p)
	if by != "" && p.Gates.Scope != nil && SameAnswers(before, full) {
		// Approved for these very answers: kept as recorded.
		return p.Gates.Scope, true, nil
	}
	if err := gates.ApplyAnswers(p, full); err != nil {
		return nil, false, errNotYet{err}
	}
	if !SameAnswers(before, gates.AnswersOf(p)) {
		// A scope approved for other answers is no longer approved.
		p.Gates.Scope = nil
	}
	p.Touch(s.now())
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	if by != "" {
		if failed := gates.FailedFindings(gates.Scope(p)); len(failed) > 0 {
			return nil, false, fmt.Errorf("gate 1 does not pass, so the scope is not approved: %s: %s", failed[0].Name, failed[0].Detail)
		}
		if p.Gates.Scope == nil {
			p.Gates.Scope = &plan.Approval{ApprovedBy: by, ApprovedAt: s.now().UTC().Format(time.RFC3339), PlanHash: p.Hash()}
		}
	}
	ap := p.Gates.Scope
	if err := p.Write(s.planPath); err != nil {
		return nil, false, err
	}
	ids := make([]string, 0, len(answered))
	for id, ok := range answered {
		if ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	data, _ := json.Marshal(progress{Answered: ids})
	pp := progressPath(s.planPath)
	if err := os.MkdirAll(filepath.Dir(pp), 0o700); err != nil {
		return nil, false, err
	}
	tmp := pp + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return nil, false, err
	}
	if err := os.Rename(tmp, pp); err != nil {
		return nil, false, err
	}
	return ap, false, nil
}

// errNotYet: the answers so far do not make a valid plan yet (a question a
// person must answer comes next); the save happens with the next answer.
type errNotYet struct{ err error }

func (e errNotYet) Error() string { return "not saved yet: " + e.err.Error() }

// SameAnswers reports whether two sets of gate 1 answers agree on every
// question that applies (lists compared item by item, blanks ignored).
func SameAnswers(a, b gates.Answers) bool {
	for _, q := range gates.Questions() {
		if q.Applies(a) != q.Applies(b) {
			return false
		}
		if !q.Applies(a) {
			continue
		}
		if q.Multi {
			if !slices.Equal(a.List(q.ID), b.List(q.ID)) {
				return false
			}
		} else if strings.TrimSpace(a[q.ID]) != strings.TrimSpace(b[q.ID]) {
			return false
		}
	}
	return true
}

// completeAnswers fills the questions not answered yet with their
// recommended answer (of qs; nil: gates.Questions()), in order.
func completeAnswers(qs []gates.Question, a gates.Answers, answered map[string]bool) gates.Answers {
	full := maps.Clone(a)
	if qs == nil {
		qs = gates.Questions()
	}
	for _, q := range qs {
		if q.Applies(full) && !answered[q.ID] {
			full[q.ID] = q.Recommended(full)
		}
	}
	return full
}
