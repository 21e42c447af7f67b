package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// LastSyncRefresh is how old status.lastSyncTime may grow while nothing else in the status changes. A Ready object is
// re-checked every minute by default: writing its status each time, for lastSyncTime alone, would cost a fleet of
// 2,000 clusters some 33 status writes a second (and as many watch events to every watcher of AppsIngresses) that say
// nothing new.
const LastSyncRefresh = 10 * time.Minute

// statusDue tells whether the status a reconcile computed (next, from orig) must be written: something in it changed,
// or its lastSyncTime is older than LastSyncRefresh.
func statusDue(orig, next *v1alpha1.AppsIngress, now time.Time) bool {
	last := orig.Status.LastSyncTime
	if last == nil || now.Sub(last.Time) >= LastSyncRefresh {
		return true
	}
	a, b := orig.Status.DeepCopy(), next.Status.DeepCopy()
	a.LastSyncTime, b.LastSyncTime = nil, nil
	return !equality.Semantic.DeepEqual(a, b)
}
