package gates

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// ddbTableRE is a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ - .).
var ddbTableRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)

// parseDynamoSource reads dynamodb:TABLE (a DynamoDB table, scanned within
// a read budget) or dynamodb:* (every table of the region, as ListTables
// returns them when gate 3 proposes).
func parseDynamoSource(u string) (SourceURI, error) {
	name := strings.TrimPrefix(u, "dynamodb:")
	s := SourceURI{Kind: "dynamodb", Table: name}
	if name != "*" && !ddbTableRE.MatchString(name) {
		return s, &AnswerError{Problem: fmt.Sprintf("%q is not a DynamoDB table name", name),
			Fix: "write dynamodb:TABLE (3 to 255 letters, digits, _, - and .), or dynamodb:* for every table of the region (AWS_REGION)"}
	}
	return s, nil
}

// dynamoListsTable reports whether a dynamodb source proposes table.
func dynamoListsTable(s *plan.Source, table string) bool {
	var tables []string
	if s.DynamoDB != nil {
		tables = s.DynamoDB.Tables
	}
	if table == "*" {
		return len(tables) == 0
	}
	return slices.Contains(tables, table)
}

// addDynamoSources records the new dynamodb: answers in one source named
// dynamodb (its tables in order; none for dynamodb:*), and returns the
// other new sources.
func addDynamoSources(out map[string]*plan.Source, fresh []SourceURI) []SourceURI {
	var rest []SourceURI
	var src *plan.Source
	for _, s := range fresh {
		if s.Kind != "dynamodb" {
			rest = append(rest, s)
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(out)) {
			if src == nil && out[n].IsDynamoDB() {
				src = out[n] // a kept dynamodb source takes the new tables
			}
		}
		if src == nil {
			name := "dynamodb"
			for i := 2; out[name] != nil; i++ {
				name = fmt.Sprintf("dynamodb_%d", i)
			}
			src = &plan.Source{Kind: plan.SourceDynamoDB}
			out[name] = src
		}
		if s.Table == "*" {
			continue
		}
		if src.DynamoDB == nil {
			src.DynamoDB = &plan.DynamoDB{}
		}
		if !slices.Contains(src.DynamoDB.Tables, s.Table) {
			src.DynamoDB.Tables = append(src.DynamoDB.Tables, s.Table)
		}
	}
	return rest
}

// dynamoAnswers are a dynamodb source as gate 1 answers: dynamodb:TABLE
// for each table it proposes, dynamodb:* for every table.
func dynamoAnswers(s *plan.Source) []string {
	if s.DynamoDB == nil || len(s.DynamoDB.Tables) == 0 {
		return []string{"dynamodb:*"}
	}
	var out []string
	for _, t := range s.DynamoDB.Tables {
		out = append(out, "dynamodb:"+t)
	}
	return out
}
