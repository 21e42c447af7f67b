package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/crdschema"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/fixture"
)

const crdPath = "../../../../charts/apps-ingress-operator/files/crds/hostedcluster.virtual-ingress.io_appsingresses.yaml"

func obj(t *testing.T, mutate func(spec map[string]any)) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fixture.Valid), &u.Object); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(u.Object["spec"].(map[string]any))
	}
	return u
}

func validator(t *testing.T) *crdschema.Validator {
	t.Helper()
	v, err := crdschema.LoadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	if errs := v.ValidateDefinition(context.Background()); len(errs) > 0 {
		t.Fatalf("the API server would reject the CRD:\n%s", crdschema.Summary(errs))
	}
	return v
}

func TestValidSpecIsAccepted(t *testing.T) {
	if errs := validator(t).Validate(context.Background(), obj(t, nil)); len(errs) > 0 {
		t.Fatalf("rejected:\n%s", crdschema.Summary(errs))
	}
}

func TestBadSpecsAreRejectedWithTheFieldNamed(t *testing.T) {
	v := validator(t)
	for _, c := range fixture.BadSpecs {
		t.Run(c.Name, func(t *testing.T) {
			errs := v.Validate(context.Background(), obj(t, c.Mutate))
			if len(errs) == 0 {
				t.Fatal("accepted")
			}
			got := crdschema.Summary(errs)
			if !strings.Contains(got, c.Want) {
				t.Fatalf("errors do not contain %q:\n%s", c.Want, got)
			}
		})
	}
}
