package timeline

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"feedservice/feed/config"
	"feedservice/feed/pull"
	"feedservice/store"
)

// snapshot is what the rebuild of an inbox reads from MySQL: the reader's
// view, their newest Config.RebuildDepth entries with the sources of those
// a repost brought, and the floor below them (0 when the feed holds
// fewer). A returning reader's page answers from a snapshot of the page's
// size (see pageSnapshot).
type snapshot struct {
	followees, hidden []int64 // as MySQL lists them (the followee set keeps both)
	view              pull.View
	// entries are sorted newest first, those held at a later arrival (see
	// snapshotOf) among them; page is the feed's newest entries, what
	// a page reads (the held ones lie below the floor there, as in
	// exactPositions), with their reposters.
	entries []pull.Entry
	page    []pull.Entry
	sources map[int64][]Source
	floor   int64
}

// readSnapshot reads the snapshot an inbox is rebuilt from
// (Config.RebuildDepth entries; see snapshotOf).
//
// First, a followee set that outlived its inbox goes before MySQL is read:
// a follow committed after that read finds no set and the lock, waits for
// the swap and lands on the set swapped in, where it would otherwise land
// on the old set and be lost by the swap. And the fan-out writes to the
// readers the index of active inboxes names: from here on, to this one,
// into the key the rebuilt inbox replaces, whose entries the swap keeps. So
// a post committed after MySQL is read below reaches the rebuilt inbox.
//
// A post whose fan-out ran before the reader entered the index reached no
// inbox, so MySQL must hold it: the read goes to a replica only once the
// replicas hold every commit from before that entry (a fan-out follows its
// commit), not merely from before the rebuild's lock. A post committed
// between the lock and the entry, on a lagging replica, was once lost
// there while the rebuild ran in the background and the reader's next
// step posted.
func (ib *Inboxes) readSnapshot(ctx context.Context, reader int64) (*snapshot, error) {
	if err := ib.d.Redis.Del(ctx, ib.d.Keys.Following(reader), ib.d.Keys.FollowingVersion(reader)).Err(); err != nil {
		return nil, err
	}
	if err := ib.activate(ctx, reader); err != nil {
		return nil, err
	}
	active := time.Now()
	return ib.snapshotOf(ib.rep.AllowLagSince(ctx, active, reader), reader, ib.d.Cfg.RebuildDepth)
}

// pageSnapshot is the snapshot of reader's newest n entries, what a page
// of a reader without an inbox answers from, while the inbox is rebuilt
// in the background (rebuildLater). It reads a replica only once that
// holds every commit before the page (as the rebuild reads): a post
// fanned out before the reader had an inbox reached no inbox, so the page
// must find it in MySQL.
func (ib *Inboxes) pageSnapshot(ctx context.Context, reader int64, n int) (*snapshot, error) {
	return ib.snapshotOf(ib.rep.AllowLagSince(ctx, time.Now(), reader), reader, n)
}

// snapshotOf reads the snapshot of reader's newest capEntries entries
// through mysql: the reader's view (store.FeedView), then their followees'
// events a window of time at a time (store.HomeEvents; see pull.Window),
// twice capEntries at most at a time: most often one statement of the
// window's rows. One statement that reached the events through the
// followee list (a join) read every post of every followee instead,
// whatever its LIMIT: an index is joined by its first column alone.
func (ib *Inboxes) snapshotOf(mysql context.Context, reader int64, capEntries int) (*snapshot, error) {
	followees, hidden, err := ib.d.Store.FeedView(mysql, reader)
	if err != nil {
		return nil, err
	}
	sn := &snapshot{followees: followees, hidden: hidden, view: pull.NewView(followees, hidden), sources: map[int64][]Source{}}
	var (
		entries []pull.Entry
		late    []pull.Late
		full    bool
	)
	firstBy := map[int64]int64{} // the user of each event, by id
	bound, batch := int64(math.MaxInt64), 2*capEntries
	w := pull.NewWindow(store.Older, bound, time.Now())
	for {
		events, err := ib.d.Store.HomeEvents(mysql, reader, sn.view.Followees, bound, w.Edge(), batch)
		if err != nil {
			return nil, err
		}
		for _, ev := range events {
			firstBy[ev.ID] = ev.AuthorID
		}
		if entries, full = pull.Walk(sn.view, events, entries, capEntries, func(l pull.Late) { late = append(late, l) }); full {
			break
		}
		var last int64
		if len(events) > 0 {
			last = events[len(events)-1].ID
		}
		var more, done bool
		if bound, more, done = w.After(len(events), batch, last); done {
			break
		}
		if more {
			batch *= 2
		}
	}
	if full {
		sn.floor = entries[len(entries)-1].Key
	}
	sn.page = slices.Clone(entries)
	in := make(map[int64]bool, len(entries))
	for _, en := range entries {
		in[en.PostID] = true
	}
	// The later arrivals of an entry are its sources with the first, newest
	// first (as the fan-out would have recorded them); an entry its author
	// alone brought has none written down (the author is implied).
	// An entry whose first arrival lies below the floor, with later ones
	// above it, is held at those, as the fan-out would have left it: MySQL
	// does not serve it above the floor, and when its first arrival goes
	// (deleted, or its reposter unfollowed) the entry moves up to the
	// next, which only the inbox can show. Reads place it exactly (see
	// exactPositions), as any entry older than the window.
	place := map[int64]int64{}
	for _, l := range late { // newest first: a held entry's last is its earliest
		sn.sources[l.PostID] = append(sn.sources[l.PostID], Source{User: l.User, Event: l.Event})
		if !in[l.PostID] {
			place[l.PostID] = l.Event
		}
	}
	for _, en := range entries {
		if en.Key != en.PostID || sn.sources[en.PostID] != nil {
			sn.sources[en.PostID] = append(sn.sources[en.PostID], Source{User: firstBy[en.Key], Event: en.Key})
		}
	}
	for i, en := range sn.page {
		sn.page[i].Reposters = []int64{}
		for _, s := range sn.sources[en.PostID] {
			if s.Event != en.PostID && len(sn.page[i].Reposters) < config.MaxReposters {
				sn.page[i].Reposters = append(sn.page[i].Reposters, s.User)
			}
		}
	}
	for id, key := range place {
		entries = append(entries, pull.Entry{Key: key, PostID: id})
	}
	slices.SortFunc(entries, func(a, b pull.Entry) int { return cmp.Compare(b.Key, a.Key) })
	sn.entries = entries
	return sn, nil
}

// fetchSnapshot is fetchMerged for a read that rebuilt the inbox: from the
// rebuild's snapshot, and from MySQL below its floor, as fetchMerged reads
// below the window.
func (reads *Reads) fetchSnapshot(ctx context.Context, r *readState, dir store.Direction, bound int64, limit int) ([]pull.Entry, error) {
	sn := r.snap
	older := dir == store.Older
	// sn.page is newest first: beyond bound are those after i (older) or
	// before j (newer).
	i, _ := slices.BinarySearchFunc(sn.page, bound, func(en pull.Entry, b int64) int { return cmp.Compare(b, en.Key) })
	var window []pull.Entry
	if older {
		if i < len(sn.page) && sn.page[i].Key == bound {
			i++
		}
		window = slices.Clone(sn.page[i:min(len(sn.page), i+limit)])
	} else {
		newer := sn.page[:i]
		for k := len(newer) - 1; k >= 0 && len(window) < limit; k-- {
			window = append(window, newer[k])
		}
	}
	return reads.withBelow(ctx, r.id, func(context.Context) (pull.View, error) { return sn.view, nil }, window, sn.floor, dir, bound, limit)
}
