package config

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

func (c *Config) validate() error {
	var errs []error
	if c.DefaultNamespace == "" {
		errs = append(errs, errNoDefaultNamespace)
	} else {
		errs = append(errs, namespaceErr("defaultNamespace", c.DefaultNamespace))
		if c.IsExcluded(c.DefaultNamespace) {
			errs = append(errs, fmt.Errorf("defaultNamespace %q is one of excludedNamespaces", c.DefaultNamespace))
		}
	}
	seen := map[string]bool{}
	for i, ns := range c.DeveloperNamespaces {
		field := fmt.Sprintf("developerNamespaces[%d]", i)
		switch {
		case seen[ns]:
			errs = append(errs, fmt.Errorf("%s: %q is listed twice", field, ns))
		case ns == c.DefaultNamespace:
			errs = append(errs, fmt.Errorf("%s: %q is the defaultNamespace", field, ns))
		case c.IsExcluded(ns):
			errs = append(errs, fmt.Errorf("%s: %q is one of excludedNamespaces", field, ns))
		default:
			errs = append(errs, namespaceErr(field, ns))
		}
		seen[ns] = true
	}
	for i, ns := range c.ExcludedNamespaces {
		errs = append(errs, namespaceErr(fmt.Sprintf("excludedNamespaces[%d]", i), ns))
	}
	errs = append(errs, headerErr(c.HeaderName), c.DeveloperRoutes.validate())
	return errors.Join(errs...)
}

func namespaceErr(field, ns string) error {
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return fmt.Errorf("%s: %q is not a valid namespace name: %s", field, ns, strings.Join(msgs, "; "))
	}
	return nil
}

// headerErr insists on lower case because Istio rejects upper-case keys in http match headers, and on an HTTP token
// because anything else could never be sent by a client.
func headerErr(name string) error {
	if name != strings.ToLower(name) {
		return fmt.Errorf("headerName %q must be lower case (Istio matches header keys in lower case)", name)
	}
	for _, r := range name {
		if !isTokenChar(r) {
			return fmt.Errorf("headerName %q contains %q, which is not allowed in an HTTP header name", name, r)
		}
	}
	return nil
}

func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
