package golden

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"
)

// The CEL engine's suites are generated from the ClusterPolicy engine's: every clusterpolicy/<suite>/kyverno-test.yaml
// under the policies directory gets a twin, generatingpolicy/<suite>/kyverno-test.yaml, run against the CEL render
// of the same directory. Both engines thus pass the same results on the same fixtures with the same expected files
// (expected/ is shared: it is the proof that both engines write the same status and generate the same Ingress), and
// a result added for one engine cannot be forgotten for the other. Paths stay as they are: the twin sits at the
// same depth, so ../<policy>.yaml names the CEL engine's file and every other path the same file.
//
// The twin differs from its source only where the CLI asks the CEL policies to be named differently:
//   - metadata.name gets "-cel", so that both suites' results can be told apart;
//   - `rule: <rule>` becomes `is<Kind>: true` for the kind of the named policy in the CEL render (CEL policies have
//     no rules; the CLI matches their results by this flag instead);
//   - a `result: skip` of a GeneratingPolicy (the ClusterPolicy's generate rule skips a VirtualIngress that is not
//     resolved yet) becomes a `result: pass` naming the generatedResource of the suite's first result of that
//     policy that names one. The CLI reports a GeneratingPolicy that generates nothing as a pass without generated
//     resources, not as a skip, and compares nothing then: `result: pass` alone would also pass if an Ingress were
//     generated. Naming a file that holds no Ingress of that VirtualIngress's name makes a generated one fail the
//     lookup ("Resource error"). (A policy skipping the VirtualIngress in its matchConditions instead would leave
//     the CLI with no response at all, printed as "Not found", a failure whatever the expected result; `make
//     parity` also checks that both engines generate nothing for it.)
//
// Everything else is copied, which holds for the CLI of the Kyverno version go.mod pins:
//   - variables: the CLI applies request.operation of a values file to CEL policies too (object and oldObject are
//     both the resource), so an UPDATE suite is one for both engines;
//   - clusterResources: a suite of a GeneratingPolicy that copies annotations must not list any. With them the CLI
//     evaluates CEL policies through its cluster context provider, which in CLI mode drops the annotations of every
//     generated resource (kyverno pkg/cel/libs/context.go, GenerateResources: item.SetAnnotations(nil) when
//     cliEvaluation), and the comparison fails on the annotations the policy does copy. Without them the CLI uses
//     its fake context provider, which keeps the generated object as the generator received it, so the comparison
//     checks the annotations for real. The policy's resource.Get of the VirtualIngress finds nothing there and falls
//     back to the admission request's object, as on a cluster where the write is not stored yet. The ClusterPolicy
//     suite of the generate policy lists none for that reason.
const (
	clusterPolicySuites = "clusterpolicy"
	celSuites           = "generatingpolicy"
)

// celResultFlags is the flag a kyverno test result sets to name a CEL policy of each kind.
var celResultFlags = map[string]string{
	"GeneratingPolicy":      "isGeneratingPolicy",
	"MutatingPolicy":        "isMutatingPolicy",
	"ValidatingPolicy":      "isValidatingPolicy",
	"ImageValidatingPolicy": "isImageValidatingPolicy",
	"DeletingPolicy":        "isDeletingPolicy",
}

