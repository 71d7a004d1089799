package feed

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/internal/apperr"
	"feedservice/models"
)

// The rules of readers' lists, through the engine, in every mode: a list's
// feed is the home feed of a reader who follows only its members, and a
// list is its owner's alone.

func (te *testEngine) createList(owner int64, name string) *models.List {
	te.t.Helper()
	p, err := te.CreateList(context.Background(), owner, name)
	if err != nil {
		te.t.Fatalf("create list %q: %v", name, err)
	}
	return p.List
}

func (te *testEngine) addToList(owner int64, l *models.List, users ...int64) {
	te.t.Helper()
	for _, u := range users {
		if _, err := te.AddToList(context.Background(), owner, l.ID, u); err != nil {
			te.t.Fatalf("add %d to list %d: %v", u, l.ID, err)
		}
	}
}

// list is owner's list l as now stored.
func (te *testEngine) list(owner int64, l *models.List) *models.List {
	te.t.Helper()
	got, err := te.List(context.Background(), owner, l.ID)
	if err != nil || got == nil {
		te.t.Fatalf("list %d of %d: %+v, %v", l.ID, owner, got, err)
	}
	return got
}

// pageListFeed reads list l's whole feed pageSize entries a page, forward
// or backward, newest first, failing on a page that says more follow but
// is not full, or on more pages than entries allows.
func (te *testEngine) pageListFeed(owner int64, l *models.List, pageSize int, backward bool, entries int) []feedItem {
	te.t.Helper()
	kind := paging.CursorListFeed(l.ID)
	var pages [][]feedItem
	var cursor *string
	for page := 0; ; page++ {
		if page > entries {
			te.t.Fatalf("list %d paged by %d (backward %v): page %d of a feed of %d entries", l.ID, pageSize, backward, page+1, entries)
		}
		args := paging.PageArgs{First: &pageSize, After: cursor}
		if backward {
			args = paging.PageArgs{Last: &pageSize, Before: cursor}
		}
		conn, err := te.ListFeed(context.Background(), owner, l, args)
		if err != nil {
			te.t.Fatalf("list %d paged by %d (backward %v), page %d: %v", l.ID, pageSize, backward, page+1, err)
		}
		items := make([]feedItem, 0, len(conn.Edges))
		for _, edge := range conn.Edges {
			key, err := paging.DecodeCursor(kind, edge.Cursor)
			if err != nil {
				te.t.Fatalf("list %d's cursor %s: %v", l.ID, edge.Cursor, err)
			}
			items = append(items, feedItem{Post: edge.Node.PostID, Reposters: edge.Node.ReposterIDs, Key: key})
		}
		pages = append(pages, items)
		more, next := conn.PageInfo.HasNextPage, conn.PageInfo.EndCursor
		if backward {
			more, next = conn.PageInfo.HasPreviousPage, conn.PageInfo.StartCursor
		}
		if !more {
			break
		}
		if len(conn.Edges) != pageSize {
			te.t.Fatalf("list %d paged by %d (backward %v): page %d holds %d entries and says more follow", l.ID, pageSize, backward, page+1, len(conn.Edges))
		}
		cursor = next
	}
	if backward {
		slices.Reverse(pages)
	}
	return slices.Concat(pages...)
}

// wantListFeed checks list l's feed against want, paged both ways by
// several sizes.
func wantListFeed(t testing.TB, te *testEngine, stage string, owner int64, l *models.List, want []feedItem) {
	t.Helper()
	for _, size := range []int{1, 3, 100} {
		for _, backward := range []bool{false, true} {
			if got := te.pageListFeed(owner, l, size, backward, len(want)+5); !slices.EqualFunc(got, want, feedItemEqual) {
				t.Fatalf("%s: list %d paged by %d (backward %v):\n got %v\nwant %v", stage, l.ID, size, backward, got, want)
			}
		}
	}
}

