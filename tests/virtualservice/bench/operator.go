package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

// operatorProcess is the operator binary run against the cluster, as the chart would run it.
type operatorProcess struct {
	cmd        *exec.Cmd
	metricsURL string
	logFile    string
	started    time.Time
}

func startOperator(ctx context.Context, bin, kubeconfig, logFile string, o options) (*operatorProcess, error) {
	free, err := localproc.FreePorts(2)
	if err != nil {
		return nil, err
	}
	ports := []string{fmt.Sprintf("127.0.0.1:%d", free[0]), fmt.Sprintf("127.0.0.1:%d", free[1])}
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append(fixture.OperatorArgs(operatorNS, ports[0], ports[1]),
		fmt.Sprintf("--kube-api-qps=%g", o.qps), fmt.Sprintf("--kube-api-burst=%d", o.burst),
		fmt.Sprintf("--max-concurrent-reconciles=%d", o.workers), "--batch-window="+o.batchWindow.String())...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &operatorProcess{cmd: cmd, metricsURL: "http://" + ports[0] + "/metrics", logFile: logFile, started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *operatorProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// metrics returns the samples of the operator's /metrics whose line starts with one of prefixes, summed by the
// full series name (name plus labels).
func (p *operatorProcess) metrics() (map[string]float64, error) {
	resp, err := http.Get(p.metricsURL) //nolint:noctx // local endpoint, short-lived
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndex(line, " ")
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] += v
	}
	return out, sc.Err()
}

// sum adds the samples of series whose name is name and whose labels contain every labels entry.
func sum(m map[string]float64, name string, labels ...string) float64 {
	var total float64
	for series, v := range m {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(series, l)
		}
		if ok {
			total += v
		}
	}
	return total
}

// peakRSSMiB is the kernel's high-water mark of the operator's resident memory.
func (p *operatorProcess) peakRSSMiB() float64 {
	return bench.PeakRSSMiB(p.cmd.Process.Pid)
}

// meter is what a phase reads from the operator.
type meter interface {
	metrics() (map[string]float64, error)
	peakRSSMiB() float64
}

// lazyOperator is the operator process once it exists: the first phase reads the counters before starting it.
type lazyOperator struct{ p **operatorProcess }

func (l *lazyOperator) metrics() (map[string]float64, error) {
	if *l.p == nil {
		return map[string]float64{}, nil
	}
	return (*l.p).metrics()
}

func (l *lazyOperator) peakRSSMiB() float64 {
	if *l.p == nil {
		return 0
	}
	return (*l.p).peakRSSMiB()
}

// waitServing waits until the operator answers on its metrics endpoint, and a little more for its caches to sync:
// a phase that measures it running must not measure its start.
func (p *operatorProcess) waitServing(ctx context.Context) error {
	if err := poll.Wait(ctx, time.Minute, "the operator serving metrics", func() (bool, string, error) {
		_, err := p.metrics()
		return err == nil, "", err
	}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(3 * time.Second):
		return nil
	}
}
