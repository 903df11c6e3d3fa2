package gates

// Gate 1 and gate 2 for the AWS catalogs: S3 Tables names must be lower
// case (gate 1); Glue and S3 Tables must answer, and the database or
// namespace state is reported (gate 2). Credentials come from the AWS
// default chain; the findings name endpoints and environment variables,
// never secrets.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// awsCatalogScope is gate 1's rule for S3 Tables: the namespace, the
// table names and the column names are lower case (S3 Tables refuses
// anything else, and Athena folds names to lower case).
func awsCatalogScope(p *plan.Plan) []Finding {
	if p.Catalog() != plan.CatalogS3Tables {
		return nil
	}
	f := Finding{Name: "S3 Tables names", Status: Pass}
	var bad, fixes []string
	check := func(what, name string) {
		if !plan.S3TablesName(name) {
			bad = append(bad, what+" "+strconv.Quote(name))
			if low := strings.ToLower(name); plan.S3TablesName(low) {
				fixes = append(fixes, name+" → "+low)
			}
		}
	}
	check("namespace", p.Namespace())
	for _, name := range p.TableNames() {
		check("table", name)
		if t := p.Tables[name]; t != nil {
			for _, c := range t.Columns {
				check("column of "+name, c.Name)
			}
		}
	}
	if len(bad) == 0 {
		f.Detail = fmt.Sprintf("namespace %s and %d table(s): lower-case names, as S3 Tables requires", p.Namespace(), len(p.TableNames()))
		return []Finding{f}
	}
	f.Status = Fail
	f.Detail = "S3 Tables takes lower-case letters, digits and _ only (starting with a letter or digit); these are not: " + strings.Join(bad, ", ")
	f.Fix = "rename them in platform.yaml"
	if len(fixes) > 0 {
		f.Fix += ": " + strings.Join(fixes, ", ")
	}
	return []Finding{f}
}

// checkAWSCatalog is gate 2 for catalog glue and s3tables: the catalog
// answers, and the database (namespace) exists or will be created.
func (pr Probe) checkAWSCatalog(ctx context.Context, p *plan.Plan) []Finding {
	switch p.Catalog() {
	case plan.CatalogGlue:
		return checkGlue(ctx, p)
	case plan.CatalogS3Tables:
		return checkS3Tables(ctx, p)
	}
	return nil
}

// hiveWithoutCatalog is gate 2's catalog finding for Hive-style tables
// that no catalog registers.
func hiveWithoutCatalog(p *plan.Plan) []Finding {
	return []Finding{{Name: "catalog", Status: Pass,
		Detail: fmt.Sprintf("pattern hive without a catalog: each table's commits are the manifests under %s/%s/<table>/_lima/commits; set platform.catalog: glue to register tables and partitions in the Glue Data Catalog", p.Warehouse(), p.Namespace())}}
}

func endpointNote(planValue, envService string) string {
	switch {
	case planValue != "":
		return "endpoint " + planValue + " (storage.glue_endpoint)"
	case os.Getenv(envService) != "":
		return "endpoint " + os.Getenv(envService) + " ($" + envService + ")"
	case os.Getenv("AWS_ENDPOINT_URL") != "":
		return "endpoint " + os.Getenv("AWS_ENDPOINT_URL") + " ($AWS_ENDPOINT_URL)"
	}
	return "AWS's endpoint"
}

// awsFix is the fix for an AWS error: credentials, permissions or the
// network.
func awsFix(err error, actions string) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch code := ae.ErrorCode(); {
		case strings.Contains(code, "AccessDenied"), code == "UnrecognizedClientException", code == "InvalidSignatureException", strings.Contains(code, "Forbidden"):
			return "give the identity Lima runs as (aws sts get-caller-identity) the permissions " + actions + ", or choose another profile (AWS_PROFILE)"
		case code == "ExpiredTokenException":
			return "the session expired: log in again (aws sso login, or refresh the credentials in the environment)"
		}
	}
	if strings.Contains(err.Error(), "no EC2 IMDS role found") || strings.Contains(err.Error(), "failed to retrieve credentials") || strings.Contains(err.Error(), "get credentials") {
		return "Lima found no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment, or run on a machine with a role"
	}
	return "check platform.region, the endpoint and the network path to it (proxy, firewall, VPC endpoint), then run lima-tui check again"
}

