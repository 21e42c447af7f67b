package render

import (
	"flag"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Container is one container, or init container, of a rendered Pod or Pod template.
type Container struct {
	// Object is the Pod, or the workload whose template holds the container.
	Object *unstructured.Unstructured
	// ServiceAccount is the Pod's.
	ServiceAccount string
	Name, Image    string
	Init           bool
	Args           []string
}

// Containers lists the containers of every Pod and Pod template in docs, init containers included.
func Containers(docs []Document) []Container {
	var out []Container
	for _, d := range docs {
		pod, found, _ := unstructured.NestedMap(d.Object.Object, "spec", "template", "spec")
		if !found && d.Object.GetKind() == "Pod" {
			pod, found, _ = unstructured.NestedMap(d.Object.Object, "spec")
		}
		if !found {
			continue
		}
		sa, _, _ := unstructured.NestedString(pod, "serviceAccountName")
		for _, field := range []string{"initContainers", "containers"} {
			list, _, _ := unstructured.NestedSlice(pod, field)
			for _, c := range list {
				m, _ := c.(map[string]any)
				name, _, _ := unstructured.NestedString(m, "name")
				image, _, _ := unstructured.NestedString(m, "image")
				args, _, _ := unstructured.NestedStringSlice(m, "args")
				out = append(out, Container{
					Object: d.Object, ServiceAccount: sa, Name: name, Image: image, Init: field == "initContainers", Args: args,
				})
			}
		}
	}
	return out
}

// String names the container for test failures.
func (c Container) String() string {
	return fmt.Sprintf("%s %s container %s", c.Object.GetKind(), c.Object.GetName(), c.Name)
}

// ParseArgs parses args with fs as the binary does, except that nothing is left over: an unknown flag or a stray
// argument is an error, so a chart cannot pass what the binary would ignore.
func ParseArgs(fs *flag.FlagSet, args []string) error {
	fs.Init(fs.Name(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if rest := fs.Args(); len(rest) > 0 {
		return fmt.Errorf("arguments %q are no flags", rest)
	}
	return nil
}
