package virtualingress

import (
	"crypto/rand"
	"encoding/hex"
)

// CCMName is a Service name as the Kubevirt CCM gives its mirrored Services: "a" and a UID's 32 hex digits (the
// cloud provider's DefaultLoadBalancerName), 32 characters. A name the client sets, not generateName: admission
// sees no name for a generated one.
func CCMName() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "a" + hex.EncodeToString(b)[1:]
}
