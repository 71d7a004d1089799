import { useQuery } from '@apollo/client/react';

import { VIEWER, type UserSummary } from './graphql';

/** The signed-in user, or null (signed out, or not loaded yet). */
export function useViewer(): UserSummary | null {
  const { data } = useQuery(VIEWER);
  return data?.viewer ?? null;
}
