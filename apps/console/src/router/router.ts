import { parseRoute, type Route } from './routes';

/**
 * History-API navigation: links inside the console change the route without
 * a page load; back and forward work. A link opts out with `data-external`
 * (downloads, the api's own pages).
 */
export class Router {
  private listener?: (route: Route) => void;

  start(listener: (route: Route) => void): void {
    this.listener = listener;
    window.addEventListener('popstate', () => this.emit());
    document.addEventListener('click', (event) => {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const link = (event.target as Element | null)?.closest?.('a');
      if (!link || link.hasAttribute('download') || link.hasAttribute('data-external') || link.target) return;
      const href = link.getAttribute('href');
      if (!href || !href.startsWith('/') || href.startsWith('//') || href === '/api' || href.startsWith('/api/')) return;
      event.preventDefault();
      this.go(href);
    });
    this.emit();
  }

  go(href: string, replace = false): void {
    if (replace) history.replaceState(null, '', href);
    else if (href !== location.pathname + location.search) history.pushState(null, '', href);
    this.emit();
  }

  current(): Route {
    return parseRoute(location.pathname, location.search);
  }

  private emit(): void {
    this.listener?.(this.current());
  }
}
