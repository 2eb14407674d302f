/**
 * Hosts that mean "every interface" when listening but reach nothing (or only this machine) when
 * connected to, as the URL parser spells them (`0`, `::0` and the like normalize to these).
 */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '[::]']);

/**
 * Why the public URL inbound URLs are rendered with cannot be given to senders, or null when it
 * can. With `HOST=0.0.0.0` (or `::`) and no SIGNALGATE_PUBLIC_URL, the default public URL is
 * `http://0.0.0.0:8080`, which a sender on another machine cannot post to.
 */
export function unreachablePublicUrl(publicUrl: string): string | null {
  let host: string;
  try {
    host = new URL(publicUrl).hostname;
  } catch {
    return null;
  }
  if (!WILDCARD_HOSTS.has(host)) return null;
  return (
    `inbound URLs are rendered with ${publicUrl}, which no sender can reach (${host} means "every interface" only when listening): ` +
    'set SIGNALGATE_PUBLIC_URL to the address senders reach this server at, like https://signals.example.com'
  );
}
