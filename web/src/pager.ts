import { useCallback, useState } from 'react';

/** State and handler of a LoadMore over a connection paged with fetchMore(after). */
export function usePager(
  pageInfo: { hasNextPage: boolean; endCursor: string | null } | undefined,
  fetchAfter: (after: string | null) => Promise<unknown>,
) {
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const onLoad = useCallback(() => {
    if (!pageInfo?.hasNextPage || loading) return;
    setLoading(true);
    setError(null);
    fetchAfter(pageInfo.endCursor).catch(setError).finally(() => setLoading(false));
  }, [pageInfo, loading, fetchAfter]);
  return { hasMore: !!pageInfo?.hasNextPage, loading, error, onLoad };
}
