package flow

// lima-tui run on a table with engine glue: start the table's Glue job run
// with a new load id (StartJobRun, argument --load_id), follow it
// (GetJobRun: state, execution time, DPU-seconds, error message), then
// read the report the driver's lima-tui commit uploaded to
// <script_location>reports/<load id>/report.json and keep it in the
// workspace's reports/ like a local run's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/internal/s3x"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/reports/gluejob"
)

// ErrGlueJob marks a Glue job run that did not succeed.
var ErrGlueJob = errors.New("glue job run failed")

// GlueRunOptions says which table's job to run.
type GlueRunOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	Table     string
	// LoadID of the run; empty: a new one.
	LoadID string
	// Poll is the time between GetJobRun calls (default 15s).
	Poll time.Duration
	// Log receives a line when the run starts and whenever its state changes.
	Log func(string)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Force starts the run outside schedule.window.
	Force bool
}

// GlueRun is a finished job run.
type GlueRun struct {
	Table, Job, RunID, LoadID string
	State                     string
	ExecutionTime             time.Duration
	// DPUSeconds as Glue reports them, or estimated from the workers.
	DPUSeconds   float64
	Workers      int
	WorkerType   string
	ErrorMessage string
	// Report is the commit's report (nil when the run wrote none), and
	// ReportPath its copy in the workspace.
	Report     *reports.Report
	ReportPath string
}

// terminal Glue job run states.
var glueTerminal = map[gluetypes.JobRunState]bool{gluetypes.JobRunStateSucceeded: true, gluetypes.JobRunStateFailed: true, gluetypes.JobRunStateStopped: true,
	gluetypes.JobRunStateTimeout: true, gluetypes.JobRunStateError: true, gluetypes.JobRunStateExpired: true}

