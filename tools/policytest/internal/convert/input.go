package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

var (
	ingressGVK        = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}
	virtualIngressGVK = v1alpha1.GroupVersion.WithKind("VirtualIngress")
)

// convertSource is one Ingress or VirtualIngress to convert.
type convertSource struct {
	where string // file and document (and List item) it came from, for error messages
	obj   sourceObject
}

// sourceObject is an Ingress or a VirtualIngress, read as a VirtualIngress: its spec is an Ingress's, except that a
// Service backend may give matchLabels instead of a name (the API's Go type). It is decoded strictly: a field this
// type does not know would otherwise vanish from the routes without a note.
type sourceObject struct {
	APIVersion string                      `json:"apiVersion"`
	Kind       string                      `json:"kind"`
	Metadata   metav1.ObjectMeta           `json:"metadata"`
	Spec       v1alpha1.VirtualIngressSpec `json:"spec"`
	// What a controller or the policies wrote (kubectl get -o yaml has it): nothing to convert.
	Status json.RawMessage `json:"status,omitempty"`
}

// id is how notes and errors name the source: namespace/name, or the name alone when the file gives no namespace.
func (s convertSource) id() string {
	if s.obj.Metadata.Namespace == "" {
		return s.obj.Metadata.Name
	}
	return s.obj.Metadata.Namespace + "/" + s.obj.Metadata.Name
}

const stdinFile = "-"

// readConvertSources reads every document of the files ("-" is stdin). A List (kubectl get -o yaml prints one)
// contributes its items. Unlike preview's reader it leaves a missing namespace missing: the routes are applied
// where the sources would have been.
func readConvertSources(stdin io.Reader, files []string) ([]convertSource, error) {
	var sources []convertSource
	readStdin := false
	names := make([]string, 0, len(files))
	for _, file := range files {
		var read []convertSource
		var err error
		if file == stdinFile {
			if readStdin {
				return nil, errors.New("-f -: stdin can be read only once")
			}
			readStdin = true
			names = append(names, "stdin")
			read, err = readConvertFile("stdin", stdin)
		} else {
			f, openErr := os.Open(file)
			if openErr != nil {
				return nil, openErr
			}
			names = append(names, file)
			read, err = readConvertFile(file, f)
			_ = f.Close()
		}
		if err != nil {
			return nil, err
		}
		sources = append(sources, read...)
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no Ingress or VirtualIngress in %s", strings.Join(names, ", "))
	}
	return sources, nil
}

// readConvertFile numbers documents as readInputFile does, so that both commands point at the same document.
func readConvertFile(file string, r io.Reader) ([]convertSource, error) {
	var sources []convertSource
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for index := 1; ; index++ {
		var content map[string]any
		err := dec.Decode(&content)
		if errors.Is(err, io.EOF) {
			return sources, nil
		}
		where := fmt.Sprintf("%s: document %d", file, index)
		if err != nil {
			return nil, fmt.Errorf("%s: not valid YAML: %w", where, err)
		}
		if len(content) == 0 {
			continue
		}
		items, isList, err := listItems(where, content)
		if err != nil {
			return nil, err
		}
		if !isList {
			s, err := decodeSource(where, content)
			if err != nil {
				return nil, err
			}
			sources = append(sources, s)
			continue
		}
		for i, item := range items {
			s, err := decodeSource(fmt.Sprintf("%s, item %d", where, i+1), item)
			if err != nil {
				return nil, err
			}
			sources = append(sources, s)
		}
	}
}

// listItems returns the items of a List, IngressList or VirtualIngressList document. Items of a typed list may
// leave out apiVersion and kind (the API server's own lists do); they get the list's.
func listItems(where string, content map[string]any) ([]map[string]any, bool, error) {
	apiVersion, _ := content["apiVersion"].(string)
	kind, _ := content["kind"].(string)
	itemKind := ""
	switch {
	case apiVersion == "v1" && kind == "List":
	case apiVersion == ingressGVK.GroupVersion().String() && kind == ingressGVK.Kind+"List":
		itemKind = ingressGVK.Kind
	case apiVersion == virtualIngressGVK.GroupVersion().String() && kind == virtualIngressGVK.Kind+"List":
		itemKind = virtualIngressGVK.Kind
	default:
		return nil, false, nil
	}
	raw, _ := content["items"].([]any)
	items := make([]map[string]any, 0, len(raw))
	for i, r := range raw {
		item, ok := r.(map[string]any)
		if !ok {
			return nil, true, fmt.Errorf("%s, item %d: a %T, not an object", where, i+1, r)
		}
		if itemKind != "" {
			if _, ok := item["kind"]; !ok {
				item["apiVersion"], item["kind"] = apiVersion, itemKind
			}
		}
		items = append(items, item)
	}
	return items, true, nil
}

func decodeSource(where string, content map[string]any) (convertSource, error) {
	apiVersion, _ := content["apiVersion"].(string)
	kind, _ := content["kind"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if gvk != ingressGVK && gvk != virtualIngressGVK {
		return convertSource{}, fmt.Errorf("%s: apiVersion %q kind %q: convert reads only Ingress (%s) and VirtualIngress (%s), or a List of them",
			where, apiVersion, kind, ingressGVK.GroupVersion(), virtualIngressGVK.GroupVersion())
	}
	data, err := json.Marshal(content)
	if err != nil {
		return convertSource{}, fmt.Errorf("%s: %w", where, err)
	}
	s := convertSource{where: where}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s.obj); err != nil {
		return convertSource{}, fmt.Errorf("%s: %s is not one the API server would accept: %w", where, kind, err)
	}
	if s.obj.Metadata.Name == "" {
		return convertSource{}, fmt.Errorf("%s: %s has no metadata.name", where, kind)
	}
	return s, nil
}
