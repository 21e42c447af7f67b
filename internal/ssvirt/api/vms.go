package api

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// VM is one of a vApp's VMs in the API: a KubeVirt VirtualMachine its TemplateInstance made, by its UID.
type VM struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	VApp      Ref    `json:"vapp"`
	VDC       Ref    `json:"vdc"`
	Org       Ref    `json:"org"`
	Namespace string `json:"namespace"`
	// Status is Cloud Director's word for the power state; PrintableStatus, Ready and RunStrategy are KubeVirt's.
	Status          string    `json:"status"`
	PrintableStatus string    `json:"printableStatus"`
	Ready           bool      `json:"ready"`
	RunStrategy     string    `json:"runStrategy"`
	CreatedAt       time.Time `json:"createdAt"`
}

func vmOut(a store.VApp, v kube.VM) VM {
	return VM{
		ID: naming.URN(naming.KindVM, v.UID), Name: v.Name, VApp: Ref{ID: naming.URN(naming.KindVApp, a.ID), Name: a.Name},
		VDC: Ref{ID: naming.URN(naming.KindVDC, a.VDCID)}, Org: Ref{ID: naming.URN(naming.KindOrg, a.OrgID)},
		Namespace: v.Namespace, Status: powerStatus(v), PrintableStatus: v.PrintableStatus, Ready: v.Ready,
		RunStrategy: v.RunStrategy, CreatedAt: v.CreatedAt,
	}
}

// powerStatus names KubeVirt's printable status as Cloud Director names power states; every state in between
// (starting, stopping, migrating, failing to start) is UNRESOLVED, with KubeVirt's word in printableStatus.
func powerStatus(v kube.VM) string {
	switch v.PrintableStatus {
	case kube.StatusRunning:
		return "POWERED_ON"
	case kube.StatusStopped:
		return "POWERED_OFF"
	case "Paused":
		return "SUSPENDED"
	case "":
		return "UNKNOWN"
	}
	return "UNRESOLVED"
}

// vmFields: VMs are read from the cache, not rows; they are filtered and sorted in memory.
var vmFields = fields{"id": urn("", naming.KindVM), "name": text(""), "status": text(""), "printableStatus": text(""),
	"vapp.id": urn("", naming.KindVApp), "vdc.id": urn("", naming.KindVDC), "org.id": urn("", naming.KindOrg)}

func (v VM) field(name string) string {
	return map[string]string{"id": v.ID, "name": v.Name, "status": v.Status, "printableStatus": v.PrintableStatus,
		"vapp.id": v.VApp.ID, "vdc.id": v.VDC.ID, "org.id": v.Org.ID}[name]
}

func (s *Server) vappVMs(r *http.Request, a store.VApp) ([]VM, error) {
	vms, err := s.cluster.VAppVMs(r.Context(), a)
	if err != nil {
		return nil, unavailable("the VMs cannot be read now: " + err.Error())
	}
	out := make([]VM, len(vms))
	for i, v := range vms {
		out[i] = vmOut(a, v)
	}
	return out, nil
}

// listVMs lists the VMs of every vApp the caller sees.
func (s *Server) listVMs(w http.ResponseWriter, r *http.Request) error {
	lr, err := parseList(r, vmFields)
	if err != nil {
		return err
	}
	var all []VM
	for page := 1; ; page++ {
		apps, total, err := s.store.ListVApps(r.Context(), principal(r).Scope(), "", store.Query{Page: store.Page{Page: page, PageSize: MaxPageSize}})
		if err != nil {
			return err
		}
		for _, a := range apps {
			vms, err := s.vappVMs(r, a)
			if err != nil {
				return err
			}
			all = append(all, vms...)
		}
		if page*MaxPageSize >= total {
			break
		}
	}
	out, total := window(lr, all, VM.field)
	writePage(w, r, lr.page, total, out)
	return nil
}

func (s *Server) listVAppVMs(w http.ResponseWriter, r *http.Request) error {
	a, err := s.vapp(r)
	if err != nil {
		return err
	}
	return writeWindow(w, r, vmFields, func() ([]VM, error) { return s.vappVMs(r, a) }, VM.field)
}

