package api

import (
	"github.com/google/uuid"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
)

// infraSpace seeds the ids of the Tenant Manager's infrastructure objects: every replica, and every restart,
// derives the same ids from the region's name, with nothing stored.
var infraSpace = uuid.MustParse("6f0d3a52-3c1e-4d8e-9a51-5c2f7e1b9a40")

// infra is what ssvirt offers as the Tenant Manager's infrastructure: the Kubernetes cluster it runs against is
// the one region, with one zone and one supervisor (the cluster again) in one vCenter, and one storage class.
type infra struct {
	region, zone, supervisor, vcenter, storageClass, network Ref
}

func infraOf(region string) infra {
	ref := func(kind, name string) Ref {
		return Ref{Name: name, ID: naming.URN(kind, uuid.NewSHA1(infraSpace, []byte(kind+"\x00"+region)).String())}
	}
	return infra{
		region:     ref(naming.KindRegion, region),
		zone:       ref(naming.KindZone, region+"-zone"),
		supervisor: ref(naming.KindSupervisor, region+"-supervisor"),
		vcenter:    ref(naming.KindVCenter, region+"-vcenter"),
		// Templates name their own storage: the one storage class stands for whatever they name.
		storageClass: ref(naming.KindStorageClass, region+"-storage"),
		// The cluster's network stands in for the region's NSX manager, which every region names.
		network: ref(naming.KindNsxtManager, region+"-network"),
	}
}

func (s *Server) infra() infra { return infraOf(s.cluster.Region()) }

// checkRef refuses a reference to anything but want (an empty one is taken as want): ssvirt has one of each.
func checkRef(field string, got *Ref, want Ref) error {
	if got == nil || got.ID == "" || got.ID == want.ID {
		return nil
	}
	return badRequest(field + ": " + got.ID + " does not exist; the one there is is " + want.Name + " (" + want.ID + ")")
}
