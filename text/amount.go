// Package text reads what a person wrote where a program needs a value:
// today, the amounts in a sentence ("refund €6,000.50 for order 12").
//
// It is the engine's reading, so that no generated handler writes its own.
// The reason is measured: asked to read money out of a description, three of
// three fresh generations of one handler wrote a pattern with the
// (?:,\d{3})* shape, which allows zero groups, and so read 6000 as 600.
// Here a number is always read whole: its digits and separators are taken
// together first, and only then is it decided what the separators mean.
package text

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Amount is one amount a person wrote.
type Amount struct {
	// Value is the amount's value: "6.000,50" is 6000.5, "€6k" is 6000.
	Value float64 `json:"value"`
	// Currency is the ISO 4217 code of the currency written with it
	// ("€" is EUR, "$" USD), or "" when none was written.
	Currency string `json:"currency,omitempty"`
	// Text is the amount as it was written, currency and all.
	Text string `json:"text"`
}

// String is the amount as a plain number and its currency: "6000.5 EUR".
func (a Amount) String() string {
	s := strconv.FormatFloat(a.Value, 'f', -1, 64)
	if a.Currency != "" {
		s += " " + a.Currency
	}
	return s
}

// MaxAmounts is the most amounts AmountsIn returns: the first ones written.
const MaxAmounts = 64

// MaxNumberLength is the longest number, in bytes with its separators,
// read as an amount; anything longer (an account number, a hash) is not.
const MaxNumberLength = 32

// AmountIn returns the first amount written in s, and false when there is
// none. An amount with a currency comes before one without: in "order 12
// costs €6,000" the amount is €6,000.
func AmountIn(s string) (Amount, bool) {
	all := AmountsIn(s)
	for _, a := range all {
		if a.Currency != "" {
			return a, true
		}
	}
	if len(all) == 0 {
		return Amount{}, false
	}
	return all[0], true
}

// AmountsIn returns every amount written in s, in the order written, at
// most MaxAmounts. How a number's separators are read is in docs/text.md;
// in short:
//
//   - 6000, 6,000, 6.000, 6 000 and 6'000 are all 6000;
//   - 1,23 and 1.5 are decimals: a lone separator is a decimal mark unless
//     exactly three digits follow it (1,234 is 1234);
//   - with both marks, the last one is the decimal mark: 6.000,50 and
//     6,000.50 are 6000.5;
//   - €6k is 6000 EUR and $2M 2000000 USD;
//   - a number touching a letter, or joined by -, /, : or another digit
//     group (a date, a time, an id like A-12, a version 1.2.3), and a
//     percentage, is not an amount.
func AmountsIn(s string) []Amount {
	var out []Amount
	for i := 0; i < len(s) && len(out) < MaxAmounts; {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isDigit(r) {
			i += w
			continue
		}
		a, end, ok := amountAt(s, i)
		if ok {
			out = append(out, a)
		}
		i = end
	}
	return out
}

// amountAt reads the number starting at s[i], a digit, with its currency
// and multiplier, and returns where reading goes on.
func amountAt(s string, i int) (Amount, int, bool) {
	end := numberEnd(s, i)
	num := s[i:end]
	cur, before := currencyBefore(s[:i])
	if cur == "" && (blocked(lastRune(s[:i])) || strings.HasSuffix(s[:i], ".") || strings.HasSuffix(s[:i], ",")) {
		return Amount{}, end, false
	}
	value, ok := numberValue(num)
	if !ok || len(num) > MaxNumberLength {
		return Amount{}, end, false
	}
	start, stop := i, end
	// A multiplier right after the digits: 6k, 2M.
	mult := 1.0
	if r, w := utf8.DecodeRuneInString(s[stop:]); r == 'k' || r == 'K' || r == 'M' {
		if !isWordRune(firstRune(s[stop+w:])) {
			if r == 'M' {
				mult = 1e6
			} else {
				mult = 1e3
			}
			stop += w
		}
	}
	if cur != "" {
		start -= before
	} else if c, after := currencyAfter(s[stop:]); c != "" {
		cur = c
		stop += after
	}
	next := firstRune(s[stop:])
	if next == '%' || (cur == "" && blocked(next)) || (cur != "" && isWordRune(next)) {
		return Amount{}, end, false
	}
	v := value * mult
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return Amount{}, end, false
	}
	return Amount{Value: v, Currency: cur, Text: s[start:stop]}, stop, true
}

