package dynamo

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/s3x"
)

// ExportSummary is the part of an export's manifest-summary.json Lima reads.
type ExportSummary struct {
	ExportArn          string `json:"exportArn"`
	TableArn           string `json:"tableArn"`
	ExportTime         string `json:"exportTime"`
	ItemCount          int64  `json:"itemCount"`
	OutputFormat       string `json:"outputFormat"`
	ExportType         string `json:"exportType"`
	ManifestFilesS3Key string `json:"manifestFilesS3Key"`
}

// ExportFile is one line of manifest-files.json.
type ExportFile struct {
	ItemCount     int64  `json:"itemCount"`
	MD5Checksum   string `json:"md5Checksum"`
	ETag          string `json:"etag"`
	DataFileS3Key string `json:"dataFileS3Key"`
}

// Export reads a DynamoDB full export in DynamoDB JSON below
// s3://bucket/prefix/AWSDynamoDB/<export-id>/: its data files
// (data/*.json.gz, one {"Item":{…}} per line) are the units, listed from
// manifest-files.json; the table is never scanned. The manifest's item
// counts are checked against the lines read: a data file with more or
// fewer items than its manifest line is unreadable.
type Export struct {
	client *s3x.Client
	root   s3x.URI // the export folder, with a trailing slash
	opts   Options
	totals

	summary *ExportSummary
	files   map[string]ExportFile // by unit name
}

// NewExport returns the Export below uri (the folder holding
// manifest-summary.json).
func NewExport(cl *s3x.Client, uri string, opts Options) (*Export, error) {
	u, err := s3x.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if u.Key != "" && !strings.HasSuffix(u.Key, "/") {
		u.Key += "/"
	}
	if opts.ProfileItems <= 0 {
		opts.ProfileItems = DefaultProfileItems
	}
	return &Export{client: cl, root: u, opts: opts}, nil
}

// Summary reads (once) and checks the export's manifests.
func (e *Export) Summary(ctx context.Context) (ExportSummary, error) {
	if e.summary != nil {
		return *e.summary, nil
	}
	fail := func(format string, a ...any) (ExportSummary, error) {
		return ExportSummary{}, fmt.Errorf("dynamodb export %s: %s", e.root, fmt.Sprintf(format, a...))
	}
	var sum ExportSummary
	if err := e.getJSON(ctx, e.root.Key+"manifest-summary.json", &sum); err != nil {
		return fail("manifest-summary.json: %v (give the export's folder: s3://bucket/prefix/AWSDynamoDB/<export-id>/)", err)
	}
	switch {
	case sum.OutputFormat != "" && sum.OutputFormat != "DYNAMODB_JSON":
		return fail("output format %s: Lima reads DYNAMODB_JSON exports; export the table again with --export-format DYNAMODB_JSON", sum.OutputFormat)
	case sum.ExportType != "" && sum.ExportType != "FULL_EXPORT":
		return fail("export type %s: Lima reads full exports (an incremental export holds changes, not the table)", sum.ExportType)
	}
	key := sum.ManifestFilesS3Key
	if key == "" {
		key = e.root.Key + "manifest-files.json"
	}
	rc, err := e.client.Get(ctx, e.root.Bucket, key)
	if err != nil {
		return fail("manifest-files.json: %v", err)
	}
	defer rc.Close()
	files := map[string]ExportFile{}
	var total int64
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var f ExportFile
		if err := json.Unmarshal(line, &f); err != nil {
			return fail("manifest-files.json: %v", err)
		}
		name, ok := e.relative(f.DataFileS3Key)
		if !ok {
			return fail("manifest-files.json names %q, which is not below the export folder", f.DataFileS3Key)
		}
		if _, dup := files[name]; dup {
			return fail("manifest-files.json names %s twice", name)
		}
		files[name] = f
		total += f.ItemCount
	}
	if err := sc.Err(); err != nil {
		return fail("manifest-files.json: %v", err)
	}
	if total != sum.ItemCount {
		return fail("the data files hold %d items by manifest-files.json, the summary says %d: the export is incomplete", total, sum.ItemCount)
	}
	e.summary, e.files = &sum, files
	return sum, nil
}

