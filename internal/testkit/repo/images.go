package repo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var imagesRE = regexp.MustCompile(`(?m)^IMAGES := ((?:.*\\\n)*.*)$`)

// Images is the Makefile's IMAGES, the binary=chart pairs `make images` builds and `make release` publishes, as
// the space-separated list tools/release's --image takes.
func Images(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	m := imagesRE.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("no IMAGES := in %s/Makefile", root)
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")), " "), nil
}
