package gates

// Gate 2 for tables with engine glue: the job's IAM role exists (IAM
// GetRole), the script location is writable (a probe object put and
// deleted below glue.script_location), and Glue answers for the job
// (GetJob: deployed, or the fix is lima-tui deploy glue --apply).
// Endpoints come from the environment (AWS_ENDPOINT_URL_IAM,
// AWS_ENDPOINT_URL_GLUE or storage.glue_endpoint), credentials from the
// SDK's chain.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
)

// glueChecks are the checks of the plan's engine-glue tables (none when it
// has none).
func (pr Probe) glueChecks(p *plan.Plan) []preCheck {
	var out []preCheck
	for _, name := range p.GlueTables() {
		g := p.Tables[name].Glue
		if g == nil {
			continue
		}
		out = append(out,
			preCheck{"glue role " + name, func(ctx context.Context) []Finding { return []Finding{checkGlueRole(ctx, p, name)} }},
			preCheck{"glue script location " + name, func(ctx context.Context) []Finding {
				cl, err := s3Client(ctx)
				if err != nil {
					return []Finding{{Name: "glue script location " + name, Status: Fail, Detail: gate2Err(err), Fix: awsCredFix}}
				}
				return []Finding{probePrefix(ctx, cl, g.ScriptLocation, "glue script location "+name,
					"tables."+name+".glue.script_location", "deploy replaces the driver, the binary and the plan there")}
			}},
			preCheck{"glue job " + name, func(ctx context.Context) []Finding { return []Finding{checkGlueJob(ctx, p, name)} }},
		)
	}
	return out
}

// RoleName is the name of an IAM role ARN (the part after role/ and its
// path).
func RoleName(arn string) string {
	_, rest, _ := strings.Cut(arn, ":role/")
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

func checkGlueRole(ctx context.Context, p *plan.Plan, table string) Finding {
	g := p.Tables[table].Glue
	f := Finding{Name: "glue role " + table}
	name := RoleName(g.RoleARN)
	where := endpointNote("", "AWS_ENDPOINT_URL_IAM")
	var opts []func(*config.LoadOptions) error
	if p.Platform.Region != "" {
		opts = append(opts, config.WithRegion(p.Platform.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		f.Status, f.Detail, f.Fix = Fail, "AWS configuration: "+gate2Err(err), awsCredFix
		return f
	}
	out, err := iam.NewFromConfig(cfg).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	var nf *iamtypes.NoSuchEntityException
	switch {
	case errors.As(err, &nf):
		f.Status, f.Detail = Fail, fmt.Sprintf("iam:GetRole %s (IAM, %s): no such role", name, where)
		f.Fix = fmt.Sprintf("create the role %s with a trust policy for glue.amazonaws.com and the policy lima-tui deploy glue writes (policy.json), or correct tables.%s.glue.role_arn", name, table)
	case err != nil:
		f.Status, f.Detail, f.Fix = Fail, fmt.Sprintf("iam:GetRole %s (IAM, %s): %s", name, where, gate2Err(err)), awsFix(err, "iam:GetRole on the job's role")
	case aws.ToString(out.Role.Arn) != g.RoleARN:
		f.Status = Fail
		f.Detail = fmt.Sprintf("iam:GetRole %s (IAM, %s): the role is %s, not %s", name, where, aws.ToString(out.Role.Arn), g.RoleARN)
		f.Fix = fmt.Sprintf("correct tables.%s.glue.role_arn (account and path) or the credentials' account", table)
	default:
		f.Status, f.Detail = Pass, fmt.Sprintf("iam:GetRole %s (IAM, %s): %s exists", name, where, g.RoleARN)
	}
	return f
}

func checkGlueJob(ctx context.Context, p *plan.Plan, table string) Finding {
	f := Finding{Name: "glue job " + table}
	job := p.GlueJobName(table)
	where := fmt.Sprintf("Glue in %s, %s", p.Platform.Region, endpointNote(p.Storage.GlueEndpoint, "AWS_ENDPOINT_URL_GLUE"))
	cl, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: p.Platform.Region, Endpoint: p.Storage.GlueEndpoint})
	if err != nil {
		f.Status, f.Detail, f.Fix = Fail, where+": "+gate2Err(err), awsCredFix
		return f
	}
	out, err := cl.GetJob(ctx, &glue.GetJobInput{JobName: aws.String(job)})
	var nf *gluetypes.EntityNotFoundException
	switch {
	case errors.As(err, &nf):
		f.Status, f.Detail = Fail, fmt.Sprintf("%s: GetJob %s: not deployed", where, job)
		f.Fix = "run lima-tui deploy glue --apply (it uploads the driver, the binary and the approved plan and creates the job)"
	case err != nil:
		f.Status, f.Detail, f.Fix = Fail, fmt.Sprintf("%s: GetJob %s: %s", where, job, gate2Err(err)), awsFix(err, "glue:GetJob, glue:StartJobRun and glue:GetJobRun")
	default:
		f.Status = Pass
		f.Detail = fmt.Sprintf("%s: job %s deployed (Glue %s, %s x%d)", where, job, aws.ToString(out.Job.GlueVersion), out.Job.WorkerType, aws.ToInt32(out.Job.NumberOfWorkers))
		if loc := out.Job.Command; loc != nil && !strings.HasPrefix(aws.ToString(loc.ScriptLocation), p.Tables[table].Glue.ScriptLocation) {
			f.Status = Warn
			f.Detail += fmt.Sprintf("; its script is %s, outside glue.script_location %s", aws.ToString(loc.ScriptLocation), p.Tables[table].Glue.ScriptLocation)
			f.Fix = "run lima-tui deploy glue --apply to update the job"
		}
	}
	return f
}
