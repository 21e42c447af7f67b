package devcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the paths of the key material generated for one cluster. Everything is created fresh by every
// `up`: nothing here protects anything beyond a loopback cluster that lives for a test run.
type pki struct {
	caCert, caKey           string
	servingCert, servingKey string
	saKey, saPub            string
	tokenFile               string
	adminToken              string
	controllerMgrToken      string
	// Identities of the node's components, which the bootstrap RBAC policy (or, for cluster DNS, nodeRBAC)
	// grants their rights to.
	schedulerToken, proxyToken, dnsToken, multusToken string

	dir string
	ca  *x509.Certificate
	key *ecdsa.PrivateKey
}

// certFiles is a certificate and its key on disk.
type certFiles struct{ cert, key string }

// issue writes a certificate signed by the cluster CA: a client certificate when ips and dnsNames are empty (CN is
// the user, orgs the groups, as the API server and the kubelet read them), else a serving certificate.
func (p *pki) issue(name, cn string, orgs []string, ips []net.IP, dnsNames []string) (certFiles, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certFiles{}, err
	}
	usage := x509.ExtKeyUsageClientAuth
	if len(ips) > 0 || len(dnsNames) > 0 {
		usage = x509.ExtKeyUsageServerAuth
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dnsNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		return certFiles{}, err
	}
	f := certFiles{cert: filepath.Join(p.dir, name+".crt"), key: filepath.Join(p.dir, name+".key")}
	if err := os.WriteFile(f.cert, pemBlock("CERTIFICATE", der), 0o644); err != nil {
		return certFiles{}, err
	}
	return f, os.WriteFile(f.key, pkcs8PEM(key), 0o600)
}

// Users of the components that authenticate with static tokens.
const (
	userControllerManager = "system:kube-controller-manager"
	userScheduler         = "system:kube-scheduler"
	userProxy             = "system:kube-proxy"
	userDNS               = "system:devcluster:coredns"
	userMultus            = "system:devcluster:multus"
)

// serviceIP is the first address of --service-cluster-ip-range: the apiserver gives it to the `kubernetes`
// Service, and in-cluster clients would dial it.
const serviceIP = "10.96.0.1"

// generatePKI creates the cluster's CA, the API server's serving certificate (valid for 127.0.0.1, the
// `kubernetes` Service's address and apiserverIPs), the service-account key pair and the static tokens.
func generatePKI(dir string, apiserverIPs ...net.IP) (*pki, error) {
	p := &pki{
		caCert:      filepath.Join(dir, "ca.crt"),
		caKey:       filepath.Join(dir, "ca.key"),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "sa.key"),
		saPub:       filepath.Join(dir, "sa.pub"),
		tokenFile:   filepath.Join(dir, "tokens.csv"),
		dir:         dir,
	}
	now := time.Now()

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "devcluster-ca"},
		NotBefore:             now.Add(-time.Hour), // tolerate small clock differences
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p.ca, p.key = ca, caKey

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	servingTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  append([]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(serviceIP)}, apiserverIPs...),
		DNSNames: []string{
			"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local",
		},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTmpl, ca, &servingKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}

	// RSA rather than ECDSA for service-account tokens: every consumer of them understands RS256.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}

	p.adminToken = randomToken()
	p.controllerMgrToken = randomToken()
	p.schedulerToken, p.proxyToken, p.dnsToken, p.multusToken = randomToken(), randomToken(), randomToken(), randomToken()
	// Static tokens: user,uid,"groups". kube-controller-manager, kube-scheduler and kube-proxy get the identities
	// that the bootstrap RBAC policy grants their permissions to, so they run with the same rights as in a kubeadm
	// cluster.
	tokens := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", p.adminToken)
	for _, t := range []struct{ token, user string }{
		{p.controllerMgrToken, userControllerManager},
		{p.schedulerToken, userScheduler},
		{p.proxyToken, userProxy},
		{p.dnsToken, userDNS},
		{p.multusToken, userMultus},
	} {
		tokens += fmt.Sprintf("%s,%s,%s\n", t.token, t.user, t.user)
	}

	files := []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{p.caCert, pemBlock("CERTIFICATE", caDER), 0o644},
		{p.caKey, pkcs8PEM(caKey), 0o600},
		{p.servingCert, pemBlock("CERTIFICATE", servingDER), 0o644},
		{p.servingKey, pkcs8PEM(servingKey), 0o600},
		{p.saKey, pkcs8PEM(saKey), 0o600},
		{p.saPub, pkixPEM(&saKey.PublicKey), 0o644},
		{p.tokenFile, []byte(tokens), 0o600},
	}
	for _, f := range files {
		if f.data == nil {
			return nil, fmt.Errorf("encoding %s", f.path)
		}
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pkcs8PEM(key crypto.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil
	}
	return pemBlock("PRIVATE KEY", der)
}

func pkixPEM(key crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil
	}
	return pemBlock("PUBLIC KEY", der)
}
