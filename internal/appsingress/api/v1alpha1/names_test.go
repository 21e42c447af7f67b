package v1alpha1_test

import (
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// taken are the resource names, short names and categories that the platforms this operator runs beside define, by
// owner: `kubectl get <name>` must keep meaning theirs. kubectl expands a category before it resolves a resource, so
// a category that equals one of these names hides the other kind; a short name or plural that equals one makes kubectl
// pick one of the two.
var taken = map[string][]string{
	"HyperShift (hypershift.openshift.io)": {
		"hostedclusters", "hostedcluster", "hc", "hcs",
		"nodepools", "nodepool", "np", "nps",
		"hostedcontrolplanes", "hostedcontrolplane", "hcp", "hcps",
		"certificatesigningrequestapprovals", "certificatesigningrequestapproval",
		"awsendpointservices", "awsendpointservice", "controlplanecomponents", "controlplanecomponent",
	},
	"Cluster API, which HyperShift installs": {
		"cluster-api", "clusters", "cluster", "cl", "machines", "machine", "ma", "machinesets", "machineset", "ms",
		"machinedeployments", "machinedeployment", "md", "machinehealthchecks", "machinehealthcheck", "mhc",
	},
	"OpenShift": {
		"routes", "route", "ingresscontrollers", "ingresscontroller", "dnses", "dns", "dnsrecords", "dnsrecord",
		"clusteroperators", "clusteroperator", "co", "clusterversions", "clusterversion", "projects", "project",
		"securitycontextconstraints", "scc",
	},
	"Kubernetes": {"all", "ingresses", "ingress", "ing", "services", "service", "svc", "endpoints", "ep"},
	"MetalLB":    {"ipaddresspools", "ipaddresspool", "l2advertisements", "l2advertisement", "bgpadvertisements"},
	"KubeVirt":   {"virtualmachines", "virtualmachine", "vm", "vms", "virtualmachineinstances", "vmi", "vmis"},
}

// The AppsIngress CRD claims no name, short name or category that one of the platforms around it defines.
func TestNamesCollideWithNothingAround(t *testing.T) {
	b, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	n := crd.Spec.Names
	claimed := append([]string{n.Plural, n.Singular, strings.ToLower(n.Kind)}, n.ShortNames...)
	claimed = append(claimed, n.Categories...)
	if len(n.ShortNames) == 0 || len(n.Categories) == 0 {
		t.Fatalf("names %+v: the short name and category are part of the API", n)
	}
	for owner, names := range taken {
		for _, name := range names {
			for _, c := range claimed {
				if c == name {
					t.Errorf("the CRD claims %q, which %s defines", c, owner)
				}
			}
		}
	}
}
