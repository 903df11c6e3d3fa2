package flow

// lima-tui deploy glue: the Glue job of each engine-glue table, written to
// a folder (driver.py, job.json, trigger.json, policy.json) and, with
// Apply, uploaded and created: the linux/amd64 lima-tui binary, the
// approved plan and the driver below glue.script_location, then the job
// (GetJob → CreateJob or UpdateJob) and its schedule trigger (GetTrigger →
// CreateTrigger or UpdateTrigger), so deploying again updates in place.

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/internal/s3x"
	"github.com/lima-lake/lima/reports/gluejob"
)

// DeployGlueOptions says what to deploy.
type DeployGlueOptions struct {
	Workspace Workspace
	Plan      *plan.Plan
	// PlanPath is the approved platform.yaml, uploaded byte for byte.
	PlanPath string
	// Tables to deploy; empty: every table with engine glue.
	Tables []string
	// Out is the folder the definitions are written to (default
	// .lima/deploy/glue under the workspace).
	Out string
	// Apply uploads and creates or updates through AWS.
	Apply bool
	// Binary is the linux/amd64 lima-tui to upload; empty: this process's
	// executable when it is one.
	Binary string
	// Log receives one line per step (nil: none).
	Log func(string)
}

// DeployedTable is what deploy did for one table.
type DeployedTable struct {
	Table, Job string
	Dir        string   // where its files were written
	Files      []string // their paths
	SizingRule string
	// Job and Trigger: "created", "updated" or "" (not applied); Trigger
	// "none" when the plan has no schedule.
	JobAction, TriggerAction string
	TriggerNote              string
}

// DefaultDeployDir is where deploy glue writes, below the workspace.
func DefaultDeployDir(ws Workspace) string { return filepath.Join(ws.StateDir(), "deploy", "glue") }

