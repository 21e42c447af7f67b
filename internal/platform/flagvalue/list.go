// Package flagvalue parses the flag values the binaries of this repository share a syntax for, so that a chart's
// rendered arguments mean the same to each of them.
package flagvalue

import "strings"

// CommaList is a flag.FlagSet.Func setting *dst from a comma-separated value, as the charts pass their lists
// (`join ","`): items are trimmed and empty ones dropped, so an empty list renders as an empty value. A flag given
// twice keeps its last value, as every other flag does.
func CommaList(dst *[]string) func(string) error {
	return func(value string) error {
		*dst = nil
		for _, v := range strings.Split(value, ",") {
			if v = strings.TrimSpace(v); v != "" {
				*dst = append(*dst, v)
			}
		}
		return nil
	}
}
