package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// Condition types.
const (
	CondHostedClusterReachable = "HostedClusterReachable"
	CondServiceReady           = "ServiceReady"
	CondExternalIPAssigned     = "ExternalIPAssigned"
	CondDNSConfigured          = "DNSConfigured"
	CondProxyConfigured        = "ProxyConfigured"
	CondReady                  = "Ready"
)

// allConditions in the order a reconcile establishes them: a failure at one step leaves the later ones Unknown
// (or as they were, when they describe kept state).
var allConditions = []string{
	CondHostedClusterReachable, CondServiceReady, CondExternalIPAssigned, CondDNSConfigured, CondProxyConfigured, CondReady,
}

func setCondition(ai *v1alpha1.AppsIngress, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&ai.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: ai.Generation,
	})
}

// setPhase sets phase, reason and message, and the Ready condition to match.
func setPhase(ai *v1alpha1.AppsIngress, phase v1alpha1.Phase, reason, message string) {
	ai.Status.Phase, ai.Status.Reason, ai.Status.Message = phase, reason, message
	ready := metav1.ConditionFalse
	if phase == v1alpha1.PhaseReady {
		ready = metav1.ConditionTrue
	}
	setCondition(ai, CondReady, ready, reason, message)
}

// ensureConditions gives every condition a value, so that `kubectl wait` and readers find all six.
func ensureConditions(ai *v1alpha1.AppsIngress) {
	for _, typ := range allConditions {
		if meta.FindStatusCondition(ai.Status.Conditions, typ) == nil {
			setCondition(ai, typ, metav1.ConditionUnknown, "NotChecked", "not checked yet")
		}
	}
}
