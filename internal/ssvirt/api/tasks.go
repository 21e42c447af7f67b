package api

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Task is Cloud Director's XML Task, which its clients poll at the Location of a 202 answer until its status is
// success or error.
type Task struct {
	XMLName       xml.Name  `xml:"http://www.vmware.com/vcloud/v1.5 Task" json:"-"`
	HREF          string    `xml:"href,attr" json:"href"`
	Type          string    `xml:"type,attr" json:"type"`
	ID            string    `xml:"id,attr" json:"id"`
	Name          string    `xml:"name,attr" json:"name"`
	Status        string    `xml:"status,attr" json:"status"`
	OperationName string    `xml:"operationName,attr" json:"operationName"`
	Operation     string    `xml:"operation,attr" json:"operation"`
	StartTime     string    `xml:"startTime,attr" json:"startTime"`
	EndTime       string    `xml:"endTime,attr,omitempty" json:"endTime,omitempty"`
	Owner         TaskRef   `xml:"Owner" json:"owner"`
	Error         *XMLError `xml:",omitempty" json:"error,omitempty"`
	User          TaskRef   `xml:"User" json:"user"`
	Organization  TaskRef   `xml:"Organization" json:"organization"`
	Details       string    `xml:"Details,omitempty" json:"details,omitempty"`
}

// TaskRef is a reference inside a task.
type TaskRef struct {
	HREF string `xml:"href,attr,omitempty" json:"href,omitempty"`
	ID   string `xml:"id,attr" json:"id"`
	Name string `xml:"name,attr" json:"name"`
	Type string `xml:"type,attr,omitempty" json:"type,omitempty"`
}

func taskURL(r *http.Request, id string) string {
	return (&url.URL{Scheme: scheme(r), Host: r.Host, Path: "/api/task/" + id}).String()
}

func (s *Server) taskOut(r *http.Request, t store.Task) (Task, error) {
	org, err := s.orgRef(r.Context(), t.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		org, err = Ref{ID: naming.URN(naming.KindOrg, t.OrgID)}, nil // the organization went after the task
	}
	if err != nil {
		return Task{}, err
	}
	out := Task{
		HREF: taskURL(r, t.ID), Type: "application/vnd.vmware.vcloud.task+xml", ID: naming.URN(naming.KindTask, t.ID),
		Name: "task", Status: t.Status, OperationName: t.Operation, Operation: t.Message,
		StartTime:    t.CreatedAt.Format(time.RFC3339Nano),
		Owner:        TaskRef{ID: naming.URN(t.OwnerKind, t.OwnerID), Name: t.OwnerName, Type: "application/vnd.ssvirt." + t.OwnerKind + "+json"},
		User:         TaskRef{ID: naming.URN(naming.KindUser, t.UserID), Name: t.UserName},
		Organization: TaskRef{ID: org.ID, Name: org.Name},
		Details:      t.Message,
	}
	if !t.EndedAt.IsZero() {
		out.EndTime = t.EndedAt.Format(time.RFC3339Nano)
	}
	if t.Status == store.TaskError {
		out.Error = &XMLError{MajorErrorCode: http.StatusInternalServerError, MinorErrorCode: "TASK_FAILED", Message: t.Message}
	}
	return out, nil
}

// getTask answers a task of the caller's organization (any task, for system administrators); other tasks are
// answered as missing ones.
func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	raw := r.PathValue("taskId")
	id, ok := naming.ParseURN(naming.KindTask, naming.URN(naming.KindTask, raw))
	if !ok {
		return noAccess("task " + raw)
	}
	t, err := s.store.GetTask(r.Context(), principal(r).Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return noAccess("task " + raw)
	}
	if err != nil {
		return err
	}
	out, err := s.taskOut(r, t)
	if err != nil {
		return err
	}
	if wantsXML(r) {
		writeXML(w, http.StatusOK, out)
	} else {
		writeJSON(w, http.StatusOK, out)
	}
	return nil
}

// startTask records a running task of the caller on an owner.
func (s *Server) startTask(r *http.Request, orgID, operation, ownerKind, ownerID, ownerName string) (store.Task, error) {
	return callerTasks{s.store}.StartTask(r.Context(), orgID, operation, ownerKind, ownerID, ownerName)
}

// callerTasks starts tasks for the services the handlers call, as startTask does: the user is the caller whose
// request ctx belongs to, which only the API knows.
type callerTasks struct{ store *store.Store }

func (t callerTasks) StartTask(ctx context.Context, orgID, operation, ownerKind, ownerID, ownerName string) (store.Task, error) {
	p := ctx.Value(principalKey{}).(Principal)
	return t.store.CreateTask(ctx, store.Task{OrgID: orgID, Operation: operation, OwnerKind: ownerKind, OwnerID: ownerID,
		OwnerName: ownerName, UserID: p.UserID, UserName: p.Username, Message: operation + " " + ownerName})
}

// accepted answers 202 with Location: the task, and body when there is one.
func accepted(w http.ResponseWriter, r *http.Request, t store.Task, body any) {
	w.Header().Set("Location", taskURL(r, t.ID))
	if body == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusAccepted, body)
}
