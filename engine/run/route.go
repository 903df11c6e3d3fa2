package run

import (
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// Router sends an exception to its owner: the first owner whose table,
// column and rule (each optional) match, else the default owner.
type Router struct {
	owners []plan.Owner
	def    *plan.Owner
}

// Unassigned is the owner of exceptions when the plan names no default.
const Unassigned = "unassigned"

// NewRouter builds the router of a plan.
func NewRouter(p *plan.Plan) *Router {
	r := &Router{}
	for i := range p.Owners {
		o := p.Owners[i]
		if o.Default {
			r.def = &o
			continue
		}
		r.owners = append(r.owners, o)
	}
	return r
}

// Route returns the owner's name and the exception's deadline (zero when the
// owner sets none) for an exception raised at now.
func (r *Router) Route(table, column, rule string, now time.Time) (string, time.Time) {
	for _, o := range r.owners {
		if (o.Table == "" || o.Table == table) && (o.Column == "" || o.Column == column) && (o.Rule == "" || o.Rule == rule) {
			return o.Name, deadline(o, now)
		}
	}
	if r.def != nil {
		return r.def.Name, deadline(*r.def, now)
	}
	return Unassigned, time.Time{}
}

func deadline(o plan.Owner, now time.Time) time.Time {
	d, ok, err := o.DeadlineAt(now)
	if err != nil || !ok {
		return time.Time{}
	}
	return d
}
