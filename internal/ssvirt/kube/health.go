package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

func restConfigForProbe(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = nil
	c.APIPath = "/"
	c.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: scheme.Codecs}
	c.Timeout = 3 * time.Second
	return c
}

// runHealth asks the API server's /readyz (readable by every authenticated subject) until ctx ends.
func (k *Cluster) runHealth(ctx context.Context) error {
	_ = wait.PollUntilContextCancel(ctx, k.opts.HealthInterval, true, func(ctx context.Context) (bool, error) {
		k.Probe(ctx)
		return false, nil // until ctx ends
	})
	return nil
}

// Probe asks the API server's /readyz now and records the answer.
func (k *Cluster) Probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var code int
	err := k.rest.Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Error()
	if err == nil && code == http.StatusOK {
		k.setAvailable(true, "")
		return
	}
	if err == nil {
		err = errors.New(http.StatusText(code))
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	k.setAvailable(false, "kube-apiserver /readyz: "+err.Error())
}

func isConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused")
}
