package gates

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/dynamo"
)

// proposeDynamoDB proposes a lake table for every DynamoDB table of every
// dynamodb source (sources.X.dynamodb.tables, or every table in the
// region): DescribeTable for its key schema, and a profile of its items
// (within the read budget) for the types. taken holds the table names
// already proposed (it is updated).
func proposeDynamoDB(ctx context.Context, p *plan.Plan, o ProposeOptions, taken map[string]bool, pr *Proposal) {
	for _, sname := range p.SourceNames() {
		s := p.Sources[sname]
		if !s.IsDynamoDB() {
			continue
		}
		add := func(status, detail, fix string) {
			pr.Findings = append(pr.Findings, Finding{Name: "source " + sname, Status: status, Detail: detail, Fix: fix})
		}
		cfg := dynamo.FromEnv()
		cl, err := dynamo.NewClient(ctx, cfg)
		if err != nil {
			add(Fail, gate2Err(err), ddbFix)
			continue
		}
		var names []string
		if s.DynamoDB != nil {
			names = s.DynamoDB.Tables
		}
		if len(names) == 0 {
			pg := dynamodb.NewListTablesPaginator(cl, &dynamodb.ListTablesInput{})
			for pg.HasMorePages() {
				out, err := pg.NextPage(ctx)
				if err != nil {
					add(Fail, fmt.Sprintf("ListTables (%s): %v", cfg.Describe(), gate2Err(err)), "name the tables in sources."+sname+".dynamodb.tables, or let the credentials call dynamodb:ListTables; "+ddbFix)
					names = nil
					break
				}
				names = append(names, out.TableNames...)
			}
			if len(names) == 0 {
				add(Warn, fmt.Sprintf("no DynamoDB tables listed (%s)", cfg.Describe()), "name the tables in sources."+sname+".dynamodb.tables, or check AWS_REGION")
				continue
			}
		}
		add(Pass, fmt.Sprintf("DynamoDB (%s): %s", cfg.Describe(), countNoun(len(names), "table", "tables")), "")
		for _, table := range names {
			name := SnakeName(table, "t")
			if name == "" {
				name = "table"
			}
			for _, alt := range []string{name, SnakeName(sname+"_"+name, "t")} {
				if alt != "" && !taken[alt] {
					name = alt
					break
				}
			}
			for i := 2; taken[name]; i++ {
				name = fmt.Sprintf("%s_%d", strings.TrimRight(name, "_0123456789"), i)
			}
			opts := dynamo.PlanOptions(s, p.ETL.MaxParallelReads)
			items := o.MaxRows
			if items <= 0 || items > dynamo.DefaultProfileItems {
				items = dynamo.DefaultProfileItems
			}
			src := dynamo.New(cl, table, opts)
			ti, err := src.Info(ctx)
			if err != nil {
				pr.Findings = append(pr.Findings, Finding{Name: name, Status: Fail, Detail: fmt.Sprintf("DescribeTable %s: %v", table, gate2Err(err)), Fix: ddbFix})
				continue
			}
			cols, err := src.Profile(ctx, int(items))
			if err != nil {
				pr.Findings = append(pr.Findings, Finding{Name: name, Status: Fail, Detail: fmt.Sprintf("scan %s for a profile: %v", table, gate2Err(err)), Fix: ddbFix})
				continue
			}
			taken[name] = true
			t, fs := proposeDynamoTable(name, sname, ti, cols, o.Sensitive)
			pr.Findings = append(pr.Findings, fs...)
			var profiled int64
			for _, c := range cols {
				profiled = max(profiled, c.Present)
			}
			pr.Plan.Tables[name] = t
			pr.Evidence[name] = &TableEvidence{Name: table, Source: sname, Rows: profiled, EstRows: ti.ItemCount}
		}
	}
}

// proposeDynamoTable proposes the lake table of a DynamoDB table from its
// description and profiled attributes: the key schema is the key.
func proposeDynamoTable(name, sname string, ti dynamo.TableInfo, cols []dynamo.Column, sensitive []string) (*plan.Table, []Finding) {
	var fs []Finding
	add := func(aspect, status, detail, fix string) {
		fs = append(fs, Finding{Name: name + aspect, Status: status, Detail: detail, Fix: fix})
	}
	t := &plan.Table{Type: plan.TableBase, WrittenBy: "lima", Source: &plan.TableSource{Name: sname, Table: ti.Name},
		Description: fmt.Sprintf("Proposed by gate 3 from DynamoDB table %s (about %s by DescribeTable)", ti.Name, countNoun(int(ti.ItemCount), "item", "items"))}
	used := map[string]bool{}
	lake := map[string]string{}
	for _, c := range cols {
		cn := SnakeName(c.Name, "c")
		if cn == "" {
			cn = "attribute"
		}
		for i := 2; used[cn]; i++ {
			cn = fmt.Sprintf("%s_%d", strings.TrimRight(cn, "_0123456789"), i)
		}
		used[cn], lake[c.Name] = true, cn
		pc := plan.Column{Name: cn, Type: c.Type, Required: c.Key != ""}
		if cn != c.Name {
			pc.SourceName = c.Name
		}
		pc.Sensitive = matchesAny(sensitive, cn) || matchesAny(sensitive, c.Name)
		t.Columns = append(t.Columns, pc)
		seen := strings.Join(c.Seen, ", ")
		if c.Note != "" {
			add("."+cn+": type", Warn, fmt.Sprintf("%s (%s) → %s: %s", c.Name, seen, c.Type, c.Note), "check the type before approving")
		} else {
			add("."+cn+": type", Pass, fmt.Sprintf("%s (%s) → %s", c.Name, seen, c.Type), "")
		}
	}
	var keys []string
	for _, k := range ti.Keys {
		if cn, ok := lake[k]; ok {
			keys = append(keys, cn)
		}
	}
	if len(keys) == len(ti.Keys) && len(keys) > 0 {
		t.Load.Keys = keys
		what := "partition key"
		if len(keys) == 2 {
			what = "partition key and sort key"
		}
		add(": key", Pass, fmt.Sprintf("(%s): the %s of DynamoDB table %s", strings.Join(keys, ", "), what, ti.Name), "")
	} else {
		add(": key", Warn, fmt.Sprintf("the key schema of %s (%s) was not found among the profiled attributes (an empty table?)", ti.Name, strings.Join(ti.Keys, ", ")), "declare the columns and load.keys by hand")
	}
	add(": load", Pass, "mode full: every run scans the table within its read budget and replaces the lake table", "")
	return t, fs
}
