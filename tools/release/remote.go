package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"helm.sh/helm/v3/pkg/registry"
)

// target is the registry a release talks to: go-containerregistry for images (it copies an index with its digest
// unchanged) and Helm's own registry client for charts (the artifact `helm pull` expects, made by Helm).
type target struct {
	httpClient *http.Client
	opts       []remote.Option
	helm       *registry.Client
}

// newTarget trusts the system's CAs plus caFile, and uses the credentials `docker login` / `helm registry login`
// stored.
func newTarget(ctx context.Context, caFile string) (*target, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	hc := &http.Client{Transport: tr}
	helm, err := registry.NewClient(registry.ClientOptHTTPClient(hc), registry.ClientOptWriter(io.Discard),
		registry.ClientOptEnableCache(true))
	if err != nil {
		return nil, err
	}
	return &target{
		httpClient: hc,
		opts:       []remote.Option{remote.WithContext(ctx), remote.WithTransport(tr), remote.WithAuthFromKeychain(authn.DefaultKeychain)},
		helm:       helm,
	}, nil
}

// exists reports whether ref (a tag) names a manifest in the registry.
func (t *target) exists(ref string) (bool, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return false, err
	}
	if _, err := remote.Head(r, t.opts...); err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return false, nil
		}
		return false, fmt.Errorf("checking %s: %w", ref, err)
	}
	return true, nil
}

// refuseExisting enforces immutable releases: none of refs may exist, unless the version is a pre-release and
// overwriting was asked for.
func (t *target) refuseExisting(refs []string, prerelease, overwrite bool) error {
	var found []string
	for _, ref := range refs {
		ok, err := t.exists(ref)
		if err != nil {
			return err
		}
		if ok {
			found = append(found, ref)
		}
	}
	switch {
	case len(found) == 0:
		return nil
	case overwrite && prerelease:
		return nil
	case overwrite:
		return fmt.Errorf("already published, and a release (not a pre-release) is never replaced:\n  %s", strings.Join(found, "\n  "))
	default:
		return fmt.Errorf("already published (releases are immutable; a pre-release may be replaced with --overwrite-prerelease):\n  %s", strings.Join(found, "\n  "))
	}
}
