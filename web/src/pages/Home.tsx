import { useCallback, useEffect, useState } from 'react';
import { useMutation, useQuery } from '@apollo/client/react';

import { Composer } from '../components/Composer';
import { ErrorNote } from '../components/ErrorNote';
import { LoadMore } from '../components/LoadMore';
import { PostCard } from '../components/PostCard';
import { UserLink } from '../components/UserLink';
import { FollowButton } from '../components/FollowButton';
import {
  DISMISS_HOME_ENTRY, HOME, MARK_FEED_READ,
  type FeedItem, type HomeEdge, type PromotedPost, type SuggestedUser,
} from '../graphql';
import { useLiveFeed } from '../live';

const PAGE_SIZE = 10;
// The "N new posts" bar pages in newer entries this many at a time: a home
// page of the API's MaxPageSize (100) costs more than the server's query
// complexity limit (10,000) allows, as each entry may be of three kinds.
const NEWER_PAGE_SIZE = 50;

/**
 * The home feed, newest first: the server's home connection, the feed's
 * entries with a promoted post or a suggested user in every Nth place.
 * Scrolling down pages in older entries (first/after); the "N new posts"
 * bar pages in the entries that arrived since (last/before).
 * relayStylePagination (apollo.ts) merges both into one list in the cache.
 * The newest feed entry shown is marked read (by its feed cursor).
 */
export function Home() {
  const { data, error, loading, fetchMore, refetch } = useQuery(HOME, {
    variables: { first: PAGE_SIZE },
  });
  const [markFeedRead, marking] = useMutation(MARK_FEED_READ);
  const live = useLiveFeed();
  const [paging, setPaging] = useState<'older' | 'newer' | null>(null);
  const [olderError, setOlderError] = useState<unknown>(null);
  const [newerError, setNewerError] = useState<unknown>(null);

  const edges = data?.home.edges ?? [];
  const pageInfo = data?.home.pageInfo;
  const newest = edges[0]?.cursor ?? null;
  const items = edges.flatMap((e) => (e.node.__typename === 'FeedItem' ? [e.node] : []));
  const newestRead = edges.find((e) => e.node.__typename === 'FeedItem')?.feedCursor ?? null;

  // What is at the top of the feed has been seen: move the read marker
  // to the newest feed entry (the red dot goes down with it, pushed by the
  // server). Promoted posts and suggestions never count in the dot.
  useEffect(() => {
    if (newestRead) markFeedRead({ variables: { upTo: newestRead } }).catch(() => {});
  }, [newestRead, markFeedRead]);

  // The bar counts the entries that arrived above the top of the feed shown.
  // An entry can also arrive further down: following someone brings their
  // recent posts in at the times they were written. Those are reached by
  // scrolling, and the bar leaves them out.
  const shown = new Set(items.map((item) => item.post.id));
  const top = items[0] ? Date.parse(items[0].addedAt) : -Infinity;
  const fresh = data
    ? live.arrived.filter((e) => !shown.has(e.node.post.id) && Date.parse(e.node.addedAt) >= top)
    : [];

  const loadOlder = useCallback(async () => {
    if (!pageInfo?.hasNextPage || paging) return;
    setPaging('older');
    setOlderError(null);
    try {
      await fetchMore({ variables: { first: PAGE_SIZE, after: pageInfo.endCursor } });
    } catch (err) {
      setOlderError(err);
    } finally {
      setPaging(null);
    }
  }, [pageInfo, paging, fetchMore]);

  const newerThan = (before: string) =>
    fetchMore({ variables: { first: null, after: null, last: NEWER_PAGE_SIZE, before } });

  async function showNew() {
    setPaging('newer');
    setNewerError(null);
    try {
      if (!newest) {
        await refetch();
      } else {
        // Page towards newer entries until there are none left. A backward
        // page holds the entries just newer than its cursor, and
        // hasPreviousPage tells whether there are newer ones still.
        let before: string | null = newest;
        while (before) {
          const page = await newerThan(before);
          const info = page.data?.home.pageInfo;
          before = info?.hasPreviousPage ? info.startCursor : null;
        }
      }
      live.clearArrived();
      window.scrollTo({ top: 0, behavior: 'smooth' });
    } catch (err) {
      setNewerError(err);
    } finally {
      setPaging(null);
    }
  }

  return (
    <main className="page">
      <Composer />
      {fresh.length > 0 && (
        <button
          type="button"
          className="new-posts"
          data-testid="new-posts"
          disabled={paging === 'newer'}
          onClick={showNew}
        >
          {paging === 'newer' ? 'Loading…' : `${fresh.length} new post${fresh.length === 1 ? '' : 's'}`}
        </button>
      )}
      <ErrorNote error={newerError} />
      <ErrorNote error={error} onRetry={() => refetch().catch(() => {})} />
      <ErrorNote error={marking.error} />
      {loading && !data && <p className="muted">Loading your feed…</p>}
      {data && edges.length === 0 && (
        <div className="card empty">
          <p>Your feed is empty.</p>
          <p className="muted">Follow people from their profile pages, and their posts show up here.</p>
        </div>
      )}
      <section aria-label="Home feed" className="feed">
        {edges.map((edge) => (
          <HomeEntry key={edge.cursor} edge={edge} />
        ))}
      </section>
      {data && edges.length > 0 && (
        <LoadMore
          hasMore={!!pageInfo?.hasNextPage}
          loading={paging === 'older'}
          error={olderError}
          onLoad={loadOlder}
          end="You're all caught up."
        />
      )}
    </main>
  );
}

