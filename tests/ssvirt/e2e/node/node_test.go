//go:build node

package node_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/pgserver"
)

// The node tier of ssvirt-api (go test -tags node, make e2e-node): the chart installed with `helm install --wait`,
// the API answering through its Service, SQLite on the chart's PVC surviving the Pod, then PostgreSQL (a server the
// test runs on the node's address) after `helm upgrade --wait`, a rollout, and two replicas losing the leader's Pod.
var node *nodetier.Env

const (
	nodeChart    = "ssvirt"
	nodeAdmin    = "admin"
	nodePassword = "node-admin-password-1"
	apiPods      = "app.kubernetes.io/name=ssvirt"
)

func TestMain(m *testing.M) {
	os.Exit(nodetier.Main(m, "ssvirt", false, func(ctx context.Context, e *nodetier.Env) error {
		node = e
		if err := fixture.InstallCRDs(ctx, e.Cluster.RESTConfig()); err != nil {
			return err
		}
		for _, ns := range []string{nodeChart, "openshift"} {
			if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		if err := fixture.CreateTemplate(ctx, e.Dyn, fixture.Template("openshift", "fedora", false)); err != nil {
			return err
		}
		key := make([]byte, 48)
		_, _ = rand.Read(key)
		for _, s := range []*corev1.Secret{
			{ObjectMeta: metav1.ObjectMeta{Name: "ssvirt-api-jwt"}, StringData: map[string]string{"jwt-key": hex.EncodeToString(key)}},
			{ObjectMeta: metav1.ObjectMeta{Name: "ssvirt-admin"}, StringData: map[string]string{"password": nodePassword}},
		} {
			if _, err := e.Kube.CoreV1().Secrets(nodeChart).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		return nil
	}))
}

func TestChartOnNode(t *testing.T) {
	base := map[string]any{"bootstrapAdmin": map[string]any{"existingSecret": "ssvirt-admin"}}
	release := node.Install(t, nodeChart, base)
	node.AssertHardened(t, nodeChart, apiPods)
	node.HelmTest(t, release.Release)
	pvc, err := node.Kube.CoreV1().PersistentVolumeClaims(nodeChart).Get(context.Background(), nodeChart+"-data", metav1.GetOptions{})
	if err != nil || pvc.Status.Phase != corev1.ClaimBound {
		t.Fatalf("the chart's PVC: %v, %v", pvc, err)
	}

	org := createOrgAndVDC(t)
	restartPod(t)
	if !orgExists(t, org) {
		t.Fatalf("organization %s is gone after the Pod was replaced: SQLite is not on the PVC", org)
	}

	// Trusted from the Pods and from the host, where the failover test reads what the replicas stored.
	pg, err := pgserver.StartWith(context.Background(), pgserver.Options{Host: devcluster.HostIP,
		TrustNetworks: []string{devcluster.PodCIDR, devcluster.HostIP + "/32"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	if _, err := node.Kube.CoreV1().Secrets(nodeChart).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ssvirt-db"}, StringData: map[string]string{"url": pg.DSN()},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	onPostgres := nodetier.Merge(base, map[string]any{
		"database": map[string]any{"driver": "postgres", "existingSecret": "ssvirt-db"},
	})
	release.Upgrade(t, "to PostgreSQL", onPostgres)
	// helm --wait returns once the new Pod is Ready; with RollingUpdate the SQLite Pod may still serve (and take
	// the organization below into SQLite) or be going: wait for the rollout to end, as `kubectl rollout status` does.
	waitRolledOut(t)
	org = createOrgAndVDC(t)
	restartPod(t)
	if !orgExists(t, org) {
		t.Fatalf("organization %s is gone after the Pod was replaced on PostgreSQL", org)
	}
	node.HelmTest(t, release.Release)
	rollWithoutFailures(t)
	failoverUnderCreates(t, release, onPostgres, pg.DSN())
}

// waitRolledOut waits until the Deployment's Pods are all of its latest template and the old ones are gone.
func waitRolledOut(t *testing.T) {
	t.Helper()
	poll.Until(t, 2*time.Minute, "the Deployment rolled out", func() (bool, string, error) {
		return rolledOut(context.Background()), "", nil
	})
}

// rollWithoutFailures restarts the Deployment as `kubectl rollout restart` does and calls the API through its
// Service, on a new connection each time, all through the rollout: with PostgreSQL the Deployment rolls, and a
// replica that goes must keep serving until kube-proxy has stopped sending it connections. (Without that, a
// connection routed to the old Pod after it stopped listening is refused, or hangs once its network is gone.)
func rollWithoutFailures(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	token := adminToken(t)
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`,
		time.Now().Format(time.RFC3339Nano))
	if _, err := node.Kube.AppsV1().Deployments(nodeChart).Patch(ctx, nodeChart, types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	url := apiURL(t) + "/cloudapi/1.0.0/orgs"
	var calls, failures int
	var first string
	// Past the old Pod's end by as long again, so that a stale route to it would be taken.
	var settled time.Time
	// A call every poll.Interval. Past the 3 minutes, the test fails only if the rollout did not end.
	err := poll.Wait(ctx, 3*time.Minute, "the rollout ended, and calls through the Service 10 s past it", func() (bool, string, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		calls++
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s", resp.Status)
			}
		}
		if err != nil {
			if failures++; first == "" {
				first = fmt.Sprintf("%s: %v", time.Now().Format(time.StampMilli), err)
			}
		}
		if settled.IsZero() && rolledOut(ctx) {
			settled = time.Now().Add(10 * time.Second)
		}
		return !settled.IsZero() && time.Now().After(settled), fmt.Sprintf("%d calls, %d failed, rolled out: %t", calls, failures, !settled.IsZero()), nil
	})
	if err != nil && settled.IsZero() {
		t.Fatalf("%v\n%s", err, node.PodReport(nodeChart))
	}
	if failures > 0 {
		t.Fatalf("%d of %d calls through the Service failed during a rollout, the first at %s", failures, calls, first)
	}
	t.Logf("%d calls through the Service during a rollout, none failed", calls)
}

// rolledOut says whether the Deployment's Pods are all of its latest template, available, and the old ones gone.
func rolledOut(ctx context.Context) bool {
	d, err := node.Kube.AppsV1().Deployments(nodeChart).Get(ctx, nodeChart, metav1.GetOptions{})
	if err != nil {
		return false
	}
	pods, err := node.Kube.CoreV1().Pods(nodeChart).List(ctx, metav1.ListOptions{LabelSelector: apiPods})
	if err != nil {
		return false
	}
	want := *d.Spec.Replicas
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
		d.Status.AvailableReplicas == want && d.Status.Replicas == want && int32(len(pods.Items)) == want
}

// apiURL is the API's Service, reached from the host through its ClusterIP as kube-proxy routes it.
func apiURL(t *testing.T) string {
	t.Helper()
	svc, err := node.Kube.CoreV1().Services(nodeChart).Get(context.Background(), nodeChart, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
}

func call(t *testing.T, method, url, token string, body, out any) int {
	t.Helper()
	status, _, data, err := fixture.Call(t.Context(), &http.Client{Timeout: 10 * time.Second}, method, url, token, nil, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if out != nil && status < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
	return status
}

func adminToken(t *testing.T) string {
	t.Helper()
	var token string
	poll.Until(t, time.Minute, "the System administrator logs in through the Service", func() (bool, string, error) {
		req, _ := http.NewRequest(http.MethodPost, apiURL(t)+"/cloudapi/1.0.0/sessions", nil)
		req.SetBasicAuth(nodeAdmin+"@System", nodePassword)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			return false, "", err
		}
		defer resp.Body.Close()
		token = resp.Header.Get(api.HeaderAccessToken)
		return resp.StatusCode == http.StatusOK && token != "", resp.Status, nil
	})
	return token
}

// createOrgAndVDC creates an organization and a VDC through the Service, and waits for the VDC's namespace.
func createOrgAndVDC(t *testing.T) string {
	t.Helper()
	token := adminToken(t)
	name := fmt.Sprintf("nodeorg%d", time.Now().UnixNano()%1e6)
	var org api.Org
	if code := call(t, "POST", apiURL(t)+"/cloudapi/1.0.0/orgs", token, api.Org{Name: name}, &org); code != http.StatusCreated {
		t.Fatalf("create org: %d", code)
	}
	vdc := api.VDC{Name: "web", ComputeCapacity: api.ComputeCapacity{CPU: api.Capacity{Limit: 1000}, Memory: api.Capacity{Limit: 1024}},
		StorageCapacity: api.Capacity{Limit: 10}}
	var created api.VDC
	if code := call(t, "POST", apiURL(t)+"/api/admin/org/"+org.ID+"/vdcs", token, vdc, &created); code != http.StatusCreated {
		t.Fatalf("create VDC: %d", code)
	}
	poll.Until(t, time.Minute, "the VDC's namespace "+created.Namespace, func() (bool, string, error) {
		_, err := node.Kube.CoreV1().Namespaces().Get(context.Background(), created.Namespace, metav1.GetOptions{})
		return err == nil, "", err
	})
	return name
}

func orgExists(t *testing.T, name string) bool {
	t.Helper()
	var list struct {
		Values []api.Org `json:"values"`
	}
	if code := call(t, "GET", apiURL(t)+"/cloudapi/1.0.0/orgs", adminToken(t), nil, &list); code != http.StatusOK {
		t.Fatalf("list orgs: %d", code)
	}
	for _, o := range list.Values {
		if o.Name == name {
			return true
		}
	}
	return false
}

// restartPod deletes the API's Pod and waits for its replacement to be Ready.
func restartPod(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	pods, err := node.Kube.CoreV1().Pods(nodeChart).List(ctx, metav1.ListOptions{LabelSelector: apiPods})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("API Pods: %v (%v)", pods, err)
	}
	old := pods.Items[0].Name
	if err := node.Kube.CoreV1().Pods(nodeChart).Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 2*time.Minute, "a new Ready API Pod", func() (bool, string, error) {
		if _, err := node.Kube.CoreV1().Pods(nodeChart).Get(ctx, old, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, "old Pod still there", nil
		}
		pods, err := node.Kube.CoreV1().Pods(nodeChart).List(ctx, metav1.ListOptions{LabelSelector: apiPods})
		if err != nil || len(pods.Items) != 1 {
			return false, "", err
		}
		for _, c := range pods.Items[0].Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, "", nil
			}
		}
		return false, string(pods.Items[0].Status.Phase), nil
	})
}
