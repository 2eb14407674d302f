import http from 'node:http';

/** Passes one HTTP request on to `upstream` as it came, and its answer back as it comes. */
export function forwardHttp(upstream: URL, req: http.IncomingMessage, res: http.ServerResponse): void {
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on('error', () => res.destroy());
  res.on('close', () => forward.destroy());
  req.pipe(forward);
}
