package flagvalue

import (
	"flag"
	"slices"
	"testing"
)

func TestCommaList(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--l="}, nil},
		{[]string{"--l=a, b,,c "}, []string{"a", "b", "c"}},
		// The last occurrence wins, as for a scalar flag.
		{[]string{"--l=a", "--l=b"}, []string{"b"}},
	} {
		var got []string
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.Func("l", "", CommaList(&got))
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}
