package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestSignerRefusesOtherKeys: only an unencrypted ECDSA P-256 key signs; anything else is a clear error before any
// push.
func TestSignerRefusesOtherKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name, pemType string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: pemType, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384DER, _ := x509.MarshalPKCS8PrivateKey(p384)
	for path, want := range map[string]string{
		write("rsa.key", "PRIVATE KEY", rsaDER):                            "want an ECDSA P-256 key",
		write("p384.key", "PRIVATE KEY", p384DER):                          "want an ECDSA P-256 key",
		write("cosign.key", "ENCRYPTED SIGSTORE PRIVATE KEY", []byte("x")): "want an unencrypted ECDSA P-256 key",
	} {
		if _, err := loadSigner(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", filepath.Base(path), err, want)
		}
	}
	o := options{version: "1.0.0", registry: "r.example/x", images: pairs{{"b", "c"}}, signKey: "k", layoutOut: "d"}
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "a bundle is not signed") {
		t.Errorf("--sign-key with --oci-layout: %v, want refused", err)
	}
}

// TestSignatureIsCosignsSimpleSigning: the signature manifest holds one simple-signing layer whose payload names the
// digest and repository, and whose annotation is an ECDSA signature of the payload by the key.
func TestSignatureIsCosignsSimpleSigning(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	digest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	img, err := (&signer{key: key}).signature("r.example/x/ssvirt-api", digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 || len(m.Layers) != 1 || m.Layers[0].MediaType != simpleSigningMediaType {
		t.Fatalf("layers %v (%v), manifest %+v: want one %s layer", layers, err, m.Layers, simpleSigningMediaType)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	var payload simpleSigning
	if err := json.Unmarshal(data, &payload); err != nil {
		t.Fatal(err)
	}
	if payload.Critical.Image.DockerManifestDigest != digest.String() || payload.Critical.Identity.DockerReference != "r.example/x/ssvirt-api" ||
		payload.Critical.Type != "cosign container image signature" {
		t.Errorf("payload %+v", payload)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Layers[0].Annotations[signatureAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if !ecdsa.VerifyASN1(&key.PublicKey, sum[:], sig) {
		t.Error("the annotation is not the key's signature of the payload")
	}
	if got := signatureRef("r.example/x/ssvirt-api", digest); got != "r.example/x/ssvirt-api:sha256-"+digest.Hex+".sig" {
		t.Errorf("signature tag %s", got)
	}
}
