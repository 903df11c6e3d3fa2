// Package s3x is Lima's one way to reach S3 (and S3-compatible servers)
// through aws-sdk-go-v2: configuration from the environment or a named
// profile (the SDK's default credential chain), bounded retries with
// backoff, path-style addressing for custom endpoints, listing, streaming
// and ranged reads, and multipart uploads for large objects.
//
// Credentials never pass through a plan: they come from the default chain
// (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared
// config files, SSO, web identity, the instance role). Config.StaticKey is
// for tests that talk to a loopback server; it is never read from a file.
package s3x

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Environment variables read by FromEnv (besides the SDK's own).
const (
	// EnvEndpoint and EnvEndpointS3 point at an S3-compatible server; the
	// S3-specific one wins.
	EnvEndpoint   = "AWS_ENDPOINT_URL"
	EnvEndpointS3 = "AWS_ENDPOINT_URL_S3"
	EnvRegion     = "AWS_REGION"
	EnvRegion2    = "AWS_DEFAULT_REGION"
	EnvProfile    = "AWS_PROFILE"
	// EnvVirtualHosted=1 keeps virtual-hosted addressing with a custom
	// endpoint (path style is the default there, as most S3-compatible
	// servers on one host need it).
	EnvVirtualHosted = "LIMA_S3_VIRTUAL_HOSTED"
	// EnvMaxAttempts overrides the retry budget (default DefaultMaxAttempts).
	EnvMaxAttempts = "AWS_MAX_ATTEMPTS"
)

// DefaultMaxAttempts bounds each request: the first try and four retries
// with exponential backoff and jitter on throttling, 5xx and connection
// resets.
const DefaultMaxAttempts = 5

// DefaultPartSize is the multipart upload part size; objects above
// MultipartThreshold are uploaded in parts.
const (
	DefaultPartSize    = 8 << 20
	MultipartThreshold = 16 << 20
)

// Config says how to reach S3. The zero value uses the SDK defaults.
type Config struct {
	// Region; empty: from the profile or AWS_REGION.
	Region string
	// Endpoint is a custom endpoint URL (an S3-compatible server); empty:
	// AWS itself.
	Endpoint string
	// Profile is a named profile of the shared config files.
	Profile string
	// PathStyle addresses buckets as endpoint/bucket/key instead of
	// bucket.endpoint/key.
	PathStyle bool
	// MaxAttempts per request (default DefaultMaxAttempts).
	MaxAttempts int
	// MaxBackoff caps the delay between attempts (default 20s).
	MaxBackoff time.Duration
	// StaticKey, when set, replaces the credential chain (tests against a
	// loopback server only).
	StaticKey *StaticKey
}

// StaticKey is an access key pair handed over in memory.
type StaticKey struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// FromEnv reads the configuration from the environment: the endpoint
// (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL), region (AWS_REGION,
// AWS_DEFAULT_REGION), profile (AWS_PROFILE) and retry budget
// (AWS_MAX_ATTEMPTS). Path style is on when an endpoint is set, unless
// LIMA_S3_VIRTUAL_HOSTED=1. Credentials stay with the SDK's chain.
func FromEnv() Config {
	c := Config{
		Endpoint: firstEnv(EnvEndpointS3, EnvEndpoint),
		Region:   firstEnv(EnvRegion, EnvRegion2),
		Profile:  os.Getenv(EnvProfile),
	}
	c.PathStyle = c.Endpoint != "" && os.Getenv(EnvVirtualHosted) != "1"
	if n := os.Getenv(EnvMaxAttempts); n != "" {
		fmt.Sscan(n, &c.MaxAttempts)
	}
	return c
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// IsLocalEndpoint reports whether the endpoint is on this machine
// (loopback): AWS services such as STS cannot be reached through it.
func (c Config) IsLocalEndpoint() bool {
	e := strings.ToLower(c.Endpoint)
	for _, h := range []string{"://127.", "://localhost", "://[::1]"} {
		if strings.Contains(e, h) {
			return true
		}
	}
	return false
}

// Describe says where requests go, without credentials.
func (c Config) Describe() string {
	var parts []string
	if c.Endpoint != "" {
		parts = append(parts, "endpoint "+c.Endpoint)
	} else {
		parts = append(parts, "AWS S3")
	}
	if c.Region != "" {
		parts = append(parts, "region "+c.Region)
	}
	if c.Profile != "" {
		parts = append(parts, "profile "+c.Profile)
	}
	if c.PathStyle {
		parts = append(parts, "path-style")
	}
	return strings.Join(parts, ", ")
}

// AWSConfig loads the SDK configuration: the default credential chain (or
// the profile), the region and a standard retryer with bounded attempts
// and exponential backoff.
func (c Config) AWSConfig(ctx context.Context) (aws.Config, error) {
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	maxBackoff := c.MaxBackoff
	if maxBackoff <= 0 {
		maxBackoff = 20 * time.Second
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = attempts
				o.MaxBackoff = maxBackoff
			})
		}),
	}
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	if k := c.StaticKey; k != nil {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(k.AccessKeyID, k.SecretAccessKey, k.SessionToken)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("s3: AWS configuration (%s): %w", c.Describe(), err)
	}
	if cfg.Region == "" {
		// S3 needs a signing region; custom endpoints accept any.
		cfg.Region = "us-east-1"
	}
	return cfg, nil
}

