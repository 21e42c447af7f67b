//go:build node

package node_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// rolloutProbe sends one request every probeEvery while a rollout runs and counts what failed.
type rolloutProbe struct {
	what string
	do   func() bool

	mu           sync.Mutex
	sent, failed int
	longest      time.Duration
	firstFail    time.Time
}

// probeEvery is how often each probe asks; probeTimeout is when a question without an answer has failed;
// maxRolloutGap is the longest a probe may keep failing: the time one Pod takes to replace another, with room (a
// static address on a new MAC address kept TLS through the proxy failing for 72.5 s, until the VLAN hosts' neighbour
// entries expired).
const (
	probeEvery    = 100 * time.Millisecond
	probeTimeout  = 3 * time.Second
	maxRolloutGap = 20 * time.Second
)

func (p *rolloutProbe) run(ctx context.Context, done *sync.WaitGroup) {
	defer done.Done()
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			// A run of failures still going when the probes stop ended then: they stop at the first success after
			// the rollout.
			p.mu.Lock()
			if !p.firstFail.IsZero() {
				p.longest = max(p.longest, time.Since(p.firstFail))
			}
			p.mu.Unlock()
			return
		case <-tick.C:
		}
		ok := p.do()
		now := time.Now()
		p.mu.Lock()
		p.sent++
		if ok {
			if !p.firstFail.IsZero() {
				p.longest = max(p.longest, now.Sub(p.firstFail))
				p.firstFail = time.Time{}
			}
		} else {
			p.failed++
			if p.firstFail.IsZero() {
				p.firstFail = now
			}
		}
		p.mu.Unlock()
	}
}

func (p *rolloutProbe) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%s: %d of %d failed, longest run of failures %s", p.what, p.failed, p.sent, p.longest.Round(time.Millisecond))
}

// proveRollout rolls CoreDNS and HAProxy to new Pods (`helm upgrade --wait` with one more Pod annotation) while probes
// run every probeEvery: the VLAN client asking CoreDNS for a cluster's name, and a Pod's TLS connection through the
// proxy. The rollout must finish (helm --wait, within nodetier.InstallTimeout: a hostNetwork Pod that cannot bind the
// node's ports would stall it), and no two Pods may hold a static address of static (Pod selector → address) at once
// (their network-status, polled meanwhile). The failed requests are counted and logged: one replica of each on one
// node is replaced, so a gap is expected; the test says how long, and fails past maxRolloutGap.
func proveRollout(t *testing.T, release *nodetier.Installed, values map[string]any, probes []*rolloutProbe, static map[string]string) {
	t.Helper()
	// Stopped and waited for on every way out, a failed upgrade included: no probe outlives the test.
	probing, stopProbes := context.WithCancel(context.Background())
	watching, stopWatching := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() { stopWatching(); stopProbes(); running.Wait() }()
	for _, p := range probes {
		running.Add(1)
		go p.run(probing, &running)
	}
	most := map[string]int{}
	if len(static) > 0 {
		running.Add(1)
		go func() {
			defer running.Done()
			for {
				select {
				case <-watching.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				for selector, address := range static {
					most[address] = max(most[address], podsHolding(t, selector, address))
				}
			}
		}()
	}
	// Let the probes see the service as it was first.
	time.Sleep(time.Second)
	begin := time.Now()
	rolled := map[string]any{"rollout": begin.Format(time.RFC3339Nano)}
	release.Upgrade(t, "rollout", nodetier.Merge(values, map[string]any{
		"dns": map[string]any{"podAnnotations": rolled}, "proxy": map[string]any{"podAnnotations": rolled},
	}))
	took := time.Since(begin)
	stopWatching()
	// Until every probe succeeds again: the old Pods may serve until they are gone.
	for _, p := range probes {
		poll.Until(t, time.Minute, p.what+" again after the rollout", func() (bool, string, error) { return p.do(), "", nil })
	}
	stopProbes()
	running.Wait()
	var report []string
	for _, p := range probes {
		report = append(report, p.String())
		if p.longest > maxRolloutGap {
			t.Errorf("%s failed for %s in a row during the rollout, more than %s", p.what, p.longest.Round(time.Millisecond), maxRolloutGap)
		}
	}
	for _, address := range slices.Sorted(maps.Values(static)) {
		report = append(report, fmt.Sprintf("Pods holding %s at once: at most %d", address, most[address]))
		if most[address] > 1 {
			t.Errorf("%d Pods held the static address %s at once during the rollout", most[address], address)
		}
	}
	t.Logf("rollout (helm upgrade --wait) done in %s; %s", took.Round(time.Millisecond), strings.Join(report, "; "))
}

// vlanRolloutProbes are the VLAN client's DNS question for the cluster's name (answered want) and a Pod's TLS
// connection through the proxy for it (the router's certificate cn).
func vlanRolloutProbes(t *testing.T, probeNS, probe, vlanServer, vlanPort, name, want, cn string) []*rolloutProbe {
	t.Helper()
	ctx := context.Background()
	proxySvc, err := node.Kube.CoreV1().Services(nodeChart).Get(ctx, nodeChart+"-proxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return []*rolloutProbe{
		{what: "DNS from the VLAN", do: func() bool {
			out, err := localenv.InVLAN(ctx, localenv.DigArgs(vlanServer, vlanPort, name)...)
			return err == nil && out == want
		}},
		{what: "TLS from a Pod through the proxy", do: func() bool {
			// A connection that gets no answer counts as failed after probeTimeout, not when openssl gives up.
			ctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			out, err := node.Cluster.Exec(ctx, probeNS, probe, "probe", localenv.SubjectArgs(proxySvc.Spec.ClusterIP+":443", name)...)
			return err == nil && strings.TrimSpace(out) == "subject=CN = "+cn
		}},
	}
}

// podsHolding counts the Pods of selector whose network-status lists address, leaving out Pods in a terminal phase:
// the kubelet stops a Pod's sandbox, and with it the attachment, before it reports the phase, while the annotation
// stays until the object is deleted. A Recreate rollout starts the new Pod once the old one is terminal, so counting
// the old one's annotation then would report an address the old Pod no longer holds.
func podsHolding(t *testing.T, selector, address string) int {
	pods, err := node.Kube.CoreV1().Pods(nodeChart).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Logf("listing Pods %s: %v", selector, err)
		return 0
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if hasLeg(&p, func(s networkStatus) bool { return slices.Contains(s.IPs, address) }) {
			n++
		}
	}
	return n
}
