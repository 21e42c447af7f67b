// Package metricsserver holds the metrics endpoint settings every controller of this repository ships with.
package metricsserver

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options serves /metrics on bindAddress. Secure (the default of the binaries and the charts) is HTTPS with a
// self-signed certificate, and every request must carry a bearer token that the API server authenticates
// (TokenReview) and authorises for GET on the non-resource URL /metrics (SubjectAccessReview): metric labels name
// the objects a controller manages. Insecure is plain HTTP without authentication, for clusters that protect the port
// otherwise.
func Options(bindAddress string, secure bool) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: bindAddress}
	if secure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}
