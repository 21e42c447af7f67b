package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// VApp is a vApp in the API.
type VApp struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	VDC           Ref       `json:"vdc"`
	Org           Ref       `json:"org"`
	CatalogItemID string    `json:"catalogItemId"`
	TemplateName  string    `json:"templateName"`
	Namespace     string    `json:"namespace"`
	Status        string    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedBy     string    `json:"createdBy"`
	CreatedAt     time.Time `json:"createdAt"`
}

func vappOut(a store.VApp) VApp {
	return VApp{
		ID: naming.URN(naming.KindVApp, a.ID), Name: a.Name, Description: a.Description,
		VDC: Ref{ID: naming.URN(naming.KindVDC, a.VDCID)}, Org: Ref{ID: naming.URN(naming.KindOrg, a.OrgID)},
		CatalogItemID: naming.URN(naming.KindCatalogItem, a.CatalogItemID), TemplateName: a.TemplateName,
		Namespace: a.Namespace, Status: a.Status, StatusMessage: a.StatusMessage, CreatedBy: a.CreatedBy, CreatedAt: a.CreatedAt,
	}
}

// InstantiateRequest asks for a vApp made from a catalog item. Parameter values are strings, handed to the
// template controller as they are.
type InstantiateRequest struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	CatalogItem Ref               `json:"catalogItem"`
	Parameters  map[string]string `json:"parameters"`
}

const (
	maxParams     = 64
	maxParamValue = 4096
)

// checkParameters: every required parameter without a default or generator is given, no unknown parameter is
// given; generated ones may be left to the template controller.
func checkParameters(t kube.Template, given map[string]string) error {
	if len(given) > maxParams {
		return badRequest(fmt.Sprintf("parameters: at most %d", maxParams))
	}
	known := map[string]bool{}
	var missing []string
	for _, p := range t.Parameters {
		known[p.Name] = true
		if _, ok := given[p.Name]; !ok && p.Required && p.Value == "" && p.Generate == "" {
			missing = append(missing, p.Name)
		}
	}
	var unknown []string
	for name, v := range given {
		if !known[name] {
			unknown = append(unknown, name)
		}
		if len(v) > maxParamValue {
			return badRequest(fmt.Sprintf("parameter %s: at most %d bytes", name, maxParamValue))
		}
	}
	sort.Strings(missing)
	sort.Strings(unknown)
	if len(unknown) > 0 {
		return badRequest(fmt.Sprintf("template %s has no parameters %s", t.Name, strings.Join(unknown, ", ")))
	}
	if len(missing) > 0 {
		return badRequest(fmt.Sprintf("template %s requires parameters %s", t.Name, strings.Join(missing, ", ")))
	}
	return nil
}

func (s *Server) instantiate(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	vdcID, err := idOf(r, "vdcId", naming.KindVDC, "VDC")
	if err != nil {
		return err
	}
	v, err := s.store.GetVDC(r.Context(), p.Scope(), vdcID)
	if errors.Is(err, store.ErrNotFound) {
		return noAccess("VDC")
	}
	if err != nil {
		return err
	}
	var in InstantiateRequest
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := checkName("name", in.Name); err != nil {
		return err
	}
	if err := checkText("description", in.Description, 1024); err != nil {
		return err
	}
	itemID, ok := naming.ParseURN(naming.KindCatalogItem, in.CatalogItem.ID)
	if !ok {
		return badRequest("catalogItem.id is not a catalog item URN")
	}
	if !v.Enabled {
		return busy("the VDC is disabled")
	}
	if !s.cluster.Available() {
		return unavailable("Kubernetes is unreachable: nothing can be instantiated now; try again later")
	}
	if v.State != store.StateReady {
		return busy("the VDC's namespace is not ready yet")
	}
	t, err := s.catalogItem(r, v.OrgID, itemID)
	if err != nil {
		return err
	}
	if err := checkParameters(t, in.Parameters); err != nil {
		return err
	}
	// From the row to the TemplateInstance within the cluster's bound: past twice that, the leader takes a vApp
	// still without its TemplateInstance for one a stopped process left, and removes it.
	ctx, cancel := context.WithTimeout(r.Context(), s.cluster.InstantiateTimeout())
	defer cancel()
	digest := s.requestDigest(in, itemID)
	app, err := s.store.CreateVApp(ctx, store.VApp{
		OrgID: v.OrgID, VDCID: v.ID, Name: in.Name, Description: in.Description, CatalogItemID: itemID,
		TemplateName: t.Name, Namespace: v.Namespace, CreatedBy: p.Username, RequestDigest: digest,
	})
	if errors.Is(err, store.ErrConflict) {
		return s.answerRetry(w, r, v.ID, in.Name, p.Username, digest)
	}
	if err != nil {
		return err
	}
	// What fails from here is undone on a context of its own: ctx may be the deadline that failed it, and the
	// request's ends when its client goes away.
	undo, cancelUndo := context.WithTimeout(context.WithoutCancel(r.Context()), s.cluster.InstantiateTimeout())
	defer cancelUndo()
	// The task exists before the TemplateInstance, so that the reconciler cannot see the instance end before there
	// is a task to finish.
	task, err := s.startTask(r.WithContext(ctx), app.OrgID, store.OpInstantiate, naming.KindVApp, app.ID, app.Name)
	if err != nil {
		s.dropVApp(undo, app.ID)
		return err
	}
	// Instantiate takes back whatever part of the TemplateInstance it made before it fails.
	if err := s.cluster.Instantiate(ctx, app, t, in.Parameters, p.Username); err != nil {
		s.dropVApp(undo, app.ID)
		msg := "Kubernetes did not take the TemplateInstance: " + err.Error()
		if fErr := s.store.FinishTask(undo, task.ID, store.TaskError, msg); fErr != nil {
			s.log.Error(fErr, "ending the task of a failed instantiation", "task", task.ID)
		}
		return unavailable(msg)
	}
	accepted(w, r, task, vappOut(app))
	return nil
}

