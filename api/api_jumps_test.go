package api

import (
	"fmt"
	"testing"

	feedconfig "feedservice/feed/config"
)

// A page jump through GraphQL: offset with first answers the page at that
// offset with totalCount and cursors; every bad argument is a GraphQL
// error with extensions.code BAD_USER_INPUT, at the edge of each limit.
func TestRelationsPageJump(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, backendReal)
	star := s.signUp(t, "jumpstar")
	for i := range 5 {
		fan := s.signUp(t, fmt.Sprintf("jumpfan%d", i))
		relChange(t, fan, "follow", star)
	}
	const q = `query($u: String!, $first: Int, $offset: Int, $after: String) {
		user(username: $u) { followers(first: $first, offset: $offset, after: $after) {
			totalCount edges { cursor node { username } } pageInfo { hasPreviousPage hasNextPage endCursor } } } }`
	var out struct {
		User struct {
			Followers struct {
				TotalCount int
				Edges      []struct{ Node struct{ Username string } }
				PageInfo   struct {
					HasPreviousPage, HasNextPage bool
					EndCursor                    *string
				}
			}
		}
	}
	star.mustDo(t, q, map[string]any{"u": "jumpstar", "first": 2, "offset": 2}, &out)
	f := out.User.Followers
	if f.TotalCount != 5 || len(f.Edges) != 2 || f.Edges[0].Node.Username != "jumpfan2" || f.Edges[1].Node.Username != "jumpfan1" ||
		!f.PageInfo.HasPreviousPage || !f.PageInfo.HasNextPage {
		t.Fatalf("page 2 of 2: %+v", f)
	}
	star.mustDo(t, q, map[string]any{"u": "jumpstar", "first": feedconfig.MaxPageSize, "offset": feedconfig.MaxListOffset}, &out)
	if len(out.User.Followers.Edges) != 0 || out.User.Followers.PageInfo.HasNextPage {
		t.Fatalf("far past the end: %+v", out.User.Followers)
	}
	for _, vars := range []map[string]any{
		{"first": feedconfig.MaxPageSize + 1, "offset": 0},
		{"offset": feedconfig.MaxListOffset + 1},
		{"offset": -1},
		{"offset": 0, "after": *f.PageInfo.EndCursor},
	} {
		vars["u"] = "jumpstar"
		star.mustFail(t, "BAD_USER_INPUT", q, vars)
	}
}
