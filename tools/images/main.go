// Command images builds a controller's OCI image for several platforms without a container engine:
// go build per platform, one layer per image on an empty base (nothing is pulled from a registry), and an OCI image
// index written as an OCI layout. With the same sources and flags the digests are the same (fixed timestamps,
// -trimpath).
//
//	go run ./tools/images --out _output/images/virtualservice-operator --version 0.1.0
//
// With --binary it packs a binary built elsewhere (one platform) instead of building --package: the local cluster
// packs the Kyverno programs it already built for its processes into the images Kyverno's chart runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

func main() {
	var o options
	var platforms string
	flag.StringVar(&o.pkg, "package", "./cmd/virtualservice-operator", "Go main package to build")
	flag.StringVar(&o.binary, "binary", "", "pack this prebuilt static binary instead of building --package (exactly one --platforms entry, the binary's)")
	flag.StringVar(&o.name, "name", "virtualservice-operator", "binary and image name")
	flag.StringVar(&o.out, "out", "_output/images/virtualservice-operator", "OCI layout directory to (re)write")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	flag.StringVar(&o.version, "version", "dev", "image version (org.opencontainers.image.version and the layout's ref name)")
	flag.StringVar(&o.revision, "revision", "", "source revision label (org.opencontainers.image.revision)")
	flag.StringVar(&o.source, "source", "https://github.com/virtual-ingress/virtual-ingress", "org.opencontainers.image.source label")
	flag.Int64Var(&o.created, "created", envInt("SOURCE_DATE_EPOCH", 0), "creation time in Unix seconds (default $SOURCE_DATE_EPOCH or 0), for reproducible digests")
	flag.Parse()
	o.platforms = strings.Split(platforms, ",")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := build(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (OCI layout, ref %s)\n", o.out, o.version)
	fmt.Printf("index    %s\n", res.index)
	for _, p := range res.images {
		fmt.Printf("%-8s %s  (%d MiB)\n", p.platform, p.digest, p.size>>20)
	}
}

func envInt(name string, def int64) int64 {
	var v int64
	if _, err := fmt.Sscan(os.Getenv(name), &v); err != nil {
		return def
	}
	return v
}
