package difftest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/graph"
	"feedservice/graph/model"
	"feedservice/models"
)

// A world is the in-memory data both executors read: users, posts, a feed
// and a home, with what goes wrong in it. Everything a resolver answers is
// a function of the world and of the call (the field, the object, the
// arguments), never of the order of calls, so the two executors, which
// call the resolvers in different orders and goroutines, see the same.
//
// Faults, in the data: nil objects and lists where the schema says
// non-null, zero times (graphql.MarshalTime answers null for them), a home
// entry of a type the schema does not know (gqlgen panics on it), strings
// that need every kind of JSON escape and bytes that are not UTF-8. In the
// resolvers (one call in faultEvery, by a hash of the call): an error, an
// error list, a nil result, a panic.
type world struct {
	seed       uint64
	faultEvery uint64 // 0: no resolver faults
	users      []*models.User
	posts      []*models.Post
	feed       []*models.FeedEdge
	home       []*models.HomeEdge
}

// strangeStrings are the strings the world's text fields are made of.
var strangeStrings = []string{
	"plain", "", "quote\"d", `back\slash`, "tab\there", "new\nline\r\n", "nul\x00", "ctl\x01\x1f\x7f",
	"émoji 🙂", "bad \xff\xfe utf8", "</script>", "line\u2028sep", "slash/ok", `{"json":1}`,
}

const worldUsers, worldPosts = 9, 24

func newWorld(seed, faultEvery uint64) *world {
	w := &world{seed: seed, faultEvery: faultEvery}
	base := time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC)
	for i := int64(1); i <= worldUsers; i++ {
		u := &models.User{ID: i, Username: "user" + strconv.FormatInt(i, 10), DisplayName: w.text("dn", i), Bio: w.text("bio", i),
			CreatedAt: base.Add(-time.Duration(i) * time.Hour), FollowerCount: int(w.hash("fc", i) % 1000),
			FollowingCount: int(w.hash("fg", i) % 50), PostCount: int(w.hash("pc", i) % 70)}
		if w.chance(7, "zero-time", i) {
			u.CreatedAt = time.Time{}
		}
		w.users = append(w.users, u)
	}
	for i := int64(1); i <= worldPosts; i++ {
		p := &models.Post{ID: i, AuthorID: 1 + int64(w.hash("author", i)%(worldUsers+2)), Body: w.text("body", i),
			RepostCount: int(w.hash("rc", i) % 9), CreatedAt: base.Add(-time.Duration(i) * time.Minute)}
		if w.chance(3, "repost", i) && i > 1 {
			of := 1 + int64(w.hash("of", i)%uint64(i-1))
			p.RepostOfID = &of
		}
		if w.chance(11, "zero-time", i) {
			p.CreatedAt = time.Time{}
		}
		w.posts = append(w.posts, p)
	}
	for i := int64(1); i <= 12; i++ {
		item := &models.FeedItem{PostID: i, AddedAt: base.Add(-time.Duration(i) * time.Second), LoadedPost: w.post(i)}
		for k := int64(0); k < int64(w.hash("reposters", i)%4); k++ {
			item.Reposters = append(item.Reposters, w.user(1+int64(w.hash("reposter", i, k)%worldUsers)))
		}
		switch {
		case w.chance(13, "no-post", i):
			item.LoadedPost = nil // FeedItem.post is non-null
		case w.chance(17, "nil-reposter", i) && len(item.Reposters) > 0:
			item.Reposters[0] = nil // [User!]!
		case w.chance(19, "nil-reposters", i):
			item.Reposters = nil // a nil slice is null to gqlgen; the field is non-null
		case w.chance(23, "zero-added", i):
			item.AddedAt = time.Time{}
		}
		edge := &models.FeedEdge{Cursor: w.text("cursor", i), Node: item}
		if w.chance(29, "no-node", i) {
			edge.Node = nil
		}
		w.feed = append(w.feed, edge)
	}
	for i := int64(1); i <= 10; i++ {
		edge := &models.HomeEdge{Cursor: "h" + strconv.FormatInt(i, 10)}
		switch w.hash("kind", i) % 7 {
		case 0:
			edge.Node = &models.SuggestedUser{UserID: 1 + int64(w.hash("suggest", i)%(worldUsers+1)), FollowedByCount: int(i)}
		case 1:
			edge.Node = models.SuggestedUser{UserID: 2, FollowedByCount: int(i)} // by value: gqlgen takes its address
		case 2:
			edge.Node = &models.PromotedPost{PostID: i, LoadedPost: w.post(i)}
		case 3:
			edge.Node = models.FeedItem{PostID: i, AddedAt: time.Unix(int64(i), 0).UTC(), LoadedPost: w.post(i + 1)}
		case 4:
			edge.Node = strangeEntry{} // no generated type: gqlgen panics
		case 5:
			edge.Node = nil // HomeEdge.node is non-null
		default:
			edge.Node = w.feed[i-1].Node
			c := w.feed[i-1].Cursor
			edge.FeedCursor = &c
		}
		w.home = append(w.home, edge)
	}
	return w
}

