// What the server pushes to a signed-in person, over one websocket: the
// unread count of the home feed (the red dot), and each new feed entry
// (gathered for the "N new posts" bar until the person asks to see them).
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { useSubscription } from '@apollo/client/react';

import { FEED_ITEM_ADDED, UNREAD_BADGE, type FeedEdge } from './graphql';

// The bar says "N new posts" up to this N; showing them pages in every new
// entry, however many arrived.
const MAX_ARRIVED = 100;

/** The red dot: the unread count, and whether it stopped at the server's cap. */
export interface UnreadBadge {
  count: number;
  capped: boolean;
}

/** What the red dot says: the count, with a "+" when it is at the cap ("999+"). */
export function badgeText({ count, capped }: UnreadBadge): string {
  return capped ? `${count}+` : `${count}`;
}

interface LiveFeed {
  /** The red dot, or null before the first value arrives. */
  unread: UnreadBadge | null;
  /** Entries that arrived since the feed was last brought up to date, newest first. */
  arrived: FeedEdge[];
  /** Forgets the arrived entries (the feed now shows them). */
  clearArrived: () => void;
  /**
   * Forgets the arrived entries that came only through userId, whom the
   * viewer just muted or blocked: the server hides them from the feed.
   */
  forgetUser: (userId: string) => void;
  /** A subscription's error, if one failed. */
  error: unknown;
}

const LiveFeedContext = createContext<LiveFeed | null>(null);

export function useLiveFeed(): LiveFeed {
  const live = useContext(LiveFeedContext);
  if (!live) throw new Error('useLiveFeed outside <LiveFeedProvider>');
  return live;
}

export function LiveFeedProvider({ children }: { children: ReactNode }) {
  const [arrived, setArrived] = useState<FeedEdge[]>([]);

  // feedItemAdded sends nothing until an entry arrives; it is started
  // first so that it is live by the time unreadBadge sends its first value.
  const added = useSubscription(FEED_ITEM_ADDED, {
    onData: ({ data }) => {
      const edge = data.data?.feedItemAdded;
      if (!edge) return;
      setArrived((list) =>
        list.some((e) => e.node.post.id === edge.node.post.id)
          ? list
          : [edge, ...list].slice(0, MAX_ARRIVED),
      );
    },
  });
  const unread = useSubscription(UNREAD_BADGE);

  const clearArrived = useCallback(() => setArrived([]), []);
  const forgetUser = useCallback((userId: string) =>
    setArrived((list) => list.filter((e) => !onlyThrough(e, userId))), []);
  const value = useMemo<LiveFeed>(() => ({
    unread: unread.data?.unreadBadge ?? null,
    arrived,
    clearArrived,
    forgetUser,
    error: unread.error ?? added.error,
  }), [unread.data, unread.error, added.error, arrived, clearArrived, forgetUser]);

  return <LiveFeedContext.Provider value={value}>{children}</LiveFeedContext.Provider>;
}

/**
 * Whether a feed entry came through userId alone: its original is theirs,
 * or they are its only reposter. The second is wrong when the original's
 * author is a followee too (the server keeps that entry), at no cost: a mute
 * or block drops the cached home, and the home fetched afresh shows it.
 */
function onlyThrough(edge: FeedEdge, userId: string): boolean {
  const { post, reposters } = edge.node;
  const original = post.repostOf && post.body === '' ? post.repostOf : post;
  if (original.author.id === userId) return true;
  return reposters.length > 0 && reposters.every((u) => u.id === userId);
}
