package textdiff

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiffShowsOnlyChangedLines(t *testing.T) {
	// difflib's autojunk would treat the frequent "labels:" line as noise in a text of 200 lines or more and show
	// it removed and added again.
	var from, to strings.Builder
	for i := range 100 {
		fmt.Fprintf(&from, "name: a%d\nlabels:\n", i)
		fmt.Fprintf(&to, "name: a%d\nlabels:\n", i)
	}
	from.WriteString("name: last\nlabels:\n")
	to.WriteString("name: LAST\nlabels:\n")
	want := "--- a\n+++ b\n@@ -198,5 +198,5 @@\n labels:\n name: a99\n labels:\n-name: last\n+name: LAST\n labels:\n"
	if got := Unified("a", "b", from.String(), to.String()); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := Unified("a", "b", "x\n", "x\n"); got != "" {
		t.Errorf("equal texts: %q", got)
	}
}

func TestHeadedDiffHasNoContextAndNamesWhatEachHunkBelongsTo(t *testing.T) {
	from := "kind: A\nname: a\nx: 1\nkind: B\nname: b\n"
	to := "kind: A\nname: a\nx: 2\nkind: B\nname: b\ny: 3\n"
	kindAbove := func(lines []string, at int) string {
		for i := min(at, len(lines)-1); i >= 0; i-- {
			if strings.HasPrefix(lines[i], "kind: ") {
				return strings.TrimSpace(lines[i])
			}
		}
		return ""
	}
	want := "--- a\n+++ b\n@@ -3 +3 @@ kind: A\n-x: 1\n+x: 2\n@@ -5,0 +6 @@ kind: B\n+y: 3\n"
	if got := Headed("a", "b", from, to, kindAbove); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
