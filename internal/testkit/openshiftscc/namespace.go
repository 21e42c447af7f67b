package openshiftscc

import (
	"fmt"
	"strconv"
	"strings"
)

// The annotations OpenShift's namespace controller gives every namespace, from which SCCs assign IDs.
const (
	UIDRangeAnnotation           = "openshift.io/sa.scc.uid-range"
	SupplementalGroupsAnnotation = "openshift.io/sa.scc.supplemental-groups"
	MCSAnnotation                = "openshift.io/sa.scc.mcs"
)

// Namespace is what admission reads of the Pod's namespace: its annotations.
type Namespace struct {
	Name        string
	Annotations map[string]string
}

// NewNamespace is a namespace as OpenShift annotates it, with one block of size IDs from first for both UIDs and
// groups (the controller gives every namespace its own block of 10,000 from 1,000,000,000 on).
func NewNamespace(name string, first, size int64) Namespace {
	block := fmt.Sprintf("%d/%d", first, size)
	return Namespace{Name: name, Annotations: map[string]string{
		UIDRangeAnnotation:           block,
		SupplementalGroupsAnnotation: block,
		MCSAnnotation:                "s0:c26,c5",
	}}
}

// idRange is a closed range of IDs.
type idRange struct{ min, max int64 }

func (r idRange) contains(id int64) bool { return id >= r.min && id <= r.max }

// uidRange is the namespace's UID block; admission refuses a Pod without one.
func (n Namespace) uidRange() (idRange, error) {
	v, ok := n.Annotations[UIDRangeAnnotation]
	if !ok {
		return idRange{}, fmt.Errorf("namespace %s has no %s annotation", n.Name, UIDRangeAnnotation)
	}
	return parseBlock(v)
}

// groupRanges are the namespace's supplemental-group blocks, or its UID block when it has none (as admission falls
// back for fsGroup).
func (n Namespace) groupRanges() ([]idRange, error) {
	v, ok := n.Annotations[SupplementalGroupsAnnotation]
	if !ok {
		r, err := n.uidRange()
		return []idRange{r}, err
	}
	var out []idRange
	for _, b := range strings.Split(v, ",") {
		r, err := parseBlock(strings.TrimSpace(b))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// parseBlock reads "first/size" (what the namespace controller writes) or "first-last".
func parseBlock(s string) (idRange, error) {
	sep, sizeForm := "-", false
	if strings.Contains(s, "/") {
		sep, sizeForm = "/", true
	}
	a, b, ok := strings.Cut(s, sep)
	if !ok {
		return idRange{}, fmt.Errorf("ID block %q is neither first/size nor first-last", s)
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	second, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || second < 0 {
		return idRange{}, fmt.Errorf("ID block %q: not two non-negative integers", s)
	}
	if sizeForm {
		if second == 0 {
			return idRange{}, fmt.Errorf("ID block %q is empty", s)
		}
		return idRange{first, first + second - 1}, nil
	}
	if second < first {
		return idRange{}, fmt.Errorf("ID block %q ends before it starts", s)
	}
	return idRange{first, second}, nil
}
