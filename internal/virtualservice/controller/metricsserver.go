package controller

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsServerOptions serves /metrics on bindAddress. Secure (the default of the binary and the chart) is HTTPS with
// a self-signed certificate, and every request must carry a bearer token that the API server authenticates
// (TokenReview) and authorises for GET on the non-resource URL /metrics (SubjectAccessReview): the metrics name
// production Services. Insecure is plain HTTP without authentication, for clusters that protect the port otherwise.
func MetricsServerOptions(bindAddress string, secure bool) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: bindAddress}
	if secure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}
