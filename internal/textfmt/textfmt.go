// Package textfmt holds the small wording helpers every output shares: counted nouns, thousands
// separators and the dash that stands for "nothing". One definition each, with the variants explicit,
// so the terminal, the Markdown reports and the audit tables say "1 task" and "1,234 requests" alike.
package textfmt

import "strconv"

// Plural is "1 word" or "n words" (n as digits, no separators): the terminal's counted noun.
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// PluralGrouped is Plural with thousands separators: "1 request", "12,345 requests".
func PluralGrouped(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return Thousands(int64(n)) + " " + word + "s"
}

// Form picks the word form for a count without printing the count: Form(n, "entry", "entries").
// It is the variant for irregular plurals and for text that prints the number itself.
func Form(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Thousands prints n with a comma between groups of three digits: 1234567 → "1,234,567".
func Thousands(n int64) string {
	if n < 0 {
		return "-" + group(strconv.FormatInt(n, 10)[1:])
	}
	return group(strconv.FormatInt(n, 10))
}

// ThousandsUint is Thousands for token counts, which are unsigned.
func ThousandsUint(n uint64) string { return group(strconv.FormatUint(n, 10)) }

// group puts a comma between groups of three digits of s.
func group(s string) string {
	b := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// Dash stands "—" in for an empty value in a table cell or a line of text.
func Dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
