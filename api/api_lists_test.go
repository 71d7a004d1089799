package api

import (
	"slices"
	"strings"
	"testing"

	"feedservice/api/settings"
)

// Black-box tests of readers' lists: the five mutations, the viewer's
// lists, a list's members and feed, and a list's privacy.

// listNode is a list as the tests read it.
type listNode struct {
	ID          string
	Name        string
	MemberCount int
	Members     struct {
		TotalCount int
		Edges      []struct{ Node struct{ ID string } }
	}
	Feed struct {
		Edges []struct {
			Cursor string
			Node   struct {
				Post      struct{ ID string }
				Reposters []struct{ ID string }
			}
		}
	}
}

const listFields = `id name memberCount members(first: 10) { totalCount edges { node { id } } }
	feed(first: 10) { edges { cursor node { post { id } reposters { id } } } }`

// listChange runs a list mutation (op, with vars) as c and returns its list.
func listChange(t *testing.T, c *client, op string, vars map[string]any) listNode {
	t.Helper()
	var params, args []string
	for _, name := range []string{"listId", "userId", "name"} {
		if _, ok := vars[name]; ok {
			kind := "ID!"
			if name == "name" {
				kind = "String!"
			}
			params = append(params, "$"+name+": "+kind)
			args = append(args, name+": $"+name)
		}
	}
	var out struct{ R struct{ List listNode } }
	c.mustDo(t, `mutation(`+strings.Join(params, ", ")+`) { r: `+op+`(`+strings.Join(args, ", ")+`) { list { `+listFields+` } } }`, vars, &out)
	return out.R.List
}

// listDoc is a list mutation's document, for refusals.
func listDoc(op string) string {
	switch op {
	case "createList":
		return `mutation($name: String!) { createList(name: $name) { list { id } } }`
	case "renameList":
		return `mutation($listId: ID!, $name: String!) { renameList(listId: $listId, name: $name) { list { id } } }`
	case "deleteList":
		return `mutation($listId: ID!) { deleteList(listId: $listId) { deletedListId } }`
	}
	return `mutation($listId: ID!, $userId: ID!) { ` + op + `(listId: $listId, userId: $userId) { list { id } } }`
}

// listRead is list id as c reads it through node; nil when node is null.
func listRead(t *testing.T, c *client, id string) *listNode {
	t.Helper()
	var out struct{ Node *listNode }
	c.mustDo(t, `query($id: ID!) { node(id: $id) { ... on List { `+listFields+` } } }`, map[string]any{"id": id}, &out)
	return out.Node
}

func listFeedPosts(l listNode) (posts []string, reposters [][]string) {
	for _, e := range l.Feed.Edges {
		posts = append(posts, e.Node.Post.ID)
		var rs []string
		for _, r := range e.Node.Reposters {
			rs = append(rs, r.ID)
		}
		reposters = append(reposters, rs)
	}
	return posts, reposters
}

