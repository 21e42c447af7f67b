package openshiftscc

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// Pod is one Pod a rendered object makes: a Pod itself (helm test Pods), or the template of a Deployment,
// DaemonSet, StatefulSet, ReplicaSet, Job or CronJob.
type Pod struct {
	// Object is the rendered object, named in failures.
	Object *unstructured.Unstructured
	Spec   corev1.PodSpec
}

func (p Pod) String() string { return p.Object.GetKind() + " " + p.Object.GetName() }

// Pods lists the Pods of a render.
func Pods(docs []render.Document) ([]Pod, error) {
	var out []Pod
	for _, d := range docs {
		var path []string
		switch d.Object.GetKind() {
		case "Pod":
			path = []string{"spec"}
		case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job":
			path = []string{"spec", "template", "spec"}
		case "CronJob":
			path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
		default:
			continue
		}
		m, found, err := unstructured.NestedMap(d.Object.Object, path...)
		if err != nil || !found {
			return nil, fmt.Errorf("%s %s: no pod spec at %v", d.Object.GetKind(), d.Object.GetName(), path)
		}
		p := Pod{Object: d.Object}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, &p.Spec, true); err != nil {
			return nil, fmt.Errorf("%s %s: %w", d.Object.GetKind(), d.Object.GetName(), err)
		}
		out = append(out, p)
	}
	return out, nil
}
