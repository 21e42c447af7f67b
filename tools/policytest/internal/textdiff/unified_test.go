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