// DeployGlue writes the Glue job of each table and, with Apply, deploys it.
func DeployGlue(ctx context.Context, o DeployGlueOptions) ([]DeployedTable, error) {
	p := o.Plan
	logf := func(format string, a ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, a...))
		}
	}
	tables := o.Tables
	if len(tables) == 0 {
		tables = p.GlueTables()
		if len(tables) == 0 {
			return nil, fmt.Errorf("%w: deploy glue: no table of the plan says engine: glue (add engine: glue and a glue: section to a table)", ErrUsage)
		}
	}
	for _, t := range tables {
		if p.Tables[t] == nil {
			return nil, fmt.Errorf("%w: deploy glue: no table %q in the plan (tables: %s)", ErrUsage, t, strings.Join(p.TableNames(), ", "))
		}
		if p.Tables[t].EngineOf() != plan.EngineGlue {
			return nil, fmt.Errorf("%w: deploy glue: table %s has engine %s; give it engine: glue and a glue: section", ErrUsage, t, p.Tables[t].EngineOf())
		}
	}
	if err := CheckApproval(p); err != nil {
		return nil, err
	}
	planBytes, err := os.ReadFile(o.PlanPath)
	if err != nil {
		return nil, err
	}
	out := o.Out
	if out == "" {
		out = DefaultDeployDir(o.Workspace)
	}
	var s3c *s3x.Client
	if s3c, err = s3x.New(ctx, s3x.FromEnv()); err != nil && o.Apply {
		return nil, fmt.Errorf("%w: deploy glue: %w", ErrPrecondition, err)
	}
	var binary string
	if o.Apply {
		if binary, err = deployBinary(o.Binary); err != nil {
			return nil, err
		}
	}
	var done []DeployedTable
	bundles := map[string]*gluejob.Bundle{}
	for _, t := range tables {
		size := int64(-1)
		if s3c != nil {
			size = sourceBytes(ctx, s3c, p, t)
		}
		b, err := gluejob.Generate(p, t, gluejob.Options{SourceBytes: size})
		if err != nil {
			return nil, err
		}
		bundles[t] = b
		d := DeployedTable{Table: t, Job: b.Job.Name, Dir: filepath.Join(out, b.Job.Name), SizingRule: b.SizingRule, TriggerNote: b.TriggerNote}
		files := map[string][]byte{"driver.py": b.Driver, "policy.json": b.Policy}
		files["job.json"], _ = indentJSON(b.Job)
		if b.Trigger != nil {
			files["trigger.json"], _ = indentJSON(b.Trigger)
		}
		for _, name := range []string{"driver.py", "job.json", "trigger.json", "policy.json"} {
			data, ok := files[name]
			if !ok {
				continue
			}
			path := filepath.Join(d.Dir, name)
			if err := fsx.WriteFileAtomic(path, data); err != nil {
				return nil, err
			}
			d.Files = append(d.Files, path)
		}
		logf("%s: wrote %s (%s)", t, d.Dir, b.SizingRule)
		done = append(done, d)
	}
	if !o.Apply {
		return done, nil
	}

	// Uploads: the binary and the plan once per script location, then each driver.
	uploaded := map[string]bool{}
	for _, t := range tables {
		b := bundles[t]
		for _, up := range []struct {
			uri  string
			open func() ([]byte, *os.File, error)
		}{
			{b.BinaryURI, func() ([]byte, *os.File, error) { f, err := os.Open(binary); return nil, f, err }},
			{b.PlanURI, func() ([]byte, *os.File, error) { return planBytes, nil, nil }},
			{b.DriverURI, func() ([]byte, *os.File, error) { return b.Driver, nil, nil }},
		} {
			if uploaded[up.uri] {
				continue
			}
			u, err := s3x.ParseURI(up.uri)
			if err != nil {
				return nil, err
			}
			data, f, err := up.open()
			if err != nil {
				return nil, err
			}
			var perr error
			if f != nil {
				perr = s3c.Put(ctx, u.Bucket, u.Key, f, nil)
				f.Close()
			} else {
				perr = s3c.Put(ctx, u.Bucket, u.Key, bytes.NewReader(data), nil)
			}
			if perr != nil {
				return nil, fmt.Errorf("deploy glue: upload: %w", perr)
			}
			uploaded[up.uri] = true
			logf("uploaded %s", up.uri)
		}
	}

	gc, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: p.Platform.Region, Endpoint: p.Storage.GlueEndpoint})
	if err != nil {
		return nil, fmt.Errorf("%w: deploy glue: %w", ErrPrecondition, err)
	}
	for i, t := range tables {
		b := bundles[t]
		if done[i].JobAction, err = applyJob(ctx, gc, b.Job); err != nil {
			return nil, err
		}
		logf("%s: job %s %s", t, b.Job.Name, done[i].JobAction)
		if done[i].TriggerAction, err = applyTrigger(ctx, gc, b); err != nil {
			return nil, err
		}
		done[i].TriggerNote = b.TriggerNote
		if done[i].TriggerAction != "none" {
			logf("%s: trigger %s %s", t, b.Job.Name+"-schedule", done[i].TriggerAction)
		}
	}
	return done, nil
}

func indentJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// deployBinary is the binary to upload: the given one, or this process's
// executable on linux/amd64. Either must be an x86-64 Linux ELF file.
func deployBinary(given string) (string, error) {
	path := given
	if path == "" {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			return "", fmt.Errorf("%w: deploy glue --apply: Glue runs linux/amd64 and this lima-tui is %s/%s; build one (GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -o lima-tui-linux ./cmd/lima-tui) and give --binary lima-tui-linux",
				ErrUsage, runtime.GOOS, runtime.GOARCH)
		}
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("deploy glue: this executable: %w", err)
		}
		path = exe
	}
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: deploy glue --binary %s: not a Linux executable (%v); Glue runs linux/amd64", ErrUsage, path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("%w: deploy glue --binary %s: a %s %s file; Glue runs linux/amd64 (x86-64) executables", ErrUsage, path, f.Machine, f.Type)
	}
	return path, nil
}

// sourceBytes sums the sizes of the table's input files (-1 when they
// cannot be listed now: the scope's volume then sizes the job).
func sourceBytes(ctx context.Context, cl *s3x.Client, p *plan.Plan, table string) int64 {
	t := p.Tables[table]
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	src, err := s3src.New(cl, p.Sources[t.Source.Name].Path)
	if err != nil {
		return -1
	}
	units, err := src.List(ctx, t.Source.Files)
	if err != nil {
		return -1
	}
	var n int64
	for _, u := range units {
		n += u.Size
	}
	return n
}

