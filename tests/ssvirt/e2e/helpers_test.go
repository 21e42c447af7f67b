//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
)

// client is a logged-in caller.
type client struct {
	base, token string
	// tenantContext, when set, is sent as X-VMWARE-VCLOUD-TENANT-CONTEXT (a system administrator acting in it).
	tenantContext string
}

// in is c acting in organization orgID through the tenant context.
func (c *client) in(orgID string) *client {
	cp := *c
	cp.tenantContext = orgID
	return &cp
}

func login(t *testing.T, inst *instance, user, org, password string) *client {
	t.Helper()
	c, status := tryLogin(t, inst, user, org, password)
	if status != http.StatusOK {
		t.Fatalf("login %s@%s: %d", user, org, status)
	}
	return c
}

func tryLogin(t *testing.T, inst *instance, user, org, password string) (*client, int) {
	t.Helper()
	return tryLoginAt(t, inst, "/cloudapi/1.0.0/sessions", user, org, password)
}

// tryLoginAt logs in at loginURL (the tenants' or the provider's) and returns the client and the status.
func tryLoginAt(t *testing.T, inst *instance, loginURL, user, org, password string) (*client, int) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, inst.url+loginURL, nil)
	req.SetBasicAuth(user+"@"+org, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return &client{base: inst.url, token: resp.Header.Get(api.HeaderAccessToken)}, resp.StatusCode
}

func sysadmin(t *testing.T) *client { return login(t, srv, adminUser, "System", adminPass) }

// do sends body (a value, or raw bytes/string as they are) and decodes the answer into out when given.
func (c *client) do(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	status, _ := c.doH(t, method, path, body, out)
	return status
}

// doH is do that also returns the answer's headers.
func (c *client) doH(t *testing.T, method, path string, body any, out any) (int, http.Header) {
	t.Helper()
	var header http.Header
	if c.tenantContext != "" {
		header = http.Header{api.HeaderTenantContext: {c.tenantContext}}
	}
	status, respHeader, data, err := fixture.Call(t.Context(), http.DefaultClient, method, c.base+path, c.token, header, body)
	if err != nil {
		t.Fatal(err)
	}
	if status >= 400 {
		var e api.Error
		if err := json.Unmarshal(data, &e); err != nil || e.MinorErrorCode == "" || e.Message == "" {
			t.Errorf("%s %s: %d without a {minorErrorCode, message} body: %s", method, path, status, data)
		}
		if eo, ok := out.(*api.Error); ok {
			*eo = e
		}
		return status, respHeader
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return status, respHeader
}

func (c *client) must(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	var e api.Error
	target := out
	if target == nil {
		target = &e
	}
	if got := c.do(t, method, path, body, target); got != want {
		t.Fatalf("%s %s: %d, want %d (%+v)", method, path, got, want, e)
	}
}

var seq atomic.Int64

// unique returns a name not used before in this run.
func unique(prefix string) string { return fmt.Sprintf("%s%d", prefix, seq.Add(1)) }

// tenant is an organization with an administrator and a vApp user.
type tenant struct {
	org          api.Org
	admin, user  *client
	adminN, usrN string
}

func newTenant(t *testing.T, sys *client) tenant {
	t.Helper()
	var tn tenant
	sys.must(t, "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: unique("org")}, http.StatusCreated, &tn.org)
	tn.adminN, tn.usrN = unique("oadmin"), unique("user")
	for name, role := range map[string]string{tn.adminN: "Organization Administrator", tn.usrN: "vApp User"} {
		sys.must(t, "POST", "/cloudapi/1.0.0/users", userBody(name, "password-"+name, role, tn.org.ID), http.StatusCreated, nil)
	}
	tn.admin = login(t, srv, tn.adminN, tn.org.Name, "password-"+tn.adminN)
	tn.user = login(t, srv, tn.usrN, tn.org.Name, "password-"+tn.usrN)
	return tn
}

// userBody is a new account in CloudAPI's shape; orgID "" leaves the organization out.
func userBody(name, password, role, orgID string) api.User {
	u := api.User{Username: name, Password: password, RoleEntityRefs: []api.Ref{{Name: role}}}
	if orgID != "" {
		u.OrgEntityRef = &api.Ref{ID: orgID}
	}
	return u
}

func vdcBody(name string, cpu, mem, storage int64) api.VDC {
	return api.VDC{Name: name, ComputeCapacity: api.ComputeCapacity{CPU: api.Capacity{Limit: cpu}, Memory: api.Capacity{Limit: mem}},
		StorageCapacity: api.Capacity{Limit: storage}}
}

// eventually waits (poll.Until) until cond holds; why is what it saw last.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() (ok bool, why string)) {
	t.Helper()
	poll.Until(t, timeout, what, func() (bool, string, error) {
		ok, why := cond()
		return ok, why, nil
	})
}

func namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	return kubeCS.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
}

func mustJSON(t *testing.T, data []byte, out any) {
	t.Helper()
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
}
