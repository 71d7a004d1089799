import type { ApolloCache } from '@apollo/client';
import { useMutation, useQuery } from '@apollo/client/react';

import { APPROVE_FOLLOW_REQUEST, FOLLOW_REQUESTS, REJECT_FOLLOW_REQUEST, type UserSummary } from '../graphql';
import { usePager } from '../pager';
import { ErrorNote } from './ErrorNote';
import { LoadMore } from './LoadMore';
import { Time } from './Time';
import { UserLink } from './UserLink';

const PAGE_SIZE = 20;

/** Who waits for the viewer's approval, most recent first, each to approve or reject. */
export function FollowRequests() {
  const { data, error, fetchMore, refetch } = useQuery(FOLLOW_REQUESTS, {
    variables: { first: PAGE_SIZE },
    fetchPolicy: 'cache-and-network',
  });
  const conn = data?.followRequests;
  const more = usePager(conn?.pageInfo, (after) => fetchMore({ variables: { after } }));

  if (error) return <ErrorNote error={error} onRetry={() => refetch().catch(() => {})} />;
  if (!conn) return null;
  return (
    <section aria-label="Follow requests" className="card user-list">
      <h2 data-testid="request-count">
        {conn.totalCount === 1 ? '1 follow request' : `${conn.totalCount} follow requests`}
      </h2>
      {conn.edges.length === 0 ? (
        <p className="muted">Nobody is waiting for your approval.</p>
      ) : (
        <ul>
          {conn.edges.map(({ cursor, since, node }) => (
            <li key={cursor} data-testid="follow-request" data-user-id={node.id}>
              <div>
                <UserLink user={node} full />
                <div className="muted small">asked <Time iso={since} /></div>
              </div>
              <RequestButtons user={node} />
            </li>
          ))}
        </ul>
      )}
      <LoadMore {...more} end="That's everyone." />
    </section>
  );
}

/** Approve or reject one request; either takes it off the list. */
function RequestButtons({ user }: { user: UserSummary }) {
  const options = {
    variables: { userId: user.id },
    update(cache: ApolloCache) {
      cache.evict({ fieldName: 'followRequests' });
      cache.evict({ id: cache.identify({ __typename: 'User', id: user.id }), fieldName: 'following' });
      cache.gc();
    },
  };
  const [approve, approving] = useMutation(APPROVE_FOLLOW_REQUEST, options);
  const [reject, rejecting] = useMutation(REJECT_FOLLOW_REQUEST, options);
  const busy = approving.loading || rejecting.loading;
  return (
    <span className="relation-button">
      <button type="button" disabled={busy} onClick={() => approve().catch(() => {})}>Approve</button>
      <button type="button" className="secondary" disabled={busy} onClick={() => reject().catch(() => {})}>Reject</button>
      <ErrorNote error={approving.error ?? rejecting.error} />
    </span>
  );
}