// answerRetry answers an instantiation whose name the VDC already has. A client that got no answer, or an error from a
// replica that went away, cannot tell what became of its request and sends it again: the same user's request (the
// same name, catalog item, description and parameters) is answered as the first one was, with the vApp it made and
// its task (202), which says how it went. Anything else under that name is a conflict.
func (s *Server) answerRetry(w http.ResponseWriter, r *http.Request, vdcID, name, user, digest string) error {
	taken := conflict("the VDC has a vApp named " + name)
	app, err := s.store.VAppNamed(r.Context(), vdcID, name)
	if errors.Is(err, store.ErrNotFound) {
		return taken // deleted since
	} else if err != nil {
		return err
	}
	if app.CreatedBy != user || app.RequestDigest != digest {
		return taken
	}
	task, err := s.store.LatestTask(r.Context(), app.ID, store.OpInstantiate)
	if errors.Is(err, store.ErrNotFound) {
		return taken // its task is forgotten (pruned): the vApp's status says how it went
	} else if err != nil {
		return err
	}
	accepted(w, r, task, vappOut(app))
	return nil
}

// requestDigest identifies what an instantiation asks for, parameters in name order.
func (s *Server) requestDigest(in InstantiateRequest, itemID string) string {
	parts := []string{itemID, in.Description}
	for _, k := range slices.Sorted(maps.Keys(in.Parameters)) {
		parts = append(parts, k, in.Parameters[k])
	}
	return s.issuer.Digest(parts...)
}

// dropVApp removes the row of an instantiation that failed; one left behind is settled by the leader's check of
// vApps still instantiating.
func (s *Server) dropVApp(ctx context.Context, id string) {
	if err := s.store.DeleteVApp(ctx, store.Scope{}, id); err != nil {
		s.log.Error(err, "removing the row of a failed instantiation", "vapp", id)
	}
}

// catalogItem finds the Template behind item id among the catalogs of the organization.
func (s *Server) catalogItem(r *http.Request, orgID, itemID string) (kube.Template, error) {
	ts, err := s.templates(r)
	if err != nil {
		return kube.Template{}, err
	}
	for page := 1; ; page++ {
		cats, total, err := s.store.ListCatalogs(r.Context(), store.Scope{OrgID: orgID}, store.Query{Page: store.Page{Page: page, PageSize: MaxPageSize}})
		if err != nil {
			return kube.Template{}, err
		}
		for _, c := range cats {
			for _, t := range ts {
				if naming.CatalogItemID(c.ID, t.Name) == itemID {
					return t, nil
				}
			}
		}
		if page*MaxPageSize >= total {
			return kube.Template{}, noAccess("catalog item")
		}
	}
}

var vappFields = fields{
	"id": urn("id", naming.KindVApp), "name": text("name"), "description": text("description"), "status": text("status"),
	"vdc.id": urn("vdc_id", naming.KindVDC), "org.id": urn("org_id", naming.KindOrg), "templateName": text("template_name"),
}

func (s *Server) listVApps(w http.ResponseWriter, r *http.Request) error {
	return writeList(w, r, vappFields, func(q store.Query) ([]store.VApp, int, error) {
		return s.store.ListVApps(r.Context(), principal(r).Scope(), "", q)
	}, vappOut)
}

func (s *Server) vapp(r *http.Request) (store.VApp, error) {
	id, err := idOf(r, "vappId", naming.KindVApp, "vApp")
	if err != nil {
		return store.VApp{}, err
	}
	a, err := s.store.GetVApp(r.Context(), principal(r).Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return a, noAccess("vApp")
	}
	return a, err
}

func (s *Server) getVApp(w http.ResponseWriter, r *http.Request) error {
	a, err := s.vapp(r)
	return writeOne(w, http.StatusOK, vappOut(a), err)
}

// deleteVApp deletes the TemplateInstance (Kubernetes' garbage collector takes what it made), then the row.
func (s *Server) deleteVApp(w http.ResponseWriter, r *http.Request) error {
	a, err := s.vapp(r)
	if err != nil {
		return err
	}
	if !s.cluster.Available() {
		return unavailable("Kubernetes is unreachable: the vApp is kept until it can be deleted there; try again later")
	}
	if err := s.cluster.DeleteVApp(r.Context(), a); err != nil {
		return unavailable("Kubernetes did not delete the TemplateInstance; the vApp is kept: " + err.Error())
	}
	if err := s.store.DeleteVApp(r.Context(), store.Scope{}, a.ID); err != nil {
		return err
	}
	if err := s.store.FinishTasks(r.Context(), a.ID, store.OpInstantiate, store.TaskError, "the vApp was deleted before it was deployed"); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
