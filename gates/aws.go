package gates

// Gate 2 on AWS: S3 sources listable and readable, the region set, the
// caller's identity (STS), and the warehouse bucket reachable and writable
// (a probe object put and deleted). Each finding carries its evidence and,
// on failure, the fix. Endpoints, region and credentials come from the
// environment (s3x.FromEnv and the SDK's default chain), never the plan.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/internal/s3x"
)

const awsCredFix = "give Lima credentials through the environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO or an instance role) and set AWS_REGION; for an S3-compatible server set AWS_ENDPOINT_URL"

func s3Client(ctx context.Context) (*s3x.Client, error) { return s3x.New(ctx, s3x.FromEnv()) }

// checkS3Source lists an S3 source's prefix.
func (pr Probe) checkS3Source(ctx context.Context, name, root string) Finding {
	f := Finding{Name: "source " + name}
	cl, err := s3Client(ctx)
	if err != nil {
		f.Status, f.Detail, f.Fix = Fail, gate2Err(err), awsCredFix
		return f
	}
	src, err := s3src.New(cl, root)
	if err != nil {
		f.Status, f.Detail = Fail, gate2Err(err)
		f.Fix = fmt.Sprintf("set sources.%s.path to s3://bucket/prefix", name)
		return f
	}
	objs, err := src.Objects(ctx)
	if err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("list %s (%s): %v", root, cl.Config().Describe(), gate2Err(err))
		f.Fix = "check the bucket name and that the credentials may s3:ListBucket on it; " + awsCredFix
		return f
	}
	var size int64
	for _, o := range objs {
		size += o.Size
	}
	f.Status, f.Detail = Pass, fmt.Sprintf("listed %s (%s): %d object(s), %s", root, cl.Config().Describe(), len(objs), gate2Bytes(uint64(size)))
	if len(objs) == 0 {
		f.Status, f.Detail = Warn, fmt.Sprintf("listed %s (%s): no objects", root, cl.Config().Describe())
		f.Fix = "upload the files to land below that prefix"
	}
	return f
}

// checkS3Table lists a table's globs on S3 and reads the first KiB of each
// object with a ranged GET.
func (pr Probe) checkS3Table(ctx context.Context, p *plan.Plan, name string) Finding {
	t := p.Tables[name]
	f := Finding{Name: "table " + name}
	root := p.Sources[t.Source.Name].Path
	cl, err := s3Client(ctx)
	if err != nil {
		f.Status, f.Detail, f.Fix = Fail, gate2Err(err), awsCredFix
		return f
	}
	src, err := s3src.New(cl, root)
	if err != nil {
		f.Status, f.Detail = Fail, gate2Err(err)
		return f
	}
	var parts []string
	seen := map[string]bool{}
	var keys []string
	for i, g := range t.Source.Files {
		us, err := src.List(ctx, []string{g})
		if err != nil {
			f.Status, f.Detail = Fail, fmt.Sprintf("list %q in %s: %v", g, root, gate2Err(err))
			f.Fix = "check that the credentials may list the bucket; " + awsCredFix
			return f
		}
		if len(us) == 0 {
			f.Status, f.Detail = Fail, fmt.Sprintf("%q matched no object in %s", g, root)
			f.Fix = fmt.Sprintf("correct tables.%s.source.files[%d] in platform.yaml, or upload the files below %s", name, i, root)
			return f
		}
		var size int64
		for _, u := range us {
			size += u.Size
			key := strings.SplitN(u.Path, "#", 2)[0]
			if !seen[key] {
				seen[key] = true
				keys = append(keys, key)
			}
		}
		parts = append(parts, fmt.Sprintf("%q matched %d object(s), %s", g, len(us), gate2Bytes(uint64(size))))
	}
	for n, k := range keys {
		ra := cl.NewReaderAt(ctx, src.Root.Bucket, k, probeHeadBytes)
		buf := make([]byte, probeHeadBytes)
		if _, err := ra.ReadAt(buf, 0); err != nil && err != io.EOF {
			f.Status, f.Detail = Fail, fmt.Sprintf("%s; read %d of %d object(s), then s3://%s/%s: %v", strings.Join(parts, "; "), n, len(keys), src.Root.Bucket, k, gate2Err(err))
			f.Fix = "let the credentials s3:GetObject below the prefix; " + awsCredFix
			return f
		}
	}
	f.Status, f.Detail = Pass, fmt.Sprintf("%s; read the first KiB of each of the %d object(s)", strings.Join(parts, "; "), len(keys))
	return f
}