// ReadNote says what was read: the export, never the table.
func (e *Export) ReadNote() string {
	if e.summary == nil {
		return ""
	}
	return fmt.Sprintf("DynamoDB export %s (%d items in %d data files by its manifests, exported %s); the table was not read", e.root, e.summary.ItemCount, len(e.files), e.summary.Exported())
}

// Exported is the summary's export time for a message ("at an unknown
// time" when the manifest has none).
func (s ExportSummary) Exported() string {
	if s.ExportTime == "" {
		return "at an unknown time"
	}
	return s.ExportTime
}

// relative is a data file's name below the export folder.
func (e *Export) relative(key string) (string, bool) {
	if strings.HasPrefix(key, e.root.Key) {
		name := strings.TrimPrefix(key, e.root.Key)
		return name, name != "" && !strings.Contains("/"+name+"/", "/../")
	}
	return "", false
}

func (e *Export) getJSON(ctx context.Context, key string, v any) error {
	rc, err := e.client.Get(ctx, e.root.Bucket, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// List returns the export's data files matching the globs ("*" and "**"
// match all), in name order, with the objects' sizes and ETags.
func (e *Export) List(ctx context.Context, globs []string) ([]source.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(globs) == 0 {
		return nil, nil
	}
	if _, err := e.Summary(ctx); err != nil {
		return nil, err
	}
	objs, err := e.client.List(ctx, e.root.Bucket, e.root.Key)
	if err != nil {
		return nil, err
	}
	byName := map[string]s3x.Object{}
	for _, o := range objs {
		if n, ok := e.relative(o.Key); ok {
			byName[n] = o
		}
	}
	var out []source.Unit
	for name := range e.files {
		o, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("dynamodb export %s: data file %s is in manifest-files.json but not in the bucket", e.root, name)
		}
		for _, g := range globs {
			m := g == "*" || g == "**" || g == name
			if !m {
				m, _ = path.Match(g, name)
			}
			if m {
				out = append(out, source.Unit{Path: o.Key, Name: name, Size: o.Size, ETag: o.ETag})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b source.Unit) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ColumnTypes profiles the first Options.ProfileItems items of the data
// files. An export does not carry its table's key schema: columns come in
// name order.
func (e *Export) ColumnTypes(ctx context.Context, _ source.Unit) (cols, planTypes, findings []string, err error) {
	c, err := e.Profile(ctx, e.opts.ProfileItems)
	if err != nil {
		return nil, nil, nil, err
	}
	return splitColumns(c)
}

// Profile reads up to max items from the data files in name order.
func (e *Export) Profile(ctx context.Context, maxItems int) ([]Column, error) {
	units, err := e.List(ctx, []string{"**"})
	if err != nil {
		return nil, err
	}
	p := NewProfile()
	for _, u := range units {
		if int(p.Items()) >= maxItems {
			break
		}
		rd, err := e.openItems(ctx, u, 0)
		if err != nil {
			return nil, err
		}
		for int(p.Items()) < maxItems {
			item, _, err := rd.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				rd.Close()
				return nil, err
			}
			if item != nil {
				p.Add(item)
			}
		}
		rd.Close()
	}
	return p.Columns(nil), nil
}

// Open streams a data file: one row per item line. A line that is not an
// item is a Malformed row; a file whose item count differs from its
// manifest line is unreadable at its end.
func (e *Export) Open(ctx context.Context, u source.Unit, opts source.Options) (source.RowReader, error) {
	if _, err := e.Summary(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", source.ErrUnreadable, err)
	}
	names := opts.Columns
	var planTypes []string
	if len(names) == 0 {
		c, err := e.Profile(ctx, e.opts.ProfileItems)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", source.ErrUnreadable, err)
		}
		if names, planTypes, _, err = splitColumns(c); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, u.Name, err)
		}
	} else if len(opts.ColumnTypes) == len(names) {
		planTypes = opts.ColumnTypes
	}
	rd, err := e.openItems(ctx, u, opts.MaxRecordBytes)
	if err != nil {
		return nil, err
	}
	rd.lay = newLayout(names, planTypes)
	return rd, nil
}