// numberEnd returns where the number starting at s[i] ends: digits, and a
// separator (, . ' or a space) only between digits. A space or an
// apostrophe groups thousands, so it is taken only before exactly three
// digits. Reading stops past MaxNumberLength, which is then no amount.
func numberEnd(s string, i int) int {
	j := i
	for j < len(s) && j-i <= MaxNumberLength {
		r, w := utf8.DecodeRuneInString(s[j:])
		if isDigit(r) {
			j += w
			continue
		}
		if !isSeparator(r) || j == i {
			break
		}
		n := digitsAt(s, j+w)
		if n == 0 {
			break
		}
		if isGap(r) && (n != 3 || !groupHead(s[i:j])) {
			break
		}
		j += w
	}
	return j
}

// groupHead reports whether the number read so far can be followed by a
// space-grouped thousand: its last group has one to three digits.
func groupHead(num string) bool {
	last := num
	if k := strings.LastIndexFunc(num, isSeparator); k >= 0 {
		_, w := utf8.DecodeRuneInString(num[k:])
		last = num[k+w:]
		if !isGap(lastRune(num[:k+w])) {
			return false // a gap never follows a comma or a point
		}
	}
	return len(last) >= 1 && len(last) <= 3
}

// numberValue decides what a number's separators mean and returns its
// value; false when they make no sense together (1.2.3, 192.168.0.1).
func numberValue(num string) (float64, bool) {
	var groups []string
	var seps []rune
	cur := strings.Builder{}
	for _, r := range num {
		if isDigit(r) {
			cur.WriteRune(r)
			continue
		}
		groups = append(groups, cur.String())
		seps = append(seps, r)
		cur.Reset()
	}
	groups = append(groups, cur.String())
	if len(seps) == 0 {
		return parse(num, "")
	}
	// The decimal mark: the last comma or point, when it is one of its
	// kind, follows every other separator, and either another kind of
	// separator is written too or it is not followed by exactly three
	// digits.
	last := seps[len(seps)-1]
	decimal := -1
	if last == ',' || last == '.' {
		n := 0
		mixed := false
		for _, r := range seps {
			if r == last {
				n++
			} else {
				mixed = true
			}
		}
		if n == 1 && (mixed || len(groups[len(groups)-1]) != 3 || groups[0] == "0" || !grouped(groups, seps)) {
			decimal = len(seps) - 1
		}
	}
	intGroups, intSeps := groups, seps
	frac := ""
	if decimal >= 0 {
		intGroups, intSeps, frac = groups[:decimal+1], seps[:decimal], groups[decimal+1]
	}
	if !grouped(intGroups, intSeps) {
		return 0, false
	}
	return parse(strings.Join(intGroups, ""), frac)
}

// grouped reports whether groups separated by seps are thousands: one
// grouping mark throughout, the first group one to three digits and the
// last three. Middle groups of two are the Indian lakh (1,23,456).
func grouped(groups []string, seps []rune) bool {
	if len(seps) == 0 {
		return true
	}
	for _, r := range seps {
		if r != seps[0] {
			return false
		}
	}
	if n := len(groups[0]); n < 1 || n > 3 || len(groups[len(groups)-1]) != 3 {
		return false
	}
	for _, g := range groups[1 : len(groups)-1] {
		if len(g) != 3 && !(len(g) == 2 && seps[0] == ',') {
			return false
		}
	}
	return true
}