// A list's feed holds what the owner's home would if they followed only
// the members: members' posts and reposts, one entry per post at its
// first arrival from a member, with only members among its reposters
// (another followee's repost of the same post does not show); a mute
// hides as in home; a member's new post shows when it shows in home (once
// the fan-out has run); an unfollow takes
// the followee out of the owner's lists, and their posts out of the feed.
func TestListFeedIsHomeNarrowedToMembers(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		r, m, f, o, g := w.user("reader"), w.author("muted"), w.author("friend"), w.user("other"), w.author("general")
		for _, u := range []int64{m, f, g} {
			w.follow(r, u)
		}
		w.touchFeed(r)
		both, onlyF := w.createList(r, "both"), w.createList(r, "only f")
		w.addToList(r, both, m, f)
		w.addToList(r, onlyF, f)
		round := bmWriteRound(w.testEngine, m, f, o)
		w.repost(g, round.o1)
		w.post(g, "g1")
		w.settle()
		wantListFeed(t, w.testEngine, "two members", r, both, round.following(m, f))
		wantListFeed(t, w.testEngine, "one member", r, onlyF, round.throughF(f))
		if home := w.readFeed(r, 100); len(home) != len(round.following(m, f))+1 {
			t.Fatalf("home holds %d entries, want the list's %d and g's post", len(home), len(round.following(m, f)))
		}

		w.mute(r, m)
		wantListFeed(t, w.testEngine, "m muted", r, both, round.hidingM(f))
		w.unmute(r, m)
		wantListFeed(t, w.testEngine, "m unmuted", r, both, round.following(m, f))

		fresh := w.post(m, "fresh")
		w.settle() // home's bound: once the fan-out has run
		one := 1
		conn, err := w.ListFeed(context.Background(), r, both, paging.PageArgs{First: &one})
		if err != nil || len(conn.Edges) != 1 || conn.Edges[0].Node.PostID != fresh {
			t.Fatalf("a member's new post is not the top of the list when it is home's: %+v, %v", conn, err)
		}
		if home := w.readFeed(r, 20); len(home) == 0 || home[0].Post != fresh {
			t.Fatalf("home's top is %+v, want the new post", home)
		}

		w.unfollow(r, f)
		if n := w.list(r, both).MemberCount; n != 1 {
			t.Fatalf("after unfollowing f the list has %d members, want 1", n)
		}
		if n := w.list(r, onlyF).MemberCount; n != 0 {
			t.Fatalf("after unfollowing f the list of f has %d members, want 0", n)
		}
		wantListFeed(t, w.testEngine, "f unfollowed", r, onlyF, nil)
		for _, it := range w.pageListFeed(r, both, 100, false, 20) {
			if it.Key == round.f1 || slices.Contains(it.Reposters, f) {
				t.Fatalf("after unfollowing f the list still shows f's post or a repost of f's: %+v", it)
			}
		}
	})
}

