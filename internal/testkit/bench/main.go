// Package bench is the scaffolding every product's benchmark (tests/<product>/bench) shares: the command's run
// under a deadline and Ctrl-C, the JSON results file, a process's CPU time and peak memory, latency percentiles.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"time"
)

// Results are what a benchmark measured: written as JSON, and printed for a reader.
type Results interface {
	Print(w io.Writer)
}

// Main runs a benchmark command: run until it returns, timeout passes or the user interrupts, then the results
// written to out and printed (those of a run that failed part-way too, when it returns them). It exits with status 1,
// naming the command, when any step fails.
func Main[R Results](name, out string, timeout time.Duration, run func(context.Context) (R, error)) {
	if err := runMain(out, timeout, run); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	fmt.Println("results written to", out)
}

func runMain[R Results](out string, timeout time.Duration, run func(context.Context) (R, error)) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := run(ctx)
	// A run that failed after measuring something returns what it measured too: it is written and printed, and
	// the error still ends the run in failure.
	if err != nil && isNil(res) {
		return err
	}
	if werr := WriteJSON(out, res); werr != nil {
		return errors.Join(err, werr)
	}
	res.Print(os.Stdout)
	return err
}

// isNil tells a nil result (a nil pointer, as run returns with an error) from one.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// WriteJSON writes v, indented, to path, creating its directory.
func WriteJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
