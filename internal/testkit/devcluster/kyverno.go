package devcluster

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// KyvernoNamespace is where Kyverno's ServiceAccounts, ConfigMaps, leases and TLS secrets live.
const KyvernoNamespace = "kyverno"

// tokenLifetime of the controllers' ServiceAccount tokens: a cluster is not expected to live longer.
const tokenLifetime = 365 * 24 * time.Hour

// kyvernoInstall is what Start learned from Kyverno's chart about running its controllers.
type kyvernoInstall struct {
	moduleDir  string
	admission  kyvernoController
	background kyvernoController
}

// kyvernoController is one Deployment of the chart, turned into a local process.
type kyvernoController struct {
	deployment     string
	serviceAccount string
	args           []string
	env            []string
	podName        string
}

// startKyverno installs Kyverno as its Helm chart would, minus everything that needs a kubelet (Deployments,
// Services, hook Jobs) and minus the webhook configurations, which the admission controller registers
// itself, and then runs the admission and background controllers as processes.
func (c *Cluster) startKyverno(ctx context.Context) error {
	modDir, err := kyvernoModuleDir(ctx, c.opts.RepoRoot, kyvernoModule)
	if err != nil {
		return err
	}
	a, err := newApplier(c.internalConfig())
	if err != nil {
		return err
	}
	if err := c.applyKyvernoCRDs(ctx, a, modDir); err != nil {
		return err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": KyvernoNamespace},
	}}
	if _, err := a.apply(ctx, ns); err != nil {
		return err
	}
	inst, err := c.applyKyvernoChart(ctx, a, modDir)
	if err != nil {
		return err
	}
	c.kyverno = inst

	for _, k := range []struct {
		component string
		ctrl      *kyvernoController
		bin       string
		extra     []string
	}{
		{ComponentKyverno, &inst.admission, c.bins[binKyverno.file], []string{
			// Out of cluster the webhooks are registered with a URL (https://<serverIP>/...) instead of a
			// Service, and the serving certificate Kyverno generates names that address.
			fmt.Sprintf("--serverIP=127.0.0.1:%d", c.ports.kyvernoWebhook),
			"--webhookServerHost=127.0.0.1",
			fmt.Sprintf("--webhookServerPort=%d", c.ports.kyvernoWebhook),
			fmt.Sprintf("--metricsPort=%d", c.ports.kyvernoMetrics),
		}},
		{ComponentKyvernoBackground, &inst.background, c.bins[binKyvernoBackground.file], []string{
			fmt.Sprintf("--metricsPort=%d", c.ports.backgroundMetrics),
		}},
	} {
		// Each controller acts as its own ServiceAccount: Kyverno recognises its own requests by user name (loop
		// protection, skipBackgroundRequests), and RBAC gaps only show when it runs with its real permissions.
		kubeconfig := filepath.Join(c.dir, k.component+".kubeconfig")
		if err := c.ServiceAccountKubeconfig(ctx, KyvernoNamespace, k.ctrl.serviceAccount, kubeconfig); err != nil {
			return err
		}
		args := overrideArgs(k.ctrl.args, slices.Concat([]string{
			"--kubeconfig=" + kubeconfig,
			"--metricsHost=127.0.0.1",
			// The logs go to files; colour codes would only make them harder to grep.
			"--disableLogColor",
			// controller-runtime's metrics server would bind :8080 on every interface.
			"--controllerRuntimeMetricsAddress=0",
		}, k.extra, c.opts.KyvernoArgs))
		p := &process{name: k.component, bin: k.bin, args: args, env: k.ctrl.env, dataDir: c.dir, detach: c.opts.Detach}
		c.mu.Lock()
		c.procs[p.name] = p
		c.mu.Unlock()
		if err := p.start(); err != nil {
			return err
		}
	}

	if err := c.waitFor(ctx, ComponentKyverno, c.kyvernoWebhooksRegistered); err != nil {
		return err
	}
	if err := c.waitFor(ctx, ComponentKyvernoBackground, c.kyvernoBackgroundReady); err != nil {
		return err
	}
	return c.probeKyvernoPolicy(ctx, a)
}

