package gates

import "github.com/lima-lake/lima/engine/plan"

// EmptyDataModel is the finding that refuses a data model without tables:
// approving it records nothing worth approving, and running it loads
// nothing while reporting success. ok is false when the plan has tables.
func EmptyDataModel(p *plan.Plan) (f Finding, empty bool) {
	if p != nil && len(p.Tables) > 0 {
		return Finding{}, false
	}
	return Finding{Name: "data model", Status: Fail,
		Detail: "the plan has no tables: there is nothing to approve or load",
		Fix:    "propose the data model from the sources (lima-tui propose --write) or declare tables in platform.yaml, then approve it"}, true
}
