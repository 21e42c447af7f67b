package registry

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

// WriteKeyPair writes an ECDSA P-256 key pair into dir as name.key and name.pub, PEM, as `openssl genpkey -algorithm
// EC -pkeyopt ec_paramgen_curve:P-256` and `openssl pkey -pubout` write them: what the release tool's --sign-key
// reads and `cosign verify --key` checks with.
func WriteKeyPair(dir, name string) (private, public string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	private, public = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	return private, public, errors.Join(
		os.WriteFile(private, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600),
		os.WriteFile(public, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600),
	)
}

// Verify is `cosign verify --key public --insecure-ignore-tlog=true ref` run with the cosign binary at cosign (the
// pinned tools/cosign, `make bin/cosign`): key-based, no transparency log (a private registry, offline as an
// air-gapped site's is), trusting this registry's CA and keeping cosign's files under home.
func (r *Registry) Verify(ctx context.Context, cosign, home, public, ref string) (string, error) {
	cmd := exec.CommandContext(ctx, cosign, "verify", "--key", public, "--insecure-ignore-tlog=true", ref)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+r.CAFile, "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"),
		"DOCKER_CONFIG="+filepath.Join(home, "docker"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