// awsChecks are gate 2's AWS findings for a warehouse on S3: region,
// caller identity, and the warehouse bucket reachable and writable.
func (pr Probe) awsChecks(ctx context.Context, p *plan.Plan) []Finding {
	cfg := s3x.FromEnv()
	var out []Finding
	cl, err := s3x.New(ctx, cfg)
	region := Finding{Name: "AWS region"}
	switch {
	case err != nil:
		region.Status, region.Detail, region.Fix = Fail, gate2Err(err), awsCredFix
	case cfg.Region == "" && cl.Region == "us-east-1" && cfg.Endpoint == "":
		region.Status, region.Detail = Fail, "no region set (AWS_REGION, AWS_DEFAULT_REGION or the profile's region); requests would go to us-east-1 by default"
		region.Fix = "export AWS_REGION=" + firstNonEmpty(p.Platform.Region, "<the region of the bucket>")
	default:
		region.Status, region.Detail = Pass, fmt.Sprintf("region %s (%s)", cl.Region, cfg.Describe())
		if p.Platform.Region != "" && cl.Region != p.Platform.Region && cfg.Endpoint == "" {
			region.Status = Warn
			region.Detail += fmt.Sprintf("; the plan's platform.region is %s", p.Platform.Region)
			region.Fix = "export AWS_REGION=" + p.Platform.Region + " if the lake lives there"
		}
	}
	out = append(out, region)
	if err != nil {
		return out
	}
	ident := Finding{Name: "AWS caller identity"}
	if cfg.Endpoint != "" {
		ident.Status = Skip
		ident.Detail = fmt.Sprintf("not verifiable against the endpoint %s (STS is an AWS service; a local or S3-compatible endpoint has none); the S3 requests below prove the credentials it accepts", cfg.Endpoint)
	} else {
		awscfg, aerr := cfg.AWSConfig(ctx)
		if aerr == nil {
			var id *sts.GetCallerIdentityOutput
			id, aerr = sts.NewFromConfig(awscfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			if aerr == nil {
				ident.Status, ident.Detail = Pass, fmt.Sprintf("sts:GetCallerIdentity: account %s, %s", aws.ToString(id.Account), aws.ToString(id.Arn))
			}
		}
		if aerr != nil {
			ident.Status, ident.Detail, ident.Fix = Fail, "sts:GetCallerIdentity: "+gate2Err(aerr), awsCredFix
		}
	}
	out = append(out, ident)
	if wh := p.Warehouse(); s3x.IsURI(wh) {
		out = append(out, probeBucket(ctx, cl, wh))
	}
	return out
}

// probeBucket puts and deletes a probe object below the warehouse prefix.
func probeBucket(ctx context.Context, cl *s3x.Client, wh string) Finding {
	return probePrefix(ctx, cl, wh, "S3 warehouse writable", "storage.warehouse", "teardown and failed runs need it")
}

// probePrefix puts and deletes a probe object below an S3 prefix: the
// finding name, the plan setting that names the prefix and why deleting
// matters go into the evidence and the fix.
func probePrefix(ctx context.Context, cl *s3x.Client, wh, name, setting, whyDelete string) Finding {
	f := Finding{Name: name}
	u, err := s3x.ParseURI(wh)
	if err != nil {
		f.Status, f.Detail, f.Fix = Fail, gate2Err(err), "set "+setting+" to s3://bucket/prefix"
		return f
	}
	ok, err := cl.BucketExists(ctx, u.Bucket)
	switch {
	case err != nil:
		f.Status, f.Detail, f.Fix = Fail, fmt.Sprintf("bucket %s (%s): %v", u.Bucket, cl.Config().Describe(), gate2Err(err)), awsCredFix
		return f
	case !ok:
		f.Status, f.Detail = Fail, fmt.Sprintf("bucket %s does not exist (%s)", u.Bucket, cl.Config().Describe())
		f.Fix = "create the bucket in the lake's region (aws s3 mb s3://" + u.Bucket + "), or correct " + setting
		return f
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	probe := u.Join(".lima-probe-" + hex.EncodeToString(b[:]))
	if err := cl.Put(ctx, probe.Bucket, probe.Key, strings.NewReader("lima gate 2 probe\n"), nil); err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("bucket %s answers, but putting %s failed: %v", u.Bucket, probe, gate2Err(err))
		f.Fix = "allow s3:PutObject and s3:DeleteObject below " + wh + " for these credentials"
		return f
	}
	if err := cl.Delete(ctx, probe.Bucket, probe.Key); err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("put %s, but deleting it failed: %v (remove it by hand)", probe, gate2Err(err))
		f.Fix = "allow s3:DeleteObject below " + wh + " (" + whyDelete + ")"
		return f
	}
	f.Status, f.Detail = Pass, fmt.Sprintf("bucket %s reachable (%s); put and deleted %s", u.Bucket, cl.Config().Describe(), probe)
	return f
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
