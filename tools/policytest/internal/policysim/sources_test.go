package policysim

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
)

// The chart's default (auto) renders no route policy offline: a render for VirtualHTTPRoutes sets gatewayAPI.routes
// under the user's values, and one without leaves the values alone.
func TestEnablingValuesOnlyForRoutesAndUnderTheUsersValues(t *testing.T) {
	vis, err := ReadInputs([]string{"../../../../fixtures/virtualingresses/no-match.yaml"}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := ReadInputs([]string{"../../../../fixtures/virtualhttproutes/no-match.yaml"}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	choosing := filepath.Join(t.TempDir(), "values.yaml")
	testfiles.WriteFile(t, choosing, "gatewayAPI:\n  routes: auto\n")
	for _, c := range []struct {
		name   string
		values []string
		in     Inputs
		want   map[string]any
	}{
		{"VirtualIngresses only", nil, vis, nil},
		{"a VirtualHTTPRoute", nil, routes, map[string]any{"gatewayAPI": map[string]any{"routes": true}}},
		{"values setting gatewayAPI.routes", []string{choosing}, routes, nil},
	} {
		if got, err := EnablingValues(c.values, c.in); err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
