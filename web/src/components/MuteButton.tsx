import type { ApolloCache } from '@apollo/client';
import { useMutation } from '@apollo/client/react';

import { MUTE, UNMUTE, type Profile } from '../graphql';
import { useLiveFeed } from '../live';
import { ErrorNote } from './ErrorNote';

/**
 * Mute or unmute user: the viewer keeps following them and stops seeing
 * their posts and reposts. The payload's user carries the new
 * viewerHasMuted; the home feed, which the change reshapes both ways, is
 * dropped, to be fetched afresh. The muted list is not: it is fetched on
 * each visit, and a row undone there stays, to be muted again.
 */
export function MuteButton({ user }: { user: Pick<Profile, 'id' | 'username' | 'viewerHasMuted'> }) {
  const live = useLiveFeed();
  const update = (cache: ApolloCache) => {
    cache.evict({ fieldName: 'feed' });
    cache.evict({ fieldName: 'home' });
    cache.gc();
  };
  const [mute, muting] = useMutation(MUTE, {
    variables: { userId: user.id },
    update,
    onCompleted: () => live.forgetUser(user.id),
  });
  const [unmute, unmuting] = useMutation(UNMUTE, { variables: { userId: user.id }, update });
  const busy = muting.loading || unmuting.loading;

  return (
    <span className="relation-button">
      {user.viewerHasMuted ? (
        <button type="button" className="secondary" disabled={busy} onClick={() => unmute().catch(() => {})}>
          Unmute
        </button>
      ) : (
        <button type="button" className="secondary" disabled={busy} onClick={() => mute().catch(() => {})}>
          Mute
        </button>
      )}
      <ErrorNote error={muting.error ?? unmuting.error} />
    </span>
  );
}
