package controller

import (
	"errors"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// isConnectionError tells a hosted cluster that cannot be reached (or answers like one that is going away) from one
// that answered and refused.
func isConnectionError(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	return errors.As(err, &netErr) || errors.As(err, &urlErr) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsInternalError(err)
}

func unreachable(err error) *failure {
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return degraded("HostedClusterAccessDenied", "the hosted cluster rejected the kubeconfig's credentials: %v", err)
	}
	return degraded("HostedClusterUnreachable", "the hosted cluster's API server cannot be reached: %v", err)
}
