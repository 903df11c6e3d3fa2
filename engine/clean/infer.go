package clean

import (
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// Inference is the type proposed for a column from a sample.
type Inference struct {
	Type plan.Type
	// Formats are the date patterns seen, most frequent first.
	Formats []string
	// Confidence is the share of non-null sampled values that fit Type.
	Confidence float64
	NonNull    int
	// LeadingZeros counts values like "007" that keep a column a string.
	LeadingZeros int
}

// MinInferConfidence is the share of sampled values that must fit a type for
// it to be proposed; values that do not fit become exceptions at load time.
const MinInferConfidence = 0.95

var inferDatePatterns = []string{"yyyy-MM-dd", "yyyy/M/d", "dd.MM.yyyy", "yyyyMMdd"}

// Infer proposes a type for one column from sampled raw values (never from
// one row). nullTokens nil means DefaultNullTokens.
func Infer(values []string, nullTokens []string) Inference {
	if nullTokens == nil {
		nullTokens = DefaultNullTokens
	}
	nulls := map[string]bool{}
	for _, t := range nullTokens {
		nulls[t] = true
	}
	var inf Inference
	var nInt, nDec, nBool, nTS, nTSZ int
	maxScale, maxInt := 0, 1
	dateHits := map[string]int{}
	nDate := 0
	for _, raw := range values {
		if nulls[raw] {
			continue
		}
		v := strings.TrimSpace(raw)
		if v == "" {
			continue
		}
		inf.NonNull++
		switch strings.ToLower(v) {
		case "true", "false", "yes", "no":
			nBool++
			continue
		}
		// A number with a currency marker is a number: the type is
		// decimal, and whether the value loads is RuleCurrency's concern.
		if n, err := splitNumber(v, NumberStyle{AnyCurrency: true}); err == nil {
			if len(n.intPart) > 1 && n.intPart[0] == '0' && n.fracPart == "" {
				inf.LeadingZeros++
				continue
			}
			if len(strings.TrimLeft(n.intPart, "0")) > maxInt {
				maxInt = len(strings.TrimLeft(n.intPart, "0"))
			}
			if n.fracPart == "" {
				nInt++
			} else {
				nDec++
				if len(n.fracPart) > maxScale {
					maxScale = len(n.fracPart)
				}
			}
			// yyyyMMdd also looks like an integer; counted below too.
		}
		matched := false
		for _, p := range inferDatePatterns {
			l, _ := GoLayout(p)
			if _, err := time.Parse(l, v); err == nil {
				dateHits[p]++
				matched = true
				break
			}
		}
		if matched {
			nDate++
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
			nTSZ++
			continue
		}
		if _, err := time.Parse("2006-01-02 15:04:05", v); err == nil {
			nTS++
			continue
		}
		if _, err := time.Parse("2006-01-02T15:04:05", v); err == nil {
			nTS++
		}
	}
	inf.Type = plan.Type{Kind: plan.String}
	if inf.NonNull == 0 {
		return inf
	}
	share := func(n int) float64 { return float64(n) / float64(inf.NonNull) }
	switch {
	case inf.LeadingZeros > 0 && share(inf.LeadingZeros+nInt) >= MinInferConfidence && nDec == 0:
		// Zero-padded identifiers stay strings.
		inf.Confidence = share(inf.LeadingZeros + nInt)
	case share(nBool) >= MinInferConfidence:
		inf.Type, inf.Confidence = plan.Type{Kind: plan.Boolean}, share(nBool)
	case share(nDate) >= MinInferConfidence && dateHits["yyyyMMdd"] < nDate:
		inf.Type, inf.Confidence = plan.Type{Kind: plan.Date}, share(nDate)
		for len(dateHits) > 0 {
			best, bn := "", -1
			for p, n := range dateHits {
				if n > bn || (n == bn && p < best) {
					best, bn = p, n
				}
			}
			inf.Formats = append(inf.Formats, best)
			delete(dateHits, best)
		}
	case share(nInt) >= MinInferConfidence:
		inf.Type, inf.Confidence = plan.Type{Kind: plan.Long}, share(nInt)
	case share(nInt+nDec) >= MinInferConfidence:
		prec := 18
		if maxInt+maxScale > 18 {
			prec = 38
		}
		inf.Type, inf.Confidence = plan.Type{Kind: plan.Decimal, Precision: prec, Scale: maxScale}, share(nInt+nDec)
	case share(nTSZ) >= MinInferConfidence:
		inf.Type, inf.Confidence = plan.Type{Kind: plan.TimestampTZ}, share(nTSZ)
	case share(nTS+nTSZ) >= MinInferConfidence:
		inf.Type, inf.Confidence = plan.Type{Kind: plan.Timestamp}, share(nTS+nTSZ)
	default:
		inf.Confidence = 1
	}
	return inf
}