// kyvernoModuleDir is Kyverno's source in the module cache, at the version the binaries are built from:
// CRDs and chart then always match the controllers.
func kyvernoModuleDir(ctx context.Context, repoRoot, module string) (string, error) {
	spec := binKyverno.inModule(module)
	version, err := spec.version(repoRoot)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", binKyverno.versionModule+"@"+version)
	cmd.Dir = spec.moduleDir(repoRoot)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s@%s in the module cache: %w", binKyverno.versionModule, version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", err
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("locating %s@%s in the module cache: %s", binKyverno.versionModule, version, info.Error)
	}
	return info.Dir, nil
}

func (c *Cluster) applyKyvernoCRDs(ctx context.Context, a *applier, modDir string) error {
	var names []string
	for _, sub := range []string{"kyverno", "policies.kyverno.io", "policyreport", "reports"} {
		files, err := filepath.Glob(filepath.Join(modDir, "config", "crds", sub, "*.yaml"))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no CRDs in %s", filepath.Join(modDir, "config", "crds", sub))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			objs, err := decodeObjects(data)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			for _, o := range objs {
				if _, err := a.apply(ctx, o); err != nil {
					return err
				}
				names = append(names, o.GetName())
			}
		}
	}
	return c.waitEstablished(ctx, a, "Kyverno's CRDs", names)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// kyvernoChartKinds are the kinds a Kyverno install needs from its chart when no Pods run. Aggregated
// ClusterRoles are among them: they are what gives meaning to the rbac.kyverno.io/aggregate-to-* labels.
var kyvernoChartKinds = []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap"}

func (c *Cluster) applyKyvernoChart(ctx context.Context, a *applier, modDir string) (*kyvernoInstall, error) {
	inst, objs, err := renderKyvernoObjects(c.opts.RepoRoot, modDir, c.dir)
	if err != nil {
		return nil, err
	}
	var aggregated []string
	for _, o := range objs {
		if _, err := a.apply(ctx, o); err != nil {
			return nil, err
		}
		if _, ok := o.Object["aggregationRule"]; ok && o.GetKind() == "ClusterRole" {
			aggregated = append(aggregated, o.GetName())
		}
	}
	// The controllers check their permissions at start-up; the aggregation controller in
	// kube-controller-manager must have filled the aggregated roles by then.
	err = c.waitFor(ctx, "Kyverno's aggregated ClusterRoles", func(ctx context.Context) (bool, error) {
		for _, name := range aggregated {
			cr, err := c.kube.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if len(cr.Rules) == 0 {
				return false, fmt.Errorf("ClusterRole %s has no aggregated rules yet", name)
			}
		}
		return true, nil
	})
	return inst, err
}

// renderKyvernoObjects renders Kyverno's chart and returns how to run its controllers and the objects to
// apply.
func renderKyvernoObjects(repoRoot, modDir, dataDir string) (*kyvernoInstall, []*unstructured.Unstructured, error) {
	ch, err := loadChart(filepath.Join(modDir, "charts", "kyverno"))
	if err != nil {
		return nil, nil, err
	}
	values, err := kyvernoChartValues(repoRoot)
	if err != nil {
		return nil, nil, err
	}
	objs, err := renderChart(ch, "kyverno", KyvernoNamespace, values)
	if err != nil {
		return nil, nil, err
	}
	inst := &kyvernoInstall{moduleDir: modDir}
	var apply []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			switch o.GetLabels()["app.kubernetes.io/component"] {
			case "admission-controller":
				inst.admission, err = controllerFromDeployment(o, dataDir)
			case "background-controller":
				inst.background, err = controllerFromDeployment(o, dataDir)
			}
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		if slices.Contains(kyvernoChartKinds, o.GetKind()) {
			apply = append(apply, o)
		}
	}
	if inst.admission.deployment == "" || inst.background.deployment == "" {
		return nil, nil, fmt.Errorf("no admission or background controller Deployment in the Kyverno chart of %s", modDir)
	}
	return inst, apply, nil
}