func parse(whole, frac string) (float64, bool) {
	s := whole
	if frac != "" {
		s += "." + frac
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// symbols are the currency signs read before or after a number, longest
// first so that US$ is not read as $.
var symbols = []struct{ sign, code string }{
	{"US$", "USD"}, {"Fr.", "CHF"}, {"zł", "PLN"},
	{"€", "EUR"}, {"$", "USD"}, {"£", "GBP"}, {"¥", "JPY"}, {"₪", "ILS"}, {"₹", "INR"}, {"₩", "KRW"}, {"₽", "RUB"}, {"₺", "TRY"},
}

// codes are the ISO 4217 codes read as a currency, and words the names.
var codes = map[string]bool{
	"EUR": true, "USD": true, "GBP": true, "JPY": true, "CHF": true, "ILS": true, "NIS": true, "INR": true,
	"CAD": true, "AUD": true, "NZD": true, "SEK": true, "NOK": true, "DKK": true, "PLN": true, "CZK": true,
	"HUF": true, "CNY": true, "HKD": true, "SGD": true, "ZAR": true, "BRL": true, "MXN": true, "TRY": true,
	"RUB": true, "KRW": true, "RON": true, "BGN": true, "ISK": true, "AED": true, "SAR": true,
}

var words = map[string]string{
	"euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD", "pound": "GBP", "pounds": "GBP",
	"shekel": "ILS", "shekels": "ILS", "yen": "JPY", "francs": "CHF",
}

// currencyBefore reads a currency written just before a number ("€6",
// "EUR 6", "US$ 6") and returns its code and how many bytes it takes.
func currencyBefore(s string) (string, int) {
	t := strings.TrimRight(s, " \u00a0\u202f")
	gap := len(s) - len(t)
	if !oneGap(s[len(t):]) {
		return "", 0
	}
	for _, sym := range symbols {
		if strings.HasSuffix(t, sym.sign) && (!isLetter(firstRune(sym.sign)) || !isWordRune(lastRune(t[:len(t)-len(sym.sign)]))) {
			return sym.code, len(sym.sign) + gap
		}
	}
	w := lastWord(t)
	if norm := strings.ToUpper(w); codes[norm] && w == norm {
		return normCode(norm), len(w) + gap
	}
	return "", 0
}

// currencyAfter reads a currency written just after a number ("6 €",
// "6000 EUR", "6 euros") and returns its code and how many bytes it takes.
func currencyAfter(s string) (string, int) {
	t := strings.TrimLeft(s, " \u00a0\u202f")
	gap := len(s) - len(t)
	if !oneGap(s[:gap]) {
		return "", 0
	}
	for _, sym := range symbols {
		if strings.HasPrefix(t, sym.sign) && (!isLetter(firstRune(sym.sign)) || !isWordRune(firstRune(t[len(sym.sign):]))) {
			return sym.code, len(sym.sign) + gap
		}
	}
	w := firstWord(t)
	if norm := strings.ToUpper(w); codes[norm] && w == norm {
		return normCode(norm), len(w) + gap
	}
	if code, ok := words[strings.ToLower(w)]; ok {
		return code, len(w) + gap
	}
	return "", 0
}

// oneGap reports whether g, what stands between a number and its
// currency, is nothing or one space.
func oneGap(g string) bool {
	return g == "" || g == " " || g == "\u00a0" || g == "\u202f"
}

// normCode reads NIS, the everyday name of the shekel, as its code.
func normCode(c string) string {
	if c == "NIS" {
		return "ILS"
	}
	return c
}

func lastWord(s string) string {
	i := strings.LastIndexFunc(s, func(r rune) bool { return !isLetter(r) })
	return s[i+1:]
}

func firstWord(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return !isLetter(r) })
	if i < 0 {
		return s
	}
	return s[:i]
}

// digitsAt counts the ASCII digits at s[j:].
func digitsAt(s string, j int) int {
	n := 0
	for j+n < len(s) && s[j+n] >= '0' && s[j+n] <= '9' {
		n++
	}
	return n
}

// blocked reports whether a rune next to a number makes it something other
// than an amount: a letter or digit (A12, 12b), or a joiner of a date, a
// time or an id (2026-10-18, 10/18, 12:30, A-1).
func blocked(r rune) bool {
	return isWordRune(r) || r == '-' || r == '/' || r == ':' || r == '_' || r == '#'
}

func isDigit(r rune) bool    { return r >= '0' && r <= '9' }
func isLetter(r rune) bool   { return unicode.IsLetter(r) }
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isSeparator is a mark written between a number's digits.
func isSeparator(r rune) bool { return r == ',' || r == '.' || isGap(r) }

// isGap is a mark that only ever groups thousands: a space, a no-break
// space, a narrow no-break space, an apostrophe.
func isGap(r rune) bool { return r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\'' || r == '’' }

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return 0
	}
	return r
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	if r == utf8.RuneError {
		return 0
	}
	return r
}
