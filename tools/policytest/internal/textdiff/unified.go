// Package textdiff prints the difference of two texts as `diff -u` does: golden shows a case's render as a diff from
// the default one, compare shows where the two policy engines differ.
package textdiff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Unified is `diff -u` with three lines of context, "" for equal texts. It matches lines without difflib's
// autojunk heuristic, which in texts of 200 lines or more treats frequent lines as noise (in a chart render: every
// "labels:" and common label) and so shows unchanged lines as removed and added again; a diff must hold only what
// changes.
func Unified(fromName, toName, from, to string) string {
	return diff(fromName, toName, from, to, 3, nil)
}

// Headed is Unified without context lines, each hunk's "@@" line followed by what heading says of the line of from
// where the hunk starts (as `git diff` names the enclosing function): a committed diff then holds only the lines that
// change and, for each, what it belongs to.
func Headed(fromName, toName, from, to string, heading func(lines []string, at int) string) string {
	return diff(fromName, toName, from, to, 0, heading)
}

func diff(fromName, toName, from, to string, context int, heading func([]string, int) string) string {
	a, b := splitLines(from), splitLines(to)
	var out strings.Builder
	for i, group := range difflib.NewMatcherWithJunk(a, b, false, nil).GetGroupedOpCodes(context) {
		if i == 0 {
			fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
		}
		first, last := group[0], group[len(group)-1]
		fmt.Fprintf(&out, "@@ -%s +%s @@", hunkRange(first.I1, last.I2), hunkRange(first.J1, last.J2))
		if heading != nil {
			change := group[0]
			for _, op := range group {
				if op.Tag != 'e' { // without context, a group may still open with an empty equal range
					change = op
					break
				}
			}
			at := change.I1
			if change.Tag == 'i' {
				at-- // an insertion belongs to what precedes it
			}
			if h := heading(a, at); h != "" {
				out.WriteString(" " + h)
			}
		}
		out.WriteString("\n")
		for _, op := range group {
			if op.Tag == 'e' {
				writePrefixed(&out, " ", a[op.I1:op.I2])
				continue
			}
			if op.Tag == 'r' || op.Tag == 'd' {
				writePrefixed(&out, "-", a[op.I1:op.I2])
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				writePrefixed(&out, "+", b[op.J1:op.J2])
			}
		}
	}
	return out.String()
}

// splitLines keeps each line's newline; a last line without one gets one, so that the diff stays line-based.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n"
	}
	return lines
}

func writePrefixed(out *strings.Builder, prefix string, lines []string) {
	for _, l := range lines {
		out.WriteString(prefix + l)
	}
}

// hunkRange is a hunk's line range as `diff -u` prints it: first line (1-based) and length, the length left out when
// it is 1, and an empty range starting at the line before it.
func hunkRange(start, stop int) string {
	switch stop - start {
	case 1:
		return fmt.Sprint(start + 1)
	case 0:
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, stop-start)
}
