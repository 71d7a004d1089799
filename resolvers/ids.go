package resolvers

import (
	"feedservice/internal/apperr"
	"feedservice/models"
)

// parseID decodes a global ID argument that must name a node of kind.
func parseID(kind, id string) (int64, error) {
	k, n, err := models.ParseNodeID(id)
	if err != nil {
		return 0, apperr.BadInput("%q is not a valid id", id)
	}
	if k != kind {
		return 0, apperr.BadInput("%q is the id of a %s, not of a %s", id, k, kind)
	}
	return n, nil
}
