import { useMutation, useQuery } from '@apollo/client/react';

import { ADD_TO_LIST, LISTS, REMOVE_FROM_LIST } from '../graphql';
import { ErrorNote } from './ErrorNote';

/**
 * On the profile of someone the viewer follows: one switch per list of the
 * viewer's, on when the user is in it; a click adds or removes them.
 */
export function ListSwitches({ userId }: { userId: string }) {
  const { data } = useQuery(LISTS, { fetchPolicy: 'cache-and-network' });
  const options = { refetchQueries: ['Lists'] };
  const [add, adding] = useMutation(ADD_TO_LIST, options);
  const [remove, removing] = useMutation(REMOVE_FROM_LIST, options);
  const lists = data?.lists.edges ?? [];
  if (lists.length === 0) return null;
  const busy = adding.loading || removing.loading;
  return (
    <fieldset className="list-switches" aria-label="Lists">
      <legend className="muted small">In your lists</legend>
      {lists.map(({ node }) => {
        const member = node.members.edges.some((e) => e.node.id === userId);
        const variables = { listId: node.id, userId };
        return (
          <label key={node.id}>
            <input type="checkbox" checked={member} disabled={busy}
              onChange={() => (member ? remove({ variables }) : add({ variables })).catch(() => {})} />
            {' '}{node.name}
          </label>
        );
      })}
      <ErrorNote error={adding.error ?? removing.error} />
    </fieldset>
  );
}
