import { useEffect } from 'react';
import { useMutation, useQuery } from '@apollo/client/react';

import { ADD_TO_LIST, LIST_MEMBERS, LISTS, REMOVE_FROM_LIST } from '../graphql';
import { usePager } from '../pager';
import { ErrorNote } from './ErrorNote';

/**
 * On the profile of someone the viewer follows: one switch per list of the
 * viewer's, on when the user is in it; a click adds or removes them. The
 * lists come ten at a time ("More lists"), and each switch reads its
 * list's members on until it finds the user or they end, so that a list's
 * hundredth list or thousandth member is known as the first.
 */
export function ListSwitches({ userId }: { userId: string }) {
  const { data, fetchMore } = useQuery(LISTS, { fetchPolicy: 'cache-and-network' });
  const more = usePager(data?.lists.pageInfo, (after) => fetchMore({ variables: { after } }));
  const lists = data?.lists.edges ?? [];
  if (lists.length === 0) return null;
  return (
    <fieldset className="list-switches" aria-label="Lists">
      <legend className="muted small">In your lists</legend>
      {lists.map(({ node }) => (
        <ListSwitch key={node.id} listId={node.id} name={node.name} userId={userId} />
      ))}
      {more.hasMore && (
        <button type="button" className="secondary" disabled={more.loading} onClick={more.onLoad}>More lists</button>
      )}
      <ErrorNote error={more.error} />
    </fieldset>
  );
}

/** One list's switch: disabled until its members say whether userId is among them. */
function ListSwitch({ listId, name, userId }: { listId: string; name: string; userId: string }) {
  const { data, fetchMore, refetch, error } = useQuery(LIST_MEMBERS, { variables: { id: listId }, fetchPolicy: 'cache-and-network' });
  // The payload brings the list's new count; its members are read again
  // from the first page (refetching the lists would drop their later pages).
  const [add, adding] = useMutation(ADD_TO_LIST, { onCompleted: () => void refetch().catch(() => {}) });
  const [remove, removing] = useMutation(REMOVE_FROM_LIST, { onCompleted: () => void refetch().catch(() => {}) });
  const members = data?.node && 'members' in data.node ? data.node.members : undefined;
  const member = members?.edges.some((e) => e.node.id === userId) ?? false;
  const next = !member && members?.pageInfo.hasNextPage ? members.pageInfo.endCursor : null;
  useEffect(() => {
    if (next) fetchMore({ variables: { after: next } }).catch(() => {});
  }, [next, fetchMore]);
  const known = members !== undefined && next === null;
  const busy = adding.loading || removing.loading;
  const variables = { listId, userId };
  return (
    <label data-testid="list-switch" data-known={known}>
      <input type="checkbox" checked={member} disabled={busy || !known}
        onChange={() => (member ? remove({ variables }) : add({ variables })).catch(() => {})} />
      {' '}{name}
      <ErrorNote error={error ?? adding.error ?? removing.error} />
    </label>
  );
}