// RunGlue starts and follows one table's job run. The error is nil only
// when the run SUCCEEDED and its report was read; a run that failed but
// left a report returns both (the report says what gate 4 found).
func RunGlue(ctx context.Context, o GlueRunOptions) (*GlueRun, error) {
	p := o.Plan
	t := p.Tables[o.Table]
	if t == nil || t.EngineOf() != plan.EngineGlue || t.Glue == nil {
		return nil, fmt.Errorf("%w: table %s does not have engine: glue", ErrUsage, o.Table)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	poll := o.Poll
	if poll <= 0 {
		poll = 15 * time.Second
	}
	logf := func(format string, a ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, a...))
		}
	}
	if err := checkWindow(p, now(), o.Force); err != nil {
		return nil, err
	}
	// Gate 2 for the table first (its Glue checks: role, script location,
	// job deployed): nothing starts unless every check passes.
	if err := checkPreconditions(ctx, RunOptions{Workspace: o.Workspace, Plan: p, Tables: []string{o.Table}}); err != nil {
		return nil, err
	}
	r := &GlueRun{Table: o.Table, Job: p.GlueJobName(o.Table), LoadID: o.LoadID}
	if r.LoadID == "" {
		r.LoadID = "glue-" + NewRunID(now())
	}
	gc, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: p.Platform.Region, Endpoint: p.Storage.GlueEndpoint})
	if err != nil {
		return nil, fmt.Errorf("%w: glue: %w", ErrPrecondition, err)
	}
	started, err := gc.StartJobRun(ctx, &glue.StartJobRunInput{JobName: aws.String(r.Job), Arguments: map[string]string{gluejob.LoadIDArg: r.LoadID}})
	if err != nil {
		var nf *gluetypes.EntityNotFoundException
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("%w: glue job %s is not deployed: run lima-tui deploy glue --apply first (%w)", ErrPrecondition, r.Job, err)
		}
		return nil, fmt.Errorf("glue: StartJobRun %s: %w", r.Job, err)
	}
	r.RunID = aws.ToString(started.JobRunId)
	logf("%s: Glue job %s run %s started, load id %s", o.Table, r.Job, r.RunID, r.LoadID)
	var last gluetypes.JobRunState
	for {
		out, err := gc.GetJobRun(ctx, &glue.GetJobRunInput{JobName: aws.String(r.Job), RunId: aws.String(r.RunID)})
		if err != nil {
			return r, fmt.Errorf("glue: GetJobRun %s %s (the run goes on in Glue; follow it in the console): %w", r.Job, r.RunID, err)
		}
		jr := out.JobRun
		r.State, r.ExecutionTime = string(jr.JobRunState), time.Duration(jr.ExecutionTime)*time.Second
		r.DPUSeconds, r.ErrorMessage = aws.ToFloat64(jr.DPUSeconds), aws.ToString(jr.ErrorMessage)
		r.Workers, r.WorkerType = int(aws.ToInt32(jr.NumberOfWorkers)), string(jr.WorkerType)
		if jr.JobRunState != last {
			logf("%s: Glue run %s %s (%s)", o.Table, r.RunID, jr.JobRunState, r.ExecutionTime)
			last = jr.JobRunState
		}
		if glueTerminal[jr.JobRunState] {
			break
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("stopped following Glue run %s of %s (it goes on in Glue; stop it with aws glue batch-stop-job-run): %w", r.RunID, r.Job, ctx.Err())
		case <-time.After(poll):
		}
	}
	rep, repErr := fetchGlueReport(ctx, o.Workspace, t.Glue.ScriptLocation, r.LoadID)
	if rep != nil {
		r.Report, r.ReportPath = rep.report, rep.path
	}
	cost := fmt.Sprintf("%s of execution, %.0f DPU-seconds", r.ExecutionTime, r.DPUSeconds)
	if r.DPUSeconds == 0 && r.Workers > 0 {
		// Glue reports DPU-seconds for Flex and auto-scaling runs only;
		// otherwise they are the workers' DPUs times the execution time.
		r.DPUSeconds = float64(r.Workers) * float64(glueWorkerDPU(r.WorkerType)) * r.ExecutionTime.Seconds()
		cost = fmt.Sprintf("%s of execution, about %.0f DPU-seconds (%d %s workers × %d DPU × %s)", r.ExecutionTime, r.DPUSeconds, r.Workers, r.WorkerType, glueWorkerDPU(r.WorkerType), r.ExecutionTime)
	}
	if r.State != string(gluetypes.JobRunStateSucceeded) {
		msg := r.ErrorMessage
		if msg == "" {
			msg = "no error message"
		}
		return r, fmt.Errorf("%w: %s run %s ended %s after %s: %s (the driver's and executors' logs are in CloudWatch, /aws-glue/jobs)", ErrGlueJob, r.Job, r.RunID, r.State, cost, msg)
	}
	if repErr != nil {
		return r, fmt.Errorf("glue run %s of %s SUCCEEDED (%s), but its report: %w", r.RunID, r.Job, cost, repErr)
	}
	logf("%s: Glue run %s SUCCEEDED: %s", o.Table, r.RunID, cost)
	return r, nil
}

type fetchedReport struct {
	report *reports.Report
	path   string
}

// fetchGlueReport reads reports/<load id>/report.json below the script
// location and writes it to the workspace's reports/<run id>/.
func fetchGlueReport(ctx context.Context, ws Workspace, loc, loadID string) (*fetchedReport, error) {
	u, err := s3x.ParseURI(loc + gluejob.ReportsDir + loadID + "/report.json")
	if err != nil {
		return nil, err
	}
	cl, err := s3x.New(ctx, s3x.FromEnv())
	if err != nil {
		return nil, err
	}
	rc, err := cl.Get(ctx, u.Bucket, u.Key)
	if err != nil {
		if s3x.IsNotFound(err) {
			return nil, fmt.Errorf("%s: not found: the driver's lima-tui commit wrote no report", u)
		}
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	var rep reports.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	if _, err := reports.RunDir(ws.ReportsDir(), rep.RunID); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	path, err := reports.Write(ws.ReportsDir(), &rep, nil)
	if err != nil {
		return nil, err
	}
	return &fetchedReport{report: &rep, path: path}, nil
}

// glueWorkerDPU is the DPUs of one worker of a type (G.1X: 1, G.2X: 2, …).
func glueWorkerDPU(workerType string) int {
	switch workerType {
	case "G.2X":
		return 2
	case "G.4X":
		return 4
	case "G.8X":
		return 8
	}
	return 1
}
