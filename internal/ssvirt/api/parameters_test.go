package api

import (
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
)

func TestCheckParameters(t *testing.T) {
	tmpl := kube.Template{Name: "fedora", Parameters: []kube.Parameter{
		{Name: "NAME", Required: true},
		{Name: "SIZE", Required: true, Value: "small"},
		{Name: "PASSWORD", Required: true, Generate: "expression", From: "[a-z]{8}"},
		{Name: "NOTE"},
	}}
	cases := []struct {
		given   map[string]string
		wantErr string
	}{
		{map[string]string{"NAME": "vm"}, ""},
		{map[string]string{"NAME": "vm", "SIZE": "large", "PASSWORD": "mine", "NOTE": "${NAME}"}, ""},
		{map[string]string{}, "requires parameters NAME"},
		{map[string]string{"SIZE": "x"}, "requires parameters NAME"},
		{map[string]string{"NAME": "vm", "COLOUR": "red", "AGE": "1"}, "has no parameters AGE, COLOUR"},
		{map[string]string{"NAME": strings.Repeat("x", maxParamValue+1)}, "at most"},
	}
	for _, c := range cases {
		err := checkParameters(tmpl, c.given)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%v: %v", c.given, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%v: got %v, want %q", c.given, err, c.wantErr)
		}
	}
	many := map[string]string{}
	for i := range maxParams + 1 {
		many[strings.Repeat("P", i+1)] = "x"
	}
	if err := checkParameters(tmpl, many); err == nil {
		t.Error("more than maxParams parameters accepted")
	}
}
