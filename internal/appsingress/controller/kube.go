package controller

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func newKube(cfg *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(cfg) }