// A list is its owner's alone; its name keeps the display name's rules at
// up to 100 characters; a member must be followed and is added once; both
// limits refuse at their edge; its feed refuses another feed's cursors.
func TestListRules(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t, func(cfg *config.Config) { cfg.MaxListsPerUser, cfg.MaxListMembers = 2, 2 })
		ctx := context.Background()
		r, x, a, b, d := w.user("reader"), w.user("intruder"), w.user("alice"), w.user("bobby"), w.user("dave")
		for _, u := range []int64{a, b, d} {
			w.follow(r, u)
		}
		l := w.createList(r, "  "+strings.Repeat("é", config.MaxListNameChars)+"  ")
		if l.Name != strings.Repeat("é", config.MaxListNameChars) {
			t.Fatalf("the name was not trimmed: %q", l.Name)
		}
		code := func(err error) apperr.Code { return apperr.CodeOf(err) }
		for _, name := range []string{strings.Repeat("é", config.MaxListNameChars+1), " ", "two\nlines"} {
			if _, err := w.CreateList(ctx, r, name); code(err) != apperr.CodeBadUserInput {
				t.Errorf("createList(%q): %v, want BAD_USER_INPUT", name, err)
			}
		}
		second := w.createList(r, "second")
		if _, err := w.CreateList(ctx, r, "third"); code(err) != apperr.CodeBadUserInput {
			t.Errorf("a third list past a limit of 2: %v, want BAD_USER_INPUT", err)
		}

		if got, err := w.List(ctx, x, l.ID); got != nil || err != nil {
			t.Errorf("another user read the list: %+v, %v", got, err)
		}
		if _, err := w.RenameList(ctx, x, l.ID, "mine"); code(err) != apperr.CodeNotFound {
			t.Errorf("another user's rename: %v, want NOT_FOUND", err)
		}
		if _, err := w.AddToList(ctx, x, l.ID, a); code(err) != apperr.CodeNotFound {
			t.Errorf("another user's add: %v, want NOT_FOUND", err)
		}
		if _, err := w.RemoveFromList(ctx, x, l.ID, a); code(err) != apperr.CodeNotFound {
			t.Errorf("another user's remove: %v, want NOT_FOUND", err)
		}
		if _, err := w.DeleteList(ctx, x, l.ID); code(err) != apperr.CodeNotFound {
			t.Errorf("another user's delete: %v, want NOT_FOUND", err)
		}

		if _, err := w.AddToList(ctx, r, l.ID, x); code(err) != apperr.CodeForbidden {
			t.Errorf("adding someone not followed: %v, want FORBIDDEN", err)
		}
		if _, err := w.AddToList(ctx, r, l.ID, 1<<50); code(err) != apperr.CodeNotFound {
			t.Errorf("adding an unknown user: %v, want NOT_FOUND", err)
		}
		w.addToList(r, l, a, a, b)
		if n := w.list(r, l).MemberCount; n != 2 {
			t.Errorf("a added twice and b: %d members, want 2", n)
		}
		if _, err := w.AddToList(ctx, r, l.ID, d); code(err) != apperr.CodeBadUserInput {
			t.Errorf("a third member past a limit of 2: %v, want BAD_USER_INPUT", err)
		}
		one, ten := 1, 10
		members, err := w.ListMembers(ctx, r, w.list(r, l), paging.PageArgs{First: &ten})
		if err != nil || members.TotalCount != 2 || len(members.Edges) != 2 || members.Edges[0].UserID != b || members.Edges[1].UserID != a {
			t.Errorf("members, most recently added first: %+v, %v; want b then a", members, err)
		}
		if _, err := w.RemoveFromList(ctx, r, l.ID, b); err != nil {
			t.Fatal(err)
		}
		if n := w.list(r, l).MemberCount; n != 1 {
			t.Errorf("after removing b: %d members, want 1", n)
		}

		w.post(a, "a1")
		w.post(a, "a2")
		home, err := w.Feed(ctx, r, paging.PageArgs{First: &ten})
		if err != nil || len(home.Edges) == 0 {
			t.Fatalf("home: %+v, %v", home, err)
		}
		own, err := w.ListFeed(ctx, r, l, paging.PageArgs{First: &one})
		if err != nil || len(own.Edges) != 1 {
			t.Fatalf("list feed: %+v, %v", own, err)
		}
		for _, tc := range []struct{ cursor, want string }{
			{home.Edges[0].Cursor, "belongs to a feed list, not to the feed of a list"},
			{paging.EncodeCursor(paging.CursorListFeed(second.ID), 1<<40), "belongs to the feed of another list"},
		} {
			_, err := w.ListFeed(ctx, r, l, paging.PageArgs{First: &one, After: &tc.cursor})
			if code(err) != apperr.CodeBadUserInput || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("list feed after cursor %s: %v, want BAD_USER_INPUT saying %q", tc.cursor, err, tc.want)
			}
		}
		if _, err := w.ListFeed(ctx, r, l, paging.PageArgs{First: &one, After: &own.Edges[0].Cursor}); err != nil {
			t.Errorf("the list's own cursor: %v", err)
		}

		if _, err := w.DeleteList(ctx, r, l.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := w.List(ctx, r, l.ID); got != nil || err != nil {
			t.Errorf("a deleted list: %+v, %v", got, err)
		}
	})
}

// An unfollow, and a block, committed by a process that died before it
// dropped the copy of the follower's lists: the change's stream event drops
// it, so the lists' member counts, read from the copy, show the change once
// the event is handled (not only when the copy's TTL runs out).
func TestListCopyRepairedByTheEvent(t *testing.T) {
	t.Parallel()
	bmEach(t, func(t *testing.T, c bmCase) {
		w := c.engine(t)
		ctx := context.Background()
		r, f, g := w.user("reader"), w.author("friend"), w.author("general")
		w.follow(r, f)
		w.follow(r, g)
		l := w.createList(r, "both")
		w.addToList(r, l, f, g)
		if n := w.list(r, l).MemberCount; n != 2 { // the copy filled
			t.Fatalf("the list has %d members, want 2", n)
		}
		if _, err := w.store.Unfollow(ctx, r, f, 0, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		w.settle()
		if n := w.list(r, l).MemberCount; n != 1 {
			t.Fatalf("after the unfollow's event the list has %d members, want 1", n)
		}
		if _, err := w.store.Block(ctx, g, r, w.ids.Next(), time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		w.settle()
		if n := w.list(r, l).MemberCount; n != 0 {
			t.Fatalf("after the block's event the list has %d members, want 0", n)
		}
	})
}
