package store

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

// TestListsKeepTheirRules: a list is found only through its owner; its
// members must be followees, are added once, leave on unfollow (and on a
// block, which unfollows), and are paged newest first; both limits refuse
// at their edge and not before.
func TestListsKeepTheirRules(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := relationStore(t, s, 5)
		for i, followee := range []int64{2, 3, 4} {
			if _, err := s.Follow(ctx, 1, followee, int64(100+i), at); err != nil {
				t.Fatal(err)
			}
		}
		l, err := s.CreateList(ctx, 1, 500, "friends", at, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateList(ctx, 1, 501, "work", at, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateList(ctx, 1, 502, "third", at, 2); !errors.Is(err, ErrLimitReached) {
			t.Errorf("a third list past a limit of 2: %v, want ErrLimitReached", err)
		}
		if got, err := s.ListByID(ctx, 2, l.ID); err != nil || got != nil {
			t.Errorf("user 2 found user 1's list: %+v, %v", got, err)
		}
		if err := s.RenameList(ctx, 2, l.ID, "mine"); !errors.Is(err, ErrNotFound) {
			t.Errorf("user 2 renamed user 1's list: %v, want ErrNotFound", err)
		}
		if _, err := s.AddListMember(ctx, 1, l.ID, 5, 600, at, 2); !errors.Is(err, ErrNotFollowing) {
			t.Errorf("adding a user not followed: %v, want ErrNotFollowing", err)
		}
		for i, m := range []int64{2, 3, 2} {
			added, err := s.AddListMember(ctx, 1, l.ID, m, int64(601+i), at, 2)
			if err != nil || added != (i < 2) {
				t.Errorf("add %d (try %d): %v, %v", m, i, added, err)
			}
		}
		if _, err := s.AddListMember(ctx, 1, l.ID, 4, 610, at, 2); !errors.Is(err, ErrLimitReached) {
			t.Errorf("a third member past a limit of 2: %v, want ErrLimitReached", err)
		}
		page, err := s.ListMembersPage(ctx, 1, l.ID, Older, math.MaxInt64, 10)
		if err != nil || len(page) != 2 || page[0].UserID != 3 || page[1].UserID != 2 {
			t.Errorf("members, newest first: %+v, %v; want 3 then 2", page, err)
		}
		if got, err := s.ListByID(ctx, 1, l.ID); err != nil || got == nil || got.MemberCount != 2 || got.Name != "friends" {
			t.Errorf("ListByID: %+v, %v", got, err)
		}
		if _, err := s.Unfollow(ctx, 1, 3, 0, at); err != nil {
			t.Fatal(err)
		}
		if ids, err := memberIDs(ctx, s, 1, l.ID); err != nil || !slices.Equal(ids, []int64{2}) {
			t.Errorf("after unfollowing 3 the members are %v, %v; want [2]", ids, err)
		}
		if _, err := s.Block(ctx, 2, 1, 700, at); err != nil {
			t.Fatal(err)
		}
		if ids, err := memberIDs(ctx, s, 1, l.ID); err != nil || len(ids) != 0 {
			t.Errorf("after 2 blocked the owner the members are %v, %v; want none", ids, err)
		}
		lists, err := s.ListsPage(ctx, 1, Older, math.MaxInt64, 10)
		if err != nil || len(lists) != 2 || lists[0].ID != 501 || lists[1].ID != 500 {
			t.Errorf("lists, newest first: %+v, %v", lists, err)
		}
		if err := s.DeleteList(ctx, 1, l.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := s.ListCount(ctx, 1); err != nil || n != 1 {
			t.Errorf("after a delete: %d lists, %v; want 1", n, err)
		}
		if err := s.DeleteList(ctx, 1, l.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting it again: %v, want ErrNotFound", err)
		}
	})
}

// memberIDs are the members of owner's list id, most recently added first,
// as ListsWithMembers reads them.
func memberIDs(ctx context.Context, s *Store, owner, id int64) ([]int64, error) {
	lists, err := s.ListsWithMembers(ctx, owner)
	for _, l := range lists {
		if l.ID == id {
			return l.Members, err
		}
	}
	return nil, err
}
