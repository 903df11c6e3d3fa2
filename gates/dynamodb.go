package gates

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/dynamo"
	"github.com/lima-lake/lima/internal/s3x"
)

// ddbFix is what to do when DynamoDB cannot be reached.
const ddbFix = "set AWS_REGION (and AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); for an emulator or a VPC endpoint set AWS_ENDPOINT_URL_DYNAMODB"

// checkDynamoSource says where a dynamodb source's requests go; the tables
// are checked one by one (checkDynamoTable).
func (pr Probe) checkDynamoSource(_ context.Context, name string, s *plan.Source) Finding {
	c := dynamo.FromEnv()
	o := dynamo.PlanOptions(s, 0)
	pct := o.ReadPercent
	if pct <= 0 {
		pct = dynamo.DefaultReadPercent
	}
	return Finding{Name: "source " + name, Status: Pass,
		Detail: fmt.Sprintf("DynamoDB through %s; scans use at most %g%% of a provisioned table's read capacity (on-demand: %s read units/s)", c.Describe(), pct, onDemandBudget(o))}
}

func onDemandBudget(o dynamo.Options) string {
	if o.MaxRCU > 0 {
		return fmt.Sprintf("max_rcu %g", o.MaxRCU)
	}
	return fmt.Sprintf("%g by default", dynamo.DefaultOnDemandRCU)
}

// checkDynamoTable checks a table read from DynamoDB: for a scan,
// DescribeTable (the table exists and is ACTIVE, its capacity mode, the
// item count hint) and the read budget the scan will keep to; for an
// export, its manifests.
func (pr Probe) checkDynamoTable(ctx context.Context, p *plan.Plan, name string) Finding {
	t := p.Tables[name]
	f := Finding{Name: "table " + name}
	s := p.Sources[t.Source.Name]
	opts := dynamo.PlanOptions(s, p.ETL.MaxParallelReads)
	if uri := t.Source.Export; uri != "" {
		cl, err := s3x.New(ctx, s3x.FromEnv())
		if err != nil {
			f.Status, f.Detail, f.Fix = Fail, gate2Err(err), awsCredFix
			return f
		}
		e, err := dynamo.NewExport(cl, uri, opts)
		if err == nil {
			var sum dynamo.ExportSummary
			if sum, err = e.Summary(ctx); err == nil {
				units, lerr := e.List(ctx, []string{"**"})
				if lerr != nil {
					err = lerr
				} else {
					var size int64
					for _, u := range units {
						size += u.Size
					}
					f.Status = Pass
					f.Detail = fmt.Sprintf("DynamoDB export %s: %d items in %d data file(s), %s (exported %s); the table itself is not read", uri, sum.ItemCount, len(units), gate2Bytes(uint64(size)), sum.Exported())
					return f
				}
			}
		}
		f.Status, f.Detail = Fail, fmt.Sprintf("DynamoDB export %s: %v", uri, gate2Err(err))
		f.Fix = fmt.Sprintf("point tables.%s.source.export at the export's folder (it holds manifest-summary.json), and let the credentials read it; %s", name, awsCredFix)
		return f
	}
	cfg := dynamo.FromEnv()
	cl, err := dynamo.NewClient(ctx, cfg)
	if err != nil {
		f.Status, f.Detail, f.Fix = Fail, gate2Err(err), ddbFix
		return f
	}
	ti, err := dynamo.Describe(ctx, cl, t.Source.Table)
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		f.Status, f.Detail = Fail, fmt.Sprintf("DynamoDB table %s does not exist (%s)", t.Source.Table, cfg.Describe())
		f.Fix = fmt.Sprintf("correct tables.%s.source.table, or the region (AWS_REGION)", name)
		return f
	case err != nil:
		f.Status, f.Detail = Fail, fmt.Sprintf("DescribeTable %s (%s): %v", t.Source.Table, cfg.Describe(), gate2Err(err))
		f.Fix = "let the credentials call dynamodb:DescribeTable and dynamodb:Scan on the table; " + ddbFix
		return f
	}
	mode := fmt.Sprintf("provisioned %d read units/s", ti.ProvisionedRCU)
	if ti.OnDemand {
		mode = "on demand"
	}
	b := dynamo.BudgetFor(ti, opts.ReadPercent, opts.MaxRCU)
	segs := opts.Segments
	if segs <= 0 {
		segs = dynamo.DefaultSegments
	}
	consistency := "eventually consistent"
	if opts.ConsistentRead {
		consistency = "strongly consistent (twice the capacity)"
	}
	f.Detail = fmt.Sprintf("DynamoDB table %s: %s, %s, about %d items and %s by DescribeTable (a hint, updated about every six hours; gate 4 counts the scan itself); key %v; the scan reads in %d segments, %s, within %.4g read units/s (%s)",
		ti.Name, ti.Status, mode, ti.ItemCount, gate2Bytes(uint64(max(ti.SizeBytes, 0))), ti.Keys, segs, consistency, b.RCU, b.Reason)
	if ti.Status != string(types.TableStatusActive) {
		f.Status, f.Fix = Fail, "wait until the table is ACTIVE (it is being created, updated or deleted), then check again"
		return f
	}
	f.Status = Pass
	return f
}