const gluePermissions = "glue:GetDatabase, glue:CreateDatabase, glue:GetTable(s), glue:CreateTable, glue:UpdateTable and glue:BatchCreatePartition"

func checkGlue(ctx context.Context, p *plan.Plan) []Finding {
	f := Finding{Name: "catalog"}
	where := fmt.Sprintf("Glue in %s, %s", p.Platform.Region, endpointNote(p.Storage.GlueEndpoint, "AWS_ENDPOINT_URL_GLUE"))
	client, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: p.Platform.Region, Endpoint: p.Storage.GlueEndpoint})
	if err != nil {
		f.Status, f.Detail, f.Fix = Fail, where+": "+err.Error(), awsFix(err, gluePermissions)
		return []Finding{f}
	}
	db := strings.ToLower(p.Namespace())
	nsf := Finding{Name: "namespace " + db, Status: Pass}
	_, err = client.GetDatabase(ctx, &glue.GetDatabaseInput{Name: aws.String(db)})
	var nf *types.EntityNotFoundException
	switch {
	case errors.As(err, &nf):
		f.Status, f.Detail = Pass, where+": answered GetDatabase "+db+": not found"
		nsf.Detail = fmt.Sprintf("Glue database %s does not exist yet; the first run creates it (needs glue:CreateDatabase)", db)
		return []Finding{f, nsf}
	case err != nil:
		f.Status, f.Detail, f.Fix = Fail, where+": GetDatabase "+db+": "+err.Error(), awsFix(err, gluePermissions)
		return []Finding{f}
	}
	f.Status, f.Detail = Pass, where+": answered GetDatabase "+db
	out, err := client.GetTables(ctx, &glue.GetTablesInput{DatabaseName: aws.String(db)})
	if err != nil {
		nsf.Status, nsf.Detail, nsf.Fix = Fail, fmt.Sprintf("Glue database %s exists, but listing its tables failed: %v", db, err), awsFix(err, gluePermissions)
		return []Finding{f, nsf}
	}
	more := ""
	if out.NextToken != nil {
		more = " or more"
	}
	nsf.Detail = fmt.Sprintf("Glue database %s exists with %d%s table(s)", db, len(out.TableList), more)
	return []Finding{f, nsf}
}

func checkS3Tables(ctx context.Context, p *plan.Plan) []Finding {
	f := Finding{Name: "catalog"}
	st := icesink.S3TablesOf(p)
	where := fmt.Sprintf("S3 Tables %s at %s", st.TableBucketARN, st.URI())
	sk, err := icesink.OpenS3Tables(ctx, icesink.Options{}, st)
	if err != nil {
		f.Status, f.Detail = Fail, where+": "+err.Error()
		f.Fix = awsFix(err, "s3tables:GetTableBucket, s3tables:GetNamespace, s3tables:CreateNamespace, s3tables:CreateTable, s3tables:GetTable, s3tables:UpdateTableMetadataLocation, s3tables:PutTableData and s3tables:GetTableData")
		return []Finding{f}
	}
	defer sk.Close()
	f.Status, f.Detail = Pass, where+": answered the catalog configuration request (SigV4, signing name s3tables)"
	ns := p.Namespace()
	nsf := Finding{Name: "namespace " + ns, Status: Pass}
	ok, err := sk.Catalog().CheckNamespaceExists(ctx, table.Identifier{ns})
	switch {
	case err != nil:
		nsf.Status, nsf.Detail, nsf.Fix = Fail, fmt.Sprintf("looking up namespace %s: %v", ns, err), awsFix(err, "s3tables:GetNamespace and s3tables:CreateNamespace")
	case ok:
		nsf.Detail = fmt.Sprintf("namespace %s exists in the table bucket", ns)
	default:
		nsf.Detail = fmt.Sprintf("namespace %s does not exist yet; the first run creates it", ns)
	}
	return []Finding{f, nsf}
}
