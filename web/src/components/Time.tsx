const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });

/** A moment, as "5 min. ago" up to a week back and as a date after that. */
export function Time({ iso }: { iso: string }) {
  const date = new Date(iso);
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  let text = date.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
  if (Math.abs(seconds) < 60) {
    text = 'just now';
  } else if (Math.abs(seconds) < 7 * 86_400) {
    const [unit, size] = units.find(([, size]) => Math.abs(seconds) >= size)!;
    text = relative.format(Math.trunc(seconds / size), unit);
  }
  return <time dateTime={iso} title={date.toLocaleString()}>{text}</time>;
}
