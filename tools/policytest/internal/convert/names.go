package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// maxRouteName is the longest VirtualHTTPRoute name: its CRD refuses longer ones, because the name is the value of
// the virtual-ingress.io/virtualhttproute label on the generated HTTPRoute.
const maxRouteName = 63

// routeNames names the routes of one source, one per host ("" for the route without hostnames), in the order given:
//   - a source that yields one route gives it its own name;
//   - otherwise the route without hostnames keeps the source's name (it holds what applies to every host, the
//     defaultBackend included), and a host's route is <source>-<host>, with '.' as '-' and a leading "*." as
//     "wildcard-" (source web, host shop.example.com: web-shop-example-com; *.example.com: web-wildcard-example-com);
//   - a name that would be longer than 63 characters, or that two hosts of the source would share (a.b.com and
//     a-b.com), is cut to 54 characters and ends in '-' and the first 8 hex digits of the SHA-256 of the host (or,
//     for the source's own name, of that name).
//
// The names depend only on the source's name and hosts. Two sources can still yield the same name; runConvert
// refuses that.
func routeNames(source string, hosts []string) ([]string, error) {
	names := make([]string, len(hosts))
	if len(hosts) == 1 {
		names[0] = shortenedName(source, source)
		return names, nil
	}
	uses := map[string]int{}
	for i, h := range hosts {
		names[i] = shortenedName(source, source)
		if h != "" {
			names[i] = labelSafe(source) + "-" + hostSlug(h)
		}
		uses[names[i]]++
	}
	for i, h := range hosts {
		if h != "" && (uses[names[i]] > 1 || len(names[i]) > maxRouteName) {
			names[i] = hashedName(names[i], h)
		}
	}
	seen := map[string]string{}
	for i, n := range names {
		if prev, dup := seen[n]; dup {
			return nil, fmt.Errorf("hosts %q and %q both give the route name %s", prev, hosts[i], n)
		}
		seen[n] = hosts[i]
	}
	return names, nil
}

// shortenedName is name when a VirtualHTTPRoute may have it, else its hashed form.
func shortenedName(name, key string) string {
	if len(name) <= maxRouteName {
		return name
	}
	return hashedName(name, key)
}

func hashedName(name, key string) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + hex.EncodeToString(sum[:])[:8]
	prefix := name[:min(len(name), maxRouteName-len(suffix))]
	return strings.TrimRight(prefix, "-.") + suffix
}

// labelSafe turns an object name (a DNS subdomain: it may hold dots) into the start of a DNS label.
func labelSafe(name string) string { return strings.ReplaceAll(name, ".", "-") }

func hostSlug(host string) string {
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host = "wildcard." + rest
	}
	return labelSafe(host)
}
