package run

import (
	"slices"
	"testing"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
)

// TestEveryRuleIsRoutable: an owner can route by every rule an exception
// can carry (owners[].rule is validated against plan.Rules and
// plan.ExceptionRules) — control_char, currency and the change-capture
// rules were refused by the validation although the engine held rows
// back under them.
func TestEveryRuleIsRoutable(t *testing.T) {
	emitted := []string{clean.RuleType, clean.RuleNotNull, clean.RuleEncoding, clean.RuleControlChar, clean.RuleCurrency,
		source.RuleRecordTooLarge, RuleMalformed, RuleUnique, RuleFile,
		RuleCDCInvalid, RuleCDCFileSeenTwice, RuleCDCBackwards, RuleCDCUpdateUnknown, RuleCDCDeleteUnknown,
		RuleCDCDeleteBeforeInsert, RuleCDCInsertExisting}
	known := append(slices.Clone(plan.Rules), plan.ExceptionRules...)
	for _, r := range emitted {
		if !slices.Contains(known, r) {
			t.Errorf("rule %q is emitted by the engine but owners cannot route by it", r)
		}
	}
}
