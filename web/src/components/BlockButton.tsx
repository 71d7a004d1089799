import type { ApolloCache } from '@apollo/client';
import { useMutation } from '@apollo/client/react';

import { BLOCK, UNBLOCK, type Profile } from '../graphql';
import { useLiveFeed } from '../live';
import { useViewer } from '../viewer';
import { ErrorNote } from './ErrorNote';

/**
 * Block or unblock user. A block ends the follows between the two both
 * ways, and neither sees the other's posts; an unblock restores no follow,
 * so a block asks first. The payload carries both users with their new
 * counts; the home feed, the user's timeline (empty across a block) and
 * the two users' relation lists are dropped, to be fetched afresh. The
 * blocked list is not: it is fetched on each visit, and a row undone there
 * stays, to be blocked again.
 */
export function BlockButton({ user }: { user: Pick<Profile, 'id' | 'username' | 'viewerHasBlocked'> }) {
  const viewer = useViewer();
  const live = useLiveFeed();
  const update = (cache: ApolloCache) => {
    cache.evict({ fieldName: 'feed' });
    cache.evict({ fieldName: 'home' });
    const them = cache.identify({ __typename: 'User', id: user.id });
    cache.evict({ id: them, fieldName: 'timeline' });
    for (const id of [them, viewer && cache.identify({ __typename: 'User', id: viewer.id })]) {
      if (!id) continue;
      cache.evict({ id, fieldName: 'followers' });
      cache.evict({ id, fieldName: 'following' });
    }
    cache.gc();
  };
  const [block, blocking] = useMutation(BLOCK, {
    variables: { userId: user.id },
    update,
    onCompleted: () => live.forgetUser(user.id),
  });
  const [unblock, unblocking] = useMutation(UNBLOCK, { variables: { userId: user.id }, update });
  const busy = blocking.loading || unblocking.loading;

  const confirmBlock = () => {
    if (!window.confirm(`Block @${user.username}? You stop following each other, neither sees the other's posts, and unblocking later does not follow again.`)) return;
    block().catch(() => {});
  };
  return (
    <span className="relation-button">
      {user.viewerHasBlocked ? (
        <button type="button" className="secondary" disabled={busy} onClick={() => unblock().catch(() => {})}>
          Unblock
        </button>
      ) : (
        <button type="button" className="secondary danger" disabled={busy} onClick={confirmBlock}>
          Block
        </button>
      )}
      <ErrorNote error={blocking.error ?? unblocking.error} />
    </span>
  );
}
