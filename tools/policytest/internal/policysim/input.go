package policysim

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
)

const defaultNamespace = "default"

var (
	serviceGVK   = kyvernosim.ServiceGVK
	namespaceGVK = kyvernosim.NamespaceGVK
	// kyverno test's cluster state file; -s takes it too (only its resources are read).
	clusterResourceGVK = schema.GroupVersionKind{Group: "cli.kyverno.io", Version: "v1alpha1", Kind: "ClusterResource"}
)

// InputObject is one document of a user's file, with where it came from for error messages.
type InputObject struct {
	File  string
	Index int // 1-based document number in File
	Obj   *unstructured.Unstructured
}

func (o InputObject) Where() string { return fmt.Sprintf("%s: document %d", o.File, o.Index) }

// Name is how results and errors name the object: "VirtualIngress tenant-root/coder".
func (o InputObject) Name() string {
	return o.Obj.GetKind() + " " + o.Obj.GetNamespace() + "/" + o.Obj.GetName()
}

// ReadObjects parses every document of the files and checks each is one of the allowed kinds. Documents are
// numbered as Kubernetes' YAML reader splits them: one holding only comments counts, nothing between two --- does
// not.
func ReadObjects(files []string, allowed ...schema.GroupVersionKind) ([]InputObject, error) {
	var objs []InputObject
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		read, err := readInputFile(file, f, allowed)
		_ = f.Close()
		if err != nil {
			return nil, err
		}
		objs = append(objs, read...)
	}
	return objs, nil
}

func readInputFile(file string, r io.Reader, allowed []schema.GroupVersionKind) ([]InputObject, error) {
	var objs []InputObject
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for index := 1; ; index++ {
		var content map[string]any
		err := dec.Decode(&content)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: not valid YAML: %w", file, index, err)
		}
		if len(content) == 0 {
			continue
		}
		doc := &unstructured.Unstructured{Object: content}
		contents := []map[string]any{content}
		if doc.GroupVersionKind() == clusterResourceGVK {
			// A kyverno test cluster state file (as the policies/ suites use): its resources are the objects.
			items, _, err := unstructured.NestedSlice(content, "spec", "resources")
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: ClusterResource spec.resources: %w", file, index, err)
			}
			contents = contents[:0]
			for _, item := range items {
				m, ok := item.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s: document %d: ClusterResource spec.resources holds a %T, not an object", file, index, item)
				}
				contents = append(contents, m)
			}
		}
		for _, c := range contents {
			in := InputObject{File: file, Index: index, Obj: &unstructured.Unstructured{Object: c}}
			if err := checkKind(in, allowed); err != nil {
				return nil, err
			}
			if in.Obj.GetName() == "" {
				return nil, fmt.Errorf("%s: %s has no metadata.name", in.Where(), in.Obj.GetKind())
			}
			if in.Obj.GroupVersionKind() != namespaceGVK && in.Obj.GetNamespace() == "" {
				// kubectl apply would create it in the context's namespace; CI has no context, so use kubectl's default.
				in.Obj.SetNamespace(defaultNamespace)
			}
			objs = append(objs, in)
		}
	}
}

func checkKind(in InputObject, allowed []schema.GroupVersionKind) error {
	gvk := in.Obj.GroupVersionKind()
	for _, a := range allowed {
		if gvk == a {
			return nil
		}
	}
	want := ""
	for i, a := range allowed {
		if i > 0 {
			want += " or "
		}
		want += a.Kind + " (" + a.GroupVersion().String() + ")"
	}
	return fmt.Errorf("%s: apiVersion %q kind %q: expected %s", in.Where(), in.Obj.GetAPIVersion(), in.Obj.GetKind(), want)
}

// checkUnique rejects two documents for the same object: the second would silently replace the first.
func checkUnique(objs []InputObject) error {
	first := map[string]InputObject{}
	for _, o := range objs {
		key := o.Obj.GroupVersionKind().String() + " " + o.Obj.GetNamespace() + "/" + o.Obj.GetName()
		if prev, dup := first[key]; dup {
			return fmt.Errorf("%s: %s %s/%s is already defined in %s", o.Where(), o.Obj.GetKind(), o.Obj.GetNamespace(), o.Obj.GetName(), prev.Where())
		}
		first[key] = o
	}
	return nil
}

// fakeUID gives an object without a uid a stable one, as the API server would give it a random one: the
// generated Ingress's ownerReference copies it, and preview output must not change from run to run.
func fakeUID(obj *unstructured.Unstructured) {
	if obj.GetUID() != "" {
		return
	}
	key := obj.GroupVersionKind().String() + "/" + obj.GetNamespace() + "/" + obj.GetName()
	obj.SetUID(types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte("policytest-preview:"+key)).String()))
}
