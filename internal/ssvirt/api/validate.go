package api

import (
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Entity names end up in Kubernetes label values (organization and VDC names) and in the login name
// (organizations), so they follow label-value rules: 1-63 characters, letters, digits, '-', '_', '.', starting
// and ending with a letter or digit.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)

func checkName(field, name string) error {
	if !namePattern.MatchString(name) {
		return badRequest(fmt.Sprintf("%s %q: 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", field, name))
	}
	return nil
}

func checkText(field, s string, limit int) error {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > limit {
		return badRequest(fmt.Sprintf("%s: at most %d characters of valid UTF-8", field, limit))
	}
	return nil
}
