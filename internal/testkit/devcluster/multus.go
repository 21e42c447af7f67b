package devcluster

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NetworkAttachmentDefinitions are Multus's secondary networks (k8s.cni.cncf.io/v1): spec.config is a CNI
// configuration, and a Pod names them in its k8s.v1.cni.cncf.io/networks annotation.
var networkAttachmentDefinitions = &apiextensionsv1.CustomResourceDefinition{
	ObjectMeta: metav1.ObjectMeta{Name: "network-attachment-definitions.k8s.cni.cncf.io"},
	Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "k8s.cni.cncf.io",
		Names: apiextensionsv1.CustomResourceDefinitionNames{
			Plural: "network-attachment-definitions", Singular: "network-attachment-definition",
			Kind: "NetworkAttachmentDefinition", ListKind: "NetworkAttachmentDefinitionList", ShortNames: []string{"net-attach-def"},
		},
		Scope: apiextensionsv1.NamespaceScoped,
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"config": {Type: "string"}}},
				},
			}},
		}},
	},
}

// installMultus gives Multus what its upstream DaemonSet's RBAC does (read Pods and attachments, record each
// Pod's network-status) and installs the attachments' CRD.
func (c *Cluster) installMultus(ctx context.Context) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "devcluster:multus"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"k8s.cni.cncf.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/status"}, Verbs: []string{"get", "list", "watch", "update"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "devcluster:multus"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: userMultus}},
	}
	if _, err := c.kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := c.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return err
	}
	return c.ApplyCRDs(ctx, []*apiextensionsv1.CustomResourceDefinition{networkAttachmentDefinitions})
}
