package cmdline

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// GoStyleFlags rewrites `-update` to `--update` for every long flag the commands define. Go's own tools (and
// `go test -update` golden-file conventions) take long flags with one dash; pflag would read `-update` as the
// shorthands -u -p -d... and fail. Anything that is not a known long flag (e.g. `-fvi.yaml`) is left alone.
func GoStyleFlags(root *cobra.Command, args []string) []string {
	long := map[string]bool{}
	var collect func(*cobra.Command)
	collect = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
		for _, sub := range c.Commands() {
			collect(sub)
		}
	}
	collect(root)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if len(name) > 1 && long[name] {
			out[i] = "-" + a
		}
	}
	return out
}
