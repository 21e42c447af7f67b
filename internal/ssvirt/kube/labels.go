// Package kube is ssvirt-api's embedded Kubernetes side: a VDC's namespace, ResourceQuota and NetworkPolicy,
// the reconciler that repairs them and finishes what the API could not do while Kubernetes was away, the
// Template catalog served from the informer cache, and instantiation (TemplateInstance + parameters Secret)
// whose conditions the vApps follow.
package kube

// Labels and annotations on what ssvirt-api makes. Label values cannot hold URNs (no colons), so the ids are
// bare UUIDs in labels and URNs in annotations.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "ssvirt"
	LabelComponent = "app.kubernetes.io/component"
	LabelOrg       = "ssvirt.io/organization"
	LabelOrgID     = "ssvirt.io/organization-id"
	LabelVDC       = "ssvirt.io/vdc"
	LabelVDCID     = "ssvirt.io/vdc-id"
	LabelVAppID    = "ssvirt.io/vapp-id"

	AnnotationOrgURN  = "ssvirt.io/organization-urn"
	AnnotationVDCURN  = "ssvirt.io/vdc-urn"
	AnnotationEnabled = "ssvirt.io/enabled"

	// QuotaName and PolicyName are the names of the VDC namespace's ResourceQuota and NetworkPolicy.
	QuotaName  = "vdc-quota"
	PolicyName = "vdc-isolation"

	// LabelTemplateVersion and AnnotationContainerDisks mark the Templates that are catalog items.
	LabelTemplateVersion     = "template.kubevirt.io/version"
	AnnotationContainerDisks = "template.kubevirt.io/containerdisks"

	// FieldOwner is the server-side apply field manager of everything ssvirt-api writes.
	FieldOwner = "ssvirt-api"
)
