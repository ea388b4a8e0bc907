package text_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/text"
)

func TestAmountIn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want text.Amount
	}{
		{"6000", text.Amount{Value: 6000, Text: "6000"}},
		{"6,000", text.Amount{Value: 6000, Text: "6,000"}},
		{"6.000", text.Amount{Value: 6000, Text: "6.000"}},
		{"6 000", text.Amount{Value: 6000, Text: "6 000"}},
		{"6'000", text.Amount{Value: 6000, Text: "6'000"}},
		{"6\u00a0000 €", text.Amount{Value: 6000, Currency: "EUR", Text: "6\u00a0000 €"}},
		{"6.000,50", text.Amount{Value: 6000.5, Text: "6.000,50"}},
		{"6,000.50", text.Amount{Value: 6000.5, Text: "6,000.50"}},
		{"€6k", text.Amount{Value: 6000, Currency: "EUR", Text: "€6k"}},
		{"$2M", text.Amount{Value: 2e6, Currency: "USD", Text: "$2M"}},
		{"$1,234.56", text.Amount{Value: 1234.56, Currency: "USD", Text: "$1,234.56"}},
		{"US$ 1,234.56", text.Amount{Value: 1234.56, Currency: "USD", Text: "US$ 1,234.56"}},
		{"1 234,5", text.Amount{Value: 1234.5, Text: "1 234,5"}},
		{"6000 EUR", text.Amount{Value: 6000, Currency: "EUR", Text: "6000 EUR"}},
		{"EUR 6000", text.Amount{Value: 6000, Currency: "EUR", Text: "EUR 6000"}},
		{"USD6000", text.Amount{Value: 6000, Currency: "USD", Text: "USD6000"}},
		{"6000 euros", text.Amount{Value: 6000, Currency: "EUR", Text: "6000 euros"}},
		{"£12.99", text.Amount{Value: 12.99, Currency: "GBP", Text: "£12.99"}},
		{"₪350", text.Amount{Value: 350, Currency: "ILS", Text: "₪350"}},
		{"350 NIS", text.Amount{Value: 350, Currency: "ILS", Text: "350 NIS"}},
		{"1,234", text.Amount{Value: 1234, Text: "1,234"}},
		{"1,23", text.Amount{Value: 1.23, Text: "1,23"}},
		{"1.5", text.Amount{Value: 1.5, Text: "1.5"}},
		{"0,125", text.Amount{Value: 0.125, Text: "0,125"}},
		{"12345.678", text.Amount{Value: 12345.678, Text: "12345.678"}},
		{"1,234,567", text.Amount{Value: 1234567, Text: "1,234,567"}},
		{"1.234.567,89", text.Amount{Value: 1234567.89, Text: "1.234.567,89"}},
		{"₹1,23,456", text.Amount{Value: 123456, Currency: "INR", Text: "₹1,23,456"}},
		{"Please refund €6,000.", text.Amount{Value: 6000, Currency: "EUR", Text: "€6,000"}},
		// The amount with a currency is the amount, wherever it stands.
		{"order 12 costs €6,000", text.Amount{Value: 6000, Currency: "EUR", Text: "€6,000"}},
	} {
		got, ok := text.AmountIn(tt.in)
		if !ok {
			t.Errorf("AmountIn(%q): none, want %v", tt.in, tt.want)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("AmountIn(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestNeverSixHundred is the measured bug: a pattern of the shape
// \d{1,3}(?:,\d{3})*, which allows zero groups, matches the first three
// digits of 6000 and reads it as 600. A number is read whole here.
func TestNeverSixHundred(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want float64
	}{
		{"6000", 6000},
		{"$6000", 6000},
		{"refund 6000 EUR", 6000},
		{"6000.00", 6000},
		{"16000", 16000},
		{"600", 600},
		{"60000", 60000},
		{"1234567", 1234567},
		{"total: 6000, thanks", 6000},
		{"€6000,50", 6000.5},
	} {
		got, ok := text.AmountIn(tt.in)
		if !ok || got.Value != tt.want {
			t.Errorf("AmountIn(%q) = %v, %v; want %v", tt.in, got.Value, ok, tt.want)
		}
	}
}

func TestAmountsIn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want []string // Amount.String
	}{
		{"Refund €6,000.50 for order A-1042, and $20 shipping.", []string{"6000.5 EUR", "20 USD"}},
		{"between €10-20", []string{"10 EUR"}},
		// Not amounts: dates, times, ids, versions, addresses, percentages,
		// words with digits in them, lists without spaces.
		{"on 2026-10-18 at 12:30", nil},
		{"10/18", nil},
		{"version 1.2.3 on 192.168.0.1", nil},
		{"50% off", nil},
		{"A12 and 12b and 6km", nil},
		{"1,2,3", nil},
		{"#123", nil},
		{"", nil},
		// Two numbers apart are two amounts: a space groups only three digits.
		{"5 60 and 5 6000", []string{"5", "60", "5", "6000"}},
		{"a 123456789012345678901234567890123456789 b", nil},
	} {
		var got []string
		for _, a := range text.AmountsIn(tt.in) {
			got = append(got, a.String())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("AmountsIn(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestAmountsInIsBounded(t *testing.T) {
	t.Parallel()
	got := text.AmountsIn(strings.Repeat("€1 and ", 1000))
	if len(got) != text.MaxAmounts {
		t.Errorf("AmountsIn of 1000 amounts: %d, want MaxAmounts, %d", len(got), text.MaxAmounts)
	}
	if _, ok := text.AmountIn("nothing here"); ok {
		t.Error("AmountIn(\"nothing here\") found an amount")
	}
}

func FuzzAmountsIn(f *testing.F) {
	for _, s := range []string{"€6,000.50", "1 234,5", "₹1,23,456", "6.000,50 EUR", "US$ 1'000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range text.AmountsIn(s) {
			if !strings.Contains(s, a.Text) || a.Value < 0 {
				t.Errorf("AmountsIn(%q): %+v is not in the text, or negative", s, a)
			}
		}
	})
}