// strangeEntry is a HomeEntry the schema has no type for.
type strangeEntry struct{}

func (strangeEntry) IsHomeEntry() {}

func (w *world) hash(parts ...any) uint64 {
	b := strconv.AppendUint(make([]byte, 0, 64), w.seed, 10)
	for _, p := range parts {
		b = append(b, '|')
		switch p := p.(type) {
		case string:
			b = append(b, p...)
		case int:
			b = strconv.AppendInt(b, int64(p), 10)
		case int64:
			b = strconv.AppendInt(b, p, 10)
		default:
			b = fmt.Append(b, p)
		}
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func (w *world) chance(oneIn uint64, parts ...any) bool { return w.hash(parts...)%oneIn == 0 }

func (w *world) text(kind string, id int64) string {
	return strangeStrings[w.hash(kind, id)%uint64(len(strangeStrings))] + " " + strconv.FormatInt(id, 10)
}

func (w *world) user(id int64) *models.User {
	if id < 1 || id > int64(len(w.users)) {
		return nil
	}
	return w.users[id-1]
}

func (w *world) post(id int64) *models.Post {
	if id < 1 || id > int64(len(w.posts)) {
		return nil
	}
	return w.posts[id-1]
}

// fault is what goes wrong with one resolver call, by a hash of it.
type fault int

const (
	noFault fault = iota
	faultError
	faultErrorList
	faultNil
	faultPanic
)

func (w *world) fault(field string, call ...any) fault {
	if w.faultEvery == 0 {
		return noFault
	}
	h := w.hash(append([]any{"fault", field}, call...)...)
	if h%w.faultEvery != 0 {
		return noFault
	}
	return fault(1 + (h/w.faultEvery)%4)
}

// resolve answers a resolver call with v, or with its fault.
func resolve[T any](w *world, field string, v T, call ...any) (T, error) {
	var zero T
	switch w.fault(field, call...) {
	case faultError:
		return zero, &gqlerror.Error{Message: field + " failed", Extensions: map[string]any{"code": "NOT_FOUND"}}
	case faultErrorList:
		return zero, gqlerror.List{gqlerror.Errorf("%s: first of two", field), gqlerror.Errorf("%s: second of two", field)}
	case faultNil:
		return zero, nil
	case faultPanic:
		panic(field + " panicked")
	}
	return v, nil
}

func (w *world) page(field string, n int, first, last *int, call ...any) (from, to int, err error) {
	switch {
	case first != nil && last != nil:
		return 0, 0, errors.New(field + ": first and last together")
	case first != nil && (*first < 0 || *first > 100):
		return 0, 0, &gqlerror.Error{Message: field + ": first out of range", Extensions: map[string]any{"code": "BAD_USER_INPUT"}}
	case first != nil:
		return 0, min(n, *first), nil
	case last != nil && *last >= 0:
		return max(0, n-*last), n, nil
	case last != nil:
		return 0, 0, errors.New(field + ": negative last")
	}
	return 0, min(n, 3+int(w.hash(append([]any{field}, call...)...)%3)), nil
}

func pageInfo(from, to, n int) *models.PageInfo {
	info := &models.PageInfo{HasNextPage: to < n, HasPreviousPage: from > 0}
	if to > from {
		s, e := "c"+strconv.Itoa(from), "c"+strconv.Itoa(to-1)
		info.StartCursor, info.EndCursor = &s, &e
	}
	return info
}

func ptrString(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

func ptrInt(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

// The resolvers. Each embeds the interface it implements, so that a field
// the schema gains compiles before it has an answer here (the call panics,
// on both executors alike); give it one.
type (
	resolvers      struct{ w *world }
	feedConnection struct {
		graph.FeedConnectionResolver
		w *world
	}
	homeConnection struct {
		graph.HomeConnectionResolver
		w *world
	}
	post struct {
		graph.PostResolver
		w *world
	}
	promotePostPayload struct {
		graph.PromotePostPayloadResolver
		w *world
	}
	promotedPost struct {
		graph.PromotedPostResolver
		w *world
	}
	suggestedUser struct {
		graph.SuggestedUserResolver
		w *world
	}
	userEdge struct {
		graph.UserEdgeResolver
		w *world
	}
	relatedUserEdge struct {
		graph.RelatedUserEdgeResolver
		w *world
	}
	user struct {
		graph.UserResolver
		w *world
	}
	query struct {
		graph.QueryResolver
		w *world
	}
	mutation struct {
		graph.MutationResolver
		w *world
	}
)

var _ graph.ResolverRoot = resolvers{}

func (r resolvers) FeedConnection() graph.FeedConnectionResolver { return feedConnection{w: r.w} }
func (r resolvers) HomeConnection() graph.HomeConnectionResolver { return homeConnection{w: r.w} }
func (r resolvers) Mutation() graph.MutationResolver             { return mutation{w: r.w} }
func (r resolvers) Post() graph.PostResolver                     { return post{w: r.w} }
func (r resolvers) PromotePostPayload() graph.PromotePostPayloadResolver {
	return promotePostPayload{w: r.w}
}
func (r resolvers) PromotedPost() graph.PromotedPostResolver   { return promotedPost{w: r.w} }
func (r resolvers) Query() graph.QueryResolver                 { return query{w: r.w} }
func (r resolvers) Subscription() graph.SubscriptionResolver   { return nil }
func (r resolvers) SuggestedUser() graph.SuggestedUserResolver { return suggestedUser{w: r.w} }
func (r resolvers) User() graph.UserResolver                   { return user{w: r.w} }
func (r resolvers) UserEdge() graph.UserEdgeResolver           { return userEdge{w: r.w} }
func (r resolvers) RelatedUserEdge() graph.RelatedUserEdgeResolver {
	return relatedUserEdge{w: r.w}
}

func (r feedConnection) UnreadCount(_ context.Context, obj *models.FeedConnection) (int, error) {
	return resolve(r.w, "FeedConnection.unreadCount", len(obj.Edges)*7%5, len(obj.Edges))
}

func (r feedConnection) UnreadCountCapped(_ context.Context, obj *models.FeedConnection) (bool, error) {
	return resolve(r.w, "FeedConnection.unreadCountCapped", len(obj.Edges)%3 == 0, len(obj.Edges))
}

func (r homeConnection) UnreadCountCapped(_ context.Context, obj *models.HomeConnection) (bool, error) {
	return resolve(r.w, "HomeConnection.unreadCountCapped", len(obj.Edges)%2 == 1, len(obj.Edges))
}

func (r homeConnection) UnreadCount(_ context.Context, obj *models.HomeConnection) (int, error) {
	return resolve(r.w, "HomeConnection.unreadCount", len(obj.Edges)*3%4, len(obj.Edges))
}

func (r post) Author(_ context.Context, obj *models.Post) (*models.User, error) {
	u := r.w.user(obj.AuthorID)
	if u == nil && r.w.faultEvery != 0 {
		return nil, &gqlerror.Error{Message: "the author of post " + strconv.FormatInt(obj.ID, 10) + " no longer exists",
			Extensions: map[string]any{"code": "NOT_FOUND"}}
	}
	return resolve(r.w, "Post.author", u, obj.ID)
}

func (r post) RepostOf(_ context.Context, obj *models.Post) (*models.Post, error) {
	if obj.RepostOfID == nil {
		return nil, nil
	}
	return resolve(r.w, "Post.repostOf", r.w.post(*obj.RepostOfID), obj.ID)
}

func (r promotePostPayload) Post(_ context.Context, obj *models.PromotePostPayload) (*models.Post, error) {
	return resolve(r.w, "PromotePostPayload.post", r.w.post(obj.PostID), obj.PostID)
}

func (r promotedPost) Post(_ context.Context, obj *models.PromotedPost) (*models.Post, error) {
	if obj.LoadedPost != nil {
		return resolve(r.w, "PromotedPost.post", obj.LoadedPost, obj.PostID)
	}
	return resolve(r.w, "PromotedPost.post", r.w.post(obj.PostID), obj.PostID)
}

func (r suggestedUser) User(_ context.Context, obj *models.SuggestedUser) (*models.User, error) {
	return resolve(r.w, "SuggestedUser.user", r.w.user(obj.UserID), obj.UserID)
}

func (r userEdge) Node(_ context.Context, obj *models.UserEdge) (*models.User, error) {
	return resolve(r.w, "UserEdge.node", r.w.user(obj.UserID), obj.UserID)
}

func (r relatedUserEdge) Node(_ context.Context, obj *models.RelatedUserEdge) (*models.User, error) {
	return resolve(r.w, "RelatedUserEdge.node", r.w.user(obj.UserID), obj.UserID)
}

func (r user) ViewerHasBlocked(_ context.Context, obj *models.User) (bool, error) {
	return resolve(r.w, "User.viewerHasBlocked", r.w.chance(5, "blocks", obj.ID), obj.ID)
}

func (r user) ViewerHasMuted(_ context.Context, obj *models.User) (bool, error) {
	return resolve(r.w, "User.viewerHasMuted", r.w.chance(4, "mutes", obj.ID), obj.ID)
}

func (r user) ViewerIsFollowing(_ context.Context, obj *models.User) (bool, error) {
	return resolve(r.w, "User.viewerIsFollowing", r.w.chance(2, "follows", obj.ID), obj.ID)
}

func (r user) FollowsViewer(_ context.Context, obj *models.User) (bool, error) {
	return resolve(r.w, "User.followsViewer", r.w.chance(3, "followed", obj.ID), obj.ID)
}

func (r user) Timeline(_ context.Context, obj *models.User, first *int, after *string, last *int, before *string) (*models.PostConnection, error) {
	call := []any{obj.ID, ptrInt(first), ptrString(after), ptrInt(last), ptrString(before)}
	var mine []*models.Post
	for _, p := range r.w.posts {
		if p.AuthorID == obj.ID {
			mine = append(mine, p)
		}
	}
	from, to, err := r.w.page("User.timeline", len(mine), first, last, call...)
	if err != nil {
		return nil, err
	}
	c := &models.PostConnection{PageInfo: pageInfo(from, to, len(mine)), TotalCount: len(mine)}
	for i := from; i < to; i++ {
		c.Edges = append(c.Edges, &models.PostEdge{Cursor: "t" + strconv.Itoa(i), Node: mine[i]})
	}
	if len(c.Edges) > 0 && r.w.chance(9, "timeline-nil-node", call) {
		c.Edges[0].Node = nil
	}
	return resolve(r.w, "User.timeline", c, call...)
}

func (r user) relation(field string, obj *models.User, first *int, after *string, last *int, before *string, offset *int) (*models.UserConnection, error) {
	call := []any{obj.ID, ptrInt(first), ptrString(after), ptrInt(last), ptrString(before), ptrInt(offset)}
	if offset != nil && *offset < 0 {
		return nil, errors.New(field + ": negative offset")
	}
	n := int(r.w.hash(field, obj.ID) % 6)
	from, to, err := r.w.page(field, n, first, last, call...)
	if err != nil {
		return nil, err
	}
	c := &models.UserConnection{PageInfo: pageInfo(from, to, n), TotalCount: n}
	for i := from; i < to; i++ {
		c.Edges = append(c.Edges, &models.UserEdge{Cursor: "r" + strconv.Itoa(i), UserID: 1 + int64(r.w.hash(field, obj.ID, i)%(worldUsers+1)),
			FollowedAt: time.Unix(int64(r.w.hash("at", i)%1e9), int64(i)).UTC()})
	}
	return resolve(r.w, field, c, call...)
}

func (r user) Followers(_ context.Context, obj *models.User, first *int, after *string, last *int, before *string, offset *int) (*models.UserConnection, error) {
	return r.relation("User.followers", obj, first, after, last, before, offset)
}

func (r user) Following(_ context.Context, obj *models.User, first *int, after *string, last *int, before *string, offset *int) (*models.UserConnection, error) {
	return r.relation("User.following", obj, first, after, last, before, offset)
}

// node answers a global ID, and strings that are none with an error.
func (r query) node(id string) (models.Node, error) {
	kind, n, err := models.ParseNodeID(id)
	if err != nil {
		return nil, &gqlerror.Error{Message: "not a valid id: " + id, Extensions: map[string]any{"code": "BAD_USER_INPUT"}}
	}
	if kind == models.KindUser {
		if u := r.w.user(n); u != nil {
			return u, nil
		}
		return nil, nil
	}
	if kind == models.KindList {
		if n <= 5 {
			return r.w.worldList(n), nil
		}
		return nil, nil
	}
	if p := r.w.post(n); p != nil {
		if n%5 == 0 {
			return *p, nil // by value: gqlgen takes its address
		}
		return p, nil
	}
	return nil, nil
}

func (r query) Node(_ context.Context, id string) (models.Node, error) {
	n, err := r.node(id)
	if err != nil {
		return nil, err
	}
	return resolve(r.w, "Query.node", n, id)
}

func (r query) Nodes(_ context.Context, ids []string) ([]models.Node, error) {
	var out []models.Node
	for _, id := range ids {
		n, err := r.node(id)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return resolve(r.w, "Query.nodes", out, fmt.Sprint(ids))
}

func (r query) Viewer(context.Context) (*models.User, error) {
	return resolve(r.w, "Query.viewer", r.w.users[0])
}

func (r query) User(_ context.Context, username string) (*models.User, error) {
	for _, u := range r.w.users {
		if u.Username == username {
			return resolve(r.w, "Query.user", u, username)
		}
	}
	return nil, nil
}

func (r query) Feed(_ context.Context, first *int, after *string, last *int, before *string) (*models.FeedConnection, error) {
	call := []any{ptrInt(first), ptrString(after), ptrInt(last), ptrString(before)}
	from, to, err := r.w.page("Query.feed", len(r.w.feed), first, last, call...)
	if err != nil {
		return nil, err
	}
	c := &models.FeedConnection{Edges: r.w.feed[from:to], PageInfo: pageInfo(from, to, len(r.w.feed))}
	if r.w.chance(31, "feed-no-info", call) {
		c.PageInfo = nil // non-null
	}
	return resolve(r.w, "Query.feed", c, call...)
}

func (r query) Home(_ context.Context, first *int, after *string, last *int, before *string) (*models.HomeConnection, error) {
	call := []any{ptrInt(first), ptrString(after), ptrInt(last), ptrString(before)}
	from, to, err := r.w.page("Query.home", len(r.w.home), first, last, call...)
	if err != nil {
		return nil, err
	}
	return resolve(r.w, "Query.home", &models.HomeConnection{Edges: r.w.home[from:to], PageInfo: pageInfo(from, to, len(r.w.home))}, call...)
}

// related answers blockedUsers and mutedUsers (field).
func (r query) related(field string, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	call := []any{ptrInt(first), ptrString(after), ptrInt(last), ptrString(before)}
	n := int(r.w.hash(field) % 6)
	from, to, err := r.w.page(field, n, first, last, call...)
	if err != nil {
		return nil, err
	}
	c := &models.RelatedUserConnection{PageInfo: pageInfo(from, to, n), TotalCount: n}
	for i := from; i < to; i++ {
		c.Edges = append(c.Edges, &models.RelatedUserEdge{Cursor: "b" + strconv.Itoa(i), UserID: 1 + int64(r.w.hash(field, i)%(worldUsers+1)),
			Since: time.Unix(int64(r.w.hash("since", i)%1e9), int64(i)).UTC()})
	}
	return resolve(r.w, field, c, call...)
}

func (r query) BlockedUsers(_ context.Context, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	return r.related("Query.blockedUsers", first, after, last, before)
}

func (r query) MutedUsers(_ context.Context, first *int, after *string, last *int, before *string) (*models.RelatedUserConnection, error) {
	return r.related("Query.mutedUsers", first, after, last, before)
}

func (r mutation) newUser(name string, display *string) *models.User {
	u := *r.w.users[r.w.hash("signup", name)%worldUsers]
	u.Username = name
	if display != nil {
		u.DisplayName = *display
	}
	return &u
}

func (r mutation) SignUp(_ context.Context, input model.SignUpInput) (*models.AuthPayload, error) {
	return resolve(r.w, "Mutation.signUp", &models.AuthPayload{Token: "token-" + input.Username, User: r.newUser(input.Username, input.DisplayName)}, input.Username)
}

func (r mutation) LogIn(_ context.Context, input model.LogInInput) (*models.AuthPayload, error) {
	return resolve(r.w, "Mutation.logIn", &models.AuthPayload{Token: "token-" + input.Username, User: r.newUser(input.Username, nil)}, input.Username)
}

func (r mutation) newPost(body string) *models.Post {
	p := *r.w.posts[r.w.hash("create", body)%worldPosts]
	p.Body = body
	return &p
}

func (r mutation) CreatePost(_ context.Context, input model.CreatePostInput) (*models.CreatePostPayload, error) {
	return resolve(r.w, "Mutation.createPost", &models.CreatePostPayload{Post: r.newPost(input.Body)}, input.Body)
}

func (r mutation) Repost(_ context.Context, postID string) (*models.CreatePostPayload, error) {
	return resolve(r.w, "Mutation.repost", &models.CreatePostPayload{Post: r.newPost("repost of " + postID)}, postID)
}

func (r mutation) DeletePost(_ context.Context, id string) (*models.DeletePostPayload, error) {
	return resolve(r.w, "Mutation.deletePost", &models.DeletePostPayload{DeletedPostID: id}, id)
}

func (r mutation) follow(field, userID string) (*models.FollowPayload, error) {
	return resolve(r.w, field, &models.FollowPayload{User: r.w.users[r.w.hash(field, userID)%worldUsers], Viewer: r.w.users[0]}, userID)
}

func (r mutation) Follow(_ context.Context, userID string) (*models.FollowPayload, error) {
	return r.follow("Mutation.follow", userID)
}

func (r mutation) Unfollow(_ context.Context, userID string) (*models.FollowPayload, error) {
	return r.follow("Mutation.unfollow", userID)
}

func (r mutation) RemoveFollower(_ context.Context, userID string) (*models.FollowPayload, error) {
	return r.follow("Mutation.removeFollower", userID)
}

func (r mutation) block(field, userID string) (*models.BlockPayload, error) {
	return resolve(r.w, field, &models.BlockPayload{User: r.w.users[r.w.hash(field, userID)%worldUsers], Viewer: r.w.users[0]}, userID)
}

func (r mutation) Block(_ context.Context, userID string) (*models.BlockPayload, error) {
	return r.block("Mutation.block", userID)
}

func (r mutation) Unblock(_ context.Context, userID string) (*models.BlockPayload, error) {
	return r.block("Mutation.unblock", userID)
}

func (r mutation) mute(field, userID string) (*models.MutePayload, error) {
	return resolve(r.w, field, &models.MutePayload{User: r.w.users[r.w.hash(field, userID)%worldUsers]}, userID)
}

func (r mutation) Mute(_ context.Context, userID string) (*models.MutePayload, error) {
	return r.mute("Mutation.mute", userID)
}

func (r mutation) Unmute(_ context.Context, userID string) (*models.MutePayload, error) {
	return r.mute("Mutation.unmute", userID)
}

func (r mutation) MarkFeedRead(_ context.Context, upTo *string) (*models.MarkFeedReadPayload, error) {
	return resolve(r.w, "Mutation.markFeedRead", &models.MarkFeedReadPayload{UnreadCount: len(ptrString(upTo)) % 4, UnreadCountCapped: len(ptrString(upTo))%4 == 3}, ptrString(upTo))
}

func (r mutation) UpdateProfile(_ context.Context, input model.UpdateProfileInput) (*models.User, error) {
	u := *r.w.users[0]
	if input.DisplayName != nil {
		u.DisplayName = *input.DisplayName
	}
	if input.Bio != nil {
		u.Bio = *input.Bio
	}
	return resolve(r.w, "Mutation.updateProfile", &u, ptrString(input.DisplayName), ptrString(input.Bio))
}

func (r mutation) PromotePost(_ context.Context, postID string) (*models.PromotePostPayload, error) {
	_, id, _ := models.ParseNodeID(postID)
	return resolve(r.w, "Mutation.promotePost", &models.PromotePostPayload{PostID: id, Promoted: true}, postID)
}

func (r mutation) UnpromotePost(_ context.Context, postID string) (*models.PromotePostPayload, error) {
	_, id, _ := models.ParseNodeID(postID)
	return resolve(r.w, "Mutation.unpromotePost", &models.PromotePostPayload{PostID: id}, postID)
}

func (r mutation) DismissHomeEntry(_ context.Context, id string) (*models.DismissHomeEntryPayload, error) {
	return resolve(r.w, "Mutation.dismissHomeEntry", &models.DismissHomeEntryPayload{DismissedID: id}, id)
}
