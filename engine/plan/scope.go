package plan

import (
	"path"
	"strings"
	"unicode"
)

// Scope holds the answers of gate 1 (scope & residency) that have no other
// home in the plan: the prefix, region, environment and pattern live under
// platform, the consumer under downstream, the sources under sources and
// the schedule under schedule. Who approved the scope, and when, is
// recorded in gates.scope. Empty fields mean their documented default.
type Scope struct {
	// Volume is the expected input per run: small (under 1 GB; default),
	// medium (1 to 100 GB) or large (over 100 GB).
	Volume string `yaml:"volume,omitempty"`
	// Partitioning is the preference gate 3 follows when it proposes
	// partitions: auto (default: per table, from the data), date (by a date
	// column of each table) or none.
	Partitioning string `yaml:"partitioning,omitempty"`
	// SensitiveColumns names columns holding personal or confidential
	// values, or glob patterns of names (*_email), matched ignoring case.
	SensitiveColumns []string `yaml:"sensitive_columns,omitempty"`
	// Residency says where the catalog and the query layer live relative
	// to the storage (platform.region); nil: all in one region.
	Residency *Residency `yaml:"residency,omitempty"`
}

// Residency records a split-region setup and what its people acknowledged.
type Residency struct {
	// SplitRegion: the catalog or the query layer lives in another region
	// than the storage.
	SplitRegion bool `yaml:"split_region"`
	// CatalogRegion and QueryRegion: empty means the storage region.
	CatalogRegion string `yaml:"catalog_region,omitempty"`
	QueryRegion   string `yaml:"query_region,omitempty"`
	// Driver is why the data stays in the storage region: mandate (law,
	// regulation or contract) or preference.
	Driver string `yaml:"driver,omitempty"`
	// ZeroEgress: the mandate forbids anything, metadata included, to
	// leave the storage region. Gate 1 stops a split-region build then.
	ZeroEgress bool `yaml:"zero_egress,omitempty"`
	// Acknowledged lists what crosses the region boundary and was
	// acknowledged (see Crossings).
	Acknowledged []string `yaml:"acknowledged,omitempty"`
}

// Values of the scope fields; the first of each list is the default.
var (
	Volumes       = []string{"small", "medium", "large"}
	Partitionings = []string{"auto", "date", "none"}
	Drivers       = []string{"mandate", "preference"}
	Crossings     = []string{CrossTableMetadata, CrossColumnStatistics, CrossDataScans, CrossQueryResults}
)

// What can cross a region boundary in a split-region setup.
const (
	CrossTableMetadata    = "table_metadata"    // catalog entries: names, schemas, partitioning, properties, snapshot summaries
	CrossColumnStatistics = "column_statistics" // per-column min/max values in manifests, read when queries are planned
	CrossDataScans        = "data_scans"        // the rows of the data files a query reads
	CrossQueryResults     = "query_results"     // results of queries, written in the query region
)

func (v *validator) scope() {
	s := v.p.Scope
	if s == nil {
		return
	}
	v.enum("scope.volume", s.Volume, "volume", Volumes, withDefault(Volumes...))
	v.enum("scope.partitioning", s.Partitioning, "partitioning preference", Partitionings, withDefault(Partitionings...))
	for i, c := range s.SensitiveColumns {
		if msg := CheckColumnPattern(c); msg != "" {
			v.add(joinIndex("scope.sensitive_columns", i), "%s", msg)
		}
	}
	r := s.Residency
	if r == nil {
		return
	}
	v.enum("scope.residency.driver", r.Driver, "residency driver", Drivers, "use mandate (law, regulation or contract) or preference")
	for i, a := range r.Acknowledged {
		v.enum(joinIndex("scope.residency.acknowledged", i), a, "crossing", Crossings, "use "+oneOf(Crossings...))
	}
	if !r.SplitRegion {
		for _, f := range []struct {
			name string
			set  bool
		}{{"catalog_region", r.CatalogRegion != ""}, {"query_region", r.QueryRegion != ""}, {"zero_egress", r.ZeroEgress}, {"acknowledged", len(r.Acknowledged) > 0}} {
			if f.set {
				v.add("scope.residency."+f.name, "only used with split_region: true")
			}
		}
	}
}

// CheckColumnPattern returns "" when s is a column name or a glob pattern
// of names (*, ?, [a-z]) fit for scope.sensitive_columns, else what is
// wrong.
func CheckColumnPattern(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "empty; write a column name such as email or a pattern such as *_iban"
	case len(s) > maxNameLen:
		return "longer than 128 characters; write a column name or a pattern such as *_iban"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "contains control characters; write a column name or a pattern such as *_iban"
	case strings.Contains(s, ","):
		return "contains a comma; give one name or pattern per entry"
	}
	if _, err := path.Match(strings.ToLower(s), ""); err != nil {
		return "is not a valid name pattern (unbalanced [ ] or a trailing \\); use *, ? and [abc]"
	}
	return ""
}
