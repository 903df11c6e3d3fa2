package gates

// Lake ownership: a warehouse's namespace is claimed by one workspace (a
// marker object in the namespace's location, see flow/owner.go). Gate 2
// judges what flow read; it does no I/O itself.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// OwnerMarkerName is the marker's file (object) name in the namespace's
// location: <warehouse>/<namespace>.db/ for Iceberg, <warehouse>/<namespace>/
// for Hive-style tables.
const OwnerMarkerName = ".lima-owner.json"

// LakeOwner is what a marker says about the workspace that claimed the lake.
// It holds no secret: an id, a folder, a host name and a time.
type LakeOwner struct {
	WorkspaceID string `json:"workspace_id"`
	Workspace   string `json:"workspace"`
	Host        string `json:"host"`
	ClaimedAt   string `json:"claimed_at"`
}

// OwnerState is what flow found at the marker's location.
type OwnerState struct {
	// Location is the marker's path or s3:// URI.
	Location string
	// NotApplicable says why ownership is not checked (a lake whose
	// locations Lima does not choose, such as S3 Tables); empty otherwise.
	NotApplicable string
	// Claimed: a marker is there, naming Owner.
	Claimed bool
	Owner   LakeOwner
	// Ours: the marker names this workspace's id (WorkspaceID).
	Ours        bool
	WorkspaceID string
	// Workspace is this workspace's folder.
	Workspace string
}

// OwnerDescription names an owner for a person: its folder, host and when.
func OwnerDescription(o LakeOwner) string {
	return fmt.Sprintf("the workspace %s on host %s (claimed %s, id %s)", o.Workspace, o.Host, o.ClaimedAt, o.WorkspaceID)
}

// AdoptFix is the way out of a lake owned by another workspace.
func AdoptFix(planPath, prefix string) string {
	return fmt.Sprintf("run Lima from that workspace; or, if it no longer writes here, take the lake over with: lima-tui adopt --plan %s --confirm %s", planPath, prefix)
}

// OwnerRefusal is the detail of a refusal: the lake at st.Location belongs
// to another workspace.
func OwnerRefusal(st OwnerState) string {
	lake := strings.TrimSuffix(strings.TrimSuffix(st.Location, OwnerMarkerName), "/")
	d := fmt.Sprintf("the lake %s is owned by %s, not by this workspace (%s; marker %s)", lake, OwnerDescription(st.Owner), st.Workspace, st.Location)
	if st.Owner.Workspace == st.Workspace {
		d += "; it names this folder under another id: was .lima/ removed or the workspace copied?"
	}
	return d
}

// checkOwner judges the lake ownership that flow read.
func (pr Probe) checkOwner(ctx context.Context, p *plan.Plan) Finding {
	f := Finding{Name: "lake ownership"}
	if pr.Owner == nil {
		f.Status, f.Detail = Skip, "not probed"
		return f
	}
	st, err := pr.Owner(ctx)
	switch {
	case err != nil:
		f.Status, f.Detail = Fail, fmt.Sprintf("the ownership marker %s cannot be read: %v", st.Location, gate2Err(err))
		f.Fix = "make the marker readable (or remove a damaged one by hand once you know no other workspace writes this lake), then run lima-tui check again"
	case st.NotApplicable != "":
		f.Status, f.Detail = Skip, st.NotApplicable
	case !st.Claimed:
		f.Status, f.Detail = Pass, fmt.Sprintf("no marker at %s: the lake is unclaimed; the first run that writes claims it for this workspace (%s)", st.Location, st.Workspace)
	case st.Ours:
		f.Status, f.Detail = Pass, fmt.Sprintf("owned by this workspace (%s, host %s, claimed %s): marker %s", st.Owner.Workspace, st.Owner.Host, st.Owner.ClaimedAt, st.Location)
	default:
		f.Status, f.Detail = Fail, OwnerRefusal(st)
		f.Fix = AdoptFix(planFile(pr.Workspace), p.Platform.Prefix)
	}
	return f
}

// planFile is the plan's path as a person types it in the workspace.
func planFile(ws string) string {
	if ws == "" {
		return "platform.yaml"
	}
	return filepath.Join(ws, "platform.yaml")
}
