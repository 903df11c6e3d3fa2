package gluetest

// The Glue job operations Lima's deploy and run use: CreateJob, UpdateJob,
// GetJob, CreateTrigger, UpdateTrigger, GetTrigger, StartJobRun and
// GetJobRun. A job run does nothing: its states are scripted by the test
// (ScriptRun), and OnStart lets the test act as the job (e.g. put the
// report the driver would upload).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Request is a job operation the endpoint received, with its JSON body.
type Request struct {
	Op   string
	Body map[string]any
}

// RunStep is what GetJobRun answers once: a state (STARTING, RUNNING,
// SUCCEEDED, FAILED, TIMEOUT, STOPPED, ERROR), and for the last step the
// execution time, DPU-seconds and error message.
type RunStep struct {
	State         string
	ExecutionTime int32
	DPUSeconds    float64
	ErrorMessage  string
}

// JobRun is a started run.
type JobRun struct {
	ID, JobName string
	Arguments   map[string]string
	steps       []RunStep
	polled      int
	started     time.Time
}

type jobState struct {
	jobs     map[string]map[string]any // name -> job as created/updated
	triggers map[string]map[string]any
	runs     map[string]*JobRun
	requests []Request
	script   []RunStep
	onStart  func(JobRun)
}

// jobStates holds each Server's job state (kept beside the Server so that
// gluetest.go needs no field for it).
var jobStates sync.Map // *Server -> *jobState

// jobsState is the server's job state; the caller holds s.mu.
func (s *Server) jobsState() *jobState {
	v, _ := jobStates.LoadOrStore(s, &jobState{jobs: map[string]map[string]any{}, triggers: map[string]map[string]any{}, runs: map[string]*JobRun{}})
	return v.(*jobState)
}

// ScriptRun sets the states the next started job runs go through, one per
// GetJobRun (the last repeats); default: SUCCEEDED at once.
func (s *Server) ScriptRun(steps ...RunStep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobsState().script = steps
}

// OnStart is called (without the endpoint's lock) when a job run starts.
func (s *Server) OnStart(f func(JobRun)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobsState().onStart = f
}

// Requests lists the job operations received, in order, with their bodies.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.jobsState().requests...)
}

// Job returns a job as last created or updated (the JobUpdate fields merged
// over CreateJob's), and whether it exists.
func (s *Server) Job(name string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobsState().jobs[name]
	return j, ok
}

// Trigger returns a trigger as last created or updated.
func (s *Server) Trigger(name string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.jobsState().triggers[name]
	return t, ok
}

// Runs lists the started runs in order.
func (s *Server) Runs() []JobRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []JobRun
	for i := 1; ; i++ {
		r, ok := s.jobsState().runs["jr_"+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, *r)
	}
}

