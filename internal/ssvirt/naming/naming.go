// Package naming turns organization and VDC names into Kubernetes namespace names and API ids into URNs.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

const (
	maxLabel = 63
	// hashLen hex characters of suffix: a dash and these fit after a 56-character stem.
	hashLen = 6
)

// Namespace is the attempt'th candidate name for the namespace of VDC vdcID named vdc in organization org:
// "vdc-<org>-<vdc>" lower-cased with everything outside [a-z0-9-] turned into dashes (DNS-1123 label rules),
// cut to 63 characters. A name that had to be cut, and every attempt after the first (the name was taken),
// ends in "-" and a hash of what it stands for, so different inputs get different names.
func Namespace(org, vdc, vdcID string, attempt int) string {
	full := "vdc-" + sanitise(org) + "-" + sanitise(vdc)
	full = strings.Trim(collapse(full), "-")
	if attempt == 0 && len(full) <= maxLabel {
		return full
	}
	seed := org + "\x00" + vdc
	if attempt > 0 {
		seed += fmt.Sprintf("\x00%s\x00%d", vdcID, attempt)
	}
	sum := sha256.Sum256([]byte(seed))
	stem := full
	if len(stem) > maxLabel-hashLen-1 {
		stem = strings.TrimRight(stem[:maxLabel-hashLen-1], "-")
	}
	return stem + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

func sanitise(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func collapse(s string) string {
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return s
}

// URN kinds.
const (
	KindOrg          = "org"
	KindUser         = "user"
	KindVDC          = "vdc"
	KindCatalog      = "catalog"
	KindCatalogItem  = "catalogitem"
	KindVApp         = "vapp"
	KindSession      = "session"
	KindRole         = "role"
	KindTask         = "task"
	KindVM           = "vm"
	KindRegion       = "region"
	KindZone         = "zone"
	KindSupervisor   = "supervisor"
	KindVCenter      = "vimserver"
	KindStorageClass = "storageClass"
	KindNsxtManager  = "nsxtmanager"
)

// URN is "urn:vcloud:<kind>:<id>".
func URN(kind, id string) string { return "urn:vcloud:" + kind + ":" + id }

// ParseURN returns the UUID of a URN of the given kind; ok is false for anything else, including a bare UUID
// or a URN of another kind.
func ParseURN(kind, urn string) (id string, ok bool) {
	rest, found := strings.CutPrefix(urn, "urn:vcloud:"+kind+":")
	if !found {
		return "", false
	}
	u, err := uuid.Parse(rest)
	if err != nil || u.String() != rest {
		return "", false
	}
	return rest, true
}

// CatalogItemID is the stable id of the catalog item that Template templateName is in catalog catalogID.
func CatalogItemID(catalogID, templateName string) string {
	return uuid.NewSHA1(uuid.MustParse(catalogID), []byte(templateName)).String()
}

// roleSpace seeds the ids of the fixed roles.
var roleSpace = uuid.MustParse("5f2d1c9e-4b7a-4f0e-9a51-6c3b8d2e7f10")

// RoleID is the stable id of the role named name: roles are fixed, not rows.
func RoleID(name string) string { return uuid.NewSHA1(roleSpace, []byte(name)).String() }
