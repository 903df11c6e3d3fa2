package gluejob

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/internal/s3x"
)

// Statement is one statement of an IAM policy document.
type Statement struct {
	Sid       string                    `json:"Sid"`
	Effect    string                    `json:"Effect"`
	Action    []string                  `json:"Action"`
	Resource  []string                  `json:"Resource"`
	Condition map[string]map[string]any `json:"Condition,omitempty"`
}

// PolicyDocument is an IAM policy document.
type PolicyDocument struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Policy is the IAM policy the job's role needs for table: read the
// source prefix; read, write and delete below the warehouse; read the
// script location and write the reports below it; the Glue Data Catalog
// actions on the namespace (catalog glue) or the S3 Tables actions on the
// table bucket (catalog s3tables); and the Glue job's own logs. The account
// and region are the role's and the plan's (* when not known).
func Policy(p *plan.Plan, table string) ([]byte, error) {
	t := p.Tables[table]
	g := t.Glue
	account := "*"
	if parts := strings.Split(g.RoleARN, ":"); len(parts) >= 5 && parts[4] != "" {
		account = parts[4]
	}
	region := p.Platform.Region
	if region == "" {
		region = "*"
	}
	src, err := s3x.ParseURI(p.Sources[t.Source.Name].Path)
	if err != nil {
		return nil, fmt.Errorf("gluejob: source of %s: %w", table, err)
	}
	wh, err := s3x.ParseURI(p.Warehouse())
	if err != nil {
		return nil, fmt.Errorf("gluejob: storage.warehouse: %w", err)
	}
	code, err := s3x.ParseURI(g.ScriptLocation)
	if err != nil {
		return nil, fmt.Errorf("gluejob: glue.script_location: %w", err)
	}
	var st []Statement
	st = append(st, listStatement("ListSourceWarehouseAndScripts", src, wh, code)...)
	st = append(st,
		Statement{Sid: "ReadSource", Effect: "Allow", Action: []string{"s3:GetObject"}, Resource: []string{objects(src)}},
		Statement{Sid: "WriteWarehouse", Effect: "Allow", Action: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}, Resource: []string{objects(wh)}},
		Statement{Sid: "ReadScripts", Effect: "Allow", Action: []string{"s3:GetObject"}, Resource: []string{objects(code)}},
		Statement{Sid: "WriteReports", Effect: "Allow", Action: []string{"s3:PutObject"}, Resource: []string{objects(code.Join(strings.TrimSuffix(ReportsDir, "/")))}},
	)
	ns := strings.ToLower(p.Namespace())
	switch p.Catalog() {
	case plan.CatalogS3Tables:
		arn := p.Storage.TableBucketARN
		st = append(st, Statement{Sid: "S3TablesCatalog", Effect: "Allow",
			Action: []string{"s3tables:GetTableBucket", "s3tables:GetNamespace", "s3tables:CreateNamespace", "s3tables:ListTables",
				"s3tables:GetTable", "s3tables:CreateTable", "s3tables:GetTableMetadataLocation", "s3tables:UpdateTableMetadataLocation",
				"s3tables:GetTableData", "s3tables:PutTableData"},
			Resource: []string{arn, arn + "/table/*"}})
	default:
		actions := []string{"glue:GetDatabase", "glue:CreateDatabase", "glue:GetTable", "glue:GetTables", "glue:CreateTable", "glue:UpdateTable"}
		if p.Pattern() == plan.PatternHive {
			actions = append(actions, "glue:BatchCreatePartition", "glue:GetPartitions")
		}
		st = append(st, Statement{Sid: "GlueCatalog", Effect: "Allow", Action: actions, Resource: []string{
			fmt.Sprintf("arn:aws:glue:%s:%s:catalog", region, account),
			fmt.Sprintf("arn:aws:glue:%s:%s:database/%s", region, account, ns),
			fmt.Sprintf("arn:aws:glue:%s:%s:table/%s/*", region, account, ns),
		}})
	}
	st = append(st, Statement{Sid: "GlueJobLogs", Effect: "Allow", Action: []string{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"},
		Resource: []string{fmt.Sprintf("arn:aws:logs:%s:%s:log-group:/aws-glue/*", region, account)}})
	b, err := json.MarshalIndent(PolicyDocument{Version: "2012-10-17", Statement: st}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func objects(u s3x.URI) string {
	k := strings.TrimSuffix(u.Key, "/")
	if k == "" {
		return "arn:aws:s3:::" + u.Bucket + "/*"
	}
	return "arn:aws:s3:::" + u.Bucket + "/" + k + "/*"
}

// listStatement lets the role list each bucket, below its prefixes only.
func listStatement(sid string, us ...s3x.URI) []Statement {
	prefixes := map[string][]string{}
	for _, u := range us {
		k := strings.TrimSuffix(u.Key, "/")
		pp := []string{"*"}
		if k != "" {
			pp = []string{k, k + "/*"}
		}
		prefixes[u.Bucket] = append(prefixes[u.Bucket], pp...)
	}
	buckets := make([]string, 0, len(prefixes))
	for b := range prefixes {
		buckets = append(buckets, b)
	}
	sort.Strings(buckets)
	var out []Statement
	for i, b := range buckets {
		pp := prefixes[b]
		sort.Strings(pp)
		pp = dedupe(pp)
		list := make([]any, len(pp))
		for j, v := range pp {
			list[j] = v
		}
		out = append(out, Statement{Sid: fmt.Sprintf("%s%d", sid, i+1), Effect: "Allow", Action: []string{"s3:ListBucket"},
			Resource: []string{"arn:aws:s3:::" + b}, Condition: map[string]map[string]any{"StringLike": {"s3:prefix": list}}})
	}
	return out
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
