// Package crdschema validates objects against a CustomResourceDefinition offline, with the code kube-apiserver
// itself runs on a create: the OpenAPI v3 schema, unknown-field detection (kubectl's default strict field
// validation) and the CEL x-kubernetes-validations rules. It lets the policy tester reject bad VirtualIngresses with
// the same messages a cluster would give, and lets unit tests prove the CRD's validation without a cluster.
package crdschema
