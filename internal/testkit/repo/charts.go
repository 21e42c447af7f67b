package repo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CommitCharts makes dir a git repository whose one commit holds a copy of root's charts/ (with _output/ ignored, where
// `make images` writes), as a clean checkout the release tool accepts, and returns that commit's hash. The commit's
// author is fixed and the user's git configuration is not read.
func CommitCharts(ctx context.Context, root, dir, message string) (string, error) {
	if err := os.CopyFS(filepath.Join(dir, "charts"), os.DirFS(filepath.Join(root, "charts"))); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/_output/\n"), 0o644); err != nil {
		return "", err
	}
	var out string
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", message}, {"rev-parse", "HEAD"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.invalid",
			"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null")
		b, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, b)
		}
		out = strings.TrimSpace(string(b))
	}
	return out, nil
}
