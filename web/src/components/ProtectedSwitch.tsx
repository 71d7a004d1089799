import type { ApolloCache } from '@apollo/client';
import { useMutation } from '@apollo/client/react';

import { SET_PROTECTED, type Profile } from '../graphql';
import { ErrorNote } from './ErrorNote';

/**
 * The viewer's protection switch. On, new followers ask first and the
 * posts are for the followers only; turning it off approves every waiting
 * request, so the requests are fetched afresh.
 */
export function ProtectedSwitch({ user }: { user: Pick<Profile, 'id' | 'isProtected'> }) {
  const [setProtected, setting] = useMutation(SET_PROTECTED, {
    update(cache: ApolloCache) {
      cache.evict({ fieldName: 'followRequests' });
      cache.evict({ id: cache.identify({ __typename: 'User', id: user.id }), fieldName: 'followers' });
      cache.gc();
    },
  });
  return (
    <div className="protected-switch">
      <label>
        <input
          type="checkbox"
          checked={user.isProtected}
          disabled={setting.loading}
          onChange={(e) => setProtected({ variables: { on: e.target.checked } }).catch(() => {})}
        />
        {' '}Protect my account
      </label>
      <p className="muted small">
        {user.isProtected
          ? 'New followers ask first, and your posts are for your followers only.'
          : 'Anyone may follow you and read your posts.'}
      </p>
      <ErrorNote error={setting.error} />
    </div>
  );
}
