package kube_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

func TestVAppStatus(t *testing.T) {
	cond := func(typ, status, msg string) any {
		return map[string]any{"type": typ, "status": status, "message": msg}
	}
	cases := []struct {
		conds       []any
		want, wantM string
	}{
		{nil, store.VAppInstantiating, ""},
		{[]any{cond("Ready", "False", "waiting")}, store.VAppInstantiating, ""},
		{[]any{cond("Ready", "True", "done")}, store.VAppDeployed, "done"},
		{[]any{cond("Ready", "False", ""), cond("InstantiateFailure", "True", "quota")}, store.VAppFailed, "quota"},
	}
	for _, c := range cases {
		ti := &unstructured.Unstructured{Object: map[string]any{}}
		if c.conds != nil {
			_ = unstructured.SetNestedSlice(ti.Object, c.conds, "status", "conditions")
		}
		got, msg := kube.VAppStatus(ti)
		if got != c.want || msg != c.wantM {
			t.Errorf("%v: %s %q, want %s %q", c.conds, got, msg, c.want, c.wantM)
		}
	}
}
