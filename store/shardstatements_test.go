package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"feedservice/internal/testenv"
	"feedservice/internal/testenv/testrun"
	"feedservice/models"
)

// nodeLogs reads what each data node saw of one database: the statements
// of its general log (kept in mysql.general_log, turned on here) that name
// the database. The head names every table it sends a node with its
// database, so another test's statements are never counted.
type nodeLogs struct {
	t     testing.TB
	dbs   []*sql.DB
	name  string // the database
	since []int  // per node: statements seen before the current step
}

// generalLogWait is how long the test waits for another run's use of
// the data nodes' general logs to end (stretched by Scale).
const generalLogWait = 5 * time.Minute

// watchNodes turns the data nodes' general logs on, emptied, until the
// test ends: holding the machine-wide lock of them, so that the same test
// of another run does not empty them under this one. Off, they cost the
// other tests nothing, and a count reads only what this test's time saw.
func watchNodes(t testing.TB, nodes []string) *nodeLogs {
	t.Helper()
	unlock, err := testrun.Lock("shard-general-logs", testenv.Scale(generalLogWait))
	if err != nil {
		t.Fatalf("the data nodes' general logs are held by another run's test: %v", err)
	}
	t.Cleanup(unlock)
	l := &nodeLogs{t: t}
	for _, node := range nodes {
		cfg, err := mysql.ParseDSN(node)
		if err != nil {
			t.Fatal(err)
		}
		l.name = cfg.DBName
		cfg.DBName = ""
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			db.Exec("SET GLOBAL general_log = 0")
			db.Exec("TRUNCATE TABLE mysql.general_log")
			db.Close()
		})
		for _, stmt := range []string{"SET GLOBAL general_log = 0", "TRUNCATE TABLE mysql.general_log", "SET GLOBAL log_output = 'TABLE', general_log = 1"} {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("general log on %s: %s: %v", cfg.Addr, stmt, err)
			}
		}
		l.dbs = append(l.dbs, db)
	}
	l.since = l.counts()
	return l
}

// The statements counted: every one, or those that change rows.
const (
	anyStatement = ""
	writes       = " AND (argument LIKE 'insert%' OR argument LIKE 'update%' OR argument LIKE 'delete%' OR argument LIKE 'replace%')"
)

// counts is how many statements naming the database each node has seen.
func (l *nodeLogs) counts() []int { return l.countsOf(anyStatement) }

// countsOf is counts of the statements kind selects.
func (l *nodeLogs) countsOf(kind string) []int {
	l.t.Helper()
	out := make([]int, len(l.dbs))
	for i, db := range l.dbs {
		err := db.QueryRow("SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' AND argument LIKE ?"+kind,
			"%`"+l.name+"`%").Scan(&out[i])
		if err != nil {
			l.t.Fatalf("read node %d's general log: %v", i, err)
		}
	}
	return out
}

// touched runs step and returns the nodes that saw a statement of it.
func (l *nodeLogs) touched(step func() error) ([]int, []string) {
	l.t.Helper()
	return l.touchedBy(step, anyStatement)
}

// touchedBy runs step and returns the nodes that saw a statement of it
// of kind.
func (l *nodeLogs) touchedBy(step func() error, kind string) ([]int, []string) {
	l.t.Helper()
	before := l.countsOf(kind)
	if err := step(); err != nil {
		l.t.Fatal(err)
	}
	after := l.countsOf(kind)
	l.since = l.counts()
	var nodes []int
	for i := range after {
		if after[i] > before[i] {
			nodes = append(nodes, i)
		}
	}
	return nodes, l.lastSeen(nodes, before, after)
}

// lastSeen is what the touched nodes saw, for a failure's message.
func (l *nodeLogs) lastSeen(nodes, before, after []int) []string {
	var out []string
	for _, i := range nodes {
		rows, err := l.dbs[i].Query("SELECT argument FROM mysql.general_log WHERE command_type = 'Query' AND argument LIKE ? ORDER BY event_time DESC LIMIT ?",
			"%`"+l.name+"`%", after[i]-before[i])
		if err != nil {
			l.t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, fmt.Sprintf("node %d: %s", i, s))
		}
		rows.Close()
	}
	return out
}

