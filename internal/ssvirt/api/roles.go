package api

import (
	"net/http"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Role is one of the fixed roles in CloudAPI's shape.
type Role struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly"`
}

var roleNames = []string{store.RoleOrgAdmin, store.RoleSystemAdmin, store.RoleVAppUser}

var roleDescriptions = map[string]string{
	store.RoleSystemAdmin: "everything, in every organization",
	store.RoleOrgAdmin:    "users, catalogs and reads of VDCs in one organization, and what vApp users do",
	store.RoleVAppUser:    "catalogs, instantiation, vApps and their VMs' power in one organization",
}

func roleRef(name string) Ref {
	return Ref{Name: name, ID: naming.URN(naming.KindRole, naming.RoleID(name))}
}

var roleFields = fields{"id": urn("", naming.KindRole), "name": text("")}

// listRoles lists the roles the caller may hand out: organizations do not see the system administrator's.
func (s *Server) listRoles(w http.ResponseWriter, r *http.Request) error {
	lr, err := parseList(r, roleFields)
	if err != nil {
		return err
	}
	var roles []Role
	for _, name := range roleNames {
		if name == store.RoleSystemAdmin && !principal(r).sysAdmin() {
			continue
		}
		ref := roleRef(name)
		roles = append(roles, Role{ID: ref.ID, Name: name, Description: roleDescriptions[name], ReadOnly: true})
	}
	out, total := window(lr, roles, func(ro Role, f string) string {
		if f == "id" {
			return ro.ID
		}
		return ro.Name
	})
	writePage(w, r, lr.page, total, out)
	return nil
}
