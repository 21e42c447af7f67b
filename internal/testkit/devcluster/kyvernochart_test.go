package devcluster

import (
	"fmt"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// TestKyvernoNodeValuesCoverEveryImage renders Kyverno's chart, hooks included, with the values the node installs it
// with: every container of every Deployment, Job and Pod runs one of the images packed from the built binaries, at
// the module's version, never pulled (no registry is reachable), and the admission controller has two replicas. A
// chart bump that adds an image fails here rather than as an ErrImageNeverPull on the node.
func TestKyvernoNodeValuesCoverEveryImage(t *testing.T) {
	modDir := pinnedKyvernoDir(t)
	ch, err := loadChart(filepath.Join(modDir, "charts", "kyverno"))
	if err != nil {
		t.Fatal(err)
	}
	version := ch.Metadata.AppVersion
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	values, err := kyvernoNodeValues(root, version)
	if err != nil {
		t.Fatal(err)
	}
	// The users' memory limit for the background controller (KyvernoValuesFile), as the chart must carry it.
	backgroundMemory, _, _ := unstructured.NestedString(values, "backgroundController", "resources", "limits", "memory")
	rel, err := renderRelease(ch, "kyverno", KyvernoNamespace, values)
	if err != nil {
		t.Fatal(err)
	}
	packed := map[string]bool{}
	for _, img := range kyvernoImages {
		packed[img.registry+"/"+img.repository+":"+version] = true
	}
	manifests := []string{rel.Manifest}
	for _, h := range rel.Hooks {
		manifests = append(manifests, h.Manifest)
	}
	containers := 0
	for _, m := range manifests {
		objs, err := decodeObjects([]byte(m))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			spec := podSpecOf(o)
			if spec == nil {
				continue
			}
			if o.GetKind() == "Deployment" && o.GetName() == "kyverno-admission-controller" {
				// Decoded from YAML as JSON does, so a number is a float64.
				if r, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas"); fmt.Sprint(r) != fmt.Sprint(kyvernoAdmissionReplicas) {
					t.Errorf("admission controller replicas %v, want %d", r, kyvernoAdmissionReplicas)
				}
			}
			if o.GetKind() == "Deployment" && o.GetName() == "kyverno-background-controller" {
				list, _, _ := unstructured.NestedSlice(spec, "containers")
				got, _, _ := unstructured.NestedString(list[0].(map[string]any), "resources", "limits", "memory")
				if backgroundMemory == "" || got != backgroundMemory {
					t.Errorf("background controller memory limit %q, want %q from %s", got, backgroundMemory, KyvernoValuesFile)
				}
			}
			for _, field := range []string{"initContainers", "containers"} {
				list, _, _ := unstructured.NestedSlice(spec, field)
				for _, c := range list {
					c, _ := c.(map[string]any)
					containers++
					image, _ := c["image"].(string)
					policy, _ := c["imagePullPolicy"].(string)
					if !packed[image] || policy != "Never" {
						t.Errorf("%s %s container %v: image %q pull policy %q, want one of the packed images, never pulled",
							o.GetKind(), o.GetName(), c["name"], image, policy)
					}
				}
			}
		}
	}
	if containers < len(kyvernoImages) {
		t.Errorf("only %d containers rendered", containers)
	}
}

// podSpecOf is the Pod spec of a Pod, or of the template of a Deployment or Job; nil for other kinds.
func podSpecOf(o *unstructured.Unstructured) map[string]any {
	var path []string
	switch o.GetKind() {
	case "Pod":
		path = []string{"spec"}
	case "Deployment", "Job", "StatefulSet", "DaemonSet":
		path = []string{"spec", "template", "spec"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		return nil
	}
	spec, _, _ := unstructured.NestedMap(o.Object, path...)
	return spec
}
