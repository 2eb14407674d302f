/**
 * The public URL a listening server renders inbound URLs with. `PORT=0` asks for any free port,
 * so the default `http://HOST:0` would name a port nobody can reach: a URL whose port is 0
 * takes the port the server got. Any other URL is used as it is.
 */
export function listeningPublicUrl(configured: string, listeningPort: number): string {
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    return configured;
  }
  if (url.port !== '0') return configured;
  url.port = String(listeningPort);
  return url.toString().replace(/\/+$/, '');
}
