// Package repo finds the repository checkout and reads the versions its go.mod files pin, so that the tools, the
// tests and the Makefile name one version of each component and nobody writes it as a literal.
package repo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var modulePathRE = regexp.MustCompile(`(?m)^module github\.com/virtual-ingress/virtual-ingress\s*$`)

// Root walks up from the working directory to the checkout of github.com/virtual-ingress/virtual-ingress.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePathRE.Match(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the virtual-ingress repository")
		}
		dir = parent
	}
}

// RequiredVersion reads the version of module from a tidy go.mod (`path version` inside a require block or
// after `require`); replacements are skipped.
func RequiredVersion(goMod, module string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inReplace := false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch {
		case fields[0] == "replace":
			inReplace = len(fields) > 1 && fields[1] == "("
			continue
		case fields[0] == ")":
			inReplace = false
			continue
		case fields[0] == "require" && len(fields) >= 3:
			fields = fields[1:]
		}
		if !inReplace && len(fields) >= 2 && fields[0] == module && strings.HasPrefix(fields[1], "v") {
			return fields[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s does not require %s", goMod, module)
}

// Versions are the component versions the devcluster builds and the charts target.
type Versions struct {
	// Kubernetes is the version of kube-apiserver and kube-controller-manager (k8s.io/kubernetes).
	Kubernetes string
	// Etcd is the etcd server's version.
	Etcd string
	// Kyverno is the version of Kyverno's controllers and CLI.
	Kyverno string
}

// ReadVersions reads Versions from the go.mod files under root.
func ReadVersions(root string) (Versions, error) {
	var v Versions
	kube := filepath.Join(root, "tools", "devcluster", "binaries", "kubernetes", "go.mod")
	for _, r := range []struct {
		goMod, module string
		into          *string
	}{
		{kube, "k8s.io/kubernetes", &v.Kubernetes},
		{kube, "go.etcd.io/etcd/server/v3", &v.Etcd},
		{filepath.Join(root, "go.mod"), "github.com/kyverno/kyverno", &v.Kyverno},
	} {
		var err error
		if *r.into, err = RequiredVersion(r.goMod, r.module); err != nil {
			return Versions{}, err
		}
	}
	return v, nil
}

// KubeVersion is the Kubernetes version the charts are rendered and linted for. As in the Makefile (and in Helm's
// own), it follows the k8s.io/client-go the binaries are built with: v0.36.3 is Kubernetes v1.36.3.
func KubeVersion(root string) (string, error) {
	clientGo, err := RequiredVersion(filepath.Join(root, "go.mod"), "k8s.io/client-go")
	if err != nil {
		return "", err
	}
	minorPatch, ok := strings.CutPrefix(clientGo, "v0.")
	if !ok {
		return "", fmt.Errorf("k8s.io/client-go %s: want a v0.x.y version", clientGo)
	}
	return "v1." + minorPatch, nil
}
