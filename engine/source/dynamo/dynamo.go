// Package dynamo reads Amazon DynamoDB tables: by a parallel Scan within a
// read budget, or from a DynamoDB export to S3 (DynamoDB JSON) without
// touching the table.
//
// A table is one unit; its items become rows of the profiled attributes
// (see Profile for the type mapping: N → long or an exact decimal, S →
// string, B → binary, BOOL → boolean, NULL and a missing attribute → null,
// sets, maps and lists → canonical JSON text). The reader counts the items
// and sums every number itself (source.Counter), so gate 4 proves the lake
// against the scan, never against DescribeTable's approximate ItemCount.
//
// Configuration comes from the AWS default chain through internal/s3x
// (AWS_REGION, AWS_PROFILE, the credential chain); the endpoint from
// AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/s3x"
)

// Environment variables naming the endpoint (the DynamoDB-specific one wins).
const (
	EnvEndpoint         = "AWS_ENDPOINT_URL"
	EnvEndpointDynamoDB = "AWS_ENDPOINT_URL_DYNAMODB"
)

// Read budget defaults.
const (
	// DefaultReadPercent of a provisioned table's read capacity is what a
	// scan may use when the plan sets no read_percent.
	DefaultReadPercent = 25.0
	// DefaultOnDemandRCU is the budget of a scan of an on-demand table
	// when the plan sets no max_rcu: 25% of the 4,000 read request units
	// a second that a new on-demand table sustains.
	DefaultOnDemandRCU = 1000.0
	// DefaultSegments is the parallel scan's TotalSegments when the plan
	// sets no etl.max_parallel_reads.
	DefaultSegments = 4
	// DefaultProfileItems is how many items a profile reads.
	DefaultProfileItems = 10_000
)

// API is the part of the DynamoDB client Lima uses.
type API interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// Config says how to reach DynamoDB.
type Config struct {
	Region, Endpoint, Profile string
	// StaticKey replaces the credential chain (tests against the loopback
	// emulator only).
	StaticKey *s3x.StaticKey
}

// FromEnv reads region and profile as s3x does and the endpoint from
// AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL.
func FromEnv() Config {
	e := s3x.FromEnv()
	c := Config{Region: e.Region, Profile: e.Profile}
	for _, n := range []string{EnvEndpointDynamoDB, EnvEndpoint} {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			c.Endpoint = v
			break
		}
	}
	return c
}

// Describe says where requests go, without credentials.
func (c Config) Describe() string {
	parts := []string{"AWS DynamoDB"}
	if c.Endpoint != "" {
		parts[0] = "endpoint " + c.Endpoint
	}
	if c.Region != "" {
		parts = append(parts, "region "+c.Region)
	}
	if c.Profile != "" {
		parts = append(parts, "profile "+c.Profile)
	}
	return strings.Join(parts, ", ")
}

// NewClient builds a DynamoDB client from the AWS configuration s3x loads
// (credential chain, region, bounded retries with backoff).
func NewClient(ctx context.Context, c Config) (*dynamodb.Client, error) {
	cfg, err := s3x.Config{Region: c.Region, Profile: c.Profile, StaticKey: c.StaticKey}.AWSConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
	}), nil
}

// TableInfo is what DescribeTable says about a table.
type TableInfo struct {
	Name   string
	Status string // ACTIVE, CREATING, UPDATING, …
	// ItemCount and SizeBytes are DynamoDB's estimates, updated about every
	// six hours: a hint, never a check.
	ItemCount int64
	SizeBytes int64
	// OnDemand: billing mode PAY_PER_REQUEST; else ProvisionedRCU.
	OnDemand       bool
	ProvisionedRCU int64
	// Keys: the partition key, then the sort key if any.
	Keys []string
}

// Describe calls DescribeTable.
func Describe(ctx context.Context, api API, table string) (TableInfo, error) {
	out, err := api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return TableInfo{}, err
	}
	t := out.Table
	if t == nil {
		return TableInfo{}, fmt.Errorf("DescribeTable %s: no table in the answer", table)
	}
	ti := TableInfo{Name: aws.ToString(t.TableName), Status: string(t.TableStatus), ItemCount: aws.ToInt64(t.ItemCount), SizeBytes: aws.ToInt64(t.TableSizeBytes)}
	if b := t.BillingModeSummary; b != nil && b.BillingMode == types.BillingModePayPerRequest {
		ti.OnDemand = true
	} else if p := t.ProvisionedThroughput; p != nil {
		ti.ProvisionedRCU = aws.ToInt64(p.ReadCapacityUnits)
		if ti.ProvisionedRCU == 0 {
			ti.OnDemand = true // an emulator's on-demand table
		}
	}
	var hash, rng string
	for _, k := range t.KeySchema {
		switch k.KeyType {
		case types.KeyTypeHash:
			hash = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			rng = aws.ToString(k.AttributeName)
		}
	}
	if hash != "" {
		ti.Keys = append(ti.Keys, hash)
	}
	if rng != "" {
		ti.Keys = append(ti.Keys, rng)
	}
	return ti, nil
}