// exportReader reads the item lines of one data file.
type exportReader struct {
	e      *Export
	u      source.Unit
	want   int64
	body   io.ReadCloser
	gz     *gzip.Reader
	br     *bufio.Reader
	max    int
	lay    layout
	line   int64
	items  int64
	tally  tally
	done   bool
	closed bool
	err    error
}

func (e *Export) openItems(ctx context.Context, u source.Unit, maxRecord int) (*exportReader, error) {
	f, ok := e.files[u.Name]
	if !ok {
		return nil, fmt.Errorf("%w: %s: not a data file of the export", source.ErrUnreadable, u.Name)
	}
	body, err := e.client.Get(ctx, e.root.Bucket, u.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, u.Name, err)
	}
	gz, err := gzip.NewReader(body)
	if err != nil {
		body.Close()
		return nil, fmt.Errorf("%w: %s: not gzip: %v", source.ErrUnreadable, u.Name, err)
	}
	if maxRecord <= 0 {
		maxRecord = source.DefaultMaxRecordBytes
	}
	return &exportReader{e: e, u: u, want: f.ItemCount, body: body, gz: gz, br: bufio.NewReaderSize(gz, 256<<10), max: maxRecord}, nil
}

// next returns the next line's item (nil with a reason for a bad line).
func (r *exportReader) next() (map[string]types.AttributeValue, []byte, error) {
	for {
		line, err := r.br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			if r.items != r.want {
				return nil, nil, fmt.Errorf("%w: %s: %d items read, manifest-files.json says %d", source.ErrUnreadable, r.u.Name, r.items, r.want)
			}
			return nil, nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, nil, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, r.u.Name, err)
		}
		r.line++
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r.items++
		if len(line) > r.max {
			return nil, line[:r.max], errTooLarge
		}
		var wrap struct {
			Item json.RawMessage `json:"Item"`
		}
		if err := json.Unmarshal(line, &wrap); err != nil || len(wrap.Item) == 0 {
			return nil, line, errors.New(`not a {"Item":{…}} line of DynamoDB JSON`)
		}
		item, err := DecodeItem(wrap.Item)
		if err != nil {
			return nil, line, err
		}
		return item, line, nil
	}
}

var errTooLarge = errors.New("record longer than the limit")

func (r *exportReader) Columns() []string { return r.lay.names }

func (r *exportReader) Next() (source.Row, error) {
	switch {
	case r.closed:
		return source.Row{}, errors.New("dynamodb export: read after Close")
	case r.err != nil:
		return source.Row{}, r.err
	case r.done:
		return source.Row{}, io.EOF
	}
	item, raw, err := r.next()
	loc := source.Locator{Unit: r.u.Name, Line: r.line, Row: r.items}
	switch {
	case err == io.EOF:
		r.done = true
		r.e.merge(&r.tally)
		return source.Row{}, io.EOF
	case errors.Is(err, source.ErrUnreadable):
		r.err = err
		return source.Row{}, err
	case err == errTooLarge:
		r.tally.items++ // an item of the file, held back: counted, not summed
		return source.Row{Kind: source.Malformed, Raw: raw, Loc: loc, Reason: "record longer than etl.max_record_bytes", Rule: source.RuleRecordTooLarge}, nil
	case err != nil:
		r.tally.items++
		return source.Row{Kind: source.Malformed, Raw: raw, Loc: loc, Reason: err.Error()}, nil
	}
	r.tally.add(item, r.lay.names)
	vals := make([]string, len(r.lay.names))
	nulls := make([]bool, len(r.lay.names))
	row := source.Row{Kind: source.Data, Values: vals, Nulls: nulls, Raw: raw, Loc: loc}
	if bad := r.lay.row(item, vals, nulls); bad != "" {
		row.Kind, row.Reason = source.Malformed, bad
	}
	return row, nil
}

func (r *exportReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.gz.Close()
	return r.body.Close()
}