// KyvernoValuesFile is the values of Kyverno's chart virtual-ingress asks its users for (the chart README shows it),
// relative to the repository's root: the CRD watcher in both controllers and memory for a fleet of VirtualIngresses.
const KyvernoValuesFile = "fixtures/examples/kyverno-values.yaml"

// kyvernoChartValues are the values Kyverno's chart is rendered or installed with, as processes or on the node: the
// users' (KyvernoValuesFile), and what only this cluster needs.
func kyvernoChartValues(repoRoot string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, KyvernoValuesFile))
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("%s: %w", KyvernoValuesFile, err)
	}
	// CRDs come from config/crds, applied server-side: some are too large for client-side apply, and the chart's CRD
	// subcharts from remote repositories are not in the module.
	values["crds"] = map[string]any{"install": false}
	values["openreports"] = map[string]any{"enabled": false, "installCrds": false}
	values["reportsServer"] = map[string]any{"enabled": false}
	return values, nil
}

// controllerFromDeployment takes the flags, environment and ServiceAccount a Deployment of the chart gives
// its first container, so the local process is configured as the real install would configure it.
func controllerFromDeployment(d *unstructured.Unstructured, dataDir string) (kyvernoController, error) {
	ctrl := kyvernoController{deployment: d.GetName(), podName: d.GetName() + "-devcluster"}
	ctrl.serviceAccount, _, _ = unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 || ctrl.serviceAccount == "" {
		return ctrl, fmt.Errorf("the Kyverno chart's Deployment %s has no container or ServiceAccount", d.GetName())
	}
	container, _ := containers[0].(map[string]any)
	args, _, _ := unstructured.NestedStringSlice(container, "args")
	ctrl.args = args
	envs, _, _ := unstructured.NestedSlice(container, "env")
	for _, e := range envs {
		env, _ := e.(map[string]any)
		name, _ := env["name"].(string)
		value, hasValue := env["value"].(string)
		if !hasValue {
			// Downward-API fields: the pod this process stands in for. The pod name is the identity in
			// Kyverno's leader election; keeping it fixed lets a restarted controller take its lease back at
			// once instead of waiting for it to expire.
			path, _, _ := unstructured.NestedString(env, "valueFrom", "fieldRef", "fieldPath")
			switch path {
			case "metadata.namespace":
				value = KyvernoNamespace
			case "metadata.name":
				value = ctrl.podName
			default:
				continue
			}
		}
		if name == "TUF_ROOT" {
			// Sigstore's cache; the image's path is not writable here.
			value = filepath.Join(dataDir, "sigstore")
		}
		ctrl.env = append(ctrl.env, name+"="+value)
	}
	return ctrl, nil
}

// overrideArgs replaces flags of args by the same flags in overrides and appends the others.
func overrideArgs(args, overrides []string) []string {
	name := func(a string) string { n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); return n }
	out := make([]string, 0, len(args)+len(overrides))
	set := map[string]bool{}
	for _, o := range overrides {
		set[name(o)] = true
	}
	for _, a := range args {
		if !set[name(a)] {
			out = append(out, a)
		}
	}
	return append(out, overrides...)
}

// kyvernoWebhookNames are registered by the admission controller once it has its certificate and leads.
var kyvernoWebhookNames = struct{ validating, mutating []string }{
	validating: []string{"kyverno-policy-validating-webhook-cfg", "kyverno-resource-validating-webhook-cfg"},
	mutating:   []string{"kyverno-policy-mutating-webhook-cfg", "kyverno-resource-mutating-webhook-cfg"},
}

