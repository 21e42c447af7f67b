package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/vdc"
)

// The VDC service's refusals are answered with the statuses and codes Cloud Director's clients (and the
// terraform replay) expect, in the service's words; anything else is left to fail.
func TestVDCRefusal(t *testing.T) {
	for _, c := range []struct {
		kind   error
		status int
		code   string
	}{
		{vdc.ErrNameTaken, http.StatusConflict, CodeConflict},
		{vdc.ErrNamespaceTaken, http.StatusConflict, CodeConflict},
		{vdc.ErrHasVApps, http.StatusConflict, CodeBusy},
		{vdc.ErrUnavailable, http.StatusServiceUnavailable, CodeUnavailable},
	} {
		err := vdcRefusal(fmt.Errorf("wrapped: %w", &vdc.Error{Kind: c.kind, Msg: "words", Err: errors.New("cause")}))
		var ae *apiError
		if !errors.As(err, &ae) || ae.status != c.status || ae.code != c.code || ae.msg != "words" {
			t.Errorf("%v: got %#v, want %d %s \"words\"", c.kind, err, c.status, c.code)
		}
	}
	if err := vdcRefusal(store.ErrNotFound); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a store error became %v", err)
	}
	if err := vdcRefusal(nil); err != nil {
		t.Errorf("nil became %v", err)
	}
}

// Settings keep the VDC's enabled flag when the request leaves it out.
func TestVDCSettings(t *testing.T) {
	off := false
	in := VDC{Description: "d", ComputeCapacity: ComputeCapacity{CPU: Capacity{Limit: 1}, Memory: Capacity{Limit: 2}},
		StorageCapacity: Capacity{Limit: 3}}
	if got := in.settings(true); !got.Enabled || got.Description != "d" || got.CPUMillicores != 1 || got.MemoryMiB != 2 || got.StorageGiB != 3 {
		t.Errorf("settings(true) = %+v", got)
	}
	if got := in.settings(false); got.Enabled {
		t.Errorf("settings(false) without isEnabled = %+v", got)
	}
	in.IsEnabled = &off
	if got := in.settings(true); got.Enabled {
		t.Errorf("isEnabled false, settings(true) = %+v", got)
	}
}
