package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Currencies: a number written with a currency symbol or code (₩150,000,
// $12.00, 12.00 EUR) is held back at load under rule currency unless its
// column declares the currency (Column.Currency, an ISO 4217 code). With a
// declared currency only that currency's code and symbols are removed (and
// counted); another currency's symbol in the column is still held back.

// iso4217 lists the active ISO 4217 currency codes (funds and precious
// metals left out).
var iso4217 = strings.Fields(`
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB
BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP
DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF
IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK
LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN
NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT
TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF
XPF YER ZAR ZMW ZWG ZWL`)

var isoSet = func() map[string]bool {
	m := make(map[string]bool, len(iso4217))
	for _, c := range iso4217 {
		m[c] = true
	}
	return m
}()

// currencySymbols are the symbols written for a currency besides its code.
// Some symbols stand for several currencies: $ for USD, CAD, AUD, NZD, HKD,
// SGD, MXN and TWD; ¥ and ￥ for JPY and CNY. In a column that declares
// one of them the symbol is that currency; undeclared, gate 3 reads $ as
// USD and ¥ as JPY (the first in symbolOrder) and says which others it may
// be. Currencies without a symbol here (SEK, CHF, …) are written by code.
var currencySymbols = map[string][]string{
	"KRW": {"₩", "￦", "원"},
	"USD": {"US$", "$"},
	"EUR": {"€"},
	"GBP": {"£"},
	"JPY": {"¥", "￥", "円"},
	"CNY": {"CN¥", "RMB", "¥", "￥", "元"},
	"CAD": {"CA$", "C$", "$"},
	"AUD": {"AU$", "A$", "$"},
	"NZD": {"NZ$", "$"},
	"HKD": {"HK$", "$"},
	"SGD": {"S$", "$"},
	"MXN": {"MX$", "$"},
	"TWD": {"NT$", "$"},
	"BRL": {"R$"},
	"INR": {"₹"},
	"RUB": {"₽"},
	"TRY": {"₺"},
	"VND": {"₫"},
	"PHP": {"₱"},
	"THB": {"฿"},
	"ILS": {"₪"},
	"UAH": {"₴"},
	"NGN": {"₦"},
	"PLN": {"zł"},
}

// symbolOrder ranks the currencies of a shared symbol: the first is the
// reading gate 3 proposes.
var symbolOrder = []string{"USD", "JPY", "CAD", "AUD", "NZD", "HKD", "SGD", "MXN", "TWD", "CNY"}

// symbolCodes maps each symbol to the currencies it stands for, the
// proposed reading first.
var symbolCodes = func() map[string][]string {
	m := map[string][]string{}
	rank := func(c string) int {
		for i, o := range symbolOrder {
			if o == c {
				return i
			}
		}
		return len(symbolOrder)
	}
	for code, syms := range currencySymbols {
		for _, s := range syms {
			m[s] = append(m[s], code)
		}
	}
	for _, codes := range m {
		sort.Slice(codes, func(i, j int) bool {
			if a, b := rank(codes[i]), rank(codes[j]); a != b {
				return a < b
			}
			return codes[i] < codes[j]
		})
	}
	return m
}()

// CurrencySymbolList is every currency symbol Lima recognizes, longest
// first (so that US$ is tried before $).
var CurrencySymbolList = func() []string {
	var out []string
	for s := range symbolCodes {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}()

// IsCurrencyCode reports whether code is an ISO 4217 code (in capitals).
func IsCurrencyCode(code string) bool { return isoSet[code] }

// CurrencySymbols are the symbols that stand for the currency code in a
// column declaring it (its code aside), longest first.
func CurrencySymbols(code string) []string {
	out := append([]string(nil), currencySymbols[code]...)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// SymbolCurrencies are the currencies a symbol (or an ISO code, case
// ignored) stands for, the one gate 3 proposes first; nil when it is none.
func SymbolCurrencies(tok string) []string {
	if c := strings.ToUpper(tok); len(tok) == 3 && isoSet[c] {
		return []string{c}
	}
	return symbolCodes[tok]
}

// CheckCurrency says what is wrong with a column's declared currency, ""
// when nothing is.
func CheckCurrency(code string) string {
	if isoSet[code] {
		return ""
	}
	if up := strings.ToUpper(strings.TrimSpace(code)); isoSet[up] {
		return fmt.Sprintf("%q: write the ISO 4217 code in capitals: currency: %s", code, up)
	}
	if codes := SymbolCurrencies(strings.TrimSpace(code)); len(codes) > 0 {
		return fmt.Sprintf("%q is a symbol, not a code: write its ISO 4217 code (%s)", code, strings.Join(codes, " or "))
	}
	return fmt.Sprintf("%q is not an ISO 4217 currency code; write the column's currency as its three-letter code, e.g. KRW, USD, EUR, JPY", code)
}
