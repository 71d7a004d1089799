package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"feedservice/models"
)

// The relay delivers a half at least once: it may stop after the half
// committed on its target node and before it deleted the change on the
// actor's, and then applies it again. That second application must leave
// every table as the first left it, counts, offset marks and outbox events
// included, for every kind of half; and so must it when the target's user
// changed the same relation in between (removed the follower the half
// brought, rejected the request it brought, unfollowed after an approval
// arrived).
func TestShardedMySQLRelayHalfAppliedTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openSharded(t)
	at := relationStore(t, s, 48) // users 1-48, user n on node n mod 4
	on, off := true, false
	for _, id := range []int64{6, 10, 18, 34, 38, 42} { // all on node 2
		if _, err := s.UpdateProfile(ctx, id, models.ProfileChange{IsProtected: &on}, at); err != nil {
			t.Fatal(err)
		}
	}
	for id := int64(1); id <= 48; id++ {
		for _, list := range []RelationList{FollowersList, FollowingList} {
			if err := s.RebuildMarks(ctx, list, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// must(what)(write) wants the write to change something.
	must := func(what string) func(bool, error) {
		return func(changed bool, err error) {
			t.Helper()
			if err != nil || !changed {
				t.Fatalf("%s: changed %v, %v", what, changed, err)
			}
		}
	}
	// twice takes the pending halves one at a time, oldest first, and the
	// halves those send back in turn: it applies each on its target node,
	// stops there as a relay that died before the deletion, runs between
	// (on the first half only), then lets the relay apply the half again
	// and delete it, and wants every table as after the first time.
	twice := func(name string, between func()) {
		t.Helper()
		for {
			pending := pendingRelays(t, s)
			if len(pending) == 0 {
				break
			}
			c := pending[0]
			if err := s.applyOnTarget(ctx, c); err != nil {
				t.Fatalf("%s: apply change %d: %v", name, c.ID, err)
			}
			if between != nil {
				between()
				between = nil
			}
			once := relayTables(t, s, c.ID)
			if err := s.applyChange(ctx, c); err != nil {
				t.Fatalf("%s: apply change %d again: %v", name, c.ID, err)
			}
			if diff := tablesDiff(once, relayTables(t, s, c.ID)); diff != "" {
				t.Errorf("%s: change %d (%s) applied a second time changed:\n%s", name, c.ID, c.Ops, diff)
			}
		}
		checkBothSides(t, s)
	}

	// follower+ with a follow's event, follower- with an unfollow's.
	must("follow 1 -> 2")(s.Follow(ctx, 1, 2, 101, at))
	twice("follow", nil)
	must("unfollow 1 -> 2")(s.Unfollow(ctx, 1, 2, 109, at))
	twice("unfollow", nil)
	// following- with a removed follower's event.
	must("follow 3 -> 2")(s.Follow(ctx, 3, 2, 102, at))
	twice("follow", nil)
	must("2 removes follower 3")(s.RemoveFollower(ctx, 2, 3, 110, at))
	twice("a follower's removal", nil)
	// request+ kept (6 is protected), then following+ with the approval's
	// event.
	must("request 5 -> 6")(s.RequestFollow(ctx, 5, 6, 103, at))
	twice("a request", nil)
	must("6 approves 5")(s.ApproveFollowRequest(ctx, 6, 5, 104, at))
	twice("an approval", nil)
	// request_sent- (a rejection) and request- (a withdrawal).
	must("request 7 -> 6")(s.RequestFollow(ctx, 7, 6, 105, at))
	twice("a request", nil)
	must("6 rejects 7")(s.DropFollowRequest(ctx, 6, 6, 7))
	twice("a rejection", nil)
	must("request 9 -> 10")(s.RequestFollow(ctx, 9, 10, 106, at))
	twice("a request", nil)
	must("9 withdraws")(s.DropFollowRequest(ctx, 9, 10, 9))
	twice("a withdrawal", nil)
	// request+ approved on arrival (10 turned protection off), its
	// following+ sent back with the follow's event.
	must("request 11 -> 10")(s.RequestFollow(ctx, 11, 10, 107, at))
	if _, err := s.UpdateProfile(ctx, 10, models.ProfileChange{IsProtected: &off}, at); err != nil {
		t.Fatal(err)
	}
	twice("a request approved on arrival", nil)
	// request+ refused on arrival (18 blocked the requester meanwhile),
	// request_sent- sent back.
	must("request 13 -> 18")(s.RequestFollow(ctx, 13, 18, 108, at))
	must("18 blocks 13")(s.Block(ctx, 18, 13, 109, at))
	twice("a request refused on arrival", nil)
	// follower+ refused on arrival (20 blocked 17 before the follow's
	// half came), following- sent back with an unfollow's event.
	must("20 blocks 17")(s.Block(ctx, 20, 17, 110, at))
	must("follow 17 -> 20")(s.Follow(ctx, 17, 20, 111, at))
	twice("a follow refused on arrival", nil)
	// A block: blocked_by+, requests-, follower-, following- ending the
	// follows both ways, with their events; then blocked_by-.
	must("follow 21 -> 22")(s.Follow(ctx, 21, 22, 112, at))
	must("follow 22 -> 21")(s.Follow(ctx, 22, 21, 113, at))
	twice("follows both ways", nil)
	must("21 blocks 22")(s.Block(ctx, 21, 22, 114, at))
	twice("a block", nil)
	must("21 unblocks 22")(s.Unblock(ctx, 21, 22, at))
	twice("an unblock", nil)
	// muted_by+, muted_by-.
	must("23 mutes 22")(s.Mute(ctx, 23, 22, 115, at))
	twice("a mute", nil)
	must("23 unmutes 22")(s.Unmute(ctx, 23, 22, at))
	twice("an unmute", nil)
	// repost+ with the repost's event, repost- moving the count back.
	original := &models.Post{ID: 1000*MaxShards + 26, AuthorID: 26, Body: "original", CreatedAt: at}
	if err := s.CreatePost(ctx, original); err != nil {
		t.Fatal(err)
	}
	repost := &models.Post{ID: 1001*MaxShards + 27, AuthorID: 27, RepostOfID: &original.ID, CreatedAt: at}
	if _, created, err := s.Repost(ctx, repost); err != nil || !created {
		t.Fatalf("repost: %v, %v", created, err)
	}
	twice("a repost", nil)
	if _, err := s.DeletePost(ctx, repost.ID, 27, at); err != nil {
		t.Fatal(err)
	}
	twice("a repost's deletion", nil)
	// The bulk writes' halves: follower+ and repost+, each op with its
	// own event.
	if n, err := s.CreateFollows(ctx, []NewFollow{
		{FollowerID: 25, FolloweeID: 26, ID: 116, At: at},
		{FollowerID: 25, FolloweeID: 27, ID: 117, At: at},
		{FollowerID: 29, FolloweeID: 26, ID: 118, At: at},
		{FollowerID: 25, FolloweeID: 28, ID: 119, At: at},
	}, EventsPending); err != nil || n != 4 {
		t.Fatalf("bulk follows: %d, %v", n, err)
	}
	twice("bulk follows", nil)
	if err := s.CreatePosts(ctx, []*models.Post{
		{ID: 1002*MaxShards + 25, AuthorID: 25, RepostOfID: &original.ID, CreatedAt: at},
		{ID: 1003*MaxShards + 29, AuthorID: 29, RepostOfID: &original.ID, CreatedAt: at},
		{ID: 1004*MaxShards + 28, AuthorID: 28, RepostOfID: &original.ID, CreatedAt: at},
	}, EventsPending); err != nil {
		t.Fatal(err)
	}
	twice("bulk reposts", nil)

	// The target's user changes the relation between the two
	// applications: the second must not bring back what they removed.
	must("follow 29 -> 30")(s.Follow(ctx, 29, 30, 120, at))
	twice("a follow whose followee removes the follower in between", func() {
		must("30 removes follower 29")(s.RemoveFollower(ctx, 30, 29, 130, at))
	})
	must("request 31 -> 34")(s.RequestFollow(ctx, 31, 34, 121, at))
	twice("a request rejected in between", func() {
		must("34 rejects 31")(s.DropFollowRequest(ctx, 34, 34, 31))
	})
	must("request 33 -> 38")(s.RequestFollow(ctx, 33, 38, 122, at))
	twice("a request", nil)
	must("38 approves 33")(s.ApproveFollowRequest(ctx, 38, 33, 123, at))
	twice("an approval whose requester unfollows in between", func() {
		must("33 unfollows 38")(s.Unfollow(ctx, 33, 38, 132, at))
	})
	must("request 35 -> 42")(s.RequestFollow(ctx, 35, 42, 124, at))
	if _, err := s.UpdateProfile(ctx, 42, models.ProfileChange{IsProtected: &off}, at); err != nil {
		t.Fatal(err)
	}
	twice("a request approved on arrival whose follower is removed in between", func() {
		must("42 removes follower 35")(s.RemoveFollower(ctx, 42, 35, 131, at))
	})
	for _, pair := range [][2]int64{{29, 30}, {33, 38}, {35, 42}} {
		if ok, err := s.Follows(ctx, pair[0], pair[1]); err != nil || ok {
			t.Errorf("%d follows %d after the follow ended and the relay applied its half again: %v, %v", pair[0], pair[1], ok, err)
		}
	}
	if n, err := s.FollowRequestCount(ctx, 34); err != nil || n != 0 {
		t.Errorf("user 34 has %d requests waiting after the rejection, want none (%v)", n, err)
	}
}

// relayTables reads every table the relay writes, through the head, by
// table: all but the relay change skip, which the second application
// deletes. The relay's record of the changes it applied is left out: it
// is the relay's own bookkeeping.
func relayTables(t testing.TB, s *Store, skip int64) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range []string{"users", "followings", "followers", "relation_marks", "follow_requests",
		"follow_requests_sent", "blocks", "blocked_by", "mutes", "muted_by", "posts", "reposts_by_original",
		"outbox_events", "lists", "list_members", "relay_changes"} {
		query := s.db.Table(table)
		if table == "relay_changes" {
			query = query.Where("id <> ?", skip)
		}
		out[table] = tableRows(t, query)
	}
	return out
}

// tableRows reads the rows of query as text ("column=value ..."), sorted.
func tableRows(t testing.TB, query *gorm.DB) []string {
	t.Helper()
	rows, err := query.Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		values := make([]any, len(columns))
		ptrs := make([]any, len(columns))
		for i := range values {
			ptrs[i] = &values[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fields := make([]string, len(columns))
		for i, v := range values {
			switch v := v.(type) {
			case []byte:
				fields[i] = columns[i] + "=" + string(v)
			case time.Time:
				fields[i] = columns[i] + "=" + v.UTC().Format(time.RFC3339Nano)
			default:
				fields[i] = fmt.Sprintf("%s=%v", columns[i], v)
			}
		}
		out = append(out, strings.Join(fields, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// tablesDiff lists the rows of a and b that the other lacks, by table.
func tablesDiff(a, b map[string][]string) string {
	tables := map[string]bool{}
	for table := range a {
		tables[table] = true
	}
	for table := range b {
		tables[table] = true
	}
	var out strings.Builder
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		for _, row := range a[table] {
			if !slices.Contains(b[table], row) {
				fmt.Fprintf(&out, "  %s: gone: %s\n", table, row)
			}
		}
		for _, row := range b[table] {
			if !slices.Contains(a[table], row) {
				fmt.Fprintf(&out, "  %s: new: %s\n", table, row)
			}
		}
	}
	return out.String()
}
