package resolvers

import (
	"feedservice/internal/apperr"
	"feedservice/models"
)

// parseID decodes a global ID argument that must name a node of kind.
func parseID(kind, id string) (int64, error) {
	k, n, err := parseAnyID(id)
	if err != nil {
		return 0, err
	}
	if k != kind {
		return 0, apperr.BadInput("%s is the id of a %s, not of a %s", apperr.Quote(id), k, kind)
	}
	return n, nil
}

// parseAnyID decodes a global ID argument of any kind. Its refusal quotes
// the id only as far as apperr.Quote does: it is the client's input.
func parseAnyID(id string) (kind string, n int64, err error) {
	kind, n, err = models.ParseNodeID(id)
	if err != nil {
		return "", 0, apperr.BadInput("%s is not a valid id", apperr.Quote(id))
	}
	return kind, n, nil
}
