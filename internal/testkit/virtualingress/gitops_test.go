package virtualingress

import "testing"

// A tenant Service without a name carries none, so that generateName applies.
func TestTenantServiceLeavesAnEmptyNameOut(t *testing.T) {
	named := TenantService("ns", "a1", map[string]string{"k": "v"})
	if named.GetName() != "a1" || named.GetNamespace() != "ns" || named.GetLabels()["k"] != "v" {
		t.Fatalf("named Service: %v", named.Object["metadata"])
	}
	unnamed := TenantService("ns", "", nil)
	if _, ok := unnamed.Object["metadata"].(map[string]any)["name"]; ok {
		t.Fatalf("an empty name was kept: %v", unnamed.Object["metadata"])
	}
}
