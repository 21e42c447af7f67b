package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"

	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// cosign's key-based signature format ("simple signing"), as `cosign sign --key` writes it and `cosign verify --key`
// reads it: a manifest tagged sha256-<hex>.sig in the signed artifact's repository, one layer holding the payload
// below, the payload's ECDSA signature in the layer's annotation. Written here with go-containerregistry and the
// standard library: cosign as a library would add some 270 modules to the tool.
const simpleSigningMediaType types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"

const signatureAnnotation = "dev.cosignproject.cosign/signature"

// simpleSigning is the payload cosign signs: which manifest digest, under which repository.
type simpleSigning struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// signer signs with an ECDSA P-256 key, the kind `cosign generate-key-pair` makes, read from an unencrypted PEM file
// (PKCS#8 "PRIVATE KEY" or SEC 1 "EC PRIVATE KEY", as openssl writes them).
type signer struct{ key *ecdsa.PrivateKey }

func loadSigner(path string) (*signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%s: a PEM %q; want an unencrypted ECDSA P-256 key (PRIVATE KEY or EC PRIVATE KEY)", path, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%s: want an ECDSA P-256 key", path)
	}
	return &signer{key: ec}, nil
}

// signatureRef is where cosign looks for the signatures of digest in repository repo.
func signatureRef(repo string, digest v1.Hash) string {
	return repo + ":" + digest.Algorithm + "-" + digest.Hex + ".sig"
}

// signature is the manifest carrying the signature of digest as an artifact of repository repo.
func (s *signer) signature(repo string, digest v1.Hash) (v1.Image, error) {
	var p simpleSigning
	p.Critical.Identity.DockerReference = repo
	p.Critical.Image.DockerManifestDigest = digest.String()
	p.Critical.Type = "cosign container image signature"
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, sum[:])
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:       static.NewLayer(payload, simpleSigningMediaType),
		Annotations: map[string]string{signatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		return nil, err
	}
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

// sign pushes the signature of the manifest ref (repository:tag) resolved to digest.
func (s *signer) sign(t *target, ref string, digest v1.Hash) (string, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return "", err
	}
	repo := r.Context().Name()
	img, err := s.signature(repo, digest)
	if err != nil {
		return "", err
	}
	sigRef, err := name.ParseReference(signatureRef(repo, digest), name.StrictValidation)
	if err != nil {
		return "", err
	}
	if err := remote.Write(sigRef, img, t.opts...); err != nil {
		return "", fmt.Errorf("pushing the signature of %s: %w", ref, err)
	}
	return sigRef.String(), nil
}
