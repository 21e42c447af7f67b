package attachment

import (
	"flag"
	"os"
)

// Options are the flags of `apps-ingress-operator check-attachments`.
type Options struct {
	// Annotations is the Pod's annotations file, as a Downward API volume writes it.
	Annotations string
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Annotations, "annotations", "/etc/podinfo/annotations", "the Pod's annotations, as a Downward API volume writes them")
}

// Run checks that every network the Pod's annotation asks for is attached to this network namespace, and returns
// how many were asked for.
func (o Options) Run() (int, error) {
	content, err := os.ReadFile(o.Annotations)
	if err != nil {
		return 0, err
	}
	value, err := FromDownwardAPI(string(content))
	if err != nil {
		return 0, err
	}
	requested, err := Requested(value)
	if err != nil {
		return 0, err
	}
	have, err := Local()
	if err != nil {
		return 0, err
	}
	return len(requested), Check(requested, have)
}
