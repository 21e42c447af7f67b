package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// floor is what the hosted side alone takes for the burst: n LoadBalancer Services created at once straight in the
// hosted cluster, as the operator creates them (its pool, no node ports), until MetalLB has given each its IP. No
// operator can make the fleet Ready faster on this machine; the fleet's figure is read against it.
type floor struct {
	Services      int           `json:"services"`
	AllIPsSeconds float64       `json:"allIPsSeconds"`
	CreateToIP    bench.Latency `json:"createToIP"`
}

var floorLabels = map[string]string{"bench": "floor"}

// measureFloor measures the floor with the IPs seen by watchIPs, then deletes the Services and waits until they are
// gone, so that the fleet after it finds the pool as it was.
func measureFloor(ctx context.Context, e *localenv.Env, n int, seen *stamps) (floor, error) {
	services := e.HostedKube.CoreV1().Services(localenv.RouterNS)
	created := make([]time.Time, n)
	name := func(i int) string { return fmt.Sprintf("floor-%04d", i) }
	start := time.Now()
	noNodePorts := false
	if err := fanOut(n, func(i int) error {
		_, err := services.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name(i), Labels: floorLabels,
				Annotations: map[string]string{"metallb.io/address-pool": localenv.PoolName}},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: &noNodePorts,
				Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}},
			},
		}, metav1.CreateOptions{})
		created[i] = time.Now()
		return err
	}); err != nil {
		return floor{}, fmt.Errorf("creating the floor's Services: %w", err)
	}
	f := floor{Services: n}
	latencies := make([]time.Duration, n)
	var last time.Time
	for i := range n {
		var at time.Time
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Minute, true, func(context.Context) (bool, error) {
			_, at = seen.latestIn(name(i)+"/", "")
			return !at.IsZero(), nil
		}); err != nil {
			return floor{}, fmt.Errorf("%s got no IP: %w", name(i), err)
		}
		latencies[i] = at.Sub(created[i])
		if at.After(last) {
			last = at
		}
	}
	f.AllIPsSeconds, f.CreateToIP = last.Sub(start).Seconds(), bench.Summarise(latencies)

	// Services have no deletecollection: one by one, as many at once as they were created.
	if err := fanOut(n, func(i int) error { return services.Delete(ctx, name(i), metav1.DeleteOptions{}) }); err != nil {
		return floor{}, fmt.Errorf("deleting the floor's Services: %w", err)
	}
	only := metav1.ListOptions{LabelSelector: "bench=floor"}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := services.List(ctx, only)
		return err == nil && len(list.Items) == 0, nil
	})
	return f, err
}

// fanOut runs f for 0..n-1, 16 at once (as many as the fleet's creations reach the hosted API server), and returns
// the first error by index.
func fanOut(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
