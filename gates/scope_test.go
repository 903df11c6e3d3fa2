package gates

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// status flattens findings into "name status" strings.
func scopeStatus(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name + " " + f.Status
	}
	return out
}

func findingNamed(t *testing.T, fs []Finding, name string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no finding %q in %v", name, scopeStatus(fs))
	return Finding{}
}

func TestDefaultsAreValidAndComplete(t *testing.T) {
	want := Answers{
		QSources: "data", QPrefix: "data", QRegion: "local", QEnvironment: "dev", QPattern: "iceberg",
		QConsumer: "unknown", QVolume: "small", QSchedule: "0 2 * * *", QTimezone: "UTC",
		QPartitioning: "auto", QSensitive: "", QSplitRegion: "no", QOwner: "",
	}
	got := Defaults()
	if !maps.Equal(got, want) {
		t.Fatalf("Defaults() = %v\nwant %v", got, want)
	}
	fs := CheckAnswers(got)
	if failed := FailedFindings(fs); len(failed) > 0 {
		t.Fatalf("defaults fail: %+v", failed)
	}
	// One finding per question asked (13: no residency questions without a
	// split, no deadline without an owner) plus the residency verdict.
	if len(fs) != 14 || fs[13].Name != "residency" {
		t.Fatalf("findings %v", scopeStatus(fs))
	}
	if d := findingNamed(t, fs, "region").Detail; d != `platform.region = "local"` {
		t.Errorf("region evidence %q", d)
	}
	if d := findingNamed(t, fs, "residency").Detail; d != "storage, catalog and query layer in one region (local): nothing crosses a region boundary" {
		t.Errorf("residency evidence %q", d)
	}
	// Every question has a prompt, a field, and help for every choice.
	for _, q := range Questions() {
		if q.Prompt == "" || q.Field == "" {
			t.Errorf("%s: prompt or field missing", q.ID)
		}
		for _, c := range q.Choices {
			if c.Help == "" || strings.Contains(c.Help, "\n") {
				t.Errorf("%s: choice %q needs one line of help", q.ID, c.Value)
			}
		}
	}
}

