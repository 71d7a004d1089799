import { useCallback, useEffect, useState } from 'react';
import { useMutation, useQuery } from '@apollo/client/react';

import { Composer } from '../components/Composer';
import { ErrorNote } from '../components/ErrorNote';
import { LoadMore } from '../components/LoadMore';
import { PostCard } from '../components/PostCard';
import { UserLink } from '../components/UserLink';
import { FEED, MARK_FEED_READ, type FeedEdge } from '../graphql';
import { useLiveFeed } from '../live';

const PAGE_SIZE = 10;
const MAX_PAGE_SIZE = 100; // the API's MaxPageSize

/**
 * The home feed, newest first. Scrolling down pages in older entries
 * (first/after); the "N new posts" bar pages in the entries that arrived
 * since (last/before). relayStylePagination (apollo.ts) merges both into
 * one list in the cache. The newest entry shown is marked read.
 */
export function Home() {
  const { data, error, loading, fetchMore, refetch } = useQuery(FEED, {
    variables: { first: PAGE_SIZE },
  });
  const [markFeedRead, marking] = useMutation(MARK_FEED_READ);
  const live = useLiveFeed();
  const [paging, setPaging] = useState<'older' | 'newer' | null>(null);
  const [olderError, setOlderError] = useState<unknown>(null);
  const [newerError, setNewerError] = useState<unknown>(null);

  const edges = data?.feed.edges ?? [];
  const pageInfo = data?.feed.pageInfo;
  const newest = edges[0]?.cursor ?? null;

  // What is at the top of the feed has been seen: move the read marker
  // there (the red dot goes down with it, pushed by the server).
  useEffect(() => {
    if (newest) markFeedRead({ variables: { upTo: newest } }).catch(() => {});
  }, [newest, markFeedRead]);

  // The bar counts the entries that arrived above the top of the feed shown.
  // An entry can also arrive further down: following someone brings their
  // recent posts in at the times they were written. Those are reached by
  // scrolling, and the bar leaves them out.
  const shown = new Set(edges.map((e) => e.node.post.id));
  const top = edges[0] ? Date.parse(edges[0].node.addedAt) : -Infinity;
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
    fetchMore({ variables: { first: null, after: null, last: MAX_PAGE_SIZE, before } });

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
          const info = page.data?.feed.pageInfo;
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
          <FeedEntry key={edge.cursor} edge={edge} />
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

/** A feed entry: an original post, once, with who of the people you follow reposted it. */
function FeedEntry({ edge }: { edge: FeedEdge }) {
  const { post, reposters, addedAt } = edge.node;
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
