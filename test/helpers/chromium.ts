import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';

/** Debian's chromium package, never a downloaded browser (DESIGN.md); `.ci/run` installs it when missing. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** A browser test's title: where there is no Chromium, it says that the test is skipped, and why. */
export function chromiumTitle(what: string): string {
  return hasChromium
    ? what
    : `SKIPPED because ${CHROMIUM} is absent (install Debian's chromium package; .ci/run does): ${what}`;
}

/** Headless Chromium, or undefined where there is none (the tests that need it are skipped). */
export async function launchChromium(): Promise<Browser | undefined> {
  return hasChromium ? chromium.launch({ executablePath: CHROMIUM, args: FLAGS }) : undefined;
}

/** A site on its own origin where a browser test lands (an MCP client's redirect URI, a developer's app). */
export interface LandingSite {
  origin: string;
  /** The paths (with their queries) the browser asked for, in order. */
  visits: string[];
  close(): Promise<void>;
}

/** Starts a landing site on 127.0.0.1 whose every page is a small HTML page titled `title`. */
export async function startLandingSite(title: string): Promise<LandingSite> {
  const visits: string[] = [];
  const server = createServer((request, response) => {
    visits.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html lang="en"><title>${title}</title><h1>${title}</h1></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    visits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
