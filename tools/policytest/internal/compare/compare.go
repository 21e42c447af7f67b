// Package compare is the compare verb (make parity): it runs the same writes through both policy engines of the
// chart and fails where their outputs differ.
package compare

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/junit"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/policysim"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/results"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/textdiff"
)

type compareOptions struct {
	creates   []string
	updates   []string
	services  []string
	values    []string
	chart     string
	junitFile string
	show      bool
}

// NewCommand is the compare verb.
func NewCommand() *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare [-f sources.yaml] [-u updated.yaml] [-s services.yaml] [--values f]",
		Short: "Run VirtualIngresses and VirtualHTTPRoutes through both policy engines (ClusterPolicy and CEL) and fail where they differ",
		Long: `Renders the chart once with policy.engine=clusterPolicy and once with policy.engine=generatingPolicy (both
over --values), and runs every VirtualIngress and VirtualHTTPRoute through each engine in-process with Kyverno's own
engines, on a simulated cluster holding the objects of -s: a CREATE for those of -f, an UPDATE for those of -u (the
stored object is the file's, status included, as in kyverno test). A file may hold either kind; each object goes
through the policies of its own kind. For each it compares the stored object (status) and the generated Ingresses or
HTTPRoutes, ignoring only Kyverno's bookkeeping on generated objects (generate.kyverno.io/* labels and
app.kubernetes.io/managed-by=kyverno), and prints a unified diff (clusterPolicy -> generatingPolicy) where they
differ. --show prints both engines' output for every case.
With VirtualHTTPRoutes among the inputs, both renders set gatewayAPI.routes to true unless --values set it: the
chart's auto renders the route policies only on a cluster that serves HTTPRoutes.
Defaults: when neither -f nor -u is given, -f fixtures/examples/virtualingresses.yaml fixtures/virtualingresses/*.yaml
fixtures/examples/virtualhttproutes.yaml and the files of fixtures/virtualhttproutes/*.yaml without a status, and -u
fixtures/virtualingresses/updates/*.yaml, the files of fixtures/virtualhttproutes/*.yaml with a status (stored
objects) and fixtures/virtualhttproutes/updates/*.yaml; without -s, -s fixtures/clusters/tenant-root.yaml (pass an
empty file for a cluster without Services).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := defaultCompareOptions("")
			if err != nil {
				return err
			}
			if len(o.creates) == 0 && len(o.updates) == 0 {
				o.creates, o.updates = d.creates, d.updates
			}
			if len(o.services) == 0 {
				o.services = d.services
			}
			return runCompare(cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringArrayVarP(&o.creates, "filename", "f", nil, "YAML file of VirtualIngresses and VirtualHTTPRoutes to create (repeatable)")
	cmd.Flags().StringArrayVarP(&o.updates, "updates", "u", nil, "YAML file of stored VirtualIngresses and VirtualHTTPRoutes to write again, as an UPDATE (repeatable)")
	cmd.Flags().StringArrayVarP(&o.services, "services", "s", nil, "YAML file of the Services and Namespaces (or a kyverno test ClusterResource) (repeatable)")
	cmd.Flags().StringArrayVar(&o.values, "values", nil, "values file for the chart, used for both engines (repeatable)")
	cmd.Flags().StringVar(&o.chart, "chart", "charts/virtual-ingress", "chart directory")
	cmd.Flags().StringVar(&o.junitFile, "junit", "", "also write the results as JUnit XML to this file")
	cmd.Flags().BoolVar(&o.show, "show", false, "print both engines' output for every case, not only a diff for those that differ")
	return cmd
}

// engineOutput is what one engine makes of one write, normalised for comparison.
type engineOutput struct {
	yaml string
	err  error
}

func runCompare(out io.Writer, o compareOptions) error {
	in, err := policysim.ReadInputs(slices.Concat(o.creates, o.updates), o.services, true)
	if err != nil {
		return err
	}
	extra, err := policysim.EnablingValues(o.values, in)
	if err != nil {
		return err
	}
	updates := map[string]bool{}
	for _, f := range o.updates {
		updates[f] = true
	}
	engines := []string{policyengine.ClusterPolicy, policyengine.GeneratingPolicy}
	parts := map[string]policysim.ChartParts{}
	clusters := map[string]policysim.Cluster{}
	for _, e := range engines {
		p, err := policysim.RenderEngine(o.chart, o.values, extra, e)
		if err != nil {
			return err
		}
		// Each engine's render must take every input, so that no case reads as an engine's failure. The admission
		// policies are the same for both engines and are not what is compared: a fixture they refuse (status written
		// outside the served namespaces) still shows that neither engine acts there.
		if err := policysim.CheckSources(p, in, false); err != nil {
			return fmt.Errorf("policy.engine=%s: %w", e, err)
		}
		c, err := policysim.NewCluster(p, in)
		if err != nil {
			return err
		}
		parts[e], clusters[e] = p, c
	}
	var tally results.Tally
	suite := junit.Suite{Name: "parity"}
	for _, src := range in.Sources {
		operation := kyvernov1.Create
		if updates[src.File] {
			operation = kyvernov1.Update
		}
		outputs := map[string]engineOutput{}
		for _, e := range engines {
			adm, err := policysim.Admit(parts[e], clusters[e], src.Obj, operation)
			if err != nil {
				outputs[e] = engineOutput{err: err}
				continue
			}
			y, err := normalisedOutput(adm)
			outputs[e] = engineOutput{yaml: y, err: err}
		}
		tc := compareCase(src, operation, outputs[policyengine.ClusterPolicy], outputs[policyengine.GeneratingPolicy], o.show)
		tally.Add(tc)
		suite.Cases = append(suite.Cases, tc)
		results.Report(out, tc, tc.Name)
	}
	return tally.Finish(out, o.junitFile, []junit.Suite{suite})
}

func compareCase(src policysim.InputObject, operation kyvernov1.AdmissionOperation, cp, cel engineOutput, show bool) junit.Case {
	tc := junit.Case{
		Name:      fmt.Sprintf("%s %s (%s)", operation, src.Name(), src.File),
		Classname: "parity",
	}
	switch {
	case cp.err != nil || cel.err != nil:
		tc.Failure = "an engine failed on it"
		tc.Details = fmt.Sprintf("%s: %v\n%s: %v\n", policyengine.ClusterPolicy, cp.err, policyengine.GeneratingPolicy, cel.err)
	case cp.yaml != cel.yaml:
		tc.Failure = "the engines differ (- " + policyengine.ClusterPolicy + ", + " + policyengine.GeneratingPolicy + ")"
		tc.Details = textdiff.Unified(policyengine.ClusterPolicy, policyengine.GeneratingPolicy, cp.yaml, cel.yaml)
	}
	if show && cp.err == nil && cel.err == nil {
		text := "# " + policyengine.ClusterPolicy + "\n" + cp.yaml + "# " + policyengine.GeneratingPolicy + "\n" + cel.yaml
		if tc.Failed() {
			tc.Details += "\n" + text
		} else {
			tc.Output = text
		}
	}
	return tc
}

// normalisedOutput is the stored source object followed by the generated objects (sorted by kind, namespace and
// name), as YAML documents, with Kyverno's bookkeeping on generated objects removed: the generate.kyverno.io/*
// labels and app.kubernetes.io/managed-by, which both engines set to kyverno on a cluster (over a value copied from
// the source object) but only the ClusterPolicy engine sets in the CLI. Nothing else is dropped: annotations are compared as generated (the
// CEL engine runs through the CLI's context provider that keeps them, see kyvernosim.ApplyCEL).
func normalisedOutput(adm policysim.Admission) (string, error) {
	generated := make([]*unstructured.Unstructured, 0, len(adm.Generated))
	for _, g := range adm.Generated {
		generated = append(generated, policysim.WithoutKyvernoBookkeeping(g))
	}
	sort.Slice(generated, func(i, j int) bool { return objectKey(generated[i]) < objectKey(generated[j]) })
	var b strings.Builder
	for i, o := range append([]*unstructured.Unstructured{adm.Stored}, generated...) {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(data)
	}
	return b.String(), nil
}

func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}