// TestListsThroughTheAPI: a list's life through the API, on each backend:
// made with a trimmed name, members who must be followed and count once,
// the members' posts and reposts in its feed (reposters among the members
// only), private to its owner (node null, mutations NOT_FOUND), its feed
// refusing home's cursors, an unfollow taking the member out, and deleted.
func TestListsThroughTheAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob, cat, dan := s.signUp(t, "ann"), s.signUp(t, "bob"), s.signUp(t, "cat"), s.signUp(t, "dan")
		relChange(t, ann, "follow", bob)
		relChange(t, ann, "follow", cat)
		relChange(t, ann, "follow", dan)
		l := listChange(t, ann, "createList", map[string]any{"name": "  Friends  "})
		if l.Name != "Friends" || l.MemberCount != 0 {
			t.Fatalf("createList: %+v, want Friends with no members", l)
		}
		listChange(t, ann, "addToList", map[string]any{"listId": l.ID, "userId": bob.ID})
		listChange(t, ann, "addToList", map[string]any{"listId": l.ID, "userId": cat.ID})
		if got := listChange(t, ann, "addToList", map[string]any{"listId": l.ID, "userId": bob.ID}); got.MemberCount != 2 || got.Members.TotalCount != 2 ||
			len(got.Members.Edges) != 2 || got.Members.Edges[0].Node.ID != cat.ID {
			t.Fatalf("bob added twice, and cat: %+v, want 2 members, cat first", got)
		}
		stranger := s.signUp(t, "eve")
		ann.mustFail(t, "FORBIDDEN", listDoc("addToList"), map[string]any{"listId": l.ID, "userId": stranger.ID})
		ann.mustFail(t, "NOT_FOUND", listDoc("addToList"), map[string]any{"listId": l.ID, "userId": errsUnknownUserID})
		ann.mustFail(t, "BAD_USER_INPUT", listDoc("addToList"), map[string]any{"listId": bob.ID, "userId": bob.ID})
		for _, name := range []string{"   ", strings.Repeat("x", 101), "a\nb"} {
			ann.mustFail(t, "BAD_USER_INPUT", listDoc("createList"), map[string]any{"name": name})
			ann.mustFail(t, "BAD_USER_INPUT", listDoc("renameList"), map[string]any{"listId": l.ID, "name": name})
		}

		p1 := feedCreatePost(t, bob, "bob's")
		p2 := feedCreatePost(t, cat, "cat's")
		feedRepost(t, cat, p1.ID)
		feedRepost(t, dan, p1.ID)
		feedCreatePost(t, dan, "dan's, not in the list")
		got := listRead(t, ann, l.ID)
		if got == nil {
			t.Fatal("the owner's node(id) of the list is null")
		}
		posts, reposters := listFeedPosts(*got)
		if !slices.Equal(posts, []string{p2.ID, p1.ID}) || len(reposters[1]) != 1 || reposters[1][0] != cat.ID {
			t.Fatalf("the list's feed: posts %v reposters %v; want [%s %s], p1 reposted by cat alone", posts, reposters, p2.ID, p1.ID)
		}

		var lists struct {
			Lists struct {
				TotalCount int
				Edges      []struct{ Node struct{ ID string } }
			}
		}
		ann.mustDo(t, `{ lists(first: 5) { totalCount edges { node { id } } } }`, nil, &lists)
		if lists.Lists.TotalCount != 1 || len(lists.Lists.Edges) != 1 || lists.Lists.Edges[0].Node.ID != l.ID {
			t.Fatalf("lists: %+v", lists)
		}
		s.anon().mustFail(t, "UNAUTHENTICATED", `{ lists(first: 5) { totalCount } }`, nil)

		// Private: bob, a member, and the signed out see nothing of it.
		for _, c := range []*client{bob, s.anon()} {
			if got := listRead(t, c, l.ID); got != nil {
				t.Fatalf("%s read ann's list through node: %+v", c.Name, got)
			}
		}
		var nodes struct{ Nodes []*struct{ ID string } }
		bob.mustDo(t, `query($ids: [ID!]!) { nodes(ids: $ids) { ... on List { id } } }`, map[string]any{"ids": []string{l.ID}}, &nodes)
		if len(nodes.Nodes) != 1 || nodes.Nodes[0] != nil {
			t.Fatalf("bob read ann's list through nodes: %+v", nodes)
		}
		bob.mustFail(t, "NOT_FOUND", listDoc("renameList"), map[string]any{"listId": l.ID, "name": "mine"})
		bob.mustFail(t, "NOT_FOUND", listDoc("deleteList"), map[string]any{"listId": l.ID})
		bob.mustFail(t, "NOT_FOUND", listDoc("addToList"), map[string]any{"listId": l.ID, "userId": ann.ID})
		bob.mustFail(t, "NOT_FOUND", listDoc("removeFromList"), map[string]any{"listId": l.ID, "userId": bob.ID})
		s.anon().mustFail(t, "UNAUTHENTICATED", listDoc("createList"), map[string]any{"name": "x"})

		// The home feed's cursor is not the list's.
		var home struct {
			Feed struct{ Edges []struct{ Cursor string } }
		}
		ann.mustDo(t, `{ feed(first: 1) { edges { cursor } } }`, nil, &home)
		r := ann.mustFail(t, "BAD_USER_INPUT", `query($id: ID!, $after: String) { node(id: $id) { ... on List { feed(first: 1, after: $after) { edges { cursor } } } } }`,
			map[string]any{"id": l.ID, "after": home.Feed.Edges[0].Cursor})
		if msg := r.Errors[0].Message; !strings.Contains(msg, "not to the feed of a list") {
			t.Errorf("a home cursor in a list's feed: %q, want it to say so", msg)
		}

		renamed := listChange(t, ann, "renameList", map[string]any{"listId": l.ID, "name": "Close friends"})
		if renamed.Name != "Close friends" {
			t.Fatalf("renameList: %+v", renamed)
		}
		relChange(t, ann, "unfollow", cat)
		if got := listRead(t, ann, l.ID); got == nil || got.MemberCount != 1 {
			t.Fatalf("after unfollowing cat: %+v, want one member", got)
		}
		if got := listChange(t, ann, "removeFromList", map[string]any{"listId": l.ID, "userId": bob.ID}); got.MemberCount != 0 {
			t.Fatalf("removeFromList: %+v, want no members", got)
		}
		var deleted struct {
			DeleteList struct{ DeletedListID string }
		}
		ann.mustDo(t, listDoc("deleteList"), map[string]any{"listId": l.ID}, &deleted)
		if deleted.DeleteList.DeletedListID != l.ID {
			t.Fatalf("deleteList: %+v", deleted)
		}
		if got := listRead(t, ann, l.ID); got != nil {
			t.Fatalf("a deleted list read through node: %+v", got)
		}
		ann.mustFail(t, "NOT_FOUND", listDoc("deleteList"), map[string]any{"listId": l.ID})
	})
}

// TestListLimitsThroughTheAPI: -max-lists-per-user and -max-list-members
// refuse with BAD_USER_INPUT at their edge, and not before.
func TestListLimitsThroughTheAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *testServer) {
		ann, bob, cat := s.signUp(t, "ann"), s.signUp(t, "bob"), s.signUp(t, "cat")
		relChange(t, ann, "follow", bob)
		relChange(t, ann, "follow", cat)
		l := listChange(t, ann, "createList", map[string]any{"name": "one"})
		listChange(t, ann, "createList", map[string]any{"name": "two"})
		ann.mustFail(t, "BAD_USER_INPUT", listDoc("createList"), map[string]any{"name": "three"})
		listChange(t, ann, "addToList", map[string]any{"listId": l.ID, "userId": bob.ID})
		ann.mustFail(t, "BAD_USER_INPUT", listDoc("addToList"), map[string]any{"listId": l.ID, "userId": cat.ID})
	}, func(c *settings.Settings) { c.MaxListsPerUser, c.MaxListMembers = 2, 1 })
}
