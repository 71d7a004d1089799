package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"feedservice/internal/testenv"
	"feedservice/models"
)

// NewPostID keeps a post in its millisecond with its author's residue, at
// or above its id, and finds another id of the millisecond for a second
// post of the same residue.
func TestNewPostIDKeepsTheMillisecond(t *testing.T) {
	taken := map[int64]bool{}
	// A millisecond (the bits above the 7-bit sequence and the 5-bit
	// node), authors of three residues, then more of residue 5 than one
	// node's 128 ids of the millisecond hold.
	ms := int64(12345) << 12
	authors := []int64{5, 6, 7}
	for range 20 {
		authors = append(authors, 21)
	}
	for i, author := range authors {
		old := ms + 100 + int64(i)
		id, ok := NewPostID(old, author, func(id int64) bool { return taken[id] })
		if !ok || taken[id] || id%MaxShards != author%MaxShards || id>>12 != old>>12 {
			t.Fatalf("post %d by %d: %d, %v", old, author, id, ok)
		}
		if i < 3 && (id < old || id >= old+MaxShards) {
			t.Errorf("post %d by %d: %d, not within 16 above it", old, author, id)
		}
		taken[id] = true
	}
}

// A copy reads each table by its primary key from the last row of the
// batch before, on either database it copies from (MySQL spells the
// comparison out, SQLite compares row values): batches of two end within
// one user's follows and one list's members, and every row arrives once.
func TestCopyReadsEachRowOnceByKey(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, src *Store) {
		ctx := context.Background()
		at := relationStore(t, src, 6)
		for _, f := range [][2]int64{{1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 6}, {2, 1}, {3, 1}, {4, 5}} {
			mustFollow(t, src, f[0], f[1], 100+f[0]*10+f[1], at)
		}
		if _, err := src.CreateList(ctx, 1, 200, "friends", at, 10); err != nil {
			t.Fatal(err)
		}
		for i, member := range []int64{2, 3, 4, 5, 6} {
			if _, err := src.AddListMember(ctx, 1, 200, member, 201+int64(i), at, 10); err != nil {
				t.Fatal(err)
			}
		}
		dst, err := Open(ctx, Config{SQLitePath: filepath.Join(t.TempDir(), "copy.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dst.Close() })
		relationStore(t, dst, 0)
		c := &shardCopy{s: dst, src: src, ctx: ctx, batch: 2}
		for _, st := range []struct {
			table string
			key   []string
			model any
			rows  int
		}{
			{"followings", []string{"user_id", "followee_id"}, &[]models.Following{}, 8},
			{"list_members", []string{"owner_id", "list_id", "member_id"}, &[]models.ListMember{}, 5},
		} {
			if err := c.table(st.table, st.key, st.model, plain); err != nil {
				t.Fatalf("copy %s: %v", st.table, err)
			}
			got, want := tableRows(t, dst.db.Table(st.table)), tableRows(t, src.db.Table(st.table))
			if len(want) != st.rows || !slices.Equal(got, want) {
				t.Errorf("%s copied:\n%s\nthe source's:\n%s", st.table, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	})
}

// TestShardedMySQLCopyMovesADatabaseIn copies a seeded database on one
// MariaDB into a sharded layout: every table's rows are there (with the
// layout's own tables beside them), every post lives on its author's node
// under a new id and every reference follows it, both sides of every
// relation and every count agree, each user's timeline and lists read as
// on the source, a client's cursors from before the copy still page the
// same rows, and a second run is refused without a row copied. It copies
// three rows a statement, so that every table but the smallest takes
// several batches, some of them ending within one user's rows (user 1's
// four follows, list 502's four members): each row is copied once, as it
// was.
func TestShardedMySQLCopyMovesADatabaseIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, err := Open(ctx, Config{MySQLDSN: testenv.MySQL(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	at := relationStore(t, src, 12)
	for _, f := range [][2]int64{{1, 2}, {1, 3}, {1, 4}, {1, 5}, {2, 1}, {3, 4}, {4, 5}, {5, 1}, {6, 7}, {7, 8}, {8, 1}, {9, 1}, {10, 11}, {11, 12}} {
		mustFollow(t, src, f[0], f[1], 100+f[0]*20+f[1], at)
	}
	if _, err := src.Block(ctx, 12, 10, 500, at); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Mute(ctx, 1, 3, 501, at); err != nil {
		t.Fatal(err)
	}
	if _, err := src.CreateList(ctx, 1, 502, "friends", at, 10); err != nil {
		t.Fatal(err)
	}
	for i, member := range []int64{2, 3, 4, 5} {
		if _, err := src.AddListMember(ctx, 1, 502, member, 503+int64(i), at, 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.RequestFollow(ctx, 4, 9, 510, at); err != nil {
		t.Fatal(err)
	}
	// Posts with ids as one database made them: no author's residue.
	var posts []int64
	for i := range int64(24) {
		author := 1 + i%12
		id := (int64(1)<<40 + i*3) << 12 // one millisecond each
		if err := src.CreatePost(ctx, &models.Post{ID: id, AuthorID: author, Body: fmt.Sprint("post ", i), CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		posts = append(posts, id)
	}
	for i, r := range [][2]int64{{2, 0}, {3, 0}, {4, 1}, {7, 5}} { // reposter, post index
		p := &models.Post{ID: (int64(1)<<40+100+int64(i))<<12 + 3, AuthorID: r[0], RepostOfID: &posts[r[1]], CreatedAt: at}
		if _, _, err := src.Repost(ctx, p); err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			if _, err := src.DeletePost(ctx, p.ID, r[0], at); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := src.SetPromoted(ctx, posts[2], true); err != nil {
		t.Fatal(err)
	}
	if err := src.Dismiss(ctx, 1, 1, posts[3]); err != nil {
		t.Fatal(err)
	}

	dst, _ := openSharded(t)
	const batch = 3
	seen, batches := map[string]int64{}, map[string]int{}
	if err := dst.copyFrom(ctx, src, batch, func(table string, copied, total int64) {
		seen[table] = copied
		if copied > 0 {
			batches[table]++
		}
	}); err != nil {
		t.Fatal(err)
	}
	count := func(s *Store, table, where string) int64 {
		t.Helper()
		var n int64
		q := s.db.Table(table)
		if where != "" {
			q = q.Where(where)
		}
		if err := q.Count(&n).Error; err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		return n
	}
	for _, table := range []string{"users", "followings", "followers", "relation_marks", "blocks", "mutes", "lists", "list_members", "follow_requests", "posts", "promoted_posts", "home_dismissals"} {
		want := count(src, table, "")
		if got := count(dst, table, ""); got != want || seen[table] != want {
			t.Errorf("%s: %d rows copied (progress said %d), the source has %d", table, got, seen[table], want)
		}
		if got, want := batches[table], int((want+batch-1)/batch); got != want {
			t.Errorf("%s: copied in %d batches, want %d of %d rows", table, got, want, batch)
		}
	}
	// The tables whose rows keep their keys: the same rows on both sides.
	for _, table := range []string{"users", "followings", "followers", "relation_marks", "blocks", "mutes", "lists", "list_members", "follow_requests"} {
		if got, want := tableRows(t, dst.db.Table(table)), tableRows(t, src.db.Table(table)); !slices.Equal(got, want) {
			t.Errorf("%s on the copy:\n%s\non the source:\n%s", table, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for layoutTable, want := range map[string]int64{
		"usernames": count(src, "users", ""), "blocked_by": count(src, "blocks", ""), "muted_by": count(src, "mutes", ""),
		"follow_requests_sent": count(src, "follow_requests", ""), "reposts_by_original": count(src, "posts", "repost_of_id IS NOT NULL"),
	} {
		if got := count(dst, layoutTable, ""); got != want {
			t.Errorf("%s: %d rows, want %d", layoutTable, got, want)
		}
	}
	if got, want := count(dst, "outbox_events", "dispatched_at IS NULL"), count(src, "outbox_events", "dispatched_at IS NULL"); got != want {
		t.Errorf("undispatched events: %d copied, the source has %d", got, want)
	}
	var copied []models.Post
	if err := dst.db.Find(&copied).Error; err != nil {
		t.Fatal(err)
	}
	bodies := map[int64]string{}
	for _, p := range copied {
		bodies[p.ID] = p.Body
		if p.ID%MaxShards != p.AuthorID%MaxShards {
			t.Errorf("post %d of user %d does not carry its author's residue", p.ID, p.AuthorID)
		}
	}
	for _, p := range copied {
		if p.RepostOfID != nil && bodies[*p.RepostOfID] == "" {
			t.Errorf("repost %d points at %d, not a copied post", p.ID, *p.RepostOfID)
		}
	}
	follows := checkBothSides(t, dst)
	if want := count(src, "followings", ""); int64(len(follows)) != want {
		t.Errorf("%d follows on the copy, %d on the source", len(follows), want)
	}
	// Each user's timeline and lists read as on the source, whole and
	// from a cursor taken on the source.
	for u := int64(1); u <= 12; u++ {
		read := func(s *Store, bound int64) []string {
			page, err := s.TimelinePage(ctx, u, Older, bound, 50)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]string, len(page))
			for i, p := range page {
				out[i] = p.Body
				if p.RepostOfID != nil {
					original, err := s.PostsByIDs(ctx, []int64{*p.RepostOfID})
					if err != nil || len(original) != 1 {
						t.Fatalf("repost %d's original: %v, %v", p.ID, original, err)
					}
					out[i] = "repost of " + original[0].Body
				}
			}
			return out
		}
		whole := read(src, 1<<62)
		if got := read(dst, 1<<62); !slices.Equal(got, whole) {
			t.Errorf("user %d's timeline on the copy %v, on the source %v", u, got, whole)
		}
		if first, err := src.TimelinePage(ctx, u, Older, 1<<62, 1); err == nil && len(first) == 1 {
			if got, want := read(dst, first[0].ID), read(src, first[0].ID); !slices.Equal(got, want) {
				t.Errorf("user %d's timeline after a cursor of before the copy: %v, want %v", u, got, want)
			}
		}
		for _, list := range []func(*Store) ([]models.Relation, error){
			func(s *Store) ([]models.Relation, error) { return s.FollowingPage(ctx, u, Older, 1<<62, 50) },
			func(s *Store) ([]models.Relation, error) { return s.FollowersPage(ctx, u, Older, 1<<62, 50) },
		} {
			want, err := list(src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := list(dst)
			if err != nil || len(got) != len(want) {
				t.Errorf("user %d's list on the copy: %v (%v), on the source %v", u, got, err, want)
				continue
			}
			for i := range got {
				if got[i].UserID != want[i].UserID || got[i].ID != want[i].ID {
					t.Errorf("user %d's list on the copy: %v, on the source %v", u, got, want)
					break
				}
			}
		}
	}
	if promoted, err := dst.PromotedPostIDs(ctx, 10); err != nil || len(promoted) != 1 || bodies[promoted[0]] != "post 2" {
		t.Errorf("promoted posts on the copy: %v (%v), want post 2's new id", promoted, err)
	}

	// A second run is refused, and copies nothing.
	before := count(dst, "posts", "")
	if err := dst.CopyFrom(ctx, src, nil); !errors.Is(err, ErrCopyTargetNotEmpty) {
		t.Fatalf("a second copy: %v, want ErrCopyTargetNotEmpty", err)
	} else {
		t.Logf("a second copy is refused: %v", err)
	}
	if after := count(dst, "posts", ""); after != before {
		t.Errorf("the refused copy changed the posts: %d, then %d", before, after)
	}
}
