package celebrities

import (
	"context"
	"slices"
	"testing"

	"feedservice/feed/config"
	"feedservice/feed/internal/depstest"
)

// The set is rebuilt from MySQL when lost (the authors with at least
// CelebrityFollowers followers), changes one member at a time, and is empty
// outside hybrid mode.
func TestSetRebuildsAndChanges(t *testing.T) {
	ctx := context.Background()
	d := depstest.New(t, config.Config{Mode: config.ModeHybrid, CelebrityFollowers: 2})
	star, plain, fan1, fan2 := depstest.User(t, d, "star"), depstest.User(t, d, "plain"), depstest.User(t, d, "fan1"), depstest.User(t, d, "fan2")
	depstest.Follow(t, d, fan1, star)
	depstest.Follow(t, d, fan2, star)
	depstest.Follow(t, d, fan1, plain)
	s := New(d)

	got, err := s.Celebrities(ctx) // the set is not in Redis yet: rebuilt
	if err != nil || !slices.Equal(got, []int64{star}) {
		t.Fatalf("Celebrities() = %v, %v; want [%d] (two followers)", got, err, star)
	}
	if members := d.Redis.SMembers(ctx, d.Keys.Celebrities()).Val(); !slices.Contains(members, "~") || len(members) != 2 {
		t.Fatalf("the rebuilt set holds %v, want the marker and the star", members)
	}
	if changed, err := s.SetCelebrity(ctx, plain, true); err != nil || !changed {
		t.Fatalf("SetCelebrity(plain, true) = %v, %v; want a change", changed, err)
	}
	if changed, err := s.SetCelebrity(ctx, plain, true); err != nil || changed {
		t.Fatalf("SetCelebrity(plain, true) again = %v, %v; want no change", changed, err)
	}
	if is, err := s.IsCelebrity(ctx, plain); err != nil || !is {
		t.Fatalf("IsCelebrity(plain) = %v, %v after it was added", is, err)
	}
	if changed, err := s.SetCelebrity(ctx, star, false); err != nil || !changed {
		t.Fatalf("SetCelebrity(star, false) = %v, %v; want a change", changed, err)
	}
	if is, err := s.IsCelebrity(ctx, star); err != nil || is {
		t.Fatalf("IsCelebrity(star) = %v, %v after it was taken out", is, err)
	}

	pull := New(depstest.Over(t, config.Config{Mode: config.ModePull, KeyPrefix: d.Cfg.KeyPrefix}.WithDefaults(), d.Store, d.Redis))
	if got, err := pull.Celebrities(ctx); err != nil || got != nil {
		t.Fatalf("Celebrities() in pull mode = %v, %v; want none", got, err)
	}
}

// Guess is the set last remembered, nil before the first.
func TestGuessIsTheLastRemembered(t *testing.T) {
	s := &Set{}
	if g := s.Guess(); g != nil {
		t.Fatalf("Guess() before any = %v", g)
	}
	s.Remember([]int64{3, 5})
	s.Remember([]int64{7})
	if g := s.Guess(); !slices.Equal(g, []int64{7}) {
		t.Fatalf("Guess() = %v, want [7]", g)
	}
}
