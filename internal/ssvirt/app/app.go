// Package app wires ssvirt-api together: the database, the embedded controller-runtime manager (client, cache,
// reconcilers) and the HTTP API, as one process. cmd/ssvirt-api and the end-to-end tests run the same code.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/auth"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Config is everything the process needs.
type Config struct {
	ListenAddress                 string
	DatabaseDriver, DatabaseDSN   string
	JWTKey                        []byte
	SessionLifetime               time.Duration
	BootstrapAdmin, BootstrapPass string
	Kube                          kube.Options
	RESTConfig                    *rest.Config
	// Manager holds the metrics, probe and leader election settings; its Cache and Client are set here.
	Manager ctrl.Options
	Log     logr.Logger
}

// App is a running ssvirt-api.
type App struct {
	Store   *store.Store
	Cluster *kube.Cluster
	// Addr is the address the API listens on (useful with port 0).
	Addr string

	server *http.Server
	done   <-chan error
}

// Start opens and migrates the database, creates the first system administrator if there is none, starts the
// manager and the HTTP server, and returns once the API listens. It runs until ctx ends; Wait returns then.
func Start(ctx context.Context, cfg Config) (*App, error) {
	issuer, err := auth.NewIssuer(cfg.JWTKey, cfg.SessionLifetime)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(logr.NewContext(ctx, cfg.Log), cfg.DatabaseDriver, cfg.DatabaseDSN)
	if err != nil {
		return nil, fmt.Errorf("opening the database: %w", err)
	}
	if err := bootstrap(ctx, st, cfg); err != nil {
		_ = st.Close()
		return nil, err
	}
	opts := cfg.Manager
	opts.Cache = kube.CacheOptions(cfg.Kube)
	opts.Client = kube.ClientOptions()
	opts.Logger = cfg.Log
	mgr, err := ctrl.NewManager(cfg.RESTConfig, opts)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	cluster, err := kube.Setup(mgr, st, cfg.Kube)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.ListenAddress)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	a := &App{
		Store: st, Cluster: cluster, Addr: ln.Addr().String(),
		server: &http.Server{
			Handler:           api.New(st, cluster, issuer, cfg.Log.WithName("api")).Handler(),
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
			IdleTimeout: 2 * time.Minute,
		},
	}
	mgrDone := make(chan error, 1)
	go func() {
		err := mgr.Start(ctx)
		if err != nil {
			// Without its manager the process would serve with a dead cache and no reconciler: stop serving, so
			// that the process exits and is restarted.
			cfg.Log.Error(err, "the Kubernetes manager stopped; shutting down")
			_ = a.server.Close()
		}
		mgrDone <- err
	}()
	a.done = serve(ctx, a.server, ln, shutdownTimeout, func() error { return errors.Join(<-mgrDone, st.Close()) })
	go prune(ctx, st, cfg.Log)
	return a, nil
}

// Wait returns when the process has stopped.
func (a *App) Wait() error { return <-a.done }

// bootstrap creates the first system administrator from the configured name and password, once.
func bootstrap(ctx context.Context, st *store.Store, cfg Config) error {
	n, err := st.CountSystemAdmins(ctx)
	if err != nil || n > 0 {
		return err
	}
	if cfg.BootstrapAdmin == "" || cfg.BootstrapPass == "" {
		cfg.Log.Info("there is no system administrator yet: set the bootstrap administrator's name and password to create one")
		return nil
	}
	hash, err := auth.HashPassword(cfg.BootstrapPass)
	if err != nil {
		return fmt.Errorf("bootstrap administrator: %w", err)
	}
	_, err = st.CreateUser(ctx, store.User{Username: cfg.BootstrapAdmin, Role: store.RoleSystemAdmin, PasswordHash: hash, Enabled: true})
	if err == nil {
		cfg.Log.Info("created the first system administrator", "username", cfg.BootstrapAdmin)
	}
	return err
}

// taskRetention is how long an ended task can still be read.
const taskRetention = 24 * time.Hour

// prune forgets logged-out sessions once their tokens have expired anyway, and tasks that ended long ago.
func prune(ctx context.Context, st *store.Store, log logr.Logger) {
	_ = wait.PollUntilContextCancel(ctx, 10*time.Minute, false, func(ctx context.Context) (bool, error) {
		if err := st.PruneRevokedSessions(ctx); err != nil {
			log.Error(err, "pruning revoked sessions")
		}
		if err := st.PruneTasks(ctx, time.Now().Add(-taskRetention)); err != nil {
			log.Error(err, "pruning tasks")
		}
		return false, nil // until ctx ends
	})
}