func TestQuestionValidationMessages(t *testing.T) {
	split := Answers{QRegion: "eu-central-1", QSplitRegion: "yes", QCatalogRegion: "us-east-1", QQueryRegion: "eu-central-1", QDriver: "preference"}
	tests := []struct {
		id, answer string
		earlier    Answers
		want       string // "" = valid
	}{
		{QSources, "", nil, "not answered; answer the folder holding the files, e.g. data/erp"},
		{QSources, "data/erp, ../shared/crm", nil, ""},
		{QSources, "s3://acme-raw/erp", nil, ""},
		{QSources, "s3://acme-raw/../erp", nil, `"s3://acme-raw/../erp" is not an S3 prefix Lima can read; write s3://bucket/prefix without . or .. segments or commas`},
		{QSources, "env:ERP_DSN", nil, ""}, // the value is read when the source is recorded, not here
		{QSources, "env:ERP_DSN, data/erp", nil, ""},
		{QSources, "ftp://host/x", nil, `"ftp://host/x": the scheme ftp:// is not a source Lima knows; answer a folder, s3://bucket/prefix or env:NAME`},
		{QPrefix, "", nil, "not answered; answer 1 to 40 characters: lower-case letters, digits and _, starting with a letter (e.g. acme_sales)"},
		{QPrefix, "Acme-Sales", nil, `"Acme-Sales" is not allowed; answer 1 to 40 characters: lower-case letters, digits and _, starting with a letter (e.g. acme_sales)`},
		{QPrefix, "acme_sales", nil, ""},
		{QRegion, "", nil, "not answered; answer local for a lake on this machine, or an AWS region code such as eu-central-1"},
		{QRegion, "eu-frankfurt", nil, `"eu-frankfurt" is not a region; answer local for a lake on this machine, or an AWS region code such as eu-central-1`},
		{QRegion, "us-gov-west-1", nil, ""},
		{QRegion, "ap-northeast-2", nil, ""},
		{QEnvironment, "Prod!", nil, `"Prod!" is not an environment name; answer lower-case letters, digits and -, e.g. dev, test or prod`},
		{QEnvironment, "demo", nil, ""},
		{QPattern, "delta", nil, `"delta" is not an answer to this question; answer iceberg or hive`},
		{QPattern, "hive", nil, ""},
		{QConsumer, "tableau", nil, `"tableau" is not an answer to this question; answer bi, c360, ml or unknown`},
		{QConsumer, "", nil, "not answered; answer bi, c360, ml or unknown"},
		{QVolume, "huge", nil, `"huge" is not an answer to this question; answer small, medium or large`},
		{QSchedule, "every night", nil, `"every night" is not a schedule; answer a cron expression (0 2 * * * = 02:00 every day), @daily, @hourly or manual`},
		{QSchedule, "manual", nil, ""},
		{QSchedule, "@daily", nil, ""},
		{QTimezone, "Mars/Olympus", nil, `"Mars/Olympus" is not a known time zone; answer an IANA zone name such as Europe/Berlin, America/New_York or UTC`},
		{QTimezone, "Asia/Seoul", nil, ""},
		{QPartitioning, "weekly", nil, `"weekly" is not an answer to this question; answer auto, date or none`},
		{QSensitive, "email, [bad", nil, `"[bad": is not a valid name pattern (unbalanced [ ] or a trailing \); use *, ? and [abc]; answer column names or patterns such as email, *_iban, separated by commas`},
		{QSensitive, "email, *_iban", nil, ""},
		{QSplitRegion, "maybe", nil, `"maybe" is not an answer to this question; answer no or yes`},
		{QCatalogRegion, "moon-1", split, `"moon-1" is not a region; answer local for a lake on this machine, or an AWS region code such as eu-central-1`},
		{QQueryRegion, "eu-central-1", Answers{QRegion: "eu-central-1", QCatalogRegion: "eu-central-1"}, "the catalog and the query layer are both in the storage region eu-central-1: that is not a split; answer the other region, or answer split_region no"},
		{QDriver, "", split, "not answered; answer mandate (law, regulation or contract) or preference: a split-region build needs its residency driver recorded"},
		{QDriver, "habit", split, `"habit" is not an answer to this question; answer mandate or preference`},
		{QZeroEgress, "", split, "not answered; answer no or yes: what the mandate allows decides whether a split-region build is possible"},
		{QAcknowledged, "", split, "not acknowledged: table_metadata; acknowledge every crossing of this setup (table_metadata), or keep the catalog and the query layer in the storage region"},
		{QAcknowledged, "table_metadata, gossip", split, `"gossip" is not a crossing; answer table_metadata, column_statistics, data_scans, query_results`},
		{QAcknowledged, "table_metadata", split, ""},
	}
	qs := map[string]Question{}
	for _, q := range Questions() {
		qs[q.ID] = q
	}
	for _, tt := range tests {
		t.Run(tt.id+"="+tt.answer, func(t *testing.T) {
			err := qs[tt.id].Check(tt.answer, tt.earlier)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSplitRegionNeedsDriverAndAcknowledgement(t *testing.T) {
	base := func(extra Answers) Answers {
		a := Defaults()
		a[QSources], a[QPrefix], a[QRegion] = "data/erp", "erp", "eu-central-1"
		a[QSplitRegion] = "yes"
		maps.Copy(a, extra)
		return a
	}
	tests := []struct {
		name     string
		answers  Answers
		failed   []string // names of the failed findings
		residual string   // residency detail
	}{
		{"no driver, no acknowledgement", base(Answers{QCatalogRegion: "eu-central-1", QQueryRegion: "us-east-1"}),
			[]string{"residency_driver", "acknowledged", "residency"},
			"split regions: storage eu-central-1, catalog eu-central-1, query layer us-east-1; driver —; crossings: table_metadata, column_statistics, data_scans, query_results — not acknowledged: table_metadata, column_statistics, data_scans, query_results"},
		{"driver, part acknowledged", base(Answers{QCatalogRegion: "eu-central-1", QQueryRegion: "us-east-1", QDriver: "preference", QAcknowledged: "table_metadata, query_results"}),
			[]string{"acknowledged", "residency"},
			"split regions: storage eu-central-1, catalog eu-central-1, query layer us-east-1; driver preference; crossings: table_metadata, column_statistics, data_scans, query_results — not acknowledged: column_statistics, data_scans"},
		{"mandate without zero egress, all acknowledged", base(Answers{QCatalogRegion: "us-east-1", QQueryRegion: "eu-central-1", QDriver: "mandate", QZeroEgress: "no", QAcknowledged: "table_metadata"}),
			nil,
			"split regions: storage eu-central-1, catalog us-east-1, query layer eu-central-1; driver mandate; crossings: table_metadata — all acknowledged"},
		{"split that is none", base(Answers{QCatalogRegion: "eu-central-1", QQueryRegion: "eu-central-1", QDriver: "preference"}),
			[]string{"query_region"},
			"split regions: storage eu-central-1, catalog eu-central-1, query layer eu-central-1; driver preference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := CheckAnswers(tt.answers)
			var failed []string
			for _, f := range FailedFindings(fs) {
				failed = append(failed, f.Name)
				if f.Fix == "" {
					t.Errorf("%s failed without a fix", f.Name)
				}
			}
			if !slices.Equal(failed, tt.failed) {
				t.Errorf("failed %v, want %v", failed, tt.failed)
			}
			if d := findingNamed(t, fs, "residency").Detail; d != tt.residual {
				t.Errorf("residency detail\n got  %s\n want %s", d, tt.residual)
			}
		})
	}
}

func TestZeroEgressMandateStopsTheBuild(t *testing.T) {
	a := Defaults()
	a[QRegion], a[QSplitRegion], a[QCatalogRegion], a[QQueryRegion] = "eu-central-1", "yes", "us-east-1", "eu-central-1"
	a[QDriver], a[QZeroEgress] = "mandate", "yes"
	fs := CheckAnswers(a)
	// The acknowledgement is not asked: nothing can be acknowledged.
	for _, f := range fs {
		if f.Name == QAcknowledged {
			t.Fatal("the acknowledgement was asked under a zero-egress mandate")
		}
	}
	failed := FailedFindings(fs)
	if len(failed) != 1 || failed[0].Name != "residency" {
		t.Fatalf("failed %+v", failed)
	}
	want := Finding{Name: "residency", Status: Fail,
		Detail: "a zero-egress mandate forbids anything to leave eu-central-1, but in this split-region setup table metadata and catalog entries (table and column names, types, partitioning, properties, snapshot summaries with load ids and watermark values) are kept in us-east-1. Lima does not build a split-region lake under a zero-egress mandate: the build stops here",
		Fix:    "put the catalog and the query layer in eu-central-1 (answer split_region no), or have the mandate's owner allow the crossings listed (table_metadata) in writing and answer zero_egress no"}
	if failed[0] != want {
		t.Errorf("got  %+v\nwant %+v", failed[0], want)
	}
	// Recorded in a plan, gate 1 refuses it the same way.
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion}
	a[QSources], a[QPrefix] = "data", "erp"
	if err := ApplyAnswers(p, a); err != nil {
		t.Fatal(err)
	}
	if !p.Scope.Residency.ZeroEgress || len(p.Scope.Residency.Acknowledged) != 0 {
		t.Fatalf("residency recorded as %+v", p.Scope.Residency)
	}
	if f := FailedFindings(Scope(p)); len(f) != 1 || f[0] != want {
		t.Fatalf("Scope(plan) failed %+v", f)
	}
}

func TestCrossingsFor(t *testing.T) {
	tests := []struct {
		name       string
		cat, query string
		want       []string
	}{
		{"catalog elsewhere", "us-east-1", "eu-central-1", []string{"table_metadata"}},
		{"query elsewhere", "eu-central-1", "us-east-1", []string{"table_metadata", "column_statistics", "data_scans", "query_results"}},
		{"both elsewhere", "us-east-1", "us-west-2", []string{"table_metadata", "column_statistics", "data_scans", "query_results"}},
		{"catalog region empty = storage", "", "us-east-1", []string{"table_metadata", "column_statistics", "data_scans", "query_results"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := crossingIDs(CrossingsFor(Answers{QRegion: "eu-central-1", QSplitRegion: "yes", QCatalogRegion: tt.cat, QQueryRegion: tt.query}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if got := CrossingsFor(Answers{QRegion: "eu-central-1", QSplitRegion: "no", QCatalogRegion: "us-east-1"}); got != nil {
		t.Errorf("no split, yet crossings %v", got)
	}
	if got := CrossingsFor(Answers{QRegion: "eu-central-1", QSplitRegion: "yes", QCatalogRegion: "us-east-1", QQueryRegion: "eu-central-1"})[0].What; got != "table metadata and catalog entries (table and column names, types, partitioning, properties, snapshot summaries with load ids and watermark values) are kept in us-east-1" {
		t.Errorf("what %q", got)
	}
}

func TestParseSource(t *testing.T) {
	tests := []struct {
		uri         string
		want        SourceURI
		unsupported bool
		bad         bool
	}{
		{"data/erp", SourceURI{Kind: "folder", Path: "data/erp"}, false, false},
		{" /srv/exports ", SourceURI{Kind: "folder", Path: "/srv/exports"}, false, false},
		{"file:///srv/exports", SourceURI{Kind: "folder", Path: "/srv/exports"}, false, false},
		{"C:/odd/but/a/folder", SourceURI{Kind: "folder", Path: "C:/odd/but/a/folder"}, false, false},
		{"s3://acme-raw/erp/2026", SourceURI{Kind: "s3", Bucket: "acme-raw", Prefix: "erp/2026", Path: "s3://acme-raw/erp/2026"}, false, false},
		{"env:ERP_DSN", SourceURI{Kind: "env", EnvVar: "ERP_DSN"}, false, false},
		{"env:postgres://u:secret@h/db", SourceURI{Kind: "env"}, false, true},
		{"env:1BAD", SourceURI{Kind: "env", EnvVar: "1BAD"}, false, true},
		{"s3://", SourceURI{Kind: "s3"}, false, true},
		{"file://relative", SourceURI{}, false, true},
		// A file URI is read as one: its escapes decode, a raw # or ? is refused.
		{"file:///srv/pct%2541/%EB%8D%B0%EB%AA%A8%20exports", SourceURI{Kind: "folder", Path: "/srv/pct%41/데모 exports"}, false, false},
		{"file:///srv/a#b", SourceURI{}, false, true},
		{"file:///srv/what?", SourceURI{}, false, true},
		{"", SourceURI{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got, err := ParseSource(tt.uri)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if errors.Is(err, ErrSourceNotSupported) != tt.unsupported {
				t.Errorf("unsupported = %v (%v)", !tt.unsupported, err)
			}
			if (err != nil && !tt.unsupported) != tt.bad {
				t.Errorf("err = %v", err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error echoes a secret: %v", err)
			}
		})
	}
}

func TestPrefixAndSourceNames(t *testing.T) {
	for in, want := range map[string]string{
		"data/erp": "erp", "/srv/ERP Exports-2026/": "erp_exports_2026", "2026 dumps": "lake_2026_dumps", ".": "lake", "": "lake",
		"협력사": "lake", strings.Repeat("abc", 20): strings.Repeat("abc", 13) + "a",
	} {
		if got := PrefixFor(in); got != want {
			t.Errorf("PrefixFor(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"data/erp": "erp", "/srv/ERP Exports-2026": "erp_exports-2026", "협력사": "files", "./": "files"} {
		if got := SourceNameFor(in); got != want {
			t.Errorf("SourceNameFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestApplyAnswersRoundTripsThroughPlatformYAML(t *testing.T) {
	a := Defaults()
	a[QSources], a[QPrefix], a[QRegion] = "data/erp, data/crm", "acme", "eu-central-1"
	a[QSensitive] = "email, *_iban"
	a[QSplitRegion], a[QCatalogRegion], a[QQueryRegion], a[QDriver], a[QZeroEgress] = "yes", "eu-central-1", "us-east-1", "mandate", "no"
	a[QAcknowledged] = "table_metadata, column_statistics, data_scans, query_results"
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Sources: map[string]*plan.Source{"erp": {Kind: "files", Path: "data/erp", Encoding: "euc-kr"}}}
	if err := ApplyAnswers(p, a); err != nil {
		t.Fatal(err)
	}
	// The existing source keeps its name and encoding; the new one is named after its folder.
	if got := p.Sources["erp"]; got == nil || got.Encoding != "euc-kr" || p.Sources["crm"] == nil || len(p.Sources) != 2 {
		t.Fatalf("sources %v", p.Sources)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := plan.Parse(b, "platform.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for _, want := range []string{"scope:\n  volume: small\n  partitioning: auto\n  sensitive_columns: [email, '*_iban']\n  residency:\n    split_region: true\n    query_region: us-east-1\n    driver: mandate\n    acknowledged: [table_metadata, column_statistics, data_scans, query_results]\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("platform.yaml lacks\n%s\nin\n%s", want, b)
		}
	}
	got := AnswersOf(q)
	want := maps.Clone(a)
	want[QSources] = "data/crm, data/erp" // by source name
	if !maps.Equal(got, want) {
		t.Errorf("AnswersOf = %v\nwant       %v", got, want)
	}
	if failed := FailedFindings(Scope(q)); len(failed) > 0 {
		t.Errorf("gate 1 fails: %+v", failed)
	}
	// Invalid answers are refused and nothing is recorded.
	bad := maps.Clone(a)
	bad[QRegion], bad[QPattern] = "mars", "delta"
	r := &plan.Plan{}
	if err := ApplyAnswers(r, bad); err == nil || !strings.Contains(err.Error(), `region: "mars" is not a region`) || !strings.Contains(err.Error(), `pattern: "delta"`) || r.Platform.Region != "" {
		t.Errorf("ApplyAnswers(bad) = %v, region %q", err, r.Platform.Region)
	}
}

func TestScopeOfPlans(t *testing.T) {
	ok := func() *plan.Plan {
		p := &plan.Plan{SchemaVersion: 1, Platform: plan.Platform{Prefix: "erp", Region: "local", Environment: "dev"},
			Sources: map[string]*plan.Source{"erp": {Kind: "files", Path: "data/erp"}}, Downstream: plan.Downstream{Consumer: "bi"}}
		return p
	}
	tests := []struct {
		name   string
		mut    func(p *plan.Plan)
		failed []string
	}{
		{"complete without a scope block (defaults)", func(*plan.Plan) {}, nil},
		{"no region", func(p *plan.Plan) { p.Platform.Region = "" }, []string{"region"}},
		{"no sources", func(p *plan.Plan) { p.Sources = nil }, []string{"sources"}},
		{"no consumer", func(p *plan.Plan) { p.Downstream.Consumer = "" }, []string{"consumer"}},
		{"hive", func(p *plan.Plan) { p.Platform.Pattern = "hive" }, nil},
		{"glue catalog with a local region", func(p *plan.Plan) { p.Platform.Catalog = "glue" }, []string{"target region"}},
		{"s3 warehouse with a region", func(p *plan.Plan) {
			p.Platform.Region = "eu-central-1"
			p.Storage.Warehouse = "s3://lake/acme"
		}, nil},
		{"split without driver", func(p *plan.Plan) {
			p.Platform.Region = "eu-central-1"
			p.Scope = &plan.Scope{Residency: &plan.Residency{SplitRegion: true, CatalogRegion: "us-east-1"}}
		}, []string{"residency_driver", "acknowledged", "residency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok()
			tt.mut(p)
			var failed []string
			for _, f := range FailedFindings(Scope(p)) {
				failed = append(failed, f.Name)
			}
			if !slices.Equal(failed, tt.failed) {
				t.Errorf("failed %v, want %v", failed, tt.failed)
			}
		})
	}
	p := ok()
	p.Platform.Catalog = "glue"
	if f := findingNamed(t, Scope(p), "target region"); f.Detail != "the catalog is AWS Glue, but platform.region is local" || f.Fix != "set platform.region to the AWS region of the bucket and catalog, e.g. eu-central-1" {
		t.Errorf("target region finding %+v", f)
	}
}

func TestSensitiveByScope(t *testing.T) {
	p := &plan.Plan{Scope: &plan.Scope{SensitiveColumns: []string{"email", "*_IBAN"}}}
	for col, want := range map[string]bool{"email": true, "EMAIL": true, "payer_iban": true, "iban": false, "e_mail": false} {
		if got := SensitiveByScope(p, col); got != want {
			t.Errorf("%s: %v", col, got)
		}
	}
	if SensitiveByScope(&plan.Plan{}, "email") {
		t.Error("no scope, yet sensitive")
	}
}

func TestApplyAnswersRecordsTheDefaultOwner(t *testing.T) {
	p := &plan.Plan{Owners: []plan.Owner{
		{Name: "Ana", Table: "orders", Deadline: "24h"},
		{Name: "On-call", Email: "oncall@example.com", Default: true, Deadline: "24h"},
	}}
	a := Defaults()
	if Questions()[slices.IndexFunc(Questions(), func(q Question) bool { return q.ID == QDeadline })].Applies(a) {
		t.Fatal("the deadline is asked without an owner")
	}
	// The same owner keeps the e-mail and takes the new deadline.
	a[QOwner], a[QDeadline] = "On-call", "2bd"
	if err := ApplyAnswers(p, a); err != nil {
		t.Fatal(err)
	}
	want := []plan.Owner{{Name: "Ana", Table: "orders", Deadline: "24h"}, {Name: "On-call", Email: "oncall@example.com", Default: true, Deadline: "2bd"}}
	if !slices.Equal(p.Owners, want) {
		t.Fatalf("owners %+v, want %+v", p.Owners, want)
	}
	if got := AnswersOf(p); got[QOwner] != "On-call" || got[QDeadline] != "2bd" {
		t.Errorf("AnswersOf: owner %q deadline %q", got[QOwner], got[QDeadline])
	}
	// Another name is another owner; none is no due date.
	a[QOwner], a[QDeadline] = "Ji-woo Park", DeadlineNone
	if err := ApplyAnswers(p, a); err != nil {
		t.Fatal(err)
	}
	if d := p.Owners[1]; d != (plan.Owner{Name: "Ji-woo Park", Default: true}) {
		t.Errorf("default owner %+v, want Ji-woo Park without e-mail or deadline", d)
	}
	if got := AnswersOf(p); got[QDeadline] != DeadlineNone {
		t.Errorf("AnswersOf deadline %q, want none", got[QDeadline])
	}
	// No name: exceptions stay unassigned; the table's owner stays.
	a[QOwner] = ""
	if err := ApplyAnswers(p, a); err != nil {
		t.Fatal(err)
	}
	if len(p.Owners) != 1 || p.Owners[0].Name != "Ana" {
		t.Errorf("owners %+v, want only Ana", p.Owners)
	}
	// A deadline that is not one is refused at the question.
	a[QOwner], a[QDeadline] = "Ops", "soon"
	if err := ApplyAnswers(p, a); err == nil || !strings.Contains(err.Error(), "owner_deadline") {
		t.Errorf("deadline soon: %v", err)
	}
	a[QDeadline] = "0bd"
	if err := ApplyAnswers(p, a); err == nil {
		t.Error("deadline 0bd accepted")
	}
}
