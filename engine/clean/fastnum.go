package clean

import "github.com/apache/arrow-go/v18/arrow/decimal128"

// The fast paths below read the plain forms of numbers — an optional sign
// and ASCII digits, a decimal point for decimals — and decline anything else
// (spaces, grouping, trailing minus, currency, too many digits), which then
// goes the full way through ParseInt / ParseDecimal. What they accept they
// read exactly as those do, with no fix to count (fastnum_test.go compares
// them on generated inputs).

// pow10 are the powers of ten an int64 holds.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// fastInt reads [+-]digits of at most 18 digits (always within int64).
func fastInt(s string) (int64, bool) {
	i, neg := 0, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, i = s[0] == '-', 1
	}
	if len(s)-i < 1 || len(s)-i > 18 {
		return 0, false
	}
	var n int64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// fastDecimal reads [+-]digits[.digits] with at least one integer digit,
// at most scale fraction digits (at least one after a point) and at most 18
// digits in all once scaled, into a decimal of the precision and scale.
func fastDecimal(s string, prec, scale int) (decimal128.Num, bool) {
	i, neg := 0, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, i = s[0] == '-', 1
	}
	var n int64
	intDigits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if intDigits++; intDigits+scale > 18 {
			return decimal128.Num{}, false
		}
	}
	if intDigits == 0 {
		return decimal128.Num{}, false
	}
	frac := 0
	if i < len(s) {
		if s[i] != '.' {
			return decimal128.Num{}, false
		}
		for i++; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' || frac == scale {
				return decimal128.Num{}, false
			}
			n = n*10 + int64(c-'0')
			frac++
		}
		if frac == 0 {
			return decimal128.Num{}, false
		}
	}
	n *= pow10[scale-frac]
	if prec < 18 && n >= pow10[prec] {
		return decimal128.Num{}, false // too many digits: ParseDecimal says so
	}
	if neg {
		n = -n
	}
	return decimal128.FromI64(n), true
}
