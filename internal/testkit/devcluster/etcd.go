package devcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
)

func (c *Cluster) etcdProcess() *process {
	client := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdPeer)
	return &process{
		name:    ComponentEtcd,
		bin:     c.bins[binEtcd.file],
		dataDir: c.dir,
		args: []string{
			"--name=devcluster",
			"--data-dir=" + filepath.Join(c.dir, "etcd"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			// Peer URLs are spelled out although there are no peers: the defaults name port 2380, which a
			// second cluster on the same machine would also want.
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=devcluster=" + peer,
			// The data is thrown away with the cluster; fsync only makes every write wait for the disk.
			"--unsafe-no-fsync",
			"--log-level=warn",
		},
	}
}

func (c *Cluster) etcdReady(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/health", c.ports.etcdClient), nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return false, fmt.Errorf("etcd /health: %s %s", resp.Status, body)
	}
	return true, nil
}
