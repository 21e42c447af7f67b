package kyverno

import (
	"encoding/json"
	"strings"
)

// kyvernoRow is one result row of `kyverno test -o json --detailed-results`.
type kyvernoRow struct {
	ID       int    `json:"ID"`
	Policy   string `json:"POLICY"`
	Rule     string `json:"RULE"`
	Resource string `json:"RESOURCE"`
	Result   string `json:"RESULT"`
	Reason   string `json:"REASON"`
	Message  string `json:"Message"`
}

// failed follows kyverno's table: a row passes only with result Pass. Skip is what kyverno prints for a policy it
// found invalid and did not run (and counts as passed); here that is a failure, since nothing was checked.
func (r kyvernoRow) failed() bool { return r.Result != "Pass" }

// parseKyvernoRows collects the rows of every JSON array in the output of `kyverno test -o json`. The command
// mixes them with progress lines ("Loading test ..."), warnings and a summary, and prints one array per test in a
// kyverno-test.yaml; an array starts on a line of its own.
func parseKyvernoRows(output string) []kyvernoRow {
	var rows []kyvernoRow
	for offset := 0; offset < len(output); {
		lineEnd := strings.IndexByte(output[offset:], '\n')
		if lineEnd < 0 {
			lineEnd = len(output) - offset
		}
		line := output[offset : offset+lineEnd]
		if strings.HasPrefix(line, "[") {
			dec := json.NewDecoder(strings.NewReader(output[offset:]))
			var found []kyvernoRow
			if err := dec.Decode(&found); err == nil && rowsLookValid(found) {
				rows = append(rows, found...)
				offset += int(dec.InputOffset())
				continue
			}
		}
		offset += lineEnd + 1
	}
	return rows
}

// rowsLookValid rejects arrays that are not result tables (e.g. a warning that happens to start with "[").
func rowsLookValid(rows []kyvernoRow) bool {
	for _, r := range rows {
		if r.Result == "" || r.Policy == "" {
			return false
		}
	}
	return true
}
