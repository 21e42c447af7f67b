//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

// deadline bounds every wait for the operator: it is meant to converge within seconds.
const deadline = 20 * time.Second

// eventually waits (poll.Until) until check returns nil, failing the test with check's last error at the deadline.
func eventually(t *testing.T, what string, check func(context.Context) error) {
	t.Helper()
	poll.Until(t, deadline, what, func() (bool, string, error) {
		err := check(t.Context())
		return err == nil, "", err
	})
}

func getVS(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	return dyn.Resource(fixture.VirtualServices).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// waitVS waits until the VirtualService exists and check accepts it, and returns it.
func waitVS(t *testing.T, name string, check func(*unstructured.Unstructured) error) *unstructured.Unstructured {
	t.Helper()
	var vs *unstructured.Unstructured
	eventually(t, "VirtualService "+name, func(ctx context.Context) error {
		var err error
		if vs, err = getVS(ctx, prodNS, name); err != nil {
			return err
		}
		return check(vs)
	})
	return vs
}

func waitVSGone(t *testing.T, name string) {
	t.Helper()
	eventually(t, "VirtualService "+name+" deleted", func(ctx context.Context) error {
		_, err := getVS(ctx, prodNS, name)
		if err == nil {
			return errStillThere
		}
		return ignoreNotFound(err)
	})
}

var errStillThere = errors.New("still there")

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func httpRoutes(vs *unstructured.Unstructured) []map[string]any {
	list, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	out := make([]map[string]any, 0, len(list))
	for _, r := range list {
		out = append(out, r.(map[string]any))
	}
	return out
}

func routeNames(vs *unstructured.Unstructured) []string {
	var names []string
	for _, r := range httpRoutes(vs) {
		n, _ := r["name"].(string)
		names = append(names, n)
	}
	return names
}

// hasRoutes checks the route names, in order.
func hasRoutes(want ...string) func(*unstructured.Unstructured) error {
	return func(vs *unstructured.Unstructured) error {
		if got := routeNames(vs); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("routes %q, want %q", got, want)
		}
		return nil
	}
}

func createReady(t *testing.T, ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	t.Helper()
	if len(ports) == 0 {
		ports = []corev1.ServicePort{fixture.Port("http", 80)}
	}
	svc, err := fixture.ReadyService(t.Context(), kube, fixture.Service(ns, name, ports...))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func createService(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	out, err := kube.CoreV1().Services(svc.Namespace).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func deleteService(t *testing.T, ns, name string) {
	t.Helper()
	if err := kube.CoreV1().Services(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func setConfig(t *testing.T, text string) {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(operatorNS).Get(t.Context(), configName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["config.yaml"] = text
	if _, err := kube.CoreV1().ConfigMaps(operatorNS).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// restoreConfig puts the initial configuration back after a test that edits it, and waits until it is in force.
func restoreConfig(t *testing.T) {
	t.Cleanup(func() {
		cm, err := kube.CoreV1().ConfigMaps(operatorNS).Get(context.Background(), configName, metav1.GetOptions{})
		if err == nil {
			cm.Data["config.yaml"] = initialConf
			_, err = kube.CoreV1().ConfigMaps(operatorNS).Update(context.Background(), cm, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Errorf("restoring the configuration: %v", err)
		}
	})
}

// waitEvent waits for an Event about the object named regarding in ns with the reason and a note containing substr.
func waitEvent(t *testing.T, ns, regarding, reason, substr string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Event %s on %s/%s", reason, ns, regarding), func(ctx context.Context) error {
		list, err := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name != regarding {
				continue
			}
			if e.Reason == reason && strings.Contains(e.Note, substr) {
				return nil
			}
			seen = append(seen, e.Reason+": "+e.Note)
		}
		return fmt.Errorf("events seen: %q", seen)
	})
}

func httpGet(url string) (int, string, error) {
	return httpGetAs(url, "")
}

// metricsClient trusts any certificate: the operator serves metrics with the self-signed one controller-runtime
// makes when no certificate is configured, as the chart does by default.
var metricsClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test endpoint

// httpGetAs sends token as a bearer token (none when empty).
func httpGetAs(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil) //nolint:noctx // a local test endpoint
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := metricsClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// metric sums the samples of a metric family whose label set contains every labels entry (k="v").
func metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	code, body, err := httpGetAs(op.metricsURL, metricsToken)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", op.metricsURL, code, err)
	}
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		matches := true
		for _, l := range labels {
			matches = matches && strings.Contains(line, l)
		}
		if !matches {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}
