import type { ApolloCache } from '@apollo/client';
import { useMutation } from '@apollo/client/react';

import { FOLLOW, UNFOLLOW, type Profile } from '../graphql';
import { useViewer } from '../viewer';
import { ErrorNote } from './ErrorNote';

/**
 * Follow or unfollow user. The payload carries both users with their new
 * counts, which the cache writes over the old ones; the lists and the home
 * feed (and its suggestions) that the change affects are dropped, to be fetched afresh.
 * A protected user is asked instead ("Request to follow"); while the
 * request waits the button says "Requested", and a click withdraws it.
 */
export function FollowButton({ user }: {
  user: Pick<Profile, 'id' | 'username' | 'viewerIsFollowing'> & Partial<Pick<Profile, 'isProtected' | 'viewerHasRequestedFollow'>>;
}) {
  const viewer = useViewer();
  const options = {
    variables: { userId: user.id },
    update(cache: ApolloCache) {
      cache.evict({ fieldName: 'feed' });
      cache.evict({ fieldName: 'home' });
      cache.evict({ id: cache.identify({ __typename: 'User', id: user.id }), fieldName: 'followers' });
      if (viewer) cache.evict({ id: cache.identify({ __typename: 'User', id: viewer.id }), fieldName: 'following' });
      cache.gc();
    },
  };
  const [follow, following] = useMutation(FOLLOW, options);
  const [unfollow, unfollowing] = useMutation(UNFOLLOW, options);
  const busy = following.loading || unfollowing.loading;

  return (
    <span className="follow">
      {user.viewerIsFollowing ? (
        <button type="button" className="secondary" disabled={busy} onClick={() => unfollow().catch(() => {})}>
          Unfollow
        </button>
      ) : user.viewerHasRequestedFollow ? (
        <button type="button" className="secondary" disabled={busy} title="Withdraw the request"
          onClick={() => unfollow().catch(() => {})}>
          Requested
        </button>
      ) : (
        <button type="button" disabled={busy} onClick={() => follow().catch(() => {})}>
          {user.isProtected ? 'Request to follow' : 'Follow'}
        </button>
      )}
      <ErrorNote error={following.error ?? unfollowing.error} />
    </span>
  );
}
