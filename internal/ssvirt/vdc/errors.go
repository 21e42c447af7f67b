package vdc

import "errors"

// Kinds of Error.
var (
	// ErrNameTaken: the organization has a VDC of the name.
	ErrNameTaken = errors.New("name taken")
	// ErrNamespaceTaken: every namespace name tried belongs to something else; it also wraps
	// kube.ErrNamespaceTaken.
	ErrNamespaceTaken = errors.New("namespace taken")
	// ErrHasVApps: a VDC is deleted only once its vApps are.
	ErrHasVApps = errors.New("vApps left")
	// ErrUnavailable: Kubernetes did not take a change, which was undone, or was left to the reconciler when
	// undoing it failed too.
	ErrUnavailable = errors.New("unavailable")
)

// Error is an operation the service refused or undid. Kind is one of the Err values above; Msg says what
// happened in words fit for the API's caller; Err is the cause, when there is one.
type Error struct {
	Kind error
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap gives errors.Is and errors.As both the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
