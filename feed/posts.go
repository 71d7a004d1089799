package feed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// CreatePost publishes a post by the viewer.
func (e *Engine) CreatePost(ctx context.Context, viewerID int64, body string) (*models.Post, error) {
	body, err := checkPostBody(body)
	if err != nil {
		return nil, err
	}
	p := &models.Post{ID: e.ids.NextBeside(viewerID), AuthorID: viewerID, Body: body, CreatedAt: e.now().UTC()}
	if err := e.store.CreatePost(ctx, p); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, apperr.ErrUnauthenticated
		}
		return nil, err
	}
	e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, []int64{p.ID})
	e.afterCommit(ctx, nil)
	return p, nil
}

// checkPostBody returns body trimmed of surrounding white space, if what
// remains is text a post may hold: 1 to MaxPostChars code points of valid
// UTF-8 with no control characters but line feed and tab, at least one of
// them visible. Any script,
// combining marks, right-to-left text and emoji are text. Invalid UTF-8 and
// the other controls (NUL, carriage return, escape, DEL, the C1 range) are
// refused, not repaired or dropped, so that what is stored is byte for byte
// what the author sent, and no reader's terminal or log gets a control.
func checkPostBody(body string) (string, error) {
	body = strings.TrimSpace(body)
	if !utf8.ValidString(body) {
		return "", apperr.BadInput("the post body is not valid UTF-8 text")
	}
	if err := refuseControls("the post body", body); err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(body); n == 0 || n > config.MaxPostChars {
		return "", apperr.BadInput("a post is 1 to %d characters after trimming spaces; this one has %d", config.MaxPostChars, n)
	}
	if !strings.ContainsFunc(body, visible) {
		return "", apperr.BadInput("a post needs at least one visible character; this one holds only white space and invisible characters (such as zero-width spaces, joiners or variation selectors)")
	}
	return body, nil
}

// visible says whether r shows as something on a page: not white space,
// not a format character (zero-width space, joiners, U+2060, the byte
// order mark, the bidirectional controls: Unicode's category Cf), not a
// variation selector, not one of the other characters Unicode says to
// draw as nothing (Other_Default_Ignorable_Code_Point: the Hangul fillers,
// U+034F), and not the blank braille pattern U+2800, which shows as a
// space.
func visible(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) && r != '\u2800'
}

// refuseControls answers BAD_USER_INPUT when text, valid UTF-8 that what
// names, holds a control character other than line feed and tab. It is the
// rule of the texts a user writes for others to read at length: post
// bodies and bios, where line feed and tab are text, not terminal
// commands. Carriage return, NUL, escape, DEL and the C1 range are
// refused. Display names are stricter (checkDisplayName): one line.
func refuseControls(what, text string) error {
	n := 0
	for _, r := range text {
		n++
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return apperr.BadInput("%s holds the control character %U at character %d; of the controls only line feed (\\n) and tab are allowed", what, r, n)
		}
	}
	return nil
}

// Repost reposts postID (or, for a repost, its original) as the viewer.
// Reposting the same post again returns the existing repost.
func (e *Engine) Repost(ctx context.Context, viewerID, postID int64) (*models.Post, error) {
	target, err := e.cache.LivePost(ctx, postID)
	if err != nil {
		return nil, err
	}
	original := target.OriginalID()
	if err := e.readableForRepost(ctx, viewerID, target); err != nil {
		return nil, err
	}
	p := &models.Post{ID: e.ids.NextBeside(viewerID), AuthorID: viewerID, RepostOfID: &original, CreatedAt: e.now().UTC()}
	p, created, err := e.store.Repost(ctx, p)
	if created {
		e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, []int64{p.ID, original})
		e.afterCommit(ctx, nil)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.NotFound("that post does not exist or was deleted")
	}
	return p, err
}

// readableForRepost refuses, as if it did not exist, a target that node
// would not show the viewer: by a user on the other side of a block from
// them, or a repost of such a user's post.
func (e *Engine) readableForRepost(ctx context.Context, viewerID int64, target *models.Post) error {
	authors := []int64{target.AuthorID}
	if target.RepostOfID != nil {
		original, err := e.cache.LivePost(ctx, *target.RepostOfID)
		if err != nil {
			return err
		}
		authors = append(authors, original.AuthorID)
	}
	authors = slices.DeleteFunc(authors, func(id int64) bool { return id == viewerID })
	blocked, err := e.BlockedEitherWayAmong(ctx, viewerID, authors)
	if err != nil {
		return err
	}
	if len(blocked) > 0 {
		return apperr.NotFound("that post does not exist or was deleted")
	}
	return nil
}

// DeletePost deletes the viewer's post. Deleting it again succeeds.
func (e *Engine) DeletePost(ctx context.Context, viewerID, postID int64) error {
	p, err := e.store.DeletePost(ctx, postID, viewerID, e.now().UTC())
	if err == nil {
		// The tombstone is in Redis before the mutation answers: no read
		// that follows shows the post.
		posts := []int64{p.ID}
		if p.RepostOfID != nil {
			posts = append(posts, *p.RepostOfID)
		}
		e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, posts)
		e.afterCommit(ctx, nil)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apperr.NotFound("that post does not exist")
	case errors.Is(err, store.ErrForbidden):
		return apperr.New(apperr.CodeForbidden, "only its author may delete a post")
	}
	return err
}

// Posts loads posts by id, in the order of ids; nil where unknown, from
// the cache tiers. Deleted posts are included: callers decide how they
// show. The posts are shared with other readers: read them only.
func (e *Engine) Posts(ctx context.Context, ids []int64) ([]*models.Post, error) {
	return e.cache.Posts(ctx, ids)
}

// Timeline pages the user's own posts and reposts, newest first, as the
// viewer (0 when signed out) may see them: none when either blocks the
// other (an empty connection, not an error).
func (e *Engine) Timeline(ctx context.Context, viewerID int64, user *models.User, args paging.PageArgs) (*models.PostConnection, error) {
	if viewerID != 0 && viewerID != user.ID {
		blocked, err := e.store.BlockedEitherWay(e.rep.AllowLag(ctx, viewerID), viewerID, user.ID)
		if err != nil {
			return nil, err
		}
		if blocked {
			if _, err := args.Window(paging.CursorTimeline); err != nil {
				return nil, err // bad arguments are still the client's
			}
			return &models.PostConnection{PageInfo: &models.PageInfo{}, Edges: []*models.PostEdge{}}, nil
		}
	}
	fetch := func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]*models.Post, error) {
		return e.store.TimelinePage(e.rep.AllowLag(ctx, user.ID), user.ID, dir, bound, limit)
	}
	posts, info, err := paging.Paginate(ctx, e.metrics, paging.CursorTimeline, args, fetch, func(p *models.Post) int64 { return p.ID })
	if err != nil {
		return nil, err
	}
	conn := &models.PostConnection{PageInfo: info, TotalCount: user.PostCount, Edges: make([]*models.PostEdge, len(posts))}
	for i, p := range posts {
		conn.Edges[i] = &models.PostEdge{Cursor: paging.EncodeCursor(paging.CursorTimeline, p.ID), Node: p}
	}
	return conn, nil
}
