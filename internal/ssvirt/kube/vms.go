package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// VirtualMachineGVK is KubeVirt's VirtualMachine.
var VirtualMachineGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachine"}

// LabelTemplateInstanceOwner is the label OpenShift's template controller puts on everything it makes from a
// TemplateInstance, holding the instance's UID. The VMs of vApps are cached by it: the template controller makes
// them, so they carry none of ssvirt-api's labels.
const LabelTemplateInstanceOwner = "template.openshift.io/template-instance-owner"

// KubeVirt's run strategies that ssvirt-api writes, and the printable statuses its power actions wait for.
const (
	RunStrategyAlways = "Always"
	RunStrategyHalted = "Halted"
	StatusRunning     = "Running"
	StatusStopped     = "Stopped"
)

// ErrNoVM: no VM made by a vApp has that id.
var ErrNoVM = errors.New("no such VM")

// VM is what ssvirt-api reads of a VirtualMachine.
type VM struct {
	UID, Name, Namespace, ResourceVersion string
	// RunStrategy is spec.runStrategy, or what the older spec.running means (Always or Halted).
	RunStrategy string
	// PrintableStatus and Ready are KubeVirt's status.printableStatus and status.ready.
	PrintableStatus string
	Ready           bool
	// Generation is the spec's; ObservedGeneration the one KubeVirt's controller last acted on (0 if it does not
	// say).
	Generation, ObservedGeneration int64
	CreatedAt                      time.Time
}

func vmOf(u *unstructured.Unstructured) VM {
	v := VM{
		UID: string(u.GetUID()), Name: u.GetName(), Namespace: u.GetNamespace(), ResourceVersion: u.GetResourceVersion(),
		Generation: u.GetGeneration(), CreatedAt: u.GetCreationTimestamp().UTC(),
	}
	v.RunStrategy, _, _ = unstructured.NestedString(u.Object, "spec", "runStrategy")
	if running, ok, _ := unstructured.NestedBool(u.Object, "spec", "running"); ok && v.RunStrategy == "" {
		v.RunStrategy = RunStrategyHalted
		if running {
			v.RunStrategy = RunStrategyAlways
		}
	}
	v.PrintableStatus, _, _ = unstructured.NestedString(u.Object, "status", "printableStatus")
	v.Ready, _, _ = unstructured.NestedBool(u.Object, "status", "ready")
	v.ObservedGeneration, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return v
}

// Reports says whether the VM's controller reports it running and ready (on) or stopped (off) for generation
// or a later one of its spec. A controller that reports no observed generation is taken at its word.
func (v VM) Reports(on bool, generation int64) bool {
	if v.ObservedGeneration != 0 && v.ObservedGeneration < generation {
		return false
	}
	if on {
		return v.PrintableStatus == StatusRunning && v.Ready
	}
	return v.PrintableStatus == StatusStopped && !v.Ready
}

func newVM() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(VirtualMachineGVK)
	return u
}

// trimVM keeps of a cached VirtualMachine what ssvirt-api reads: no VM template (which may hold cloud-init
// secrets), no annotations (kubectl's last-applied copy holds the same), no managed fields.
func trimVM(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	keep := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
			"deletionTimestamp", "labels", "ownerReferences"} {
			if v, ok := md[k]; ok {
				m[k] = v
			}
		}
		keep["metadata"] = m
	}
	spec := map[string]any{}
	for _, k := range []string{"running", "runStrategy"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", k); ok {
			spec[k] = v
		}
	}
	keep["spec"] = spec
	status := map[string]any{}
	for _, k := range []string{"printableStatus", "ready", "observedGeneration"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", k); ok {
			status[k] = v
		}
	}
	keep["status"] = status
	u.Object = keep
	return u, nil
}

// indexUID indexes cached VMs by UID: a VM's id in the API.
const indexUID = "metadata.uid"

func uidIndex(o client.Object) []string { return []string{string(o.GetUID())} }

// instanceVMs lists the VirtualMachines a TemplateInstance reports having made (status.objects[].ref), in its
// namespace.
func instanceVMs(ti *unstructured.Unstructured) []types.NamespacedName {
	objs, _, _ := unstructured.NestedSlice(ti.Object, "status", "objects")
	var out []types.NamespacedName
	for _, o := range objs {
		ref, _, _ := unstructured.NestedStringMap(asMap(o), "ref")
		gv, err := schema.ParseGroupVersion(ref["apiVersion"])
		if err != nil || gv.Group != VirtualMachineGVK.Group || ref["kind"] != VirtualMachineGVK.Kind || ref["name"] == "" {
			continue
		}
		// The template controller makes everything in the instance's namespace; a ref elsewhere is not the vApp's.
		if ns := ref["namespace"]; ns != "" && ns != ti.GetNamespace() {
			continue
		}
		out = append(out, types.NamespacedName{Namespace: ti.GetNamespace(), Name: ref["name"]})
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// VAppVMs lists the VMs of vApp app, from the cache: those its TemplateInstance reports having made and that
// carry its UID in LabelTemplateInstanceOwner. A VM is never looked up by a name a caller gives.
func (k *Cluster) VAppVMs(ctx context.Context, app store.VApp) ([]VM, error) {
	ti := &unstructured.Unstructured{}
	ti.SetGroupVersionKind(TemplateInstanceGVK)
	if err := k.client.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: InstanceName(app.ID)}, ti); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	var out []VM
	for _, key := range instanceVMs(ti) {
		u := newVM()
		if err := k.client.Get(ctx, key, u); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("reading VirtualMachine %s: %w", key, err)
			}
			continue
		}
		if u.GetLabels()[LabelTemplateInstanceOwner] != string(ti.GetUID()) {
			continue
		}
		out = append(out, vmOf(u))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// VMVApp names the vApp whose TemplateInstance made the VM with UID uid, from the cache. The caller must still
// find the VM among that vApp's VMs (VAppVMs), in the caller's scope.
func (k *Cluster) VMVApp(ctx context.Context, uid string) (string, error) {
	vm, err := k.cachedVM(ctx, uid)
	if err != nil {
		return "", err
	}
	owner := vm.GetLabels()[LabelTemplateInstanceOwner]
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(TemplateInstanceGVK.GroupVersion().WithKind("TemplateInstanceList"))
	if err := k.client.List(ctx, list, client.InNamespace(vm.GetNamespace())); err != nil {
		return "", err
	}
	for _, ti := range list.Items {
		if string(ti.GetUID()) == owner && ti.GetLabels()[LabelVAppID] != "" {
			return ti.GetLabels()[LabelVAppID], nil
		}
	}
	return "", ErrNoVM
}

func (k *Cluster) cachedVM(ctx context.Context, uid string) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(VirtualMachineGVK.GroupVersion().WithKind("VirtualMachineList"))
	if err := k.client.List(ctx, list, client.MatchingFields{indexUID: uid}); err != nil {
		return nil, err
	}
	if len(list.Items) != 1 {
		return nil, ErrNoVM
	}
	return &list.Items[0], nil
}