// Client is an S3 client.
type Client struct {
	cfg Config
	S3  *s3.Client
	tm  *transfermanager.Client
	// Region is the region in use.
	Region string
}

// New builds a client.
func New(ctx context.Context, c Config) (*Client, error) {
	awscfg, err := c.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	cl := s3.NewFromConfig(awscfg, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.PathStyle
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	tm := transfermanager.New(cl, func(o *transfermanager.Options) {
		o.PartSizeBytes = DefaultPartSize
		o.MultipartUploadThreshold = MultipartThreshold
		o.Concurrency = 2
	})
	return &Client{cfg: c, S3: cl, tm: tm, Region: awscfg.Region}, nil
}

// Config is the configuration the client was built with.
func (c *Client) Config() Config { return c.cfg }

// URI is a parsed s3://bucket/prefix.
type URI struct {
	Bucket string
	// Key is the key or prefix, without a leading slash; a prefix given
	// with a trailing slash keeps it.
	Key string
}

func (u URI) String() string {
	if u.Key == "" {
		return "s3://" + u.Bucket
	}
	return "s3://" + u.Bucket + "/" + u.Key
}

// Join appends path segments to the key with single slashes.
func (u URI) Join(elem ...string) URI {
	k := strings.TrimSuffix(u.Key, "/")
	for _, e := range elem {
		e = strings.Trim(e, "/")
		if e == "" {
			continue
		}
		if k == "" {
			k = e
		} else {
			k += "/" + e
		}
	}
	return URI{Bucket: u.Bucket, Key: k}
}

// IsURI reports whether s is an s3:// (or s3a://) URI.
func IsURI(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "s3://") || strings.HasPrefix(l, "s3a://")
}

// ParseURI parses s3://bucket[/key].
func ParseURI(s string) (URI, error) {
	if !IsURI(s) {
		return URI{}, fmt.Errorf("s3: %q is not an s3:// URI", s)
	}
	rest := s[strings.Index(s, "://")+3:]
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return URI{}, fmt.Errorf("s3: %q has no bucket", s)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == ".." || seg == "." {
			return URI{}, fmt.Errorf("s3: %q: the key has a %q segment", s, seg)
		}
	}
	return URI{Bucket: bucket, Key: key}, nil
}

// Object is one listed object.
type Object struct {
	Key          string
	Size         int64
	ETag         string
	LastModified time.Time
}