func (c *Cluster) kyvernoWebhooksRegistered(ctx context.Context) (bool, error) {
	for _, n := range kyvernoWebhookNames.validating {
		if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, n, metav1.GetOptions{}); err != nil {
			return false, fmt.Errorf("ValidatingWebhookConfiguration %s: %w", n, err)
		}
	}
	for _, n := range kyvernoWebhookNames.mutating {
		if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, n, metav1.GetOptions{}); err != nil {
			return false, fmt.Errorf("MutatingWebhookConfiguration %s: %w", n, err)
		}
	}
	return c.kyvernoServing(ctx)
}

// kyvernoServing asks the admission controller's readiness endpoint, which checks its TLS certificate.
func (c *Cluster) kyvernoServing(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("https://127.0.0.1:%d/health/readiness", c.ports.kyvernoWebhook), nil)
	if err != nil {
		return false, err
	}
	// Kyverno signs its serving certificate with a CA of its own; this only asks whether it answers.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("kyverno readiness: %s", resp.Status)
	}
	return true, nil
}

// kyvernoAdmissionRestarted is readiness after StartComponent: the webhooks are still registered from
// before, so what matters is that the new process serves and leads again.
func (c *Cluster) kyvernoAdmissionRestarted(ctx context.Context) (bool, error) {
	if ok, err := c.kyvernoServing(ctx); !ok {
		return false, err
	}
	return c.leaseHeld(ctx, "kyverno", ComponentKyverno, c.kyverno.admission.podName)
}

// kyvernoBackgroundReady waits for the background controller to lead: only the leader processes
// UpdateRequests, so before that generate and mutate-existing rules do nothing.
func (c *Cluster) kyvernoBackgroundReady(ctx context.Context) (bool, error) {
	return c.leaseHeld(ctx, "kyverno-background-controller", ComponentKyvernoBackground, c.kyverno.background.podName)
}

// leaseHeld reports whether the current run of component holds the named lease. The identity is the same
// across restarts, so the renewal time tells this run from the previous one.
func (c *Cluster) leaseHeld(ctx context.Context, lease, component, identity string) (bool, error) {
	p := c.process(component)
	if p == nil {
		return false, fmt.Errorf("no component %s", component)
	}
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	l, err := c.kube.CoordinationV1().Leases(KyvernoNamespace).Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != identity {
		return false, fmt.Errorf("lease %s not held by %s", lease, identity)
	}
	// Lease times have microsecond precision; the process start is a little before its first renewal.
	if l.Spec.RenewTime == nil || l.Spec.RenewTime.Time.Before(started.Add(-time.Second)) {
		return false, fmt.Errorf("lease %s not renewed since %s started", lease, component)
	}
	return true, nil
}

var clusterPolicyResource = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}

// probeKyvernoPolicy creates a throwaway ClusterPolicy and waits for it to become Ready: that is the end
// of the path a test's own policies take (admission webhook, policy cache, webhook configuration update).
func (c *Cluster) probeKyvernoPolicy(ctx context.Context, a *applier) error {
	const name = "devcluster-readiness-probe"
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kyverno.io/v1",
		"kind":       "ClusterPolicy",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"background": false,
			"rules": []any{map[string]any{
				"name": "probe",
				"match": map[string]any{"any": []any{map[string]any{"resources": map[string]any{
					"kinds": []any{"ConfigMap"}, "names": []any{name},
				}}}},
				"validate": map[string]any{
					"failureAction": "Audit",
					"message":       "devcluster readiness probe",
					"pattern":       map[string]any{"metadata": map[string]any{"name": "?*"}},
				},
			}},
		},
	}}
	// The policy webhook may still be settling right after registration; retry the create itself too.
	err := c.waitFor(ctx, "a Kyverno ClusterPolicy to become Ready", func(ctx context.Context) (bool, error) {
		if _, err := a.apply(ctx, probe); err != nil {
			return false, err
		}
		got, err := a.dyn.Resource(clusterPolicyResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !conditionTrue(got, "Ready") {
			return false, fmt.Errorf("ClusterPolicy %s not Ready yet", name)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	err = a.dyn.Resource(clusterPolicyResource).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func conditionTrue(obj *unstructured.Unstructured, condType string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condType && m["status"] == "True" {
			return true
		}
	}
	return false
}
