// Package chart checks renders of the ssvirt chart that golden files cannot: values it must refuse, and what
// goes together.
package chart

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

const chartDir = "../../../charts/ssvirt"

// More than one replica needs PostgreSQL; SQLite is refused with a message that says why.
func TestReplicasNeedPostgres(t *testing.T) {
	for _, n := range []int{2, 5} {
		_, err := render.Render(chartDir, nil, map[string]any{"replicaCount": n})
		if err == nil || !strings.Contains(err.Error(), "replicaCount > 1 needs database.driver=postgres") {
			t.Errorf("replicaCount %d on SQLite: %v", n, err)
		}
	}
	if _, err := render.Render(chartDir, nil, map[string]any{"replicaCount": 0}); err == nil {
		t.Error("replicaCount 0 was accepted")
	}
}

// With PostgreSQL, replicas elect a leader: the flag, a rolling update, the Lease rights and a drain before a Pod
// stops come together; with SQLite none of them, and the one process is replaced, not rolled.
func TestLeaderElectionWithPostgres(t *testing.T) {
	postgres := map[string]any{"database": map[string]any{"driver": "postgres", "existingSecret": "db"}, "replicaCount": 3}
	for _, c := range []struct {
		name     string
		values   map[string]any
		elect    bool
		strategy string
		replicas string
	}{
		{"sqlite", nil, false, "Recreate", "1"},
		{"postgres, 3 replicas", postgres, true, "RollingUpdate", "3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs, err := render.Render(chartDir, nil, c.values)
			if err != nil {
				t.Fatal(err)
			}
			var deployment *unstructured.Unstructured
			leaseRole := false
			for _, d := range docs {
				switch {
				case d.Object.GetKind() == "Deployment":
					deployment = d.Object
				case d.Object.GetKind() == "Role" && strings.Contains(d.YAML, "leases"):
					leaseRole = true
				}
			}
			if deployment == nil {
				t.Fatal("no Deployment")
			}
			replicas, _, _ := unstructured.NestedFieldNoCopy(deployment.Object, "spec", "replicas")
			strategy, _, _ := unstructured.NestedString(deployment.Object, "spec", "strategy", "type")
			containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
			if elect := slices.Contains(args, "--leader-elect"); elect != c.elect || leaseRole != c.elect {
				t.Errorf("--leader-elect %v, Lease Role %v; want %v", elect, leaseRole, c.elect)
			}
			if strategy != c.strategy || fmt.Sprint(replicas) != c.replicas {
				t.Errorf("strategy %s, replicas %v; want %s, %s", strategy, replicas, c.strategy, c.replicas)
			}
			// A rolled Pod serves on while kube-proxy stops routing to it (proven in the node tier's rollout).
			sleep, found, _ := unstructured.NestedFieldNoCopy(containers[0].(map[string]any), "lifecycle", "preStop", "sleep", "seconds")
			if rolls := c.strategy == "RollingUpdate"; found != rolls || rolls && fmt.Sprint(sleep) == "0" {
				t.Errorf("preStop sleep %v (%v) with strategy %s", sleep, found, c.strategy)
			}
		})
	}
}
