//go:build e2e

package e2e_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
)

// collidingNames are n distinct VDC names that all sanitise to the same namespace name ("a", separators, "b").
func collidingNames(n int) []string {
	seps := []string{".", "_", "-"}
	names := []string{}
	frontier := []string{""}
	for len(names) < n {
		var next []string
		for _, p := range frontier {
			for _, s := range seps {
				next = append(next, p+s)
				names = append(names, "a"+p+s+"b")
			}
		}
		frontier = next
	}
	return names[:n]
}

// 200 concurrent creates whose names collide after sanitising: 200 VDCs, 200 distinct namespaces, each with its
// quota, and no duplicate rows.
func TestConcurrentCollidingCreates(t *testing.T) {
	ctx := t.Context()
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	base := "/api/admin/org/" + tn.org.ID + "/vdcs"
	names := collidingNames(200)
	created := make([]api.VDC, len(names))
	codes := make([]int, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			codes[i] = sys.do(t, "POST", base, vdcBody(name, 100, 64, 0), &created[i])
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, v := range created {
		if codes[i] != http.StatusCreated || v.Status != "READY" {
			t.Fatalf("create %q: %d %+v", names[i], codes[i], v)
		}
		if seen[v.Namespace] {
			t.Fatalf("namespace %s handed out twice", v.Namespace)
		}
		seen[v.Namespace] = true
		if !strings.HasPrefix(v.Namespace, "vdc-"+strings.ToLower(tn.org.Name)+"-a-b") || len(v.Namespace) > 63 {
			t.Errorf("namespace %q", v.Namespace)
		}
	}
	var page api.Paged[api.VDC]
	sys.must(t, "GET", base+"?pageSize=1", nil, http.StatusOK, &page)
	if page.ResultTotal != len(names) {
		t.Errorf("%d rows, want %d", page.ResultTotal, len(names))
	}
	quotas, err := kubeCS.CoreV1().ResourceQuotas("").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelOrgID + "=" + tn.org.ID[len("urn:vcloud:org:"):]})
	if err != nil {
		t.Fatal(err)
	}
	if len(quotas.Items) != len(names) {
		t.Errorf("%d quotas, want %d", len(quotas.Items), len(names))
	}
	// Clean up, so that later tests' resyncs do not carry 200 VDCs.
	for _, v := range created {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sys.do(t, "DELETE", base+"/"+v.ID, nil, nil)
		})
	}
	wg.Wait()
	eventually(t, "VDCs deleted", 3*time.Minute, func() (bool, string) {
		all, _ := srv.Store.AllVDCs(ctx)
		for _, v := range all {
			if v.OrgID == tn.org.ID[len("urn:vcloud:org:"):] {
				return false, "rows left"
			}
		}
		return true, ""
	})
}
