import { describeError } from '../errors';

/** An error from the API, in words. */
export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {describeError(error)}
      {onRetry && (
        <button type="button" className="link" onClick={onRetry}>Try again</button>
      )}
    </p>
  );
}
