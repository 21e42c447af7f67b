package convert

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/crdschema"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/cmdline"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/golden"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/textdiff"
)

var updateConvert = flag.Bool("update", false, "rewrite the golden files of testdata/convert instead of comparing")

const convertTestdata = "testdata/convert"

// convertCases are the golden cases: testdata/convert/<name>.in.yaml is the input, <name>.out.yaml what convert
// prints on stdout and <name>.stderr what it prints on stderr, followed by the error as main prints it. Rewrite
// them with `go test ./tools/policytest/internal/convert -run Convert -update` and review the diff.
var convertCases = []struct {
	name string
	args []string
}{
	{name: "single-host"},
	{name: "multi-host"},
	{name: "virtualingress"},
	{name: "default-backend"},
	{name: "implementation-specific"},
	{name: "tls-annotations"},
	{name: "resource-backend"},
	{name: "gateway-flag", args: []string{"-gateway", "infra/public"}},
	{name: "error-kind"},
}

// runConvertCommand runs convert as main does, through the root command and its Go-style flags.
func runConvertCommand(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := cmdline.NewRoot(NewCommand())
	root.SetArgs(cmdline.GoStyleFlags(root, append([]string{"convert"}, args...)))
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func convertCase(t *testing.T, name string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runConvertCommand(t, "", append([]string{"-f", filepath.Join(convertTestdata, name+".in.yaml")}, args...)...)
	if err != nil {
		stderr += "policytest: " + err.Error() + "\n"
	}
	return stdout, stderr
}

func TestConvertGolden(t *testing.T) {
	for _, c := range convertCases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr := convertCase(t, c.name, c.args...)
			checkConvertGolden(t, filepath.Join(convertTestdata, c.name+".out.yaml"), stdout)
			checkConvertGolden(t, filepath.Join(convertTestdata, c.name+".stderr"), stderr)
			convertDocuments(t, stdout)
		})
	}
}

func checkConvertGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateConvert {
		if _, err := golden.WriteIfChanged(path, []byte(got)); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tools/policytest/internal/convert -run Convert -update and review the new file)", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (if intended, run go test ./tools/policytest/internal/convert -run Convert -update):\n%s",
			path, textdiff.Unified(path, "got", string(want), got))
	}
}

// A golden file without a case would stay behind unchecked.
func TestConvertGoldenFilesAllHaveACase(t *testing.T) {
	entries, err := os.ReadDir(convertTestdata)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range convertCases {
		for _, ext := range []string{".in.yaml", ".out.yaml", ".stderr"} {
			known[c.name+ext] = true
		}
	}
	for _, e := range entries {
		if !known[e.Name()] {
			t.Errorf("%s/%s belongs to no case of convertCases", convertTestdata, e.Name())
		}
	}
}

// convertDocuments parses convert's stdout: it must be YAML documents, each a VirtualHTTPRoute.
func convertDocuments(t *testing.T, stdout string) []*unstructured.Unstructured {
	t.Helper()
	if stdout == "" {
		return nil
	}
	var docs []*unstructured.Unstructured
	for _, doc := range strings.Split(stdout, "\n---\n") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("output is not YAML documents: %v\n%s", err, stdout)
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() != "virtual-ingress.io/v1alpha1" || u.GetKind() != "VirtualHTTPRoute" {
			t.Fatalf("document is a %s %s:\n%s", u.GetAPIVersion(), u.GetKind(), doc)
		}
		docs = append(docs, u)
	}
	return docs
}

