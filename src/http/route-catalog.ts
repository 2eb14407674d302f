import type { RouteOptions } from 'fastify';
import type { DescribedRoute, RouteDescription } from '../openapi/index.js';

/**
 * Routes the server answers that the API description leaves out on purpose, each with why.
 * Match by exact path or by prefix ending in `*`.
 */
export const UNDESCRIBED_ROUTES: ReadonlyArray<{ url: string; why: string }> = [
  // Prometheus text for scrapers, documented in docs/operations.md, not a JSON API.
  { url: '/metrics', why: 'Prometheus exposition format' },
  // The dashboard's page and its static modules and styles (docs/dashboard.md).
  { url: '/', why: "the dashboard's HTML page" },
  { url: '/dashboard/*', why: "the dashboard's scripts, styles and vendored chart library, served as files" },
  // Server-sent events, which OpenAPI cannot describe; docs/dashboard.md does.
  { url: '/api/admin/signals/stream', why: 'the live signal log as a text/event-stream' },
];

interface SeenRoute {
  method: string;
  url: string;
  api: RouteDescription | undefined;
  /** The file and line that registered it, for the "add a description" message. */
  registeredAt: string;
}

/**
 * Every route registered with Fastify, seen through its onRoute hook, with the description its
 * options carry (`config: { api }`). The API description is built from it, so a route is in
 * the document exactly when the server has it.
 */
export class RouteCatalog {
  private readonly seen: SeenRoute[] = [];
  private readonly outside: DescribedRoute[] = [];

  /**
   * A route answered before Fastify's router (the inbound POST, the WebSocket upgrade): the
   * router never sees it, so its owner names it here, with its description.
   */
  answeredOutsideRouter(route: DescribedRoute): void {
    this.outside.push(route);
  }

  /** Whether the route is one of those answered before the router. */
  isOutsideRouter(method: string, url: string): boolean {
    return this.outside.some((route) => route.method === method && route.url === url);
  }

  /** Fastify's onRoute hook. */
  readonly onRoute = (route: RouteOptions): void => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const registeredAt = callerOutsideFastify(new Error().stack ?? '');
    for (const method of methods) this.seen.push({ method, url: route.url, api: route.config?.api, registeredAt });
  };

  /** Every described route: those answered before the router first, then the router's. */
  described(): DescribedRoute[] {
    const routes = this.seen.filter((route): route is SeenRoute & { api: RouteDescription } => route.api !== undefined);
    return [...this.outside, ...routes.map(({ method, url, api }) => ({ method, url, api }))];
  }

  /**
   * One line per route that has neither a description nor a place in UNDESCRIBED_ROUTES, saying
   * where it was registered and what to add. A HEAD route beside a GET one is Fastify's own and
   * described by the GET.
   */
  undescribed(): string[] {
    const gets = new Set(this.seen.filter((route) => route.method === 'GET').map((route) => route.url));
    return this.seen
      .filter((route) => route.api === undefined)
      .filter((route) => !(route.method === 'HEAD' && gets.has(route.url)))
      .filter((route) => !UNDESCRIBED_ROUTES.some((left) => matches(left.url, route.url)))
      .map(
        (route) =>
          `${route.method} ${route.url} (registered at ${route.registeredAt}) has no API description: give its route options ` +
          `config: { api: { summary, tag, auth, answers, problems, ... } } (a RouteDescription, see src/openapi/route-description.ts ` +
          `and the routes in src/http/admin-routes.ts), or list it in UNDESCRIBED_ROUTES in src/http/route-catalog.ts with the reason`,
      );
  }
}

function matches(pattern: string, url: string): boolean {
  return pattern.endsWith('*') ? url.startsWith(pattern.slice(0, -1)) : pattern === url;
}

/** The first stack frame in signalgate's own code (not Fastify's, not this file). */
function callerOutsideFastify(stack: string): string {
  const frame = stack
    .split('\n')
    .slice(1)
    .find((line) => !line.includes('node_modules') && !line.includes('route-catalog') && !line.includes('node:'));
  const where = frame?.match(/\(?((?:\/|[A-Za-z]:)[^()]+:\d+):\d+\)?\s*$/);
  return where?.[1] ?? 'an unknown place';
}
