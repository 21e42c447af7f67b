package routes

import (
	"hash/fnv"
	"maps"
	"strconv"
)

// Files is one server's rendered configuration, by file name. Main holds the files that do not depend on which
// clusters exist; Shards[i] holds those of the clusters ShardOf puts in shard i. Each is written to a ConfigMap of its
// own, so that no single object (a ConfigMap holds at most 1 MiB) bounds the fleet, and a change to one cluster
// rewrites one shard, not the whole configuration.
type Files struct {
	Main   map[string]string
	Shards []map[string]string
}

// All is every file of f, as the server's directory holds them; file names are unique across f.
func (f Files) All() map[string]string {
	out := maps.Clone(f.Main)
	if out == nil {
		out = map[string]string{}
	}
	for _, s := range f.Shards {
		maps.Copy(out, s)
	}
	return out
}

// Size is what files weigh in a ConfigMap: their names and contents.
func Size(files map[string]string) int {
	n := 0
	for k, v := range files {
		n += len(k) + len(v)
	}
	return n
}

// ShardOf is the shard of n that the cluster with key belongs to. A hash of the key, not a position in the sorted
// fleet: adding or removing a cluster leaves every other cluster in its shard.
func ShardOf(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// ByShard splits clusters (in their order) into n shards by ShardOf.
func ByShard(clusters []Cluster, n int) [][]Cluster {
	n = max(n, 1)
	out := make([][]Cluster, n)
	for _, c := range clusters {
		i := ShardOf(c.Key, n)
		out[i] = append(out[i], c)
	}
	return out
}

// ShardName is the name of shard i's file or ConfigMap derived from base ("base-i").
func ShardName(base string, i int) string { return base + "-" + strconv.Itoa(i) }