// routeSummary is a route's name, hostnames and rules as "type value -> backend" lines.
func routeSummary(t *testing.T, u *unstructured.Unstructured) (string, []string, []string) {
	t.Helper()
	hosts, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "hostnames")
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	var lines []string
	for _, r := range rules {
		rule := r.(map[string]any)
		matches, refs := rule["matches"].([]any), rule["backendRefs"].([]any)
		if len(matches) != 1 || len(refs) != 1 {
			t.Fatalf("%s: a rule with %d matches and %d backendRefs, want one of each: %v", u.GetName(), len(matches), len(refs), rule)
		}
		path := matches[0].(map[string]any)["path"].(map[string]any)
		ref := refs[0].(map[string]any)
		target := fmt.Sprint(ref["name"])
		if labels, ok := ref["matchLabels"]; ok {
			target = fmt.Sprint(labels)
		}
		lines = append(lines, fmt.Sprintf("%s %s -> %s:%v", path["type"], path["value"], target, ref["port"]))
	}
	return u.GetName(), hosts, lines
}

func TestConvertGroupsRulesByHostAndNamesRoutesApart(t *testing.T) {
	stdout, stderr := convertCase(t, "multi-host")
	type route struct {
		name  string
		hosts []string
		rules []string
	}
	var got []route
	for _, d := range convertDocuments(t, stdout) {
		name, hosts, rules := routeSummary(t, d)
		got = append(got, route{name, hosts, rules})
		if d.GetNamespace() != "" {
			t.Errorf("%s: namespace %q, but the source has none", name, d.GetNamespace())
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d routes, want one per host and one without hostnames:\n%s", len(got), stdout)
	}
	// Rules of the same host, though apart in the Ingress, share a route; the order is the Ingress's.
	if a := got[0]; !slices.Equal(a.hosts, []string{"a.example.com"}) || !slices.Equal(a.rules, []string{"PathPrefix / -> a:80", "PathPrefix /api -> a-api:9000"}) {
		t.Errorf("route of a.example.com: %+v", a)
	}
	if hostless := got[1]; hostless.name != "web" || len(hostless.hosts) != 0 || !slices.Equal(hostless.rules, []string{"Exact /status -> status:8080"}) {
		t.Errorf("route without hostnames: %+v, want the source's name and the host-less rule", hostless)
	}
	// a.example.com and a-example.com would both be web-a-example-com.
	if got[0].name == got[2].name || !strings.HasPrefix(got[0].name, "web-a-example-com-") || !strings.HasPrefix(got[2].name, "web-a-example-com-") {
		t.Errorf("colliding hosts named %s and %s", got[0].name, got[2].name)
	}
	if got[3].name != "web-wildcard-example-com" {
		t.Errorf("wildcard route named %s", got[3].name)
	}
	testfiles.AssertContains(t, stderr, "web: host *.example.com: an Ingress wildcard matches exactly one DNS label",
		`web: parentRefs names the placeholder Gateway "gateway"`)
}

func TestConvertPutsTheDefaultBackendLastInTheRouteWithoutHostnames(t *testing.T) {
	stdout, stderr := convertCase(t, "default-backend")
	docs := convertDocuments(t, stdout)
	if len(docs) != 2 {
		t.Fatalf("%d routes, want the host's and the default one:\n%s", len(docs), stdout)
	}
	name, hosts, rules := routeSummary(t, docs[1])
	if name != "site" || len(hosts) != 0 || !slices.Equal(rules, []string{"PathPrefix / -> fallback:80"}) {
		t.Errorf("last route %s %v %v, want site without hostnames and the catch-all to fallback", name, hosts, rules)
	}
	if _, hosts, _ := routeSummary(t, docs[0]); !slices.Equal(hosts, []string{"www.example.com"}) {
		t.Errorf("first route's hostnames %v: old.example.com has no paths and must get no route", hosts)
	}
	testfiles.AssertContains(t, stderr, "web/site: spec.rules[1] (host old.example.com) has no paths: its requests went to spec.defaultBackend",
		"web/site: spec.defaultBackend became the last rule")
}

// Everything that does not carry over is named, in the document and on stderr.
func TestConvertNamesEveryAnnotationAndTLSEntry(t *testing.T) {
	stdout, stderr := convertCase(t, "tls-annotations")
	for _, want := range []string{"kubernetes.io/ingress.class", "nginx.ingress.kubernetes.io/ssl-redirect",
		"nginx.ingress.kubernetes.io/proxy-body-size", "cert-manager.io/cluster-issuer",
		"spec.tls[0]: TLS for secure.example.com, www.secure.example.com", "Secret secure-tls",
		"spec.tls[1]: TLS for other.example.com", "spec.tls[2]: TLS for every host", "Secret fallback-tls"} {
		if !strings.Contains(stderr, want) || !strings.Contains(stdout, want) {
			t.Errorf("%q is missing from stderr or from the document's comments\nstdout:\n%s\nstderr:\n%s", want, stdout, stderr)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(line, "web/secure: ") {
			t.Errorf("stderr line without the source's namespace/name: %q", line)
		}
		if !strings.Contains(stdout, noteComment+strings.TrimPrefix(line, "web/secure: ")+"\n") {
			t.Errorf("note %q is not a comment of the document", line)
		}
	}
	// The class annotation is listed and still names the Gateway.
	testfiles.AssertContains(t, stdout, "  parentRefs:\n  - name: nginx\n")
}

func TestConvertGatewayFlagNamesTheParentOfEveryRoute(t *testing.T) {
	stdout, stderr := convertCase(t, "gateway-flag", "-gateway", "infra/public")
	docs := convertDocuments(t, stdout)
	if len(docs) != 2 {
		t.Fatalf("%d routes, want one per List item:\n%s", len(docs), stdout)
	}
	for _, d := range docs {
		refs, _, _ := unstructured.NestedSlice(d.Object, "spec", "parentRefs")
		if len(refs) != 1 || refs[0].(map[string]any)["name"] != "public" || refs[0].(map[string]any)["namespace"] != "infra" {
			t.Errorf("%s: parentRefs %v, want infra/public", d.GetName(), refs)
		}
	}
	if strings.Contains(stderr, "parentRefs") {
		t.Errorf("parentRefs noted though --gateway names it:\n%s", stderr)
	}

	stdout, _ = convertCase(t, "gateway-flag", "--gateway=public")
	if !strings.Contains(stdout, "  parentRefs:\n  - name: public\n  rules:") {
		t.Errorf("--gateway without a namespace:\n%s", stdout)
	}
}

func TestConvertReadsStdin(t *testing.T) {
	fromFile, _ := convertCase(t, "single-host")
	stdout, _, err := runConvertCommand(t, testfiles.ReadFile(t, filepath.Join(convertTestdata, "single-host.in.yaml")), "-f", "-")
	if err != nil || stdout != fromFile {
		t.Errorf("-f - (err %v):\n%s", err, textdiff.Unified("file", "stdin", fromFile, stdout))
	}
}

func TestConvertRejectsWhatItCannotConvertAndPrintsNothing(t *testing.T) {
	const ingress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  rules:
  - host: a.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
`
	cases := map[string]struct {
		stdin string
		args  []string
		want  []string
	}{
		"unparsable YAML": {
			stdin: ingress + "---\nkind: [unclosed\n",
			want:  []string{"stdin: document 2: not valid YAML"},
		},
		"another apiVersion": {
			stdin: strings.Replace(ingress, "networking.k8s.io/v1", "networking.k8s.io/v1beta1", 1),
			want:  []string{"stdin: document 1", `apiVersion "networking.k8s.io/v1beta1" kind "Ingress"`, "convert reads only Ingress (networking.k8s.io/v1)"},
		},
		"List item of another kind": {
			stdin: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n",
			want:  []string{"stdin: document 1, item 1", `kind "ConfigMap"`},
		},
		"unknown field": {
			stdin: strings.Replace(ingress, "{service: {name: web, port: {number: 80}}}", "{serviceName: web, servicePort: 80}", 1),
			want:  []string{"stdin: document 1: Ingress is not one the API server would accept", `unknown field "serviceName"`},
		},
		"matchLabels in an Ingress": {
			stdin: strings.Replace(ingress, "name: web, port", "matchLabels: {app: web}, port", 1),
			want:  []string{"Ingress shop/web: spec.rules[0].http.paths[0].backend.service.matchLabels: only a VirtualIngress"},
		},
		"name and matchLabels": {
			stdin: strings.Replace(strings.Replace(ingress, "networking.k8s.io/v1\nkind: Ingress", "virtual-ingress.io/v1alpha1\nkind: VirtualIngress", 1),
				"name: web, port", "name: web, matchLabels: {app: web}, port", 1),
			want: []string{"VirtualIngress shop/web: spec.rules[0].http.paths[0].backend.service: exactly one of name or matchLabels"},
		},
		"no pathType": {
			stdin: strings.Replace(ingress, "pathType: Prefix", "", 1),
			want:  []string{"spec.rules[0].http.paths[0]: pathType is required"},
		},
		"no name": {
			stdin: strings.Replace(ingress, "name: web, namespace", "namespace", 1),
			want:  []string{"stdin: document 1: Ingress has no metadata.name"},
		},
		"two sources, one route name": {
			stdin: strings.Replace(ingress, "  - host: a.example.com\n", "  - host: b.example.com\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: b, port: {number: 80}}}}]}\n  - host: a.example.com\n", 1) +
				"---\n" + strings.Replace(ingress, "name: web, namespace", "name: web-a-example-com, namespace", 1),
			want: []string{"stdin: document 1: Ingress shop/web and stdin: document 2: Ingress shop/web-a-example-com both convert to VirtualHTTPRoute shop/web-a-example-com"},
		},
		"no objects": {
			stdin: "# nothing\n",
			want:  []string{"no Ingress or VirtualIngress in stdin"},
		},
		"stdin twice": {
			stdin: ingress,
			args:  []string{"-f", "-"},
			want:  []string{"stdin can be read only once"},
		},
		"bad --gateway": {
			stdin: ingress,
			args:  []string{"-gateway", "a/b/c"},
			want:  []string{`--gateway "a/b/c": want [namespace/]name`},
		},
		"--gateway without namespace name": {
			stdin: ingress,
			args:  []string{"-gateway", "/public"},
			want:  []string{`--gateway "/public"`},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := runConvertCommand(t, c.stdin, append([]string{"-f", "-"}, c.args...)...)
			if err == nil {
				t.Fatalf("accepted:\n%s", stdout)
			}
			testfiles.AssertContains(t, err.Error(), c.want...)
			if stdout != "" || stderr != "" {
				t.Errorf("printed despite the error:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}

// manyPaths is an Ingress with n Prefix paths on one host.
func manyPaths(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: big, namespace: web}\n" +
		"spec:\n  ingressClassName: public\n  rules:\n  - host: big.example.com\n    http:\n      paths:\n")
	for i := range n {
		fmt.Fprintf(&b, "      - {path: /p%d, pathType: Prefix, backend: {service: {name: s%d, port: {number: 80}}}}\n", i, i)
	}
	return b.String()
}

func TestConvertNotesRoutesOverHTTPRoutesRuleLimit(t *testing.T) {
	_, stderr, err := runConvertCommand(t, manyPaths(maxRouteRules), "-f", "-")
	if err != nil || strings.Contains(stderr, "rules, but") {
		t.Errorf("%d paths (err %v): %s", maxRouteRules, err, stderr)
	}
	_, stderr, err = runConvertCommand(t, manyPaths(maxRouteRules+1), "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	testfiles.AssertContains(t, stderr, "web/big: 17 rules, but an HTTPRoute takes at most 16")
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestConvertRouteNames(t *testing.T) {
	long := strings.Repeat("a", 60)
	cases := []struct {
		source string
		hosts  []string
		want   []string // "" where only the properties below are checked
	}{
		{"web", []string{"shop.example.com"}, []string{"web"}},
		{"web", []string{""}, []string{"web"}},
		{"web", []string{"shop.example.com", "", "*.example.com"}, []string{"web-shop-example-com", "web", "web-wildcard-example-com"}},
		{"my.app", []string{"", "a.example.com"}, []string{"my.app", "my-app-a-example-com"}},
		{"web", []string{"a.example.com", "a-example.com"}, []string{"", ""}},
		{"web", []string{"*.example.com", "wildcard.example.com"}, []string{"", ""}},
		{long, []string{"a.example.com", "b.example.com", ""}, []string{"", "", long}},
		{long + "-with-more", []string{"x.example.com"}, []string{""}},
	}
	for _, c := range cases {
		got, err := routeNames(c.source, c.hosts)
		if err != nil {
			t.Fatalf("%s %v: %v", c.source, c.hosts, err)
		}
		again, _ := routeNames(c.source, c.hosts)
		if !slices.Equal(got, again) {
			t.Errorf("%s %v: %v, then %v", c.source, c.hosts, got, again)
		}
		seen := map[string]bool{}
		for i, name := range got {
			if c.want[i] != "" && name != c.want[i] {
				t.Errorf("%s %q: %s, want %s", c.source, c.hosts[i], name, c.want[i])
			}
			if seen[name] {
				t.Errorf("%s %v: %s twice", c.source, c.hosts, name)
			}
			seen[name] = true
			if len(name) > maxRouteName {
				t.Errorf("%s %q: %s has %d characters", c.source, c.hosts[i], name, len(name))
			}
			if c.hosts[i] != "" && len(c.hosts) > 1 && !dnsLabel.MatchString(name) {
				t.Errorf("%s %q: %s is not a DNS label", c.source, c.hosts[i], name)
			}
		}
	}
	// Collisions and long names end in a hash of the host, after as much of the readable name as fits.
	got, _ := routeNames("web", []string{"a.example.com", "a-example.com"})
	for _, n := range got {
		if !regexp.MustCompile(`^web-a-example-com-[0-9a-f]{8}$`).MatchString(n) {
			t.Errorf("colliding name %s", n)
		}
	}
	got, _ = routeNames(long, []string{"a.example.com", "b.example.com"})
	if !strings.HasPrefix(got[0], long[:54]) || got[0][:54] != got[1][:54] || got[0] == got[1] {
		t.Errorf("long names %v", got)
	}
}

// The notes say which routes the API server refuses: exactly those must fail the VirtualHTTPRoute CRD's
// validation, and every other route must pass it.
func TestConvertOutputMatchesTheVirtualHTTPRouteCRD(t *testing.T) {
	const crd = "../../../../charts/virtual-ingress/files/crds/virtualhttproutes.virtual-ingress.io.yaml"
	if _, err := os.Stat(crd); os.IsNotExist(err) {
		t.Skipf("%s not generated yet (make generate)", crd)
	}
	validator, err := crdschema.LoadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}
	for _, c := range convertCases {
		outputs[c.name], _ = convertCase(t, c.name, c.args...)
	}
	outputs["17 paths"], _, err = runConvertCommand(t, manyPaths(maxRouteRules+1), "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for name, stdout := range outputs {
		texts := strings.Split(stdout, "\n---\n")
		for i, d := range convertDocuments(t, stdout) {
			errs := validator.Validate(context.Background(), d)
			claims := strings.Contains(texts[i], "the API server refuses")
			switch {
			case claims && len(errs) == 0:
				t.Errorf("%s: %s: a note says the API server refuses it, but the CRD accepts it:\n%s", name, d.GetName(), texts[i])
			case !claims && len(errs) > 0:
				t.Errorf("%s: %s: the CRD refuses it and no note says so:\n%s\n%s", name, d.GetName(), crdschema.Summary(errs), texts[i])
			case claims:
				refused++
			}
		}
	}
	if refused < 3 {
		t.Errorf("%d refused routes, want at least the named port's, the ImplementationSpecific '//' path's and the 17 paths'", refused)
	}
}
