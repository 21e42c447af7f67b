package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// fakeAPI is an API server that honours the request's context, as a real client does (the fake client does not):
// a call on an ended context fails.
func fakeAPI(t *testing.T, funcs interceptor.Funcs) client.WithWatch {
	t.Helper()
	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	sch.AddKnownTypeWithName(TemplateInstanceGVK, &unstructured.Unstructured{})
	sch.AddKnownTypeWithName(TemplateInstanceGVK.GroupVersion().WithKind(TemplateInstanceGVK.Kind+"List"), &unstructured.UnstructuredList{})
	honour := func(next func(ctx context.Context) error) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return next(ctx)
		}
	}
	create, del := funcs.Create, funcs.Delete
	funcs.Create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		return honour(func(ctx context.Context) error {
			if create != nil {
				return create(ctx, c, obj, opts...)
			}
			return c.Create(ctx, obj, opts...)
		})(ctx)
	}
	funcs.Delete = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		return honour(func(ctx context.Context) error {
			if del != nil {
				return del(ctx, c, obj, opts...)
			}
			return c.Delete(ctx, obj, opts...)
		})(ctx)
	}
	return interceptor.NewClient(fake.NewClientBuilder().WithScheme(sch).Build(), funcs)
}

func isInstance(obj client.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	return ok && u.GroupVersionKind() == TemplateInstanceGVK
}

func instanceExists(t *testing.T, c client.Client, app store.VApp) bool {
	t.Helper()
	ti := &unstructured.Unstructured{}
	ti.SetGroupVersionKind(TemplateInstanceGVK)
	err := c.Get(context.Background(), client.ObjectKey{Namespace: app.Namespace, Name: InstanceName(app.ID)}, ti)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// An instantiation that fails after its TemplateInstance was made leaves none behind: not when the request's
// deadline is what failed it (the clean-up needs a context of its own), not when the API server's answer to the
// create was lost (the create happened all the same), and not when the first delete fails (it is retried).
func TestFailedInstantiationTakesBackItsTemplateInstance(t *testing.T) {
	tmpl := &unstructured.Unstructured{Object: map[string]any{"objects": []any{}}}
	tmpl.SetGroupVersionKind(TemplateGVK)
	tmpl.SetNamespace("openshift")
	tmpl.SetName("fedora")
	app := store.VApp{ID: "0b6c2a6e-8f1e-4a57-9d61-3d1f0f7b2c11", OrgID: "o", VDCID: "v", Namespace: "vdc-a-b"}
	unavailable := apierrors.NewServiceUnavailable("etcd leader changed")

	for name, funcs := range map[string]interceptor.Funcs{
		// The Secret's create outlives the request's deadline.
		"deadline during the Secret": {Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				<-ctx.Done()
				return ctx.Err()
			}
			return c.Create(ctx, obj, opts...)
		}},
		// The TemplateInstance is created, but its answer is lost to the deadline.
		"answer to the create lost": {Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if isInstance(obj) {
				if err := c.Create(ctx, obj, opts...); err != nil {
					return err
				}
				<-ctx.Done()
				return ctx.Err()
			}
			return c.Create(ctx, obj, opts...)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			deletes := 0
			funcs.Delete = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				deletes++
				if deletes == 1 {
					return unavailable // the first delete fails: it must be retried, not ignored
				}
				return c.Delete(ctx, obj, opts...)
			}
			api := fakeAPI(t, funcs)
			k := &Cluster{client: api, opts: Options{InstantiateTimeout: 5 * time.Second}.withDefaults(), log: logr.Discard()}
			k.lastError.Store("")
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			err := k.Instantiate(ctx, app, templateOf(tmpl), map[string]string{"NAME": "x"}, "alice")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Instantiate: %v, want the deadline", err)
			}
			if instanceExists(t, api, app) {
				t.Errorf("the TemplateInstance of the failed instantiation is left (%d deletes sent)", deletes)
			}
		})
	}
}