/** One entry of the home connection, drawn by its kind. */
function HomeEntry({ edge }: { edge: HomeEdge }) {
  switch (edge.node.__typename) {
    case 'FeedItem':
      return <FeedEntry item={edge.node} />;
    case 'SuggestedUser':
      return <Suggestion entry={edge.node} />;
    case 'PromotedPost':
      return <Promoted entry={edge.node} />;
    default:
      return null; // a kind this app does not know yet
  }
}

/** A feed entry: an original post, once, with who of the people you follow reposted it. */
function FeedEntry({ item }: { item: FeedItem }) {
  const { post, reposters, addedAt } = item;
  const context = reposters.length > 0 ? (
    <>
      ↻ reposted by{' '}
      {reposters.map((u, i) => (
        <span key={u.id}>
          {i > 0 && ', '}
          <UserLink user={u} />
        </span>
      ))}
    </>
  ) : undefined;
  return (
    <div data-testid="feed-entry" data-post-id={post.id}>
      <PostCard post={post} context={context} at={reposters.length > 0 ? addedAt : undefined} />
    </div>
  );
}

/** A suggested account, with a Follow button and a Dismiss control. */
function Suggestion({ entry }: { entry: SuggestedUser }) {
  const { user, followedByCount } = entry;
  return (
    <div className="card suggestion" data-testid="home-suggestion" data-user-id={user.id}>
      <p className="post-context muted">
        Suggested for you: followed by {followedByCount} {followedByCount === 1 ? 'person' : 'people'} you follow
      </p>
      <div className="suggestion-row">
        <UserLink user={user} full />
        <FollowButton user={user} />
        <DismissButton id={user.id} what={`the suggestion ${user.username}`} />
      </div>
    </div>
  );
}

/** A post an operator promoted, labelled as such, with a Dismiss control. */
function Promoted({ entry }: { entry: PromotedPost }) {
  const label = <span className="promoted-label" data-testid="promoted-label">Promoted</span>;
  return (
    <div className="promoted" data-testid="home-promoted" data-post-id={entry.post.id}>
      <PostCard post={entry.post} context={label} showTime={false} />
      <DismissButton id={entry.post.id} what="this promoted post" />
    </div>
  );
}

/**
 * Hides a suggestion or a promoted post for good (dismissHomeEntry takes
 * the User or Post id). The entry leaves the cached home list at once.
 */
function DismissButton({ id, what }: { id: string; what: string }) {
  const [dismiss, dismissing] = useMutation(DISMISS_HOME_ENTRY, {
    variables: { id },
    update(cache, { data }) {
      const gone = data?.dismissHomeEntry.dismissedId;
      if (!gone) return;
      cache.modify({
        fields: {
          home(existing, { readField }) {
            const list = existing as { edges?: { node: object }[] };
            if (!list.edges) return existing;
            const entryId = (node: object) => {
              const kind = readField<string>('__typename', node as never);
              const ref = readField<object>(kind === 'SuggestedUser' ? 'user' : 'post', node as never);
              return kind === 'FeedItem' || !ref ? null : readField<string>('id', ref as never);
            };
            return { ...list, edges: list.edges.filter((e) => entryId(e.node) !== gone) };
          },
        },
      });
    },
  });
  return (
    <span className="dismiss">
      <button
        type="button"
        className="link"
        aria-label={`Dismiss ${what}`}
        disabled={dismissing.loading}
        onClick={() => dismiss().catch(() => {})}
      >
        Dismiss
      </button>
      <ErrorNote error={dismissing.error} />
    </span>
  );
}