func applyJob(ctx context.Context, gc *glue.Client, j gluejob.Job) (string, error) {
	cmd := &gluetypes.JobCommand{Name: aws.String(j.Command.Name), ScriptLocation: aws.String(j.Command.ScriptLocation), PythonVersion: aws.String(j.Command.PythonVersion)}
	exec := &gluetypes.ExecutionProperty{MaxConcurrentRuns: j.ExecutionProperty.MaxConcurrentRuns}
	_, err := gc.GetJob(ctx, &glue.GetJobInput{JobName: aws.String(j.Name)})
	var nf *gluetypes.EntityNotFoundException
	switch {
	case errors.As(err, &nf):
		_, err = gc.CreateJob(ctx, &glue.CreateJobInput{Name: aws.String(j.Name), Description: aws.String(j.Description), Role: aws.String(j.Role), Command: cmd,
			GlueVersion: aws.String(j.GlueVersion), WorkerType: gluetypes.WorkerType(j.WorkerType), NumberOfWorkers: aws.Int32(j.NumberOfWorkers),
			Timeout: aws.Int32(j.Timeout), MaxRetries: j.MaxRetries, ExecutionProperty: exec, DefaultArguments: j.DefaultArguments})
		if err != nil {
			return "", fmt.Errorf("deploy glue: CreateJob %s: %w", j.Name, err)
		}
		return "created", nil
	case err != nil:
		return "", fmt.Errorf("deploy glue: GetJob %s: %w", j.Name, err)
	}
	_, err = gc.UpdateJob(ctx, &glue.UpdateJobInput{JobName: aws.String(j.Name), JobUpdate: &gluetypes.JobUpdate{Description: aws.String(j.Description), Role: aws.String(j.Role), Command: cmd,
		GlueVersion: aws.String(j.GlueVersion), WorkerType: gluetypes.WorkerType(j.WorkerType), NumberOfWorkers: aws.Int32(j.NumberOfWorkers),
		Timeout: aws.Int32(j.Timeout), MaxRetries: j.MaxRetries, ExecutionProperty: exec, DefaultArguments: j.DefaultArguments}})
	if err != nil {
		return "", fmt.Errorf("deploy glue: UpdateJob %s: %w", j.Name, err)
	}
	return "updated", nil
}

func applyTrigger(ctx context.Context, gc *glue.Client, b *gluejob.Bundle) (string, error) {
	name := b.Job.Name + "-schedule"
	if b.Trigger != nil {
		name = b.Trigger.Name
	}
	_, err := gc.GetTrigger(ctx, &glue.GetTriggerInput{Name: aws.String(name)})
	var nf *gluetypes.EntityNotFoundException
	exists := err == nil
	if err != nil && !errors.As(err, &nf) {
		return "", fmt.Errorf("deploy glue: GetTrigger %s: %w", name, err)
	}
	tr := b.Trigger
	if tr == nil {
		if exists {
			b.TriggerNote = strings.TrimPrefix(b.TriggerNote+"; ", "; ") + "the trigger " + name + " from an earlier deploy still exists: remove it (aws glue delete-trigger --name " + name + ") if the job should no longer run on a schedule"
		}
		return "none", nil
	}
	var acts []gluetypes.Action
	for _, a := range tr.Actions {
		acts = append(acts, gluetypes.Action{JobName: aws.String(a.JobName)})
	}
	if !exists {
		_, err = gc.CreateTrigger(ctx, &glue.CreateTriggerInput{Name: aws.String(tr.Name), Type: gluetypes.TriggerType(tr.Type), Schedule: aws.String(tr.Schedule),
			Actions: acts, StartOnCreation: tr.StartOnCreation, Description: aws.String(tr.Description)})
		if err != nil {
			return "", fmt.Errorf("deploy glue: CreateTrigger %s: %w", tr.Name, err)
		}
		return "created", nil
	}
	_, err = gc.UpdateTrigger(ctx, &glue.UpdateTriggerInput{Name: aws.String(tr.Name), TriggerUpdate: &gluetypes.TriggerUpdate{Schedule: aws.String(tr.Schedule),
		Actions: acts, Description: aws.String(tr.Description)}})
	if err != nil {
		return "", fmt.Errorf("deploy glue: UpdateTrigger %s: %w", tr.Name, err)
	}
	return "updated", nil
}