// vm finds the VM of the path among the VMs of the vApp whose TemplateInstance made it, in the caller's scope:
// another organization's VM answers as a missing one.
func (s *Server) vm(r *http.Request) (store.VApp, kube.VM, error) {
	id, err := idOf(r, "vmId", naming.KindVM, "VM")
	if err != nil {
		return store.VApp{}, kube.VM{}, err
	}
	vappID, err := s.cluster.VMVApp(r.Context(), id)
	if errors.Is(err, kube.ErrNoVM) {
		return store.VApp{}, kube.VM{}, noAccess("VM")
	}
	if err != nil {
		return store.VApp{}, kube.VM{}, unavailable("the VM cannot be read now: " + err.Error())
	}
	a, err := s.store.GetVApp(r.Context(), principal(r).Scope(), vappID)
	if errors.Is(err, store.ErrNotFound) {
		return store.VApp{}, kube.VM{}, noAccess("VM")
	}
	if err != nil {
		return store.VApp{}, kube.VM{}, err
	}
	vms, err := s.cluster.VAppVMs(r.Context(), a)
	if err != nil {
		return store.VApp{}, kube.VM{}, unavailable("the VM cannot be read now: " + err.Error())
	}
	for _, v := range vms {
		if v.UID == id {
			return a, v, nil
		}
	}
	return store.VApp{}, kube.VM{}, noAccess("VM")
}

func (s *Server) getVM(w http.ResponseWriter, r *http.Request) error {
	a, v, err := s.vm(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, vmOut(a, v))
	return nil
}

func (s *Server) powerOn(w http.ResponseWriter, r *http.Request) error {
	return s.power(w, r, store.OpPowerOn)
}

func (s *Server) powerOff(w http.ResponseWriter, r *http.Request) error {
	return s.power(w, r, store.OpPowerOff)
}

func (s *Server) reset(w http.ResponseWriter, r *http.Request) error {
	return s.power(w, r, store.OpReset)
}

// power starts operation on the VM as a task: 202 with Location: the task, which ends when KubeVirt's status
// says the VM got there (or at the deadline). A later action on the VM ends the running one in error.
func (s *Server) power(w http.ResponseWriter, r *http.Request, operation string) error {
	if err := noBody(r); err != nil {
		return err
	}
	a, v, err := s.vm(r)
	if err != nil {
		return err
	}
	if !s.cluster.Available() {
		return unavailable("Kubernetes is unreachable: no power action can be taken now; try again later")
	}
	if operation != store.OpPowerOff {
		vdc, err := s.store.GetVDC(r.Context(), store.Scope{}, a.VDCID)
		if err != nil {
			return err
		}
		if !vdc.Enabled {
			return busy("the VDC is disabled: its VMs are not started")
		}
	}
	if err := s.store.SupersedeTasks(r.Context(), v.UID, store.PowerOperations, "superseded by a later "+operation); err != nil {
		return err
	}
	p := principal(r)
	task, err := s.store.CreateTask(r.Context(), store.Task{
		OrgID: a.OrgID, Operation: operation, OwnerKind: naming.KindVM, OwnerID: v.UID, OwnerName: v.Name,
		UserID: p.UserID, UserName: p.Username, Message: operation + " " + v.Name, Step: store.StepPatching,
		Deadline: s.cluster.PowerDeadline(),
	})
	if err != nil {
		return err
	}
	if err := s.cluster.StartPower(r.Context(), task, v); err != nil {
		return unavailable("Kubernetes did not take the power action: " + err.Error())
	}
	// The task may have ended already: the VM was in the state asked for.
	if task, err = s.store.GetTask(r.Context(), store.Scope{}, task.ID); err != nil {
		return err
	}
	out, err := s.taskOut(r, task)
	if err != nil {
		return err
	}
	accepted(w, r, task, out)
	return nil
}

// noBody accepts an action's request without a body, or with an empty one (Cloud Director's SDK sends null).
func noBody(r *http.Request) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 64))
	if err != nil {
		return badRequest("reading the body: " + err.Error())
	}
	switch strings.TrimSpace(string(data)) {
	case "", "null", "{}":
		return nil
	}
	return badRequest("this action takes no body")
}
