package gates

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// TestCheckOwner: gate 2's lake ownership finding for each state flow reads.
func TestCheckOwner(t *testing.T) {
	other := LakeOwner{WorkspaceID: "ws-00000000000000000000000000000001", Workspace: "/srv/a", Host: "h1", ClaimedAt: "2026-12-01T10:00:00Z"}
	mine := LakeOwner{WorkspaceID: "ws-00000000000000000000000000000002", Workspace: "/srv/b", Host: "h2", ClaimedAt: "2026-12-02T10:00:00Z"}
	loc := "/lake/acme.db/" + OwnerMarkerName
	p := &plan.Plan{Platform: plan.Platform{Prefix: "acme"}}
	for _, c := range []struct {
		name   string
		st     OwnerState
		err    error
		status string
		detail []string
		fix    string
	}{
		{"unclaimed", OwnerState{Location: loc, Workspace: "/srv/b"}, nil, Pass, []string{"no marker at " + loc, "unclaimed", "claims it for this workspace (/srv/b)"}, ""},
		{"ours", OwnerState{Location: loc, Workspace: "/srv/b", Claimed: true, Owner: mine, Ours: true, WorkspaceID: mine.WorkspaceID}, nil, Pass,
			[]string{"owned by this workspace (/srv/b, host h2, claimed 2026-12-02T10:00:00Z): marker " + loc}, ""},
		{"another's", OwnerState{Location: loc, Workspace: "/srv/b", Claimed: true, Owner: other, WorkspaceID: mine.WorkspaceID}, nil, Fail,
			[]string{"owned by the workspace /srv/a on host h1 (claimed 2026-12-01T10:00:00Z, id " + other.WorkspaceID + "), not by this workspace (/srv/b; marker " + loc + ")", "the lake /lake/acme.db is owned"},
			"lima-tui adopt --plan /srv/b/platform.yaml --confirm acme"},
		{"same folder, another id", OwnerState{Location: loc, Workspace: "/srv/a", Claimed: true, Owner: other}, nil, Fail,
			[]string{"was .lima/ removed or the workspace copied?"}, "lima-tui adopt"},
		{"unreadable", OwnerState{Location: loc}, errors.New("permission denied"), Fail, []string{"cannot be read: permission denied"}, "make the marker readable"},
		{"not applicable", OwnerState{NotApplicable: "S3 Tables chooses the tables' locations"}, nil, Skip, []string{"S3 Tables"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := c.st.Workspace
			pr := Probe{Workspace: ws, Owner: func(context.Context) (OwnerState, error) { return c.st, c.err }}
			f := pr.checkOwner(context.Background(), p)
			if f.Name != "lake ownership" || f.Status != c.status {
				t.Fatalf("got %+v, want status %s", f, c.status)
			}
			for _, d := range c.detail {
				if !strings.Contains(f.Detail, d) {
					t.Errorf("detail %q lacks %q", f.Detail, d)
				}
			}
			if !strings.Contains(f.Fix, c.fix) || (c.fix == "") != (f.Fix == "") {
				t.Errorf("fix %q, want %q", f.Fix, c.fix)
			}
		})
	}
	if f := (Probe{}).checkOwner(context.Background(), p); f.Status != Skip {
		t.Fatalf("no hook: %+v", f)
	}
}
