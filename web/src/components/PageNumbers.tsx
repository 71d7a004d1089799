import { useState } from 'react';

interface Props {
  /** The page shown, from 1. */
  page: number;
  /** How many pages there are. */
  pages: number;
  onGo: (page: number) => void;
}

/** The numbers shown: the first, the last, and two on each side of page. */
function shown(page: number, pages: number): (number | '…')[] {
  const out: (number | '…')[] = [];
  for (let n = 1; n <= pages; n++) {
    if (n === 1 || n === pages || Math.abs(n - page) <= 2) {
      out.push(n);
    } else if (out[out.length - 1] !== '…') {
      out.push('…');
    }
  }
  return out;
}

/**
 * Page numbers of a long list ("elevator" paging): previous, next, the
 * numbers near the current page, the last one, and a box to go to any
 * page, which the server answers at the same cost at any depth.
 */
export function PageNumbers({ page, pages, onGo }: Props) {
  const [wanted, setWanted] = useState('');
  const go = (n: number) => onGo(Math.min(Math.max(1, n), pages));
  return (
    <nav className="page-numbers" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>Previous</button>
      {shown(page, pages).map((n, i) =>
        n === '…' ? (
          <span key={`gap${i}`} className="muted">…</span>
        ) : (
          <button
            key={n}
            type="button"
            aria-label={`Page ${n}`}
            aria-current={n === page ? 'page' : undefined}
            onClick={() => go(n)}
          >
            {n}
          </button>
        ),
      )}
      <button type="button" disabled={page >= pages} onClick={() => go(page + 1)}>Next</button>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number.parseInt(wanted, 10);
          if (Number.isFinite(n)) go(n);
        }}
      >
        <label>
          Go to page{' '}
          <input type="number" min={1} max={pages} value={wanted} onChange={(e) => setWanted(e.target.value)} />
        </label>
        <button type="submit">Go</button>
      </form>
    </nav>
  );
}
