// Command echo is the local cluster's test workload, built into an image by internal/testkit/devcluster (no registry
// is reachable): an HTTP server that answers who it is, and the client side for `kubectl exec` probes from inside a
// Pod (no shell or curl in a scratch image).
//
//	echo serve [--listen :8080]   answer every request with "<NAME> <method> <host><path>" (NAME: $POD_NAME or the hostname)
//	echo get URL [--connect ADDR]      print the status line and body of GET URL (TLS unverified: a probe, not a
//	                                   client); --connect dials ADDR (host:port) instead of the URL's host, keeping
//	                                   the URL's name for Host and SNI, as curl's --connect-to
//	echo lookup NAME [--server ADDR]   print NAME's addresses, one per line; --server asks that DNS server (host:port)
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: echo serve [--listen ADDR] | get URL [--connect ADDR] | lookup NAME [--server ADDR]")
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "serve":
		err = serve(args)
	case "get":
		err = get(args)
	case "lookup":
		err = lookup(args)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	log.Printf("echo %s listening on %s", name, *listen)
	srv := &http.Server{
		Addr:              *listen,
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s %s%s\n", name, r.Method, r.Host, r.URL.Path)
		}),
	}
	return srv.ListenAndServe()
}

// urlAndFlag splits args into the one positional argument and the value of the one optional flag.
func urlAndFlag(args []string, name string) (string, string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	value := fs.String(name, "", "")
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return "", "", err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		return "", "", fmt.Errorf("want one argument besides --%s, have %q", name, positional)
	}
	return positional[0], *value, nil
}

func get(args []string) error {
	url, connect, err := urlAndFlag(args, "connect")
	if err != nil {
		return err
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a probe of reachability
	if connect != "" {
		transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, connect)
		}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: transport}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	fmt.Printf("%s\n%s", resp.Status, body)
	return nil
}

func lookup(args []string) error {
	name, server, err := urlAndFlag(args, "server")
	if err != nil {
		return err
	}
	resolver := net.DefaultResolver
	if server != "" {
		resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, server)
		}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := resolver.LookupHost(ctx, name)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		fmt.Println(a)
	}
	return nil
}
