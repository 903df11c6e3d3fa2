package plan

import (
	"slices"
	"strings"
	"testing"
)

func TestValidateScope(t *testing.T) {
	tests := []struct {
		name  string
		scope *Scope
		want  []string
	}{
		{"absent", nil, nil},
		{"empty means defaults", &Scope{}, nil},
		{"all set", &Scope{Volume: "large", Partitioning: "date", SensitiveColumns: []string{"email", "*_iban"},
			Residency: &Residency{SplitRegion: true, QueryRegion: "us-east-1", Driver: "mandate", Acknowledged: []string{"table_metadata", "query_results"}}}, nil},
		{"volume", &Scope{Volume: "huge"}, []string{`scope.volume: "huge" is not a volume; use small (default), medium or large`}},
		{"volume typo", &Scope{Volume: "smal"}, []string{`scope.volume: "smal" is not a volume; did you mean "small"? use small (default), medium or large`}},
		{"partitioning", &Scope{Partitioning: "weekly"}, []string{`scope.partitioning: "weekly" is not a partitioning preference; use auto (default), date or none`}},
		{"sensitive", &Scope{SensitiveColumns: []string{"ok", " ", "a,b", "[x"}}, []string{
			`scope.sensitive_columns[1]: empty; write a column name such as email or a pattern such as *_iban`,
			`scope.sensitive_columns[2]: contains a comma; give one name or pattern per entry`,
			`scope.sensitive_columns[3]: is not a valid name pattern (unbalanced [ ] or a trailing \); use *, ? and [abc]`,
		}},
		{"driver and crossing", &Scope{Residency: &Residency{SplitRegion: true, Driver: "habit", Acknowledged: []string{"gossip"}}}, []string{
			`scope.residency.acknowledged[0]: "gossip" is not a crossing; use table_metadata, column_statistics, data_scans or query_results`,
			`scope.residency.driver: "habit" is not a residency driver; use mandate (law, regulation or contract) or preference`,
		}},
		{"residency fields without a split", &Scope{Residency: &Residency{CatalogRegion: "us-east-1", ZeroEgress: true, Acknowledged: []string{"table_metadata"}}}, []string{
			"scope.residency.acknowledged: only used with split_region: true",
			"scope.residency.catalog_region: only used with split_region: true",
			"scope.residency.zero_egress: only used with split_region: true",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := loadFixture(t)
			p.Scope = tt.scope
			got := problems(t, p.Validate())
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A plan without a scope block hashes as before: the field is additive.
func TestScopeAbsentKeepsTheHash(t *testing.T) {
	p := loadFixture(t)
	before := p.Hash()
	p.Scope = nil
	if p.Hash() != before {
		t.Fatal("a nil scope changed the hash")
	}
	p.Scope = &Scope{Volume: "small"}
	if p.Hash() == before {
		t.Fatal("scope answers are part of what is built, yet the hash did not change")
	}
}