// Budget is the read budget of a scan in read capacity units a second,
// and how it was decided.
type Budget struct {
	RCU    float64
	Reason string
}

// BudgetFor decides the budget: readPercent (0: DefaultReadPercent) of a
// provisioned table's read capacity; for an on-demand table maxRCU (0:
// DefaultOnDemandRCU). A provisioned table's budget is also capped by
// maxRCU when set.
func BudgetFor(ti TableInfo, readPercent, maxRCU float64) Budget {
	if readPercent <= 0 {
		readPercent = DefaultReadPercent
	}
	if ti.OnDemand {
		if maxRCU > 0 {
			return Budget{RCU: maxRCU, Reason: fmt.Sprintf("on-demand table: max_rcu %g read units/s", maxRCU)}
		}
		return Budget{RCU: DefaultOnDemandRCU, Reason: fmt.Sprintf("on-demand table: the default %g read units/s (set max_rcu to change it)", DefaultOnDemandRCU)}
	}
	b := float64(ti.ProvisionedRCU) * readPercent / 100
	reason := fmt.Sprintf("%g%% of the provisioned %d read units/s", readPercent, ti.ProvisionedRCU)
	if maxRCU > 0 && maxRCU < b {
		b, reason = maxRCU, reason+fmt.Sprintf(", capped by max_rcu %g", maxRCU)
	}
	if b < 1 {
		b, reason = 1, reason+" (at least 1 read unit/s)"
	}
	return Budget{RCU: b, Reason: reason}
}

// Options say how a table is scanned.
type Options struct {
	// ReadPercent and MaxRCU decide the budget (BudgetFor).
	ReadPercent, MaxRCU float64
	// Segments is TotalSegments (0: DefaultSegments).
	Segments int
	// ConsistentRead asks for strongly consistent reads (twice the
	// capacity); off by default.
	ConsistentRead bool
	// ProfileItems bounds a profile (0: DefaultProfileItems).
	ProfileItems int
	// PageItems caps the items of one Scan request (0: MaxPageItems;
	// DynamoDB's 1 MB page is the other ceiling).
	PageItems int
}

// MaxPageItems is the most items a Scan request asks for.
const MaxPageItems = 10_000

// Source scans one DynamoDB table: one unit, named after the table.
type Source struct {
	api   API
	table string
	opts  Options
	totals

	mu   sync.Mutex
	info *TableInfo
	// Consumed is the read capacity the scans consumed (for tests and the
	// report), in units.
	consumed float64
	requests int64
}

// New returns a Source over table.
func New(api API, table string, opts Options) *Source {
	if opts.Segments <= 0 {
		opts.Segments = DefaultSegments
	}
	if opts.ProfileItems <= 0 {
		opts.ProfileItems = DefaultProfileItems
	}
	if opts.PageItems <= 0 || opts.PageItems > MaxPageItems {
		opts.PageItems = MaxPageItems
	}
	return &Source{api: api, table: table, opts: opts}
}

// Live implements the capability of a source read afresh every run.
func (s *Source) Live() bool { return true }

// Info describes the table (once per Source).
func (s *Source) Info(ctx context.Context) (TableInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.info != nil {
		return *s.info, nil
	}
	ti, err := Describe(ctx, s.api, s.table)
	if err != nil {
		return TableInfo{}, err
	}
	s.info = &ti
	return ti, nil
}

// Budget is the scan's read budget.
func (s *Source) Budget(ctx context.Context) (Budget, error) {
	ti, err := s.Info(ctx)
	if err != nil {
		return Budget{}, err
	}
	return BudgetFor(ti, s.opts.ReadPercent, s.opts.MaxRCU), nil
}

// Consumed is the read capacity the source's scans consumed and the
// number of Scan requests they made.
func (s *Source) Consumed() (units float64, requests int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.consumed, s.requests
}

func (s *Source) spent(units float64) {
	s.mu.Lock()
	s.consumed += units
	s.requests++
	s.mu.Unlock()
}

