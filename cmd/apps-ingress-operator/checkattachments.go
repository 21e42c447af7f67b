package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/attachment"
)

// checkAttachments is `apps-ingress-operator check-attachments`: the CoreDNS and HAProxy Pods' first init container
// when they ask for secondary networks. It fails, saying which network is missing, unless every one is attached.
func checkAttachments(args []string) error {
	var o attachment.Options
	fs := flag.NewFlagSet("check-attachments", flag.ExitOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := o.Run()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "check-attachments: %d secondary network(s) attached\n", n)
	return nil
}
