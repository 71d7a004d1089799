import { useEffect, useRef } from 'react';

import { ErrorNote } from './ErrorNote';

interface Props {
  hasMore: boolean;
  loading: boolean;
  error?: unknown;
  onLoad: () => void;
  /** What to say at the end of the list. */
  end: string;
}

/**
 * The foot of an infinitely scrolling list: it asks for the next page when
 * it scrolls into view (and offers a button, for keyboards and for when
 * the observer cannot tell), and says so at the end.
 */
export function LoadMore({ hasMore, loading, error, onLoad, end }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const ready = hasMore && !loading && !error;

  useEffect(() => {
    const el = ref.current;
    if (!el || !ready) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) onLoad();
      },
      { rootMargin: '200px' },
    );
    observer.observe(el);
    return () => observer.disconnect();
  }, [ready, onLoad]);

  return (
    <div ref={ref} className="load-more" data-testid="load-more">
      {error ? (
        <ErrorNote error={error} onRetry={onLoad} />
      ) : loading ? (
        <p className="muted">Loading…</p>
      ) : hasMore ? (
        <button type="button" onClick={onLoad}>Load more</button>
      ) : (
        <p className="muted" data-testid="list-end">{end}</p>
      )}
    </div>
  );
}
