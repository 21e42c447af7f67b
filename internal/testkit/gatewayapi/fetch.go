package gatewayapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
)

// fetchZip returns the path of the module zip of mod@version under cacheDir, downloading it from the first proxy in
// GOPROXY when it is not there. The zip is used only once its hash equals want, so a second run reads the cache and
// a corrupt or substituted download is an error, never a CRD.
func fetchZip(ctx context.Context, cacheDir, mod, version, want string) (string, error) {
	escaped, err := module.EscapePath(mod)
	if err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir, strings.ReplaceAll(escaped, "/", "_")+"@"+version+".zip")
	if got, err := dirhash.HashZip(path, dirhash.Hash1); err == nil && got == want {
		return path, nil
	}
	proxy, err := goProxy(ctx)
	if err != nil {
		return "", err
	}
	url := proxy + "/" + escaped + "/@v/" + version + ".zip"
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(cacheDir, ".download-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := download(ctx, url, tmp); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	got, err := dirhash.HashZip(tmp.Name(), dirhash.Hash1)
	if err != nil {
		return "", fmt.Errorf("%s: %w", url, err)
	}
	if got != want {
		return "", fmt.Errorf("%s: hash %s, want %s (the go.sum hash of %s@%s)", url, got, want, mod, version)
	}
	return path, os.Rename(tmp.Name(), path)
}

func download(ctx context.Context, url string, to io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	_, err = io.Copy(to, resp.Body)
	return err
}

// goProxy is the first HTTP proxy of `go env GOPROXY`, the one the go command itself would ask first.
func goProxy(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOPROXY").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOPROXY: %w", err)
	}
	for _, p := range strings.FieldsFunc(strings.TrimSpace(string(out)), func(r rune) bool { return r == ',' || r == '|' }) {
		if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
			return strings.TrimSuffix(p, "/"), nil
		}
	}
	return "", fmt.Errorf("GOPROXY %q names no HTTP proxy", strings.TrimSpace(string(out)))
}
