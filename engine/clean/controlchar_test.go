package clean

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// Text with NUL or another C0 control (TAB, CR and LF aside) is held back
// under control_char by default, and kept when the column allows it.
func TestControlCharsInText(t *testing.T) {
	str := plan.Type{Kind: plan.String}
	c, mem := newCaster(t, []ColumnSpec{{Name: "remark", Type: str}, {Name: "raw", Type: str, AllowControl: true}})
	defer mem.AssertSize(t, 0)
	defer c.Release()
	for _, v := range []string{"ok", "tab\there", "line\nbreak\r\n", "", "é ü ₩", "\x7f del is not C0"} {
		if errs := c.Append([]string{v, "x"}, nil); errs != nil {
			t.Errorf("%q: %v, want accepted", v, errs)
		}
	}
	for _, v := range []string{"nul\x00inside", "\x00", "bell\x07", "esc\x1b[2J", "\x1f"} {
		errs := c.Append([]string{v, v}, nil)
		if len(errs) != 1 || errs[0].Column != "remark" || errs[0].Rule != RuleControlChar || !strings.Contains(errs[0].Reason, "U+00") {
			t.Errorf("%q: %+v, want one control_char failure on remark only", v, errs)
		}
	}
	// Other types are unchanged: a control character there is a type error.
	ci, memi := newCaster(t, []ColumnSpec{{Name: "n", Type: plan.Type{Kind: plan.Long}}})
	defer memi.AssertSize(t, 0)
	defer ci.Release()
	if errs := ci.Append([]string{"1\x00"}, nil); len(errs) != 1 || errs[0].Rule != RuleType {
		t.Errorf("long with NUL: %+v", errs)
	}
}
