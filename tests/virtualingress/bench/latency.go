package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// Latency targets (p95): a VirtualIngress gets its Ingress within 300 ms, an Ingress follows a recreated Service
// within 600 ms.
const (
	createTarget   = 300 * time.Millisecond
	recreateTarget = 600 * time.Millisecond
)

// subject is what the latency measurements create and watch: VirtualIngresses and their Ingresses, or
// VirtualHTTPRoutes and their HTTPRoutes.
type subject struct {
	// namespace is the base name of the measurements' namespaces.
	namespace string
	// create makes the source object name selecting the Service labelled labels.
	create func(ctx context.Context, ns, name string, labels map[string]string) error
	// watch starts watching the generated objects of ns.
	watch func(ctx context.Context, ns string) (generatedWatch, error)
}

// generatedWatch delivers the generated objects' events; the time an event arrives is when the object became
// observable, which is what the latencies measure.
type generatedWatch interface {
	// waitFor returns when an event shows the generated object name routing its first backend to service.
	waitFor(name, service string, timeout time.Duration) (time.Time, error)
	stop()
}

func (b *bench) virtualIngresses() subject {
	return subject{
		namespace: "bench",
		create: func(ctx context.Context, ns, name string, labels map[string]string) error {
			_, err := b.dyn.Resource(virtualingress.GVR).Namespace(ns).Create(ctx, virtualingress.New(ns, name, virtualingress.CoderSpec(labels)), metav1.CreateOptions{})
			return err
		},
		watch: func(ctx context.Context, ns string) (generatedWatch, error) { return b.watchIngresses(ctx, ns) },
	}
}

// createLatency creates source objects one at a time (so that each measures latency, not a queue) over a set of
// existing Services, and times each from the create call returning to the generated object arriving on a watch. On
// an error it returns the samples taken before it.
func (b *bench) createLatency(ctx context.Context, n int, s subject) (samples []time.Duration, err error) {
	ns, err := b.namespace(ctx, s.namespace+"-create")
	if err != nil {
		return samples, err
	}
	const services = 20
	for i := range services {
		if _, err := b.createService(ctx, ns, fmt.Sprintf("svc-%d", i), labelsFor(i)); err != nil {
			return samples, err
		}
	}
	w, err := s.watch(ctx, ns)
	if err != nil {
		return samples, err
	}
	defer w.stop()
	for i := range n {
		name := fmt.Sprintf("source-%d", i)
		if err := s.create(ctx, ns, name, labelsFor(i%services)); err != nil {
			return samples, err
		}
		start := time.Now()
		seen, err := w.waitFor(virtualingress.GeneratedName(name), fmt.Sprintf("svc-%d", i%services), b.timeout)
		if err != nil {
			return samples, err
		}
		samples = append(samples, seen.Sub(start))
	}
	return samples, nil
}

// recreateLatency deletes the Service behind one source object and creates it under a new name, n times, timing
// from the create call returning to the generated object naming the new Service on a watch.
func (b *bench) recreateLatency(ctx context.Context, n int, s subject) (samples []time.Duration, err error) {
	ns, err := b.namespace(ctx, s.namespace+"-recreate")
	if err != nil {
		return samples, err
	}
	labels := labelsFor(0)
	current := "svc-initial"
	if _, err := b.createService(ctx, ns, current, labels); err != nil {
		return samples, err
	}
	w, err := s.watch(ctx, ns)
	if err != nil {
		return samples, err
	}
	defer w.stop()
	if err := s.create(ctx, ns, "coder", labels); err != nil {
		return samples, err
	}
	if _, err := w.waitFor(virtualingress.GeneratedName("coder"), current, b.timeout); err != nil {
		return samples, err
	}
	for i := range n {
		if err := b.kube.CoreV1().Services(ns).Delete(ctx, current, metav1.DeleteOptions{}); err != nil {
			return samples, err
		}
		current = fmt.Sprintf("svc-%d", i)
		if _, err := b.createService(ctx, ns, current, labels); err != nil {
			return samples, err
		}
		start := time.Now()
		seen, err := w.waitFor(virtualingress.GeneratedName("coder"), current, b.timeout)
		if err != nil {
			return samples, err
		}
		samples = append(samples, seen.Sub(start))
	}
	return samples, nil
}

func labelsFor(i int) map[string]string {
	return map[string]string{
		"cluster.x-k8s.io/cluster-name":        "bench",
		"cluster.x-k8s.io/tenant-service-name": fmt.Sprintf("service-%d", i),
	}
}

// namespace creates a namespace of its own for one measurement of the current engine (<base>-<engine>), so that
// nothing the previous engine left behind can answer a watch, and remembers it for cleanUp.
func (b *bench) namespace(ctx context.Context, base string) (string, error) {
	name := base + "-" + strings.ToLower(b.engine)
	_, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err == nil {
		b.namespaces = append(b.namespaces, name)
	}
	return name, err
}

func (b *bench) createService(ctx context.Context, ns, name string, labels map[string]string) (*corev1.Service, error) {
	return b.kube.CoreV1().Services(ns).Create(ctx, newService(ns, name, labels), metav1.CreateOptions{})
}

// newService is the Service the measurements create: labels to be selected by, one http port 80.
func newService(ns, name string, labels map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
}

// latencyRow runs one latency measurement, announced as what, and summarises it against target. A measurement that
// fails keeps the samples it took, and its error in the row.
func latencyRow(engine, what string, target time.Duration, measure func() ([]time.Duration, error)) *latency {
	fmt.Printf("[%s] %s\n", engine, what)
	samples, err := measure()
	row := summarise(samples, target)
	if err != nil {
		row.Error = err.Error()
		fmt.Printf("[%s] %s failed after %d samples: %v\n", engine, what, len(samples), err)
	}
	return row
}
