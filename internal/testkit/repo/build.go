package repo

import (
	"context"
	"fmt"
	"os/exec"
)

// BuildCommand builds the checkout's cmd/<name> into out, from the root so that it works from any package's
// directory; the compiler's output is in the error.
func BuildCommand(ctx context.Context, name, out string) error {
	root, err := Root()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", name, err, b)
	}
	return nil
}
