package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/feed/internal/keyspace"
	"feedservice/internal/testenv"
	"feedservice/models"
)

// TestCacheEncodingSize measures what a typical post and user cost in
// Redis (MEMORY USAGE) in JSON and in the binary encoding the copies use,
// which must be the smaller. The numbers are in encoding.go's comment.
func TestCacheEncodingSize(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	ctx := context.Background()
	k := keyspace.New(prefix)
	at := time.Date(2026, 11, 23, 13, 0, 0, 123e6, time.UTC)
	orig := int64(7391826354718293)
	post := &models.Post{ID: 7391826354718299, AuthorID: 7391826354700001, Body: strings.Repeat("typical post text ", 8)[:140],
		RepostOfID: &orig, RepostCount: 3, CreatedAt: at, Version: 4}
	post.RepostOfID = nil // a typical post is an original
	user := &models.User{ID: 7391826354700001, Username: "someone_1234", DisplayName: "Someone Somebody",
		Bio: strings.Repeat("bio words ", 8), CreatedAt: at, FollowerCount: 1234, FollowingCount: 321, PostCount: 456,
		FeedReadKey: 7391826354718000, Version: 2011}
	size := func(key string, value []byte) int64 {
		t.Helper()
		if err := rdb.Set(ctx, key, value, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		n, err := rdb.MemoryUsage(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	jsonOf := func(v any) []byte { b, _ := json.Marshal(v); return b }
	info := map[string]any{"v": user.Version, "username": user.Username, "displayName": user.DisplayName, "bio": user.Bio, "createdAt": user.CreatedAt}
	counts := map[string]any{"v": user.Version, "followers": user.FollowerCount, "following": user.FollowingCount, "posts": user.PostCount, "readKey": user.FeedReadKey}
	rows := []struct {
		name         string
		key          string
		json, binary []byte
	}{
		{"post", k.CachedPost(post.ID), jsonOf(post), encodePost(post)},
		{"user info", k.CachedUserInfo(user.ID), jsonOf(info), encodeUserInfo(user)},
		{"user counts", k.CachedUserCounts(user.ID), jsonOf(counts), encodeUserCounts(user)},
	}
	var report []string
	for _, r := range rows {
		j, b := size(r.key, r.json), size(r.key, r.binary)
		report = append(report, fmt.Sprintf("%s: JSON %d bytes (value %d), binary %d bytes (value %d)", r.name, j, len(r.json), b, len(r.binary)))
		if b >= j {
			t.Errorf("%s: the binary copy takes %d bytes, JSON %d", r.name, b, j)
		}
	}
	t.Log("MEMORY USAGE, key included:\n" + strings.Join(report, "\n"))
	back, err := decodePost(post.ID, encodePost(post))
	if err != nil || !postEqual(back, post) {
		t.Fatalf("post round trip: %+v, %v", back, err)
	}
}

// postEqual compares what a copy keeps of a post.
func postEqual(a, b *models.Post) bool {
	same := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	sameID := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.ID == b.ID && a.AuthorID == b.AuthorID && a.Body == b.Body && sameID(a.RepostOfID, b.RepostOfID) &&
		a.RepostCount == b.RepostCount && a.CreatedAt.Equal(b.CreatedAt) && same(a.DeletedAt, b.DeletedAt) && a.Version == b.Version
}

// TestUserCopyCarriesProtection: a user's copies keep IsProtected, and a
// counts copy written without the flags (an older build's) does not
// decode, so that MySQL answers rather than a protected account being
// read as public.
func TestUserCopyCarriesProtection(t *testing.T) {
	at := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	for _, protected := range []bool{false, true} {
		u := &models.User{ID: 42, Username: "someone", DisplayName: "Someone", CreatedAt: at, FollowerCount: 3, TokenVersion: 2, Version: 7, IsProtected: protected}
		got, err := DecodeUser(u.ID, redis.NewStringResult(string(encodeUserInfo(u)), nil), redis.NewStringResult(string(encodeUserCounts(u)), nil))
		if err != nil || got.IsProtected != protected || got.TokenVersion != 2 || got.FollowerCount != 3 {
			t.Errorf("protected %v: decoded %+v, %v", protected, got, err)
		}
	}
	u := &models.User{ID: 42, Username: "someone", CreatedAt: at, TokenVersion: 2}
	counts := encodeUserCounts(u)
	older := counts[:len(counts)-1] // without the flags
	if _, err := DecodeUser(u.ID, redis.NewStringResult(string(encodeUserInfo(u)), nil), redis.NewStringResult(string(older), nil)); err == nil {
		t.Error("a counts copy without the flags decoded")
	}
}
