package wizard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
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
	err      error
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
	s.answers = gates.AnswersOf(p)
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
}

// saver writes answers to platform.yaml, one save at a time; a save older
// than the last one written is dropped.
type saver struct {
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
	return func() tea.Msg { return savedMsg{seq: seq, err: s.write(seq, a, answered)} }
}

func (s *saver) write(seq int, a gates.Answers, answered map[string]bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq < s.written {
		return nil
	}
	full := completeAnswers(a, answered)
	var p *plan.Plan
	if _, err := os.Stat(s.planPath); errors.Is(err, fs.ErrNotExist) {
		p = &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Catalog: plan.CatalogSQLite},
			Storage: plan.Storage{Warehouse: plan.DefaultWarehouse}, Tables: map[string]*plan.Table{}, ETL: plan.ETL{Tool: "lima"}}
	} else {
		var err error
		if p, err = plan.Load(s.planPath); err != nil {
			return err
		}
	}
	if err := gates.ApplyAnswers(p, full); err != nil {
		return errNotYet{err}
	}
	p.Touch(s.now())
	if err := p.Validate(); err != nil {
		return err
	}
	if err := p.Write(s.planPath); err != nil {
		return err
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
		return err
	}
	tmp := pp + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, pp); err != nil {
		return err
	}
	s.written = seq
	return nil
}

// errNotYet: the answers so far do not make a valid plan yet (a question a
// person must answer comes next); the save happens with the next answer.
type errNotYet struct{ err error }

func (e errNotYet) Error() string { return "not saved yet: " + e.err.Error() }

// completeAnswers fills the questions not answered yet with their
// recommended answer, in order.
func completeAnswers(a gates.Answers, answered map[string]bool) gates.Answers {
	full := maps.Clone(a)
	for _, q := range gates.Questions() {
		if q.Applies(full) && !answered[q.ID] {
			full[q.ID] = q.Recommended(full)
		}
	}
	return full
}