// List returns every object below prefix (all pages), in key order.
func (c *Client) List(ctx context.Context, bucket, prefix string) ([]Object, error) {
	var out []Object
	p := s3.NewListObjectsV2Paginator(c.S3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return out, fmt.Errorf("s3: list s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: strings.Trim(aws.ToString(o.ETag), `"`), LastModified: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// Get streams an object. The caller closes the body.
func (c *Client) Get(ctx context.Context, bucket, key string) (io.ReadCloser, error) {
	out, err := c.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("s3: get s3://%s/%s: %w", bucket, key, err)
	}
	return out.Body, nil
}

// Head returns an object's size, ETag and user metadata.
func (c *Client) Head(ctx context.Context, bucket, key string) (Object, map[string]string, error) {
	out, err := c.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return Object{}, nil, fmt.Errorf("s3: head s3://%s/%s: %w", bucket, key, err)
	}
	return Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: strings.Trim(aws.ToString(out.ETag), `"`), LastModified: aws.ToTime(out.LastModified)}, out.Metadata, nil
}

// Put uploads body (multipart above MultipartThreshold) with user metadata.
func (c *Client) Put(ctx context.Context, bucket, key string, body io.Reader, meta map[string]string) error {
	_, err := c.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: body, Metadata: meta})
	if err != nil {
		return fmt.Errorf("s3: put s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}

// Delete removes an object (a missing one is not an error).
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	_, err := c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil && !IsNotFound(err) {
		return fmt.Errorf("s3: delete s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}

// BucketExists reports whether the bucket answers HeadBucket.
func (c *Client) BucketExists(ctx context.Context, bucket string) (bool, error) {
	_, err := c.S3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	if err == nil {
		return true, nil
	}
	if IsNotFound(err) {
		return false, nil
	}
	return false, fmt.Errorf("s3: head bucket %s: %w", bucket, err)
}

// CreateBucket creates a bucket (one that exists and is ours is fine).
func (c *Client) CreateBucket(ctx context.Context, bucket string) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
	if c.Region != "" && c.Region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(c.Region)}
	}
	_, err := c.S3.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("s3: create bucket %s: %w", bucket, err)
	}
	return nil
}

// IsNotFound reports a missing bucket or key.
func IsNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nsb *types.NoSuchBucket
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nsb) || errors.As(err, &nf) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NoSuchBucket", "NotFound", "404":
			return true
		}
	}
	return false
}

// ReaderAt reads ranges of one object with ranged GETs (for Parquet footers
// and the like without downloading the object).
type ReaderAt struct {
	C           *Client
	Bucket, Key string
	Size        int64
	ctx         context.Context
}

// NewReaderAt returns a ReaderAt of an object of known size.
func (c *Client) NewReaderAt(ctx context.Context, bucket, key string, size int64) *ReaderAt {
	return &ReaderAt{C: c, Bucket: bucket, Key: key, Size: size, ctx: ctx}
}

// ReadAt reads len(p) bytes at off.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.Size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	end := min(off+int64(len(p)), r.Size) - 1
	out, err := r.C.S3.GetObject(r.ctx, &s3.GetObjectInput{Bucket: aws.String(r.Bucket), Key: aws.String(r.Key), Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, end))})
	if err != nil {
		return 0, fmt.Errorf("s3: ranged get s3://%s/%s: %w", r.Bucket, r.Key, err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p[:end-off+1])
	if (err == nil && n < len(p)) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF // the object is shorter than the range asked for
	}
	return n, err
}

// IcebergProps are the iceberg-go FileIO properties for this configuration:
// endpoint, region and addressing only. Credentials stay with the SDK's
// default chain unless StaticKey is set (tests), in which case they live in
// memory only and are never written to table metadata.
func (c Config) IcebergProps() map[string]string {
	p := map[string]string{}
	if c.Endpoint != "" {
		p["s3.endpoint"] = c.Endpoint
	}
	if c.Region != "" {
		p["s3.region"] = c.Region
	} else if c.Endpoint != "" {
		p["s3.region"] = "us-east-1"
	}
	if c.Endpoint != "" {
		p["s3.force-virtual-addressing"] = fmt.Sprint(!c.PathStyle)
	}
	if k := c.StaticKey; k != nil {
		p["s3.access-key-id"] = k.AccessKeyID
		p["s3.secret-access-key"] = k.SecretAccessKey
		if k.SessionToken != "" {
			p["s3.session-token"] = k.SessionToken
		}
	}
	return p
}
