package api

import (
	"encoding/xml"
	"net/http"
	"net/url"
)

// APIVersions are the versions /api/versions advertises. 37.0 is the lowest Cloud Director's Go SDK (v3) logs in
// with. 40.0 puts the SDK in its Tenant Manager mode, the only mode in which its typed organization, user, virtual
// datacenter (Region Quota) and content library calls run; those calls are served. (The mode's typed regions,
// zones, supervisors, networking and uploads are not: see the chart's README.)
var APIVersions = []string{"37.0", "40.0"}

// SupportedVersions is /api/versions' document, as the SDK parses it.
type SupportedVersions struct {
	XMLName  xml.Name      `xml:"http://www.vmware.com/vcloud/versions SupportedVersions"`
	Versions []VersionInfo `xml:"VersionInfo"`
}

// VersionInfo is one served version and where to log in with it.
type VersionInfo struct {
	Deprecated       bool   `xml:"deprecated,attr"`
	Version          string `xml:"Version"`
	LoginURL         string `xml:"LoginUrl"`
	ProviderLoginURL string `xml:"ProviderLoginUrl"`
}

// versions answers without authentication: every client starts here to learn where to log in.
func (s *Server) versions(w http.ResponseWriter, r *http.Request) error {
	at := func(path string) string { return (&url.URL{Scheme: scheme(r), Host: r.Host, Path: path}).String() }
	doc := SupportedVersions{}
	for _, v := range APIVersions {
		doc.Versions = append(doc.Versions, VersionInfo{Version: v,
			LoginURL: at("/cloudapi/1.0.0/sessions"), ProviderLoginURL: at("/cloudapi/1.0.0/sessions/provider")})
	}
	writeXML(w, http.StatusOK, doc)
	return nil
}
