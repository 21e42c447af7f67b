package dns

import (
	"regexp"
	"testing"
)

func mustMatch(t *testing.T, re, s string) bool {
	t.Helper()
	return regexp.MustCompile(re).MatchString(s)
}