// ReadNote says how the table was read: segments, consistency, the read
// budget and the capacity the scans consumed.
func (s *Source) ReadNote() string {
	s.mu.Lock()
	info, used, reqs := s.info, s.consumed, s.requests
	s.mu.Unlock()
	if info == nil {
		return ""
	}
	b := BudgetFor(*info, s.opts.ReadPercent, s.opts.MaxRCU)
	consistency := "eventually consistent"
	if s.opts.ConsistentRead {
		consistency = "strongly consistent"
	}
	return fmt.Sprintf("DynamoDB Scan of %s in %d segments, %s, within %.4g read units/s (%s); %.1f read units consumed in %d requests",
		s.table, s.opts.Segments, consistency, b.RCU, b.Reason, used, reqs)
}

// List returns the table's unit when a glob matches its name ("*" and
// "**" match it).
func (s *Source) List(ctx context.Context, globs []string) ([]source.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, g := range globs {
		ok := g == s.table || g == "*" || g == "**"
		if !ok {
			ok, _ = path.Match(g, s.table)
		}
		if ok {
			return []source.Unit{{Path: s.table, Name: s.table}}, nil
		}
	}
	return nil, nil
}

// ColumnTypes profiles up to Options.ProfileItems items (within the read
// budget) and returns the columns, their plan types and notes on types
// that are not an attribute type's plain mapping.
func (s *Source) ColumnTypes(ctx context.Context, u source.Unit) (cols, planTypes, findings []string, err error) {
	if u.Name != s.table {
		return nil, nil, nil, fmt.Errorf("%w: %s: no such table in this source", source.ErrUnreadable, u.Name)
	}
	c, err := s.Profile(ctx, s.opts.ProfileItems)
	if err != nil {
		return nil, nil, nil, err
	}
	return splitColumns(c)
}

func splitColumns(c []Column) (cols, planTypes, findings []string, err error) {
	for _, col := range c {
		cols = append(cols, col.Name)
		planTypes = append(planTypes, col.Type)
		if col.Note != "" {
			findings = append(findings, fmt.Sprintf("attribute %s → %s: %s", col.Name, col.Type, col.Note))
		}
	}
	if len(cols) == 0 {
		return nil, nil, nil, errors.New("no items to profile: the table is empty; declare the columns in the plan")
	}
	return cols, planTypes, findings, nil
}

// Profile scans up to max items (one segment, within the budget) and
// returns the profiled columns, key attributes first.
func (s *Source) Profile(ctx context.Context, maxItems int) ([]Column, error) {
	ti, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, s.table, err)
	}
	b := BudgetFor(ti, s.opts.ReadPercent, s.opts.MaxRCU)
	lim := NewLimiter(b.RCU, 0)
	p := NewProfile()
	var start map[string]types.AttributeValue
	for int(p.Items()) < maxItems {
		if err := lim.Wait(ctx); err != nil {
			return nil, err
		}
		out, err := s.api.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(s.table), ExclusiveStartKey: start,
			Limit: aws.Int32(int32(min(maxItems-int(p.Items()), 1000))), ConsistentRead: aws.Bool(s.opts.ConsistentRead),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: scan: %v", source.ErrUnreadable, s.table, err)
		}
		cu := consumedUnits(out.ConsumedCapacity)
		lim.Spend(cu)
		s.spent(cu)
		for _, it := range out.Items {
			p.Add(it)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	return p.Columns(ti.Keys), nil
}

func consumedUnits(c *types.ConsumedCapacity) float64 {
	if c == nil || c.CapacityUnits == nil {
		return 0
	}
	return *c.CapacityUnits
}

// Open starts the parallel scan of the table and returns its reader. The
// columns are opts.Columns (the plan's source names) or, without them, a
// profile's. Failures wrap source.ErrUnreadable.
func (s *Source) Open(ctx context.Context, u source.Unit, opts source.Options) (source.RowReader, error) {
	if u.Name != s.table {
		return nil, fmt.Errorf("%w: %s: no such table in this source", source.ErrUnreadable, u.Name)
	}
	ti, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, s.table, err)
	}
	names := opts.Columns
	var planTypes []string
	if len(names) == 0 {
		c, err := s.Profile(ctx, s.opts.ProfileItems)
		if err != nil {
			return nil, err
		}
		if names, planTypes, _, err = splitColumns(c); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, s.table, err)
		}
	} else if len(opts.ColumnTypes) == len(names) {
		planTypes = opts.ColumnTypes
	}
	b := BudgetFor(ti, s.opts.ReadPercent, s.opts.MaxRCU)
	return s.scan(ctx, newLayout(names, planTypes), NewLimiter(b.RCU, 0)), nil
}

