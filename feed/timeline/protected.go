package timeline

import (
	"context"
	"slices"

	"feedservice/feed/paging"
	"feedservice/feed/pull"
	"feedservice/models"
	"feedservice/store"
)

// A protected account's posts are for its author and their approved
// followers only. A reader's feed holds such a post through its author,
// whom the reader follows, or through a followee's repost of it (one made
// before the author turned protected, since nobody else may repost it
// now): that second way is dropped here, on every read of entries (the
// feed page in every mode, the unread count, a list's feed), rather than
// in the inboxes, so that the inboxes, the fan-out and the rebuild stay
// as they are and the rule holds the moment the author turns protected.

// VisibleTo wraps fetch, a read of entries for viewer, so that it leaves
// out each entry whose original post is by a protected author the viewer
// neither is nor follows, and reads on past them so that a page stays
// full. loaded holds posts the read loaded already (nil: none); the posts
// the filter loads join it when it is not nil. followees, sorted, are
// whom the viewer follows when the read knows them already (nil: the
// filter asks), so that a warm page asks nothing more.
func (reads *Reads) VisibleTo(viewer int64, loaded map[int64]*models.Post, followees []int64, fetch paging.FetchFunc[pull.Entry]) paging.FetchFunc[pull.Entry] {
	return func(ctx context.Context, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
		var out []pull.Entry
		for {
			want := limit - len(out)
			raw, err := fetch(ctx, dir, bound, want)
			if err != nil {
				return nil, err
			}
			kept, err := reads.visibleEntries(ctx, viewer, loaded, followees, raw)
			if err != nil {
				return nil, err
			}
			out = append(out, kept...)
			if len(raw) < want || len(out) >= limit || len(raw) == 0 {
				return out, nil
			}
			bound = raw[len(raw)-1].Key
		}
	}
}

// visibleEntries is entries less those viewer may not see (see VisibleTo).
// A page of followees' own posts asks nothing: only the authors the
// viewer does not follow are looked up, from the cache tiers.
func (reads *Reads) visibleEntries(ctx context.Context, viewer int64, loaded map[int64]*models.Post, followees []int64, entries []pull.Entry) ([]pull.Entry, error) {
	if len(entries) == 0 {
		return entries, nil
	}
	originals, err := reads.originals(ctx, loaded, entries)
	if err != nil {
		return nil, err
	}
	authors := make([]int64, 0, len(originals))
	for _, p := range originals {
		authors = append(authors, p.AuthorID)
	}
	closed, err := reads.closedAuthors(ctx, viewer, authors, followees)
	if err != nil || len(closed) == 0 {
		return entries, err
	}
	kept := make([]pull.Entry, 0, len(entries))
	for _, en := range entries {
		if p := originals[en.PostID]; p == nil || !closed[p.AuthorID] {
			kept = append(kept, en)
		}
	}
	return kept, nil
}

// ClosedAuthors are those of authors whose posts viewer (0: signed out)
// may not see: protected, neither the viewer nor followed by them. It
// asks about the followed first (the reader's followee set, which a feed
// read has loaded already) and looks up only the others, from the cache
// tiers.
func (reads *Reads) ClosedAuthors(ctx context.Context, viewer int64, authors []int64) (map[int64]bool, error) {
	return reads.closedAuthors(ctx, viewer, authors, nil)
}

// closedAuthors is ClosedAuthors with the viewer's followees, sorted, when
// the caller knows them (nil: asked).
func (reads *Reads) closedAuthors(ctx context.Context, viewer int64, authors, followees []int64) (map[int64]bool, error) {
	authors = uniq(slices.DeleteFunc(slices.Clone(authors), func(a int64) bool { return a == viewer }))
	if len(authors) == 0 {
		return nil, nil
	}
	strangers := authors
	if viewer != 0 {
		followed := map[int64]bool{}
		if followees != nil {
			for _, a := range authors {
				if _, ok := slices.BinarySearch(followees, a); ok {
					followed[a] = true
				}
			}
		} else {
			var err error
			if followed, err = reads.FollowedBy(ctx, viewer, authors); err != nil {
				return nil, err
			}
		}
		strangers = slices.DeleteFunc(authors, func(a int64) bool { return followed[a] })
		if len(strangers) == 0 {
			return nil, nil
		}
	}
	users, err := reads.cache.Users(ctx, strangers)
	if err != nil {
		return nil, err
	}
	closed := map[int64]bool{}
	for _, u := range users {
		if u != nil && u.IsProtected {
			closed[u.ID] = true
		}
	}
	return closed, nil
}

// originals are the original posts of entries, from loaded and then the
// cache tiers (added to loaded when it is not nil).
func (reads *Reads) originals(ctx context.Context, loaded map[int64]*models.Post, entries []pull.Entry) (map[int64]*models.Post, error) {
	out := make(map[int64]*models.Post, len(entries))
	var missing []int64
	for _, en := range entries {
		if p := loaded[en.PostID]; p != nil {
			out[en.PostID] = p
		} else {
			missing = append(missing, en.PostID)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	posts, err := reads.cache.Posts(ctx, missing)
	if err != nil {
		return nil, err
	}
	for _, p := range posts {
		if p != nil {
			out[p.ID] = p
			if loaded != nil {
				loaded[p.ID] = p
			}
		}
	}
	return out, nil
}

// knownFollowees are whom the reader follows, sorted, when the read state
// loaded them whole; nil otherwise (VisibleTo then asks). Never nil when
// loaded, so that following nobody is known too.
func (r *readState) knownFollowees() []int64 {
	if !r.loaded {
		return nil
	}
	if r.followees == nil {
		return []int64{}
	}
	return r.followees
}