// dispatch answers the job operations and hands the rest to handle. It is
// called with s.mu held.
func (s *Server) dispatch(op string, body []byte) (any, *apiError) {
	switch op {
	case "CreateJob", "UpdateJob", "GetJob", "CreateTrigger", "UpdateTrigger", "GetTrigger", "StartJobRun", "GetJobRun":
	default:
		return s.handle(op, body)
	}
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, errf("InvalidInputException", "body: %v", err)
	}
	js := s.jobsState()
	js.requests = append(js.requests, Request{Op: op, Body: in})
	str := func(k string) string { v, _ := in[k].(string); return v }
	switch op {
	case "CreateJob":
		name := str("Name")
		if name == "" || str("Role") == "" || in["Command"] == nil {
			return nil, errf("InvalidInputException", "Name, Role and Command are required")
		}
		if _, ok := js.jobs[name]; ok {
			return nil, errf("IdempotentParameterMismatchException", "Job %s already exists.", name)
		}
		js.jobs[name] = in
		return map[string]any{"Name": name}, nil
	case "UpdateJob":
		name := str("JobName")
		cur, ok := js.jobs[name]
		if !ok {
			return nil, errf("EntityNotFoundException", "Job %s not found.", name)
		}
		upd, ok := in["JobUpdate"].(map[string]any)
		if !ok {
			return nil, errf("InvalidInputException", "JobUpdate is required")
		}
		// As Glue does: the update replaces the definition.
		next := map[string]any{"Name": cur["Name"]}
		for k, v := range upd {
			next[k] = v
		}
		js.jobs[name] = next
		return map[string]any{"JobName": name}, nil
	case "GetJob":
		j, ok := js.jobs[str("JobName")]
		if !ok {
			return nil, errf("EntityNotFoundException", "Job %s not found.", str("JobName"))
		}
		return map[string]any{"Job": j}, nil
	case "CreateTrigger":
		name := str("Name")
		if _, ok := js.triggers[name]; ok {
			return nil, errf("AlreadyExistsException", "Trigger with name %s already submitted with different configuration or exists.", name)
		}
		if err := s.checkActions(in["Actions"]); err != nil {
			return nil, err
		}
		t := map[string]any{}
		for k, v := range in {
			t[k] = v
		}
		t["State"] = "CREATED"
		if in["StartOnCreation"] == true {
			t["State"] = "ACTIVATED"
		}
		js.triggers[name] = t
		return map[string]any{"Name": name}, nil
	case "UpdateTrigger":
		name := str("Name")
		cur, ok := js.triggers[name]
		if !ok {
			return nil, errf("EntityNotFoundException", "Trigger %s not found.", name)
		}
		upd, _ := in["TriggerUpdate"].(map[string]any)
		if err := s.checkActions(upd["Actions"]); upd["Actions"] != nil && err != nil {
			return nil, err
		}
		for k, v := range upd {
			cur[k] = v
		}
		return map[string]any{"Trigger": cur}, nil
	case "GetTrigger":
		t, ok := js.triggers[str("Name")]
		if !ok {
			return nil, errf("EntityNotFoundException", "Trigger %s not found.", str("Name"))
		}
		return map[string]any{"Trigger": t}, nil
	case "StartJobRun":
		name := str("JobName")
		if _, ok := js.jobs[name]; !ok {
			return nil, errf("EntityNotFoundException", "Job %s not found.", name)
		}
		args := map[string]string{}
		if a, ok := in["Arguments"].(map[string]any); ok {
			for k, v := range a {
				args[k], _ = v.(string)
			}
		}
		steps := js.script
		if len(steps) == 0 {
			steps = []RunStep{{State: "SUCCEEDED"}}
		}
		r := &JobRun{ID: "jr_" + strconv.Itoa(len(js.runs)+1), JobName: name, Arguments: args, steps: steps, started: time.Now()}
		js.runs[r.ID] = r
		if f := js.onStart; f != nil {
			cp := *r
			s.mu.Unlock()
			f(cp)
			s.mu.Lock()
		}
		return map[string]any{"JobRunId": r.ID}, nil
	case "GetJobRun":
		r, ok := js.runs[str("RunId")]
		if !ok || r.JobName != str("JobName") {
			return nil, errf("EntityNotFoundException", "Job run %s of %s not found.", str("RunId"), str("JobName"))
		}
		st := r.steps[min(r.polled, len(r.steps)-1)]
		r.polled++
		out := map[string]any{"Id": r.ID, "JobName": r.JobName, "JobRunState": st.State, "Arguments": r.Arguments,
			"StartedOn": float64(r.started.Unix()), "ExecutionTime": st.ExecutionTime}
		if j := js.jobs[r.JobName]; j != nil { // as Glue does: the run's capacity
			out["WorkerType"], out["NumberOfWorkers"] = j["WorkerType"], j["NumberOfWorkers"]
		}
		if st.DPUSeconds > 0 {
			out["DPUSeconds"] = st.DPUSeconds
		}
		if st.ErrorMessage != "" {
			out["ErrorMessage"] = st.ErrorMessage
		}
		return map[string]any{"JobRun": out}, nil
	}
	return nil, errf("UnknownOperationException", "gluetest: %s", op)
}

// checkActions refuses a trigger whose actions name a job that does not
// exist, as Glue does.
func (s *Server) checkActions(v any) *apiError {
	acts, _ := v.([]any)
	if len(acts) == 0 {
		return errf("InvalidInputException", "Actions are required")
	}
	for _, a := range acts {
		m, _ := a.(map[string]any)
		name, _ := m["JobName"].(string)
		if _, ok := s.jobsState().jobs[name]; !ok {
			return errf("EntityNotFoundException", "%s", fmt.Sprintf("Job %s not found.", name))
		}
	}
	return nil
}