// page is one Scan response's items.
type page struct {
	items []map[string]types.AttributeValue
	err   error
}

// scanReader reads the pages the segments produce.
type scanReader struct {
	src    *Source
	lay    layout
	cancel context.CancelFunc
	pages  chan page
	wg     sync.WaitGroup
	cur    []map[string]types.AttributeValue
	n      int64
	tally  tally
	done   bool // io.EOF returned
	closed bool
	err    error
}

func (s *Source) scan(ctx context.Context, lay layout, lim *Limiter) *scanReader {
	ctx, cancel := context.WithCancel(ctx)
	r := &scanReader{src: s, lay: lay, cancel: cancel, pages: make(chan page, s.opts.Segments)}
	per := lim.Rate() / float64(s.opts.Segments) // one segment's share a second
	for seg := 0; seg < s.opts.Segments; seg++ {
		r.wg.Add(1)
		go func(seg int) {
			defer r.wg.Done()
			r.segment(ctx, seg, lim, per)
		}(seg)
	}
	go func() {
		r.wg.Wait()
		close(r.pages)
	}()
	return r
}

// segment scans one segment to its end, page by page. The first page is
// small; later pages are sized from the capacity a page's items consumed,
// so one page costs about a segment's share of a second of the budget
// (DynamoDB's own 1 MB page is the ceiling).
func (r *scanReader) segment(ctx context.Context, seg int, lim *Limiter, per float64) {
	s := r.src
	maxPage := float64(s.opts.PageItems)
	limit := int32(min(100, maxPage))
	var start map[string]types.AttributeValue
	for {
		if err := lim.Wait(ctx); err != nil {
			return // canceled: the reader is closing
		}
		out, err := s.api.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(s.table), ExclusiveStartKey: start,
			Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(s.opts.Segments)), Limit: aws.Int32(limit),
			ConsistentRead: aws.Bool(s.opts.ConsistentRead), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			if ctx.Err() == nil {
				select {
				case r.pages <- page{err: fmt.Errorf("%w: %s: scan segment %d: %v", source.ErrUnreadable, s.table, seg, err)}:
				case <-ctx.Done():
				}
			}
			return
		}
		cu := consumedUnits(out.ConsumedCapacity)
		lim.Spend(cu)
		s.spent(cu)
		if n := len(out.Items); n > 0 && cu > 0 {
			next := per / (cu / float64(n))
			limit = int32(min(max(next, 1), maxPage))
		}
		if len(out.Items) > 0 {
			select {
			case r.pages <- page{items: out.Items}:
			case <-ctx.Done():
				return
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return
		}
		start = out.LastEvaluatedKey
	}
}

func (r *scanReader) Columns() []string { return r.lay.names }

func (r *scanReader) Next() (source.Row, error) {
	if r.closed {
		return source.Row{}, errors.New("dynamodb: read after Close")
	}
	if r.err != nil {
		return source.Row{}, r.err
	}
	if r.done {
		return source.Row{}, io.EOF
	}
	for len(r.cur) == 0 {
		p, ok := <-r.pages
		if !ok {
			r.done = true
			r.src.merge(&r.tally)
			return source.Row{}, io.EOF
		}
		if p.err != nil {
			r.err = p.err
			r.cancel()
			return source.Row{}, p.err
		}
		r.cur = p.items
	}
	item := r.cur[0]
	r.cur[0] = nil
	r.cur = r.cur[1:]
	r.n++
	return r.itemRow(item), nil
}

func (r *scanReader) itemRow(item map[string]types.AttributeValue) source.Row {
	r.tally.add(item, r.lay.names)
	vals := make([]string, len(r.lay.names))
	nulls := make([]bool, len(r.lay.names))
	row := source.Row{Kind: source.Data, Values: vals, Nulls: nulls, Loc: source.Locator{Unit: r.src.table, Row: r.n}}
	if bad := r.lay.row(item, vals, nulls); bad != "" {
		row.Kind, row.Reason = source.Malformed, bad
	}
	return row
}

func (r *scanReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.cancel()
	for range r.pages { // let the segments end
	}
	return nil
}

// PlanOptions are the scan options of a plan's dynamodb source;
// maxParallel is etl.max_parallel_reads (the segments; 0: DefaultSegments).
func PlanOptions(s *plan.Source, maxParallel int) Options {
	o := Options{Segments: maxParallel}
	if s != nil && s.DynamoDB != nil {
		o.ReadPercent, o.MaxRCU, o.ConsistentRead = s.DynamoDB.ReadPercent, s.DynamoDB.MaxRCU, s.DynamoDB.ConsistentRead
	}
	return o
}
