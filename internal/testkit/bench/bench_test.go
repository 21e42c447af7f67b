package bench

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSummarise(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	got := Summarise(ds)
	want := Latency{P50Seconds: 0.050, P95Seconds: 0.095, MaxSeconds: 0.100, Samples: 100}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if ds[0] != 100*time.Millisecond {
		t.Fatal("Summarise sorted its argument")
	}
	if (Summarise(nil) != Latency{}) {
		t.Fatal("no samples summarised as something")
	}
}

func TestThisProcess(t *testing.T) {
	if PeakRSSMiB(os.Getpid()) <= 0 {
		t.Error("no peak RSS for this process")
	}
	busy := 0
	for i := range 300_000_000 {
		busy += i
	}
	if CPUSeconds(os.Getpid()) <= 0 {
		t.Errorf("this process used no CPU after a busy loop (%d)", busy)
	}
	if CPUSeconds(0) != 0 {
		t.Error("no process, some CPU")
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b.json")
	if err := WriteJSON(path, map[string]int{"x": 1}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "{\n  \"x\": 1\n}\n" {
		t.Fatalf("%q, %v", data, err)
	}
}

type partial struct {
	Measured int `json:"measured"`
}

func (p *partial) Print(io.Writer) {}

// A run that fails part-way and returns what it measured has it written, and still fails; one that returns nothing
// writes nothing.
func TestRunMainWritesWhatAFailedRunMeasured(t *testing.T) {
	failed := errors.New("second phase failed")
	out := filepath.Join(t.TempDir(), "r.json")
	err := runMain(out, time.Minute, func(context.Context) (*partial, error) { return &partial{Measured: 7}, failed })
	data, readErr := os.ReadFile(out)
	if !errors.Is(err, failed) || readErr != nil || !strings.Contains(string(data), `"measured": 7`) {
		t.Fatalf("runMain = %v; file %q (%v), want the error and the partial results written", err, data, readErr)
	}
	none := filepath.Join(t.TempDir(), "none.json")
	if err := runMain(none, time.Minute, func(context.Context) (*partial, error) { return nil, failed }); !errors.Is(err, failed) {
		t.Fatalf("runMain = %v, want %v", err, failed)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Fatalf("a run that measured nothing wrote %s (%v)", none, err)
	}
}
