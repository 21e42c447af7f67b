package kube

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func vmObject(spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "vm", "namespace": "ns", "uid": "u-1", "generation": int64(4),
			"annotations":   map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{secret}"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": spec, "status": status,
	}}
	return u
}

func TestVMOfAndReports(t *testing.T) {
	cases := []struct {
		name         string
		spec, status map[string]any
		strategy     string
		on, off      bool
	}{
		{"running and ready", map[string]any{"runStrategy": "Always"},
			map[string]any{"printableStatus": "Running", "ready": true, "observedGeneration": int64(4)}, "Always", true, false},
		{"running, not ready yet", map[string]any{"runStrategy": "Always"},
			map[string]any{"printableStatus": "Running", "observedGeneration": int64(4)}, "Always", false, false},
		{"stopped", map[string]any{"running": false},
			map[string]any{"printableStatus": "Stopped", "observedGeneration": int64(4)}, "Halted", false, true},
		// The status is of an older spec: it says nothing about what the action asked for.
		{"stale stopped", map[string]any{"runStrategy": "Halted"},
			map[string]any{"printableStatus": "Stopped", "observedGeneration": int64(3)}, "Halted", false, false},
		{"no observed generation reported", map[string]any{"running": true},
			map[string]any{"printableStatus": "Running", "ready": true}, "Always", true, false},
		{"stopping", map[string]any{"runStrategy": "Halted"},
			map[string]any{"printableStatus": "Stopping", "observedGeneration": int64(4)}, "Halted", false, false},
	}
	for _, c := range cases {
		vm := vmOf(vmObject(c.spec, c.status))
		if vm.RunStrategy != c.strategy || vm.UID != "u-1" || vm.Generation != 4 {
			t.Errorf("%s: %+v", c.name, vm)
		}
		if on, off := vm.Reports(true, 4), vm.Reports(false, 4); on != c.on || off != c.off {
			t.Errorf("%s: reports on %v off %v, want %v %v", c.name, on, off, c.on, c.off)
		}
	}
}

// The cache keeps what power actions read, and nothing of the VM's definition or annotations.
func TestTrimVM(t *testing.T) {
	u := vmObject(map[string]any{"runStrategy": "Always", "template": map[string]any{"spec": map[string]any{"volumes": "cloud-init with a password"}}},
		map[string]any{"printableStatus": "Running", "ready": true, "observedGeneration": int64(4), "conditions": []any{"x"}})
	out, err := trimVM(u)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	want := map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "vm", "namespace": "ns", "uid": "u-1", "generation": int64(4)},
		"spec":     map[string]any{"runStrategy": "Always"},
		"status":   map[string]any{"printableStatus": "Running", "ready": true, "observedGeneration": int64(4)},
	}
	if !reflect.DeepEqual(got.Object, want) {
		t.Errorf("trimmed: %v", got.Object)
	}
}

// Only VirtualMachines in the instance's own namespace are the vApp's.
func TestInstanceVMs(t *testing.T) {
	ref := func(apiVersion, kind, ns, name string) any {
		return map[string]any{"ref": map[string]any{"apiVersion": apiVersion, "kind": kind, "namespace": ns, "name": name, "uid": "x"}}
	}
	ti := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "vdc-a", "name": "vapp-1"}}}
	_ = unstructured.SetNestedSlice(ti.Object, []any{
		ref("kubevirt.io/v1", "VirtualMachine", "vdc-a", "web"),
		ref("kubevirt.io/v1", "VirtualMachine", "", "db"),
		ref("kubevirt.io/v1", "VirtualMachine", "vdc-b", "elsewhere"),
		ref("v1", "ConfigMap", "vdc-a", "config"),
		ref("example.com/v1", "VirtualMachine", "vdc-a", "impostor"),
		"not a map",
	}, "status", "objects")
	got := instanceVMs(ti)
	want := []types.NamespacedName{{Namespace: "vdc-a", Name: "web"}, {Namespace: "vdc-a", Name: "db"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