// TestShardedMySQLHotStatementsOnOneShard runs each statement the service
// runs most on the sharded layout and checks, from the data nodes' general
// logs, that it reached one node, the one of the user it is about: a home
// feed's view of the reader, a timeline, both relation lists (the fan-out's
// follower scan is the followers list), a user's counts, a post by id,
// sign-in by name, the outbox dispatcher's reads and marks, every read
// and write of a reader's lists, the reads of follow requests, the
// reposts of an original; and that each write between users of two nodes
// (follow, unfollow, a follower's removal, block, unblock, mute, repost
// and its deletion, a follow request, its rejection and its withdrawal)
// writes on the actor's node alone.
func TestShardedMySQLHotStatementsOnOneShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, nodes := openSharded(t)
	now := time.Now().UTC()
	// Users 1000-1007: two on each node.
	var users []int64
	for i := range int64(8) {
		id := 1000 + i
		if err := s.CreateUser(ctx, &models.User{ID: id, Username: fmt.Sprintf("hot%d", i), CreatedAt: now, LastActiveAt: now}); err != nil {
			t.Fatal(err)
		}
		users = append(users, id)
	}
	reader, author := users[1], users[2]
	seq := int64(5000)
	for _, other := range users {
		if other != reader {
			seq++
			if _, err := s.Follow(ctx, reader, other, seq, now); err != nil {
				t.Fatal(err)
			}
		}
		if other != author {
			seq++
			if _, err := s.Follow(ctx, other, author, seq, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Mute(ctx, reader, users[3], 6001, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Block(ctx, users[4], reader, 6002, now); err != nil {
		t.Fatal(err)
	}
	var posts []int64
	for i := range int64(5) {
		// An id with its author's residue, as ids.NextBeside makes it.
		id := 9000*int64(MaxShards) + i*int64(MaxShards) + author%int64(MaxShards)
		if err := s.CreatePost(ctx, &models.Post{ID: id, AuthorID: author, Body: "hot", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		posts = append(posts, id)
	}
	// Reposts of the author's first post by users of two other nodes.
	for i, reposter := range []int64{users[5], users[7]} {
		original := posts[0]
		repost := &models.Post{ID: 9100*int64(MaxShards) + int64(i)*int64(MaxShards) + reposter%int64(MaxShards), AuthorID: reposter, RepostOfID: &original, CreatedAt: now}
		if _, _, err := s.Repost(ctx, repost); err != nil {
			t.Fatal(err)
		}
	}
	applyRelays(t, s)
	list, err := s.CreateList(ctx, reader, 7000, "hot", now, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddListMember(ctx, reader, list.ID, author, 7001, now, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Unfollow(ctx, reader, users[6], 7002, now); err != nil {
		t.Fatal(err)
	}
	// Protected, so that the requests wait for approval when they arrive.
	on := true
	for _, id := range []int64{reader, users[6]} {
		if _, err := s.UpdateProfile(ctx, id, models.ProfileChange{IsProtected: &on}, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RequestFollow(ctx, reader, users[6], 7010, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestFollow(ctx, users[7], reader, 7011, now); err != nil {
		t.Fatal(err)
	}
	applyRelays(t, s)
	pending, err := s.PendingEvents(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var authorEvents []int64
	for _, ev := range pending {
		if s.ShardOf(ev.ID) == s.ShardOf(author) {
			authorEvents = append(authorEvents, ev.ID)
		}
	}

	logs := watchNodes(t, nodes)
	for _, st := range []struct {
		name  string
		owner int64
		run   func() error
	}{
		{"feed view of the reader (FeedView)", reader, func() error { _, _, err := s.FeedView(ctx, reader); return err }},
		{"timeline (TimelinePage)", author, func() error { _, err := s.TimelinePage(ctx, author, Older, 1<<62, 20); return err }},
		{"followers list, the fan-out's scan (FollowersPage)", author, func() error {
			_, err := s.FollowersPage(ctx, author, Older, 1<<62, 20)
			return err
		}},
		{"following list (FollowingPage)", reader, func() error { _, err := s.FollowingPage(ctx, reader, Older, 1<<62, 20); return err }},
		{"counts (UserByID)", author, func() error { _, err := s.UserByID(ctx, author); return err }},
		{"post by id (PostsByIDs)", author, func() error { _, err := s.PostsByIDs(ctx, posts[:1]); return err }},
		{"a page of posts by id (PostsByIDs)", author, func() error { _, err := s.PostsByIDs(ctx, posts); return err }},
		{"the dispatcher's marks (MarkDispatched)", author, func() error { return s.MarkDispatched(ctx, authorEvents, now) }},
		{"who among the followers mutes a post's author (MutingAmong)", users[3], func() error {
			muting, err := s.MutingAmong(ctx, users[3], users)
			if err == nil && !muting[reader] {
				err = fmt.Errorf("MutingAmong(%d) = %v: the reader's mute is missing", users[3], muting)
			}
			return err
		}},
		{"whether the reader's feed hides a user who blocks them (Hides)", reader, func() error { _, err := s.Hides(ctx, reader, users[4]); return err }},
		{"whether the reader's feed hides a followee (Hides)", reader, func() error { _, err := s.Hides(ctx, reader, author); return err }},
		{"a list of the reader's (ListByID)", reader, func() error {
			l, err := s.ListByID(ctx, reader, list.ID)
			if err == nil && (l == nil || l.MemberCount != 1) {
				err = fmt.Errorf("ListByID = %+v, want the list with its member", l)
			}
			return err
		}},
		{"the reader's lists (ListsPage)", reader, func() error { _, err := s.ListsPage(ctx, reader, Older, 1<<62, 20); return err }},
		{"a list's members (ListMembersPage)", reader, func() error {
			_, err := s.ListMembersPage(ctx, reader, list.ID, Older, 1<<62, 20)
			return err
		}},
		{"the reader's lists with their members (ListsWithMembers)", reader, func() error {
			lists, err := s.ListsWithMembers(ctx, reader)
			if err == nil && (len(lists) != 1 || !slices.Equal(lists[0].Members, []int64{author})) {
				err = fmt.Errorf("ListsWithMembers = %+v, want the list with its member", lists)
			}
			return err
		}},
		{"a list's creation (CreateList)", reader, func() error { _, err := s.CreateList(ctx, reader, 7002, "new", now, 100); return err }},
		{"a list's renaming (RenameList)", reader, func() error { return s.RenameList(ctx, reader, 7002, "renamed") }},
		{"a member's addition (AddListMember)", reader, func() error {
			_, err := s.AddListMember(ctx, reader, 7002, users[5], 7003, now, 1000)
			return err
		}},
		{"a member's removal (RemoveListMember)", reader, func() error { return s.RemoveListMember(ctx, reader, 7002, users[5]) }},
		{"a list's deletion (DeleteList)", reader, func() error { return s.DeleteList(ctx, reader, 7002) }},
		{"the reposts of an original (LiveReposts)", author, func() error {
			reposts, err := s.LiveReposts(ctx, posts[:1])
			if err == nil && len(reposts[posts[0]]) != 2 {
				err = fmt.Errorf("LiveReposts(%d) = %v, want its two reposts", posts[0], reposts)
			}
			return err
		}},
		{"the reposts of a page of one author's originals (LiveReposts)", author, func() error { _, err := s.LiveReposts(ctx, posts); return err }},
		{"who reposted an original (ReposterIDs)", author, func() error {
			ids, err := s.ReposterIDs(ctx, posts[0])
			if err == nil && len(ids) != 2 {
				err = fmt.Errorf("ReposterIDs(%d) = %v, want its two reposters", posts[0], ids)
			}
			return err
		}},
		{"the reposts of originals by given users, the pull feed's (Reposts)", author, func() error {
			events, err := s.Reposts(ctx, users, posts)
			if err == nil && len(events) != 2 {
				err = fmt.Errorf("Reposts = %v, want the two reposts", events)
			}
			return err
		}},
		{"the first repost of originals by given users (FirstReposts)", author, func() error { _, err := s.FirstReposts(ctx, users, posts); return err }},
		{"the reader's follow requests (FollowRequestsPage)", reader, func() error {
			_, err := s.FollowRequestsPage(ctx, reader, Older, 1<<62, 20)
			return err
		}},
		{"the requests to count (FollowRequestCount)", reader, func() error { _, err := s.FollowRequestCount(ctx, reader); return err }},
		{"the protection's switch (UpdateProfile)", reader, func() error {
			on := true
			u, err := s.UpdateProfile(ctx, reader, models.ProfileChange{IsProtected: &on}, now)
			if err == nil && !u.IsProtected {
				err = fmt.Errorf("UpdateProfile = %+v, want the reader protected", u)
			}
			return err
		}},
		{"whom the reader asked to follow (RequestedAmong)", reader, func() error {
			asked, err := s.RequestedAmong(ctx, reader, users)
			if err == nil && !asked[users[6]] {
				err = fmt.Errorf("RequestedAmong(%d) = %v: the request to %d is missing", reader, asked, users[6])
			}
			return err
		}},
	} {
		got, seen := logs.touched(st.run)
		if want := s.ShardOf(st.owner); len(got) != 1 || got[0] != want {
			t.Errorf("%s reached nodes %v, want node %d alone; they saw:\n%s", st.name, got, want, strings.Join(seen, "\n"))
		}
	}

	// The writes between two users of two nodes: whatever they read,
	// they write on the actor's node alone (the other's half goes through
	// the relay).
	repost := &models.Post{ID: 9200*int64(MaxShards) + users[3]%int64(MaxShards), AuthorID: users[3], RepostOfID: &posts[1], CreatedAt: now}
	for _, st := range []struct {
		name  string
		actor int64
		run   func() error
	}{
		{"a follow (Follow)", users[5], func() error { _, err := s.Follow(ctx, users[5], users[3], 8001, now); return err }},
		{"an unfollow (Unfollow)", users[5], func() error {
			_, err := s.Unfollow(ctx, users[5], users[3], 8004, now)
			return err
		}},
		{"a follower's removal (RemoveFollower)", author, func() error {
			_, err := s.RemoveFollower(ctx, author, users[7], 8003, now)
			return err
		}},
		{"a block (Block)", users[5], func() error { _, err := s.Block(ctx, users[5], users[6], 8002, now); return err }},
		{"an unblock (Unblock)", users[5], func() error { _, err := s.Unblock(ctx, users[5], users[6], now); return err }},
		{"a mute (Mute)", users[5], func() error { _, err := s.Mute(ctx, users[5], users[7], 8003, now); return err }},
		{"a repost of another node's post (Repost)", users[3], func() error { _, _, err := s.Repost(ctx, repost); return err }},
		{"a repost's deletion (DeletePost)", users[3], func() error { _, err := s.DeletePost(ctx, repost.ID, users[3], now); return err }},
		{"a follow request (RequestFollow)", users[5], func() error { _, err := s.RequestFollow(ctx, users[5], users[6], 8004, now); return err }},
		{"a follow request of a protected user (FollowOrRequest)", users[7], func() error {
			outcome, err := s.FollowOrRequest(ctx, users[7], users[6], 8005, now)
			if err == nil && outcome != Requested {
				err = fmt.Errorf("FollowOrRequest = %v, want Requested", outcome)
			}
			return err
		}},
		{"a request's rejection (DropFollowRequest)", reader, func() error {
			dropped, err := s.DropFollowRequest(ctx, reader, reader, users[7])
			if err == nil && !dropped {
				err = fmt.Errorf("the request of %d to follow the reader was not there to reject", users[7])
			}
			return err
		}},
		{"a request's withdrawal (DropFollowRequest)", reader, func() error {
			dropped, err := s.DropFollowRequest(ctx, reader, users[6], reader)
			if err == nil && !dropped {
				err = fmt.Errorf("the reader's request to follow %d was not there to withdraw", users[6])
			}
			return err
		}},
	} {
		got, seen := logs.touchedBy(st.run, writes)
		if want := s.ShardOf(st.actor); len(got) != 1 || got[0] != want {
			t.Errorf("%s wrote on nodes %v, want node %d alone; they saw:\n%s", st.name, got, want, strings.Join(seen, "\n"))
		}
	}

	// Sign-in by name: the name's node, then the user's; one each.
	for _, name := range []string{"hot1", "hot2", "hot5"} {
		var ids []int64
		got, seen := logs.touched(func() error {
			return s.db.WithContext(ctx).Model(&username{}).Where("username_key = ?", name).Pluck("user_id", &ids).Error
		})
		if len(got) != 1 {
			t.Errorf("the name %s's row reached nodes %v, want one:\n%s", name, got, strings.Join(seen, "\n"))
		}
		nameNode := got
		got, seen = logs.touched(func() error { _, err := s.UserByUsername(ctx, name); return err })
		want := map[int]bool{s.ShardOf(ids[0]): true}
		if len(nameNode) == 1 {
			want[nameNode[0]] = true
		}
		for _, node := range got {
			if !want[node] {
				t.Errorf("sign-in by %s reached nodes %v, want the name's %v and the user's %d alone:\n%s", name, got, nameNode, s.ShardOf(ids[0]), strings.Join(seen, "\n"))
			}
		}
	}

	// The dispatcher: each of its reads of pending events is on one node.
	for shard := range s.Shards() {
		got, seen := logs.touched(func() error { _, err := s.pendingEventsOn(ctx, shard, 100); return err })
		if len(got) != 1 || got[0] != shard {
			t.Errorf("pending events of shard %d reached nodes %v:\n%s", shard, got, strings.Join(seen, "\n"))
		}
	}
}