// addCELTwins wants the twin of every ClusterPolicy suite under outDir that has a CEL render to run against.
func (p *syncPlan) addCELTwins(outDir string, renders map[string]map[string]renderedPolicy) error {
	from, to := filepath.Join(outDir, clusterPolicySuites), filepath.Join(outDir, celSuites)
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != KyvernoTestFile {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		twin := filepath.Join(to, rel)
		policies, ok := renderAt(renders, filepath.Dir(twin), to)
		if !ok {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		content, err := celTwin(src, generatedPrefix+filepath.ToSlash(path)+" for the CEL engine"+copySuffix, policies)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return p.add(twin, content)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// celTwin writes the twin of a ClusterPolicy suite. It edits the suite line by line, so that the twin keeps the
// layout and the comments of each result, then checks that the lines it wrote parse to the suite it meant.
func celTwin(src []byte, header string, policies map[string]renderedPolicy) ([]byte, error) {
	want, edits, err := celTwinObject(src, policies)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	out.WriteString(header + "\n")
	section, item, leading := "", -1, true
	for _, line := range strings.SplitAfter(string(src), "\n") {
		text := strings.TrimRight(line, "\r\n")
		if leading && (text == "" || strings.HasPrefix(text, "#")) {
			continue // the source's description of itself: the header names it instead
		}
		leading = false
		if text != "" && !strings.ContainsAny(text[:1], " #-") {
			section, _, _ = strings.Cut(text, ":")
		}
		switch {
		case section == "metadata" && strings.HasPrefix(text, "  name:"):
			line = "  name: " + want.Metadata.Name + "\n"
		case section == "results" && len(text) > 2 && (text[:2] == "- " || text[:2] == "  ") && !strings.ContainsAny(text[2:3], " #"):
			if text[:2] == "- " {
				item++
			}
			if item >= len(edits) {
				return nil, errors.New("cannot tell the results apart line by line; write one key per line")
			}
			switch key, _, _ := strings.Cut(text[2:], ":"); key {
			case "rule":
				line = text[:2] + edits[item].flag + ": true\n"
			case "result":
				if gr := edits[item].passWith; gr != "" {
					line = text[:2] + "generatedResource: " + gr + "\n  result: pass\n"
				}
			}
		}
		out.WriteString(line)
	}
	var got, expected map[string]any
	if err := yaml.Unmarshal([]byte(out.String()), &got); err != nil {
		return nil, fmt.Errorf("the twin does not parse (%w); write the suite one key per line", err)
	}
	if err := yaml.Unmarshal(want.raw, &expected); err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(got, expected) {
		return nil, errors.New("the twin written line by line is not the suite it should be; write the suite one key per line, results as a block list")
	}
	return []byte(out.String()), nil
}

type twinEdit struct {
	flag     string // replaces `rule`
	passWith string // the generatedResource of a skip turned pass, or ""
}

type twinSuite struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	raw []byte // the whole twin as JSON
}

// celTwinObject is the twin as an object, and per result what changes.
func celTwinObject(src []byte, policies map[string]renderedPolicy) (twinSuite, []twinEdit, error) {
	var suite map[string]any
	if err := yaml.Unmarshal(src, &suite); err != nil {
		return twinSuite{}, nil, err
	}
	var twin twinSuite
	metadata, _ := suite["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	if name == "" {
		return twinSuite{}, nil, errors.New("no metadata.name")
	}
	twin.Metadata.Name = name + "-cel"
	metadata["name"] = twin.Metadata.Name

	results, _ := suite["results"].([]any)
	firstGenerated := map[string]string{} // policy -> the first generatedResource its results name
	for _, r := range results {
		m, _ := r.(map[string]any)
		policy, _ := m["policy"].(string)
		if gr, ok := m["generatedResource"].(string); ok && firstGenerated[policy] == "" {
			firstGenerated[policy] = gr
		}
	}
	edits := make([]twinEdit, len(results))
	for i, r := range results {
		m, ok := r.(map[string]any)
		if !ok {
			return twinSuite{}, nil, fmt.Errorf("result %d is not a mapping", i+1)
		}
		policy, _ := m["policy"].(string)
		rendered, ok := policies[policy]
		if !ok {
			return twinSuite{}, nil, fmt.Errorf("result %d: the CEL engine renders no policy %q", i+1, policy)
		}
		flag, ok := celResultFlags[rendered.kind]
		if !ok {
			return twinSuite{}, nil, fmt.Errorf("result %d: %s is a %s, not a CEL policy a result can name", i+1, policy, rendered.kind)
		}
		if _, ok := m["rule"]; !ok {
			return twinSuite{}, nil, fmt.Errorf("result %d has no rule to replace with %s", i+1, flag)
		}
		delete(m, "rule")
		m[flag] = true
		edits[i].flag = flag
		if rendered.kind == "GeneratingPolicy" && m["result"] == "skip" {
			if _, ok := m["generatedResource"]; ok {
				return twinSuite{}, nil, fmt.Errorf("result %d is a skip naming a generatedResource", i+1)
			}
			gr := firstGenerated[policy]
			if gr == "" {
				return twinSuite{}, nil, fmt.Errorf("result %d is a skip of %s, which the CEL engine reports as a pass: "+
					"it needs another result of that policy naming a generatedResource without the skipped resource's", i+1, policy)
			}
			m["result"] = "pass"
			m["generatedResource"] = gr
			edits[i].passWith = gr
		}
	}
	raw, err := yaml.Marshal(suite)
	if err != nil {
		return twinSuite{}, nil, err
	}
	twin.raw = raw
	return twin, edits, nil
}
