package controller

import "k8s.io/apimachinery/pkg/util/intstr"

// intOrString is a named target port: the router pods' container ports are named http and https.
func intOrString(name string) intstr.IntOrString { return intstr.FromString(name) }
